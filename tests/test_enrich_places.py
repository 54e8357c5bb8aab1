"""Places from the title, dateline and lead: countries, big cities, demonyms, aliases."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from archive.article import Article
from archive.enrich.places import find_places, lead, places_in
from archive.sources import SourceFile
from archive.sources.text import read

REPO = Path(__file__).resolve().parents[1]
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
needs_bbc = pytest.mark.skipif(not (CORPORA / "bbc").is_dir(),
                               reason="needs ../shared/corpora/bbc (absent in a fresh clone)")


def article(body: str, title: str = "Headline", **fields: object) -> Article:
    return Article(id="a", title=title, body=body, path="news/a.txt",
                   **fields)  # type: ignore[arg-type]


def test_seed_article_gets_syria_and_lebanon() -> None:
    path = REPO / "seeds" / "000_ded2ed7496c25a53.txt"
    seed = next(read(SourceFile(path, "seeds/000_ded2ed7496c25a53.txt")))
    places = find_places(seed).places
    assert {"Syria", "Lebanon"} <= set(places)
    assert list(places) == sorted(set(places))


@pytest.mark.parametrize("text, expected", [
    ("Syrian and Lebanese troops met.", {"Syria", "Lebanon"}),
    ("British and American officials disagreed.", {"United Kingdom", "United States"}),
    ("French and Chinese firms bid.", {"France", "China"}),
    ("Two Iraqis and three Britons were freed.", {"Iraq", "United Kingdom"}),
    ("South Korean exporters gained.", {"South Korea"}),
])
def test_demonyms_map_to_their_country(text: str, expected: set[str]) -> None:
    assert set(places_in(text)) == expected


@pytest.mark.parametrize("text, expected", [
    ("Talks between the United States and South Korea.", {"United States", "South Korea"}),
    ("Shares fell in New York and Hong Kong.", {"New York", "United States", "Hong Kong"}),
    ("Flights from Sao Paulo resumed.", {"São Paulo", "Brazil"}),
    ("Papua New Guinea voted.", {"Papua New Guinea"}),
])
def test_multi_word_names(text: str, expected: set[str]) -> None:
    assert set(places_in(text)) == expected


@pytest.mark.parametrize("text, expected", [
    ("The US and the U.S. economy.", {"United States"}),
    ("The UK, Britain and Great Britain.", {"United Kingdom"}),
    ("The Russian Federation said.", {"Russia"}),
    ("Korea, Republic of, signed.", {"South Korea"}),
])
def test_aliases(text: str, expected: set[str]) -> None:
    assert set(places_in(text)) == expected


def test_a_city_adds_its_country() -> None:
    assert set(places_in("A blast shook Beirut.")) == {"Beirut", "Lebanon"}


@pytest.mark.parametrize("text", [
    "Reading is Nice, so Split the Mobile bill.",      # stop words that are also towns
    "She collected fine china and roast turkey.",       # lower case is not a place
    "Eddie Jordan and Real Madrid were there.",         # a name before a single-word place
    "Voters in New Mexico and New South Wales.",        # longer names that are not the place
    "Charles Kennedy spoke.",                           # a big city's name that is a surname
])
def test_words_that_are_not_places(text: str) -> None:
    assert places_in(text) == ()


def test_sentence_opener_does_not_hide_a_place() -> None:
    assert places_in("In Jordan, prices rose. Blair's UK visit.") == ("Jordan", "United Kingdom")


def test_only_the_lead_is_read() -> None:
    filler = "\n\n".join(f"Paragraph {i} about the weather and the markets today." * 4
                         for i in range(6))
    body = filler + "\n\nOfficials in Peru later commented."
    assert "Peru" not in lead(body)
    assert find_places(article(body)).places == ()


def test_title_and_dateline_count() -> None:
    found = find_places(article("Nothing here.", title="KENYA VOTES", dateline="Nairobi"))
    assert set(found.places) == {"Kenya", "Nairobi"}


def test_places_set_by_the_reader_are_kept() -> None:
    original = article("Syrian troops advanced.", places=("Iraq",))
    assert find_places(original) is original


def test_no_places_leaves_the_article_alone() -> None:
    original = article("The weather was mild.")
    assert find_places(original) is original


@needs_bbc
def test_bbc_corpus_is_fast_and_mostly_placed() -> None:
    root = CORPORA / "bbc"
    articles = [next(read(SourceFile(p, f"bbc/{p.relative_to(root).as_posix()}")))
                for p in sorted(root.glob("*/*.txt"))]
    places_in("warm up")
    start = time.perf_counter()
    placed = [find_places(a) for a in articles]
    elapsed = time.perf_counter() - start
    assert len(placed) == 2225
    assert sum(1 for a in placed if a.places) > 0.6 * len(placed)
    assert elapsed < 10, f"{len(placed) / elapsed:.0f} articles/s"

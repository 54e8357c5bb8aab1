"""A page's byline as people's names: what page metadata puts in ``author`` is often more.

Pages and their extractors hand over "Par LILIAN ALEMAGNA; LAURE BRETTON Envoyés spéciaux à
Toulouse", "Ed Hornick; CNN", "Andrea Stone Senior Washington Correspondent", or the site
itself ("Lefigaro Fr" from its domain, "Ediciones El País" from its publisher tag). The names
are what an ``author:`` search and the byline line need; the rest is the outlet (kept as
``source`` elsewhere) or a job title. Rules, in order: split the names (``;``, ``|``, "and" in
four languages), drop a leading "by" in the page's language, cut each name at the first job-title word, drop
a part that names an outlet or the site.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

from archive.sources.outlets import signoff_source

#: "by" as bylines write it in the languages of the press this archive meets most
_BY = re.compile(r"^(?:by|par|von|por|door|av|af|przez)\s+", re.I)
_SPLIT = re.compile(r"\s*(?:;|\||\band\b|\bund\b|\bet\b|\by\b)\s*", re.I)
#: words that start a job title or a posting after a name, never a name's own part
_ROLE_WORDS = frozenset("""
senior staff chief correspondent correspondents reporter reporters writer writers editor
editors contributor contributing columnist columnists special specials envoyé envoyés envoyée
envoyées spécial spéciale spéciaux correspondant correspondante correspondants redakteur
redakteurin korrespondent korrespondentin corresponsal enviado enviada enviados redacción
rédaction associate bureau
""".split())


def byline_names(author: str, site: str = "", url: str = "",
                 outlets: Iterable[str] = ()) -> str:
    """``author`` reduced to the people it names, joined with ``, ``; "" when none is left."""
    extra = tuple(outlets)
    site_words = _words(site) | _host_words(url)
    names: list[str] = []
    for part in _SPLIT.split(" ".join(author.split())):
        part = _BY.sub("", part.strip(" ,.-\u2013\u2014"))
        kept: list[str] = []
        for word in part.split():
            if _fold(word) in _ROLE_WORDS and len(kept) >= 2:  # "Bob Staff" is a name
                break
            kept.append(word)
        name = " ".join(kept).strip(" ,.-")
        if not name or signoff_source(name, extra):
            continue
        words = _words(name)
        shared = words & site_words
        if words and (words <= site_words or len(shared) >= 2 and 2 * len(shared) >= len(words)
                      or _fold(name).replace(" ", "") in {w for w in site_words if len(w) > 3}):
            continue  # the site's own name, its domain, its publisher
        if name not in names:
            names.append(name)
    return ", ".join(names)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip(".,;:")


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[\W_]+", _fold(text)) if w}


def _host_words(url: str) -> set[str]:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return set()
    return {w for w in host.split(".") if w and w != "www"}

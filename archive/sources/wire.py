"""Wire tags around a story's text: the dateline that opens it and the credits that close it.

Agency copy reaches archives with its routing still on: ``BEIRUT (Reuters) -``, ``LONDON,
Jan 2 (AFP) -``, ``AP -`` or ``NEW YORK, March 3 -`` before the first word, and
``(Reporting by ...; Editing by ...)`` or ``-- Reuters`` after the last. Left in the body they
open every snippet and the lead a title is cut from, and the agency they name is lost as the
source. Plain text and record dumps (a CSV of agency stories) carry them alike, so both readers
use this; a page's HTML keeps them, as its publisher printed them as text.

A tag is only taken when it cannot be prose: the agency in brackets or before the dash must be
a known outlet (``outlets.signoff_source``), or the place is a run of capitals followed by a
day or a dash. "Smith (centre) - the winner" stays in the body.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from archive.sources.outlets import signoff_source

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DASH = r"\s*(?:--|[-\u2013\u2014])\s+"
#: ``PLACE[, Region][, Mon D][ (Agency or date)] -``
_DATELINE = re.compile(
    r"^(?P<place>[A-Z][A-Z.'/-]+(?:\s+[A-Z][A-Z.'/-]+){0,3})"
    r"(?:,\s*(?P<region>[A-Z][a-z.]+(?:\s+[A-Z][a-z.]+){0,2}))?"
    r"(?:,?\s*(?P<day>" + _MONTH + r"\s+\d{1,2}))?"
    r"(?:\s*\((?P<paren>[^()\n]{1,40})\)\s*(?:--|[-\u2013\u2014])\s*|" + _DASH + ")")
#: ``Agency -`` alone before a sentence (``AP - A company founded...``; "Time - it is" is prose)
_AGENCY_FIRST = re.compile(r"^(?P<agency>[A-Za-z][\w.&/ ]{0,38}?)" + _DASH + r"(?=[A-Z0-9\"'\u201c])")
#: an agency's own short tag after a place of capitals (``VANCOUVER (CP) -``), known or not
_PAREN_TAG = re.compile(r"^[A-Z]{2,6}$")
_PAREN_DATE = re.compile(r"^" + _MONTH + r"\s+\d{1,2}(?:,\s*\d{4})?$")
_CREDITS_AT_END = re.compile(
    r"\s*\((?P<credits>(?:Additional\s+)?(?:Reporting|Writing|Editing|Edited|Written|Compiled)"
    r"\b[^()]*)\)\s*$", re.I)
_SIGNOFF_AT_END = re.compile(r"\s+(?:--|[\u2013\u2014])\s*(?P<agency>[A-Za-z][\w.&/ ]{0,38})\s*$")


@dataclass(frozen=True)
class WireTags:
    """A body with its wire tags taken off, and what they said."""

    body: str
    dateline: str = ""
    source: str = ""
    credits: str = ""


def strip_wire_tags(body: str, outlets: Iterable[str] = ()) -> WireTags:
    """Take the dateline off the first paragraph and the credits and sign-off off the last.

    ``outlets`` extends the known agencies (``archive index --source-name``). A tag that would
    leave the paragraph empty is kept: then it is the text, not a tag on it."""
    extra = tuple(outlets)
    dateline = source = credits = ""
    text = body.strip()
    if (agency := _AGENCY_FIRST.match(text)) and text[agency.end():].strip() \
            and (named := signoff_source(agency.group("agency"), extra)):
        source, text = named, text[agency.end():]  # "Reuters - LONDON (Reuters) -" has both
    match = _DATELINE.match(text)
    if match and _shaped(match, extra) and text[match.end():].strip():
        dateline = match.group("place").strip().title()
        paren = match.group("paren") or ""
        source = source or ((signoff_source(paren, extra) or "") if paren else "")
        text = text[match.end():]
    head, sep, last = text.rpartition("\n\n")
    if (found := _CREDITS_AT_END.search(last)) and last[:found.start()].strip():
        credits, last = found.group("credits").strip(), last[:found.start()]
    if (found := _SIGNOFF_AT_END.search(last)) and last[:found.start()].strip() \
            and (named := signoff_source(found.group("agency"), extra)):
        source, last = source or named, last[:found.start()]
    return WireTags(f"{head}{sep}{last}".strip(), dateline, source, credits)


def _shaped(match: re.Match[str], extra: tuple[str, ...]) -> bool:
    """A dateline, not a capitalised phrase: a known agency, an agency's tag of capitals or a
    day in brackets, a day after the place, or a place of three capitals or more before a
    dash alone."""
    paren = match.group("paren")
    if paren is not None:
        return bool(signoff_source(paren, extra) or _PAREN_DATE.match(paren.strip())
                    or _PAREN_TAG.match(paren.strip()))
    if match.group("day"):
        return True
    return len(match.group("place").replace(" ", "")) >= 3

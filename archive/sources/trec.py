"""TREC and LDC news corpora: many ``<DOC>`` elements per file, SGML rather than XML.

The layout most research news collections ship in (TREC's AP, WSJ, FT, LA Times disks; LDC's
Gigaword and its kin): ``<DOC>`` (in Gigaword with ``id`` and ``type`` attributes) holding a
document number (``<DOCNO>``), a headline (``<HEADLINE>``, ``<HL>``, ``<HEAD>``, ``<TITLE>``), a
date (``<DATE>``, ``<DATE_TIME>``, ``<DD>``), a byline and dateline, and ``<TEXT>`` (with or
without ``<P>`` paragraphs). Element names vary by source, so each field takes the first of its
known names that is present. The files are not well-formed XML (bare ``&`` and undeclared
entities), so elements are cut out with regular expressions, as for Reuters-21578.

A document with no date element is dated from its number where the collection encodes one
(``AP880212-0001``, ``WSJ870324-0001``, ``LA010189-0001``, ``AFP_ENG_20050101.0001``), and its
source is the agency the number names when no source element says otherwise.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import datetime

from archive.article import Article
from archive.sources import SourceFile
from archive.sources.fields import Cursor, guarded, parse_date, title_from

_DOC = re.compile(r"<DOC\b([^>]*)>(.*?)(?:</DOC\s*>|(?=<DOC\b)|\Z)", re.I | re.S)
_ATTR = re.compile(r"""([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+?))(?=[\s>]|$)""")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_PARAGRAPH = re.compile(r"</?P\b[^>]*>", re.I)

FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("DOCNO", "DOCID"),
    "title": ("HEADLINE", "HL", "HEAD", "TITLE", "HEADER", "H3"),
    "date": ("DATE_TIME", "DATE", "DD", "PUBDATE"),
    "author": ("BYLINE", "BY", "AUTHOR"),
    "dateline": ("DATELINE", "DL"),
    "source": ("SOURCE", "SO", "PUBLICATION"),
    "body": ("TEXT", "LP", "BODY"),
}

#: document-number prefixes of the common collections -> the outlet they name
OUTLETS = {
    "AP": "AP", "APW": "AP", "WSJ": "Wall Street Journal", "FT": "Financial Times",
    "LA": "Los Angeles Times", "SJMN": "San Jose Mercury News", "FBIS": "FBIS",
    "AFP": "AFP", "NYT": "New York Times", "XIN": "Xinhua", "CNA": "CNA", "LTW": "Los Angeles "
    "Times/Washington Post", "CNN": "CNN", "ABC": "ABC", "NBC": "NBC", "PRI": "PRI",
    "VOA": "VOA", "MNB": "MSNBC", "CNS": "CNS", "ZF": "Ziff-Davis", "DOE": "DOE",
}
_GIGAWORD_ID = re.compile(r"^([A-Z]{2,4})_[A-Z]{3}_(\d{4})(\d{2})(\d{2})")
_YYMMDD_ID = re.compile(r"^(AP|WSJ|SJMN|ZF)(\d{2})(\d{2})(\d{2})-")
_MMDDYY_ID = re.compile(r"^(LA)(\d{2})(\d{2})(\d{2})-")
_PREFIX = re.compile(r"^([A-Z]+)")
_COMPACT_DATE = re.compile(r"^(\d{2}|\d{4})(\d{2})(\d{2})(?:\s+(\d{1,2}):?(\d{2}))?")


def read(source: SourceFile) -> Iterator[Article]:
    """Every ``<DOC>`` in one file, in file order."""
    cursor = Cursor()
    yield from guarded(source, _articles(source, cursor), cursor, "no <DOC> documents found")


def _articles(source: SourceFile, cursor: Cursor) -> Iterator[Article]:
    text = source.read_text()
    for ordinal, m in enumerate(_DOC.finditer(text), 1):
        cursor.line = text.count("\n", 0, m.start()) + 1
        article = _document(source, ordinal, cursor.line, _attributes(m.group(1)), m.group(2))
        if article is not None:
            yield article


def _document(source: SourceFile, ordinal: int, line: int, attributes: dict[str, str],
              inner: str) -> Article | None:
    number = _inline(_field(inner, "id")) or attributes.get("id", "")
    body = _paragraphs(_field(inner, "body"))
    title = _inline(_field(inner, "title"))
    if not title and not body:
        source.warn(f"document {number or ordinal} has neither headline nor text; skipped",
                    line)
        return None
    raw_date = _inline(_field(inner, "date"))
    when = _date(raw_date) or _date_from_number(number)
    if raw_date and when is None:
        source.warn(f"document {number or ordinal}: unreadable date {raw_date[:40]!r}", line)
    author = re.sub(r"^By\s+", "", _inline(_field(inner, "author")), flags=re.I)
    return Article(
        id=source.article_id(number or ordinal), title=title or title_from(body), body=body,
        path=source.relative, date=when, date_source="explicit" if when else "unknown",
        source=_inline(_field(inner, "source")) or _outlet(number), author=author,
        dateline=_inline(_field(inner, "dateline")).rstrip(" ,-\u2013\u2014"),
        external_id=number,
        extra={"type": attributes["type"]} if attributes.get("type") else {},
    )


def _field(inner: str, name: str) -> str:
    for tag in FIELDS[name]:
        m = re.search(rf"<{tag}\b[^>]*>(.*?)(?:</{tag}\s*>|\Z)", inner, re.I | re.S)
        if m and m.group(1).strip():
            return m.group(1)
    return ""


def _attributes(text: str) -> dict[str, str]:
    return {m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
            for m in _ATTR.finditer(text)}


def _inline(raw: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", raw)).split())


def _paragraphs(raw: str) -> str:
    """Paragraphs from ``<P>`` elements, else from blank lines; lines inside one joined."""
    if not raw.strip():
        return ""
    if _PARAGRAPH.search(raw):
        parts = _PARAGRAPH.split(raw)
    else:
        parts = re.split(r"\n\s*\n|\n(?=[ \t]{2,}\S)", raw)  # blank line, or an indented one
    paragraphs = [_inline(p) for p in parts]
    return "\n\n".join(p for p in paragraphs if p)


def _date(raw: str) -> datetime | None:
    if not raw:
        return None
    m = _COMPACT_DATE.match(raw)
    if m:
        year = int(m.group(1))
        year += 1900 if year >= 50 and year < 100 else 2000 if year < 100 else 0
        try:
            return datetime(year, int(m.group(2)), int(m.group(3)),
                            int(m.group(4) or 0), int(m.group(5) or 0))
        except ValueError:
            pass
    return parse_date(raw)


def _date_from_number(number: str) -> datetime | None:
    for pattern, order in ((_GIGAWORD_ID, "ymd"), (_YYMMDD_ID, "ymd"), (_MMDDYY_ID, "mdy")):
        m = pattern.match(number)
        if not m:
            continue
        values = dict(zip(order, (int(g) for g in m.groups()[1:])))
        year = values["y"] + (1900 if values["y"] >= 50 else 2000) if values["y"] < 100 \
            else values["y"]
        try:
            return datetime(year, values["m"], values["d"])
        except ValueError:
            return None
    return None


def _outlet(number: str) -> str:
    m = _GIGAWORD_ID.match(number) or _PREFIX.match(number)
    return OUTLETS.get(m.group(1), "") if m else ""

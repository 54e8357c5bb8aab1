"""Reuters-21578 SGML (``reut2-NNN.sgm``): one article per ``<REUTERS>`` story.

The files are SGML, not well-formed XML (bare ``&#3;`` control entities, a DOCTYPE with no
root element), so each ``<REUTERS ...>...</REUTERS>`` block is cut out of a streamed buffer and
its elements are picked out with regular expressions. Text is Latin-1 (one 0xFC byte).

Stories come in three shapes (``<TEXT TYPE=...>``): NORM has TITLE, DATELINE and BODY; BRIEF
is a headline only (its "Blah blah blah." filler is dropped, leaving an empty body); UNPROC is
unstructured text whose first line serves as the title. Titles stay in their original capitals.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from archive.article import Article, slugify
from archive.sources import SourceFile
from archive.sources.fields import Cursor, guarded, title_from, unique

SOURCE_NAME = "Reuters"
_CHUNK = 1 << 16

_STORY_START = re.compile(r"<REUTERS\b([^>]*)>", re.I)
_STORY_END = re.compile(r"</REUTERS\s*>", re.I)
_TEXT = re.compile(r"<TEXT\b([^>]*)>(.*?)(?:</TEXT\s*>|\Z)", re.I | re.S)
_ELEMENTS = {name: re.compile(rf"<{name}\b[^>]*>(.*?)(?:</{name}\s*>|\Z)", re.I | re.S)
             for name in ("DATE", "TOPICS", "PLACES", "PEOPLE", "ORGS", "EXCHANGES", "TITLE",
                          "DATELINE", "BODY")}
_STRIP_ELEMENTS = re.compile(r"<(TITLE|DATELINE)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.I | re.S)
_D = re.compile(r"<D>(.*?)</D>", re.I | re.S)
_ATTR = re.compile(r"""([A-Za-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_CONTROL_ENTITY = re.compile(r"&#(\d{1,3});")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SIGNOFF = re.compile(r"(?:^|(?<=[\n.!?\"')]))(?:\s*REUTERS?\b)+[ \t]*\Z", re.I)
_FILLER = re.compile(r"^[\s*]*Blah blah blah\.?\s*$", re.I | re.M)
_STARS = re.compile(r"\*{3,}")
_DATE = re.compile(
    r"(\d{1,2})-([A-Za-z]{3})-(\d{4})(?:\s+(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?")
_MONTHS = {m: i for i, m in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1)}
_DATELINE_DATE = re.compile(r",?\s*[A-Za-z]{3,9}\.?\s+\d{1,2}\s*[-\u2013]*\s*$")
_WORD = re.compile(r"[A-Za-z]+")

#: place codes that are abbreviations, not words to title-case
_PLACE_ABBREVIATIONS = {"usa": "USA", "uk": "UK", "ussr": "USSR", "us": "US", "uae": "UAE"}


def read(source: SourceFile) -> Iterator[Article]:
    """Every story in one ``.sgm`` file, in file order."""
    cursor = Cursor()
    yield from guarded(source, _articles(source, cursor), cursor,
                       "no <REUTERS> stories found")


def _articles(source: SourceFile, cursor: Cursor) -> Iterator[Article]:
    with io.TextIOWrapper(source.open_binary(), encoding="latin-1", newline="") as stream:
        for ordinal, (line, attrs, inner) in enumerate(_stories(stream, cursor), 1):
            cursor.line = line
            article = _story(source, ordinal, line, attrs, inner)
            if article is not None:
                yield article


def _stories(stream: io.TextIOWrapper, cursor: Cursor) -> Iterator[tuple[int, str, str]]:
    """(line, start-tag attributes, inner text) per story, holding one chunk plus one story.

    A story whose end tag is missing runs up to the next start tag (or the end of the file),
    so one damaged story does not swallow the rest.
    """
    buf, line, eof = "", 1, False
    while True:
        start = _STORY_START.search(buf)
        if start:
            end = _STORY_END.search(buf, start.end())
            after = _STORY_START.search(buf, start.end(), end.start() if end else len(buf))
            stop = after.start() if after else (end.start() if end else None)
            if stop is None and eof:
                stop = len(buf)
            if stop is not None:
                consumed = end.end() if end and not after else stop
                yield line + buf.count("\n", 0, start.start()), start.group(1), \
                    buf[start.end():stop]
                line += buf.count("\n", 0, consumed)
                buf = buf[consumed:]
                continue
        elif eof:
            return
        else:
            keep = max(buf.rfind("<"), 0)  # a start tag may straddle the chunk boundary
            line += buf.count("\n", 0, keep)
            buf = buf[keep:]
        cursor.line = line
        chunk = stream.read(max(_CHUNK, len(buf)))  # doubling keeps a huge story linear
        eof = not chunk
        buf += chunk


def _story(source: SourceFile, ordinal: int, line: int, attrs: str,
           inner: str) -> Article | None:
    attributes = _attributes(attrs)
    newid = attributes.get("newid", "")
    key = newid or f"story{ordinal}"
    text_match = _TEXT.search(inner)
    text_type = _attributes(text_match.group(1)).get("type", "NORM").upper() if text_match \
        else "NORM"
    raw_text = text_match.group(2) if text_match else ""
    title = _inline(_element(raw_text, "TITLE"))
    body_raw = _element(raw_text, "BODY")
    if body_raw is None:
        title, body = _unstructured(raw_text, title)
    else:
        body = _reflow(_signed_off(_clean(body_raw)))
    when = _date(source, key, _element(inner, "DATE"), line)
    if not title and not body:
        if not newid and when is None:
            source.warn(f"story {ordinal} has no text, id or date; skipped", line)
            return None
        source.warn(f"story {key} has no text; kept under a placeholder title", line)
        title = f"(Reuters story {key} has no text)"
    return Article(
        id=source.article_id(key), title=title or title_from(body), body=body,
        path=source.relative, source=SOURCE_NAME, date=when,
        date_source="explicit" if when else "unknown",
        dateline=_dateline(_element(raw_text, "DATELINE")),
        places=unique(_place_name(code) for code in _codes(inner, "PLACES")),
        topics=unique(s for s in (slugify(c) for c in _codes(inner, "TOPICS")) if s),
        external_id=newid, extra=_extra(inner, attributes, text_type),
    )


def _unstructured(raw_text: str, title: str) -> tuple[str, str]:
    """(title, body) of a BRIEF or UNPROC story: the text outside TITLE/DATELINE, with the
    BRIEF filler and sign-off gone; with no TITLE, the first line is the headline."""
    rest = _clean(_TAG.sub("", _STRIP_ELEMENTS.sub("", raw_text)))
    rest = _signed_off(_STARS.sub("", _FILLER.sub("", rest))).strip("\n")
    if not title:
        first, _, rest = rest.strip().partition("\n")
        title = " ".join(first.split()).strip("* ")
    return title, _reflow(rest)


def _element(text: str, name: str) -> str | None:
    match = _ELEMENTS[name].search(text)
    return match.group(1) if match else None


def _codes(inner: str, name: str) -> list[str]:
    block = _element(inner, name) or ""
    return [code for code in (" ".join(_clean(d).split()) for d in _D.findall(block)) if code]


def _attributes(text: str) -> dict[str, str]:
    return {m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
            for m in _ATTR.finditer(text)}


def _clean(text: str) -> str:
    """Entities decoded, control characters (``&#3;`` and raw) gone, newlines normalised."""
    text = _CONTROL_ENTITY.sub(lambda m: "" if _is_control(int(m.group(1))) else m.group(0), text)
    text = html.unescape(text) if "&" in text else text
    return _CONTROL_CHARS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _is_control(code: int) -> bool:
    return code < 32 and code not in (9, 10) or 127 <= code < 160


def _inline(text: str | None) -> str:
    return " ".join(_clean(text).split()) if text else ""


def _signed_off(text: str) -> str:
    """The text without its closing ``Reuter`` line (the source is set for every story)."""
    text = text.rstrip()
    match = _SIGNOFF.search(text, max(0, len(text) - 200))  # it can only be at the very end
    return text[:match.start()] if match else text


def _reflow(text: str) -> str:
    """Hard-wrapped wire copy as paragraphs: an indented or blank line starts a new one."""
    paragraphs: list[list[str]] = []
    new_paragraph = True
    for line in text.split("\n"):
        if not line.strip():
            new_paragraph = True
            continue
        if new_paragraph or line[:1].isspace():
            paragraphs.append([])
        paragraphs[-1].append(" ".join(line.split()))
        new_paragraph = False
    return "\n\n".join(" ".join(p) for p in paragraphs)


def _date(source: SourceFile, key: str, text: str | None, line: int) -> datetime | None:
    """``26-FEB-1987 15:01:01.79`` as a datetime; a damaged time keeps the day (warned)."""
    match = _DATE.search(text or "")
    try:
        if match and match.group(4) is not None:
            day, month, year, hour, minute, second, fraction = match.groups()
            return datetime(int(year), _MONTHS[month.upper()], int(day), int(hour),
                            int(minute), int(second), int((fraction or "0").ljust(6, "0")))
        if match:
            source.warn(f"story {key}: unreadable time in {_inline(text)!r}; kept the day", line)
            return datetime(int(match.group(3)), _MONTHS[match.group(2).upper()],
                            int(match.group(1)))
    except (KeyError, ValueError):
        pass
    if text and text.strip():
        source.warn(f"story {key}: unreadable date {_inline(text)[:40]!r}", line)
    return None


def _dateline(text: str | None) -> str:
    """``    SALVADOR, Feb 26 - `` -> ``Salvador``: the place before the first comma."""
    place = _DATELINE_DATE.sub("", _inline(text)).split(",", 1)[0].strip(" -")
    return _title_case(place) if place.upper() == place else place


def _title_case(text: str) -> str:
    return _WORD.sub(lambda m: m.group(0).capitalize(), text)


def _place_name(code: str) -> str:
    """``el-salvador`` -> ``El Salvador``; ``usa`` -> ``USA``."""
    return " ".join(_PLACE_ABBREVIATIONS.get(part.lower(), part.capitalize())
                    for part in re.split(r"[-\s]+", code) if part)


def _extra(inner: str, attributes: dict[str, str], text_type: str) -> dict[str, Any]:
    extra: dict[str, Any] = {name: _codes(inner, name.upper())
                             for name in ("people", "orgs", "exchanges")}
    for name in ("oldid", "lewissplit", "cgisplit"):
        if attributes.get(name):
            extra[name] = attributes[name]
    extra["text_type"] = text_type
    return extra


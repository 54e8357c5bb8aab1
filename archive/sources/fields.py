"""Helpers the readers share: the error boundary, field names, values, dates, lone surrogates.

A reader turns one input format into Articles; what it finds inside differs, but the way a
failure becomes an IngestError or a warning (``guarded``), a metadata key is matched to an
Article field (``record_fields``), a value becomes text, a list or topic slugs, a written date
becomes a datetime and a title is made for an untitled text does not. These lived in the
record reader (JSON/CSV), which the Markdown and Reuters readers then imported; here they
belong to no one format.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from archive.article import Article, lead_title, slugify
from archive.sources import IngestError, SourceFile

#: Article field -> record keys that may hold it (lower case, most specific first).
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "title": ("title", "headline", "name"),
    "body": ("body", "text", "content", "description", "story", "summary", "abstract"),
    "date": ("date", "published", "pubdate", "published_at", "published_date",
             "publish_date", "publish_time", "publication_date", "pub_date", "datetime",
             "time"),
    "date_source": ("date_source",),
    "url": ("url", "link"),
    "source": ("source", "publisher", "site"),
    "author": ("author", "authors", "byline"),
    "places": ("places", "locations"),
    "topics": ("topics", "tags", "categories", "category"),
    "captions": ("captions",),
    "external_id": ("external_id", "id", "guid", "doc_id"),
    "dateline": ("dateline",),
    "credits": ("credits",),
    "language": ("language", "lang"),
    "extra": ("extra",),
}

TITLE_FALLBACK = 90

_DATE_FORMATS = (
    "%Y-%m-%d %H:%M:%S", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d", "%d-%b-%Y %H:%M:%S.%f",
    "%d-%b-%Y %H:%M:%S", "%d-%b-%Y", "%B %d, %Y %H:%M", "%B %d, %Y", "%b %d, %Y", "%b. %d, %Y",
    "%d %B %Y", "%d %b %Y", "%a %b %d %H:%M:%S %Y", "%m/%d/%Y %H:%M", "%m/%d/%Y",
    "%m/%d/%y", "%d.%m.%Y", "%Y",
)


# --- position tracking and the error boundary shared by readers --------------------------------

@dataclass
class Cursor:
    """Where a reader is in its file, so an unexpected failure can still name the line."""

    line: int | None = None


def guarded(source: SourceFile, articles: Iterable[Article], cursor: Cursor,
            empty_reason: str) -> Iterator[Article]:
    """Pass ``articles`` through, turning every failure into IngestError or a warning.

    A reader may only let IngestError escape. A failure after some articles came out (a
    truncated .gz, a syntax error deep in a JSON array) costs only the rest of the file, so it
    becomes a warning; before any, the file is unusable. A file yielding nothing is an error.
    """
    count = 0
    warned_before = len(source.warnings)
    try:
        for article in articles:
            count += 1
            yield article
    except IngestError as exc:
        if not count:
            raise
        source.warn(f"{exc.reason}; rest of file skipped", exc.line)
        return
    except Exception as exc:  # noqa: BLE001 - the reader contract: only IngestError escapes
        reason = describe_error(exc)
        if not count:
            raise IngestError(source.relative, reason, cursor.line) from exc
        source.warn(f"{reason}; rest of file skipped", cursor.line)
        return
    if not count:
        skipped = len(source.warnings) - warned_before
        detail = f" ({skipped} unusable record{'s' * (skipped != 1)})" if skipped else ""
        raise IngestError(source.relative, empty_reason + detail)


def describe_error(exc: BaseException) -> str:
    """A short reason for an exception, naming decompression and I/O failures plainly."""
    if isinstance(exc, (gzip.BadGzipFile, zlib.error, EOFError)):
        return f"cannot decompress: {exc or type(exc).__name__}"
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if isinstance(exc, RecursionError):
        return "data nested too deeply"
    return f"cannot parse ({type(exc).__name__}: {exc})"


# --- values ------------------------------------------------------------------------------------

def as_text(value: Any) -> str:
    """A record value as text: lists joined into paragraphs, objects by their name/text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n\n".join(t for t in (as_text(v) for v in value) if t.strip())
    if isinstance(value, dict):
        for key in ("name", "text", "value", "title", "#text", "label"):
            if key in value:
                return as_text(value[key])
        return ""
    return str(value)


def as_list(value: Any, split: bool = True) -> list[str]:
    """A list from a JSON/YAML list or a ``;``- (else ``,``-) separated string, blanks dropped."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        items = [as_text(v) for v in value]
    elif isinstance(value, str) and split:
        items = value.split(";") if ";" in value else value.split(",")
    else:
        items = [as_text(value)]
    return [item.strip() for item in items if item.strip()]


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items in first-seen order without repeats (a tag given twice is still one topic)."""
    return tuple(dict.fromkeys(items))


def title_from(body: str) -> str:
    """A title for a record that has none: the lead sentence, else the text's first words."""
    return lead_title(body) or " ".join(body.split())[:TITLE_FALLBACK] or "(untitled)"


def topic_slugs(value: Any) -> tuple[str, ...]:
    return unique(s for s in (slugify(t) for t in as_list(value)) if s)


# --- record keys -> Article fields -------------------------------------------------------------

def record_fields(record: Mapping[Any, Any], field_map: Mapping[str, str]) -> dict[str, Any]:
    """The raw value for each Article field: ``field_map`` first, then the known names.

    ``external_id`` stops at an ``external_id`` key even when it is empty, because an export
    also carries our own ``id``, which must not come back as the record's id.
    """
    lowered: dict[str, Any] = {}
    for key, value in record.items():
        lowered.setdefault(str(key).strip().lower(), value)
    found: dict[str, Any] = {}
    for name, candidates in FIELD_NAMES.items():
        mapped = field_map.get(name)
        if mapped is not None and not blank(lowered.get(mapped.strip().lower())):
            found[name] = lowered[mapped.strip().lower()]
            continue
        for key in candidates:
            if key in lowered and (key == "external_id" or not blank(lowered[key])):
                found[name] = lowered[key]
                break
    return found


def blank(value: Any) -> bool:
    """True for a missing value: None, a blank string, an empty list or object."""
    return value is None or (isinstance(value, str) and not value.strip()) \
        or (isinstance(value, (list, tuple, dict)) and not value)


# --- dates -------------------------------------------------------------------------------------

def parse_date(value: Any) -> datetime | None:
    """Naive UTC datetime from ISO 8601, RFC 2822, an epoch number or a common written form."""
    try:
        return _parse_date(value)
    except (ValueError, TypeError, OverflowError, OSError, IndexError):
        return None


def _parse_date(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return _naive_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000 if abs(value) > 1e11 else value  # milliseconds from JS
        return datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None)
    text = " ".join(str(value).split())
    if not text:
        return None
    for attempt in (_iso, _rfc2822, _written):
        found = attempt(text)
        if found is not None:
            return found
    return None


def _naive_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(timezone.utc).replace(tzinfo=None)


def _iso(text: str) -> datetime | None:
    try:
        return _naive_utc(datetime.fromisoformat(text))
    except ValueError:
        return None


def _rfc2822(text: str) -> datetime | None:
    if not re.search(r"[A-Za-z]{3}", text):
        return None
    try:
        return _naive_utc(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError):
        return None


#: zone abbreviations news copy writes after a time of day, as hours from UTC
_ZONES = {"UTC": 0, "GMT": 0, "Z": 0, "BST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3,
          "MSK": 3, "IST": 5.5, "JST": 9, "HKT": 8, "SGT": 8, "AEST": 10, "AEDT": 11,
          "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8,
          "PDT": -7}
_WEEKDAY = re.compile(r"^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+", re.I)
_CLOCK = re.compile(r"\s+(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?=\s|$)", re.I)
_ZONE = re.compile(r"\s+\(?([A-Z]{1,4})\)?$")
_WRITTEN_TIMED = ("%B %d, %Y %H:%M", "%b %d, %Y %H:%M", "%b. %d, %Y %H:%M", "%d %B %Y %H:%M",
                  "%d %b %Y %H:%M")


def _written(text: str) -> datetime | None:
    """A written date, also as wire headers give it: ``Mon Jan 2, 2012 9:30am EST`` (the
    time of day is kept, moved to UTC when the zone is named)."""
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text)
    offset = None
    zone = _ZONE.search(text)
    if zone and zone.group(1) in _ZONES:
        offset, text = _ZONES[zone.group(1)], text[:zone.start()]
    text = _WEEKDAY.sub("", text)
    text = _CLOCK.sub(lambda m: " %02d:%s" % (int(m.group(1)) % 12 + 12 * (m.group(3).lower()
                                                                            == "p"),
                                                m.group(2) or "00"), text)
    for form in _DATE_FORMATS + _WRITTEN_TIMED:
        try:
            found = datetime.strptime(text, form)
        except ValueError:
            continue
        return found - timedelta(hours=offset) if offset else found
    return None


# --- lone surrogates ---------------------------------------------------------------------------

def without_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD, and
    how many there were.

    A JSON or YAML escape such as ``"\\ud800"`` not followed by its low half decodes to a
    string that cannot be encoded as UTF-8, so it would break the index, the export and
    every page later; the replacement keeps the rest of the record.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value, 0
        except UnicodeEncodeError:
            count = sum(0xD800 <= ord(char) <= 0xDFFF for char in value)
            return "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char
                           for char in value), count
    if isinstance(value, list):
        cleaned = [without_surrogates(item) for item in value]
        return [item for item, _ in cleaned], sum(n for _, n in cleaned)
    if isinstance(value, dict):
        total, out = 0, {}
        for key, item in value.items():
            (key, n_key), (item, n_item) = without_surrogates(key), without_surrogates(item)
            out[key] = item
            total += n_key + n_item
        return out, total
    return value, 0


def surrogates_replaced(count: int) -> str:
    """The warning's wording for ``count`` replaced lone surrogates."""
    return f"{count} lone surrogate escape{'s' * (count != 1)} (e.g. \\ud800) replaced by U+FFFD"

"""The Article record every reader produces and every later stage consumes.

An article is immutable: enrichment returns a new one (``dataclasses.replace``) rather than
mutating, so a reader's output can be compared with what went into the index.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

DateSource = Literal["explicit", "inferred", "unknown"]

#: Characters allowed in an article id: safe in a URL path segment and in a file name.
_ID_UNSAFE = re.compile(r"[^a-z0-9]+")
_KNOWN_SUFFIX = re.compile(
    r"\.(txt|text|md|markdown|html?|xml|json|jsonl|ndjson|csv|tsv|sgm|sgml|warc|rss|atom|gz)$", re.I)


#: The only schemes an address from an input may have to become a link. Anything else a browser
#: would follow (``javascript:``, ``data:``, ``vbscript:``) runs or shows content inside the
#: archive's own pages, and every address comes from a third party (front matter, feed items,
#: crawled pages, records).
WEB_SCHEMES = frozenset({"http", "https"})
#: What a browser ignores around a URL (C0 controls and space) and deletes inside it (tab and
#: newlines), so that ``" java\tscript:..."`` is checked as the ``javascript:`` it would run as.
_URL_EDGES = "".join(chr(code) for code in range(0x21))
_URL_DELETED = str.maketrans("", "", "\t\n\r")


def web_url(value: object) -> str:
    """``value`` as an absolute ``http``/``https`` address, or ``""`` when it is anything else.

    The check is made on the address as a browser would read it, and that cleaned form is what
    is returned, so nothing that passes can turn into another scheme in an ``href``. A
    protocol-relative ``//host/path`` is refused as well: its scheme would be whatever the page
    happens to be opened with (``file:`` for a site read from disk), so it is not a web address
    anyone stated. Characters such as ``<`` or ``"`` are kept: escaping is the page's job.
    """
    if not isinstance(value, str):
        return ""
    text = value.strip(_URL_EDGES).translate(_URL_DELETED)
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unclosed IPv6 bracket: not an address a browser would follow
        return ""
    if parts.scheme.lower() not in WEB_SCHEMES or not parts.netloc:
        return ""
    return text


def slugify(text: str, max_length: int = 60) -> str:
    """Lower-case ASCII slug: letters and digits joined by single hyphens."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _ID_UNSAFE.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0] or slug[:max_length]
    return slug


def make_id(relative_path: str, record: str | int | None = None) -> str:
    """A stable, URL- and file-name-safe id for the article at ``relative_path``.

    The id is derived only from the input's path relative to the folder being indexed (plus the
    record number inside multi-article files), so it is the same on every run and machine. A
    readable slug is followed by a short hash of the exact path, which keeps ids unique when two
    paths slugify alike (``a/b.txt`` and ``a-b.txt``).
    """
    key = relative_path.replace("\\", "/")
    if record is not None:
        key = f"{key}#{record}"
    stem = relative_path.replace("\\", "/")
    for _ in range(2):  # "data.jsonl.gz" loses both suffixes
        stem = _KNOWN_SUFFIX.sub("", stem)
    readable = slugify(stem, 48)
    if record is not None:
        readable = f"{readable}-{slugify(str(record), 16)}".strip("-")
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:6]
    return f"{readable}-{digest}" if readable else digest


#: the longest title ``lead_title`` makes
TITLE_LENGTH = 90


def lead_title(body: str, limit: int = TITLE_LENGTH) -> str:
    """A readable title from the lead sentence, cut at a word boundary with an ellipsis."""
    lead = body.strip().split("\n", 1)[0]
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z\"\u201c])", lead, maxsplit=1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit + 1].rsplit(" ", 1)[0].rstrip(",;:-\u2013\u2014 ")
    return cut + "\u2026"


def title_to_index(title: str, body: str) -> str:
    """The title as the index searches it: none when it only repeats the body's lead.

    A reader that finds no title makes one from the lead (``lead_title``), so that lists and
    pages have a line to show. Searched as a headline it would count the lead's words twice, and
    at a headline's weight, though nobody wrote them as one: the article would rank as if its
    first line were its subject. A title the source gave that is word for word the lead is the
    same case. Either is still stored and shown; only the body's copy of the words is searched.
    """
    return "" if title and title == lead_title(body) else title


@dataclass(frozen=True)
class Article:
    """One normalised news article.

    ``path`` is the input file relative to the folder it was indexed from; ``date`` is naive UTC;
    ``date_source`` records how the date was obtained, so a page can mark inferred dates.
    ``url`` is the article's original web address: only an absolute ``http``/``https`` one is
    kept (see ``web_url``); any other value a reader found is dropped here, where every reader,
    every enrichment and every article read back from an index passes, so no later stage can
    be handed a ``javascript:`` link.
    """

    id: str
    title: str
    body: str
    path: str
    source: str = ""
    date: datetime | None = None
    date_source: DateSource = "unknown"
    captions: tuple[str, ...] = ()
    url: str = ""
    author: str = ""
    credits: str = ""
    dateline: str = ""
    places: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    language: str = ""
    external_id: str = ""
    cluster: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.url:
            object.__setattr__(self, "url", web_url(self.url))  # frozen: set once, here

    @property
    def word_count(self) -> int:
        return len(self.body.split())

    @property
    def content_hash(self) -> str:
        """SHA-256 of the article's content fields (not its id or cluster), hex."""
        payload = {
            "title": self.title, "body": self.body, "source": self.source,
            "date": self.date.isoformat() if self.date else None, "captions": list(self.captions),
            "url": self.url, "author": self.author, "places": list(self.places),
            "topics": list(self.topics),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every field (the export and ``show --json`` shape)."""
        data = asdict(self)
        data["date"] = self.date.isoformat() if self.date else None
        data["captions"] = list(self.captions)
        data["places"] = list(self.places)
        data["topics"] = list(self.topics)
        data["word_count"] = self.word_count
        data["content_hash"] = self.content_hash
        return data

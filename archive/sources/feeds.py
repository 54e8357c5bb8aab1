"""News feeds (RSS 2.0, RSS 1.0/RDF, Atom) via feedparser: one article per entry.

feedparser is lenient: a feed that is not well-formed XML still yields the entries it could
read, with ``bozo`` set. Those entries are kept and the problem reported as a warning; only a
feed with no readable entry at all is an error. The bytes are handed over as a stream, never
as ``bytes``/``str``: feedparser treats a string argument as a URL or a file name to open.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import lxml.html
from lxml import etree

from archive.article import Article, slugify
from archive.sources import IngestError, SourceFile
from archive.sources.fields import lead_title

#: elements whose content stands as a paragraph of its own
_BLOCKS = frozenset({
    "p", "div", "section", "article", "header", "footer", "aside", "blockquote", "pre",
    "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "li", "dt", "dd", "table", "tr",
    "figure", "figcaption", "hr", "address",
})
_DROPPED = ("script", "style", "noscript", "template")
_LINE_BREAK = "\ue000"  # private-use marker for <br>: survives whitespace collapsing
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")
_CHARACTER_REFERENCE = re.compile(rb"&#([xX][0-9a-fA-F]{1,8}|[0-9]{1,10});")


def read(source: SourceFile) -> Iterator[Article]:
    parsed = _parse(source)
    entries = parsed.get("entries") or []
    problem = _bozo_reason(parsed)
    if not entries:
        raise IngestError(source.relative, f"not a readable feed: {problem}" if problem
                          else "feed has no entries")
    if problem:
        source.warn(f"feed is not well-formed ({problem}); kept the {len(entries)} "
                    "entries that could be read")
    feed = parsed.get("feed") or {}
    feed_title = html_to_text(feed.get("title") or "")
    language = _language(feed.get("language") or "")
    found = 0
    for number, entry in enumerate(entries, start=1):
        try:
            article = entry_article(entry, number, source, feed_title, language)
        except Exception as exc:  # one odd entry must not cost the rest of the feed
            source.warn(f"entry {number} unreadable: {type(exc).__name__}: {exc}", line=number)
            continue
        if article is None:
            source.warn(f"entry {number} has neither title nor text", line=number)
            continue
        found += 1
        yield article
    if not found:
        raise IngestError(source.relative, f"none of the {len(entries)} feed entries has a "
                                           "title or text")


def _parse(source: SourceFile) -> Any:
    import feedparser

    data = _without_surrogate_references(source.read_bytes(), source)
    try:
        return feedparser.parse(io.BytesIO(data), resolve_relative_uris=False)
    except Exception as exc:  # feedparser catches most errors itself; be sure of the rest
        raise IngestError(source.relative, f"feed parser failed: {type(exc).__name__}: {exc}")\
            from exc


def _without_surrogate_references(data: bytes, source: SourceFile) -> bytes:
    """``data`` with character references to lone surrogates (``&#55296;``) made U+FFFD, as
    an HTML parser reads them: feedparser decodes them into strings UTF-8 cannot encode and
    then fails on the whole feed."""
    if b"&#" not in data:
        return data
    replaced = 0

    def replace(match: re.Match[bytes]) -> bytes:
        nonlocal replaced
        digits = match.group(1)
        code = int(digits[1:], 16) if digits[:1] in (b"x", b"X") else int(digits)
        if 0xD800 <= code <= 0xDFFF:
            replaced += 1
            return b"&#xFFFD;"
        return match.group(0)

    data = _CHARACTER_REFERENCE.sub(replace, data)
    if replaced:
        source.warn(f"{replaced} character reference{'s' * (replaced != 1)} to lone "
                    "surrogates (e.g. &#55296;) replaced by U+FFFD")
    return data


def _bozo_reason(parsed: Any) -> str:
    """What made feedparser set the bozo bit, in words, or "" for a clean feed."""
    if not parsed.get("bozo"):
        return ""
    exc = parsed.get("bozo_exception")
    if exc is None:
        return "malformed feed"
    line = getattr(exc, "getLineNumber", None)
    where = f" at line {line()}" if callable(line) else ""
    message = exc.getMessage() if hasattr(exc, "getMessage") else str(exc)
    return f"{type(exc).__name__}{where}: {message}".strip().rstrip(":")


def entry_article(entry: Any, number: int, source: SourceFile, feed_title: str,
                  language: str) -> Article | None:
    """One feed entry as an Article, or None when it carries neither title nor text."""
    body = entry_body(entry)
    title = html_to_text(entry.get("title") or "").replace("\n", " ")
    if not title and not body:
        return None
    return Article(
        id=source.article_id(number),
        title=title or lead_title(body),
        body=body,
        path=source.relative,
        source=feed_title.replace("\n", " "),
        date=(date := entry_date(entry)),
        date_source="explicit" if date else "unknown",
        url=str(entry.get("link") or ""),
        author=entry_author(entry),
        topics=entry_topics(entry),
        language=language,
        external_id=str(entry.get("id") or ""),
    )


def entry_body(entry: Any) -> str:
    """Full content when the feed carries it, else the summary, as plain paragraphs."""
    for content in entry.get("content") or []:
        text = _detail_text(content)
        if text:
            return text
    return _detail_text(entry.get("summary_detail") or {"value": entry.get("summary") or ""})


def _detail_text(detail: Any) -> str:
    value = str(detail.get("value") or "")
    if "html" in str(detail.get("type") or "text/html"):
        return html_to_text(value)
    return plain_paragraphs(value)


def entry_date(entry: Any) -> datetime | None:
    """Publication (else update) time; feedparser has already normalised it to UTC.

    Plain ``dict.get`` skips FeedParserDict's deprecated updated->published aliasing.
    """
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        parsed = dict.get(entry, key)
        if parsed:
            try:
                return datetime(*parsed[:6])
            except (TypeError, ValueError):
                continue
    return None


def entry_author(entry: Any) -> str:
    detail = entry.get("author_detail") or {}
    name = detail.get("name") or entry.get("author") or ""
    return " ".join(str(name).split())


def entry_topics(entry: Any) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for tag in entry.get("tags") or []:
        slug = slugify(str(tag.get("term") or tag.get("label") or ""))
        if slug:
            seen.setdefault(slug, None)
    return tuple(seen)


def html_to_text(fragment: str) -> str:
    """Plain text of an HTML fragment: tags stripped, entities resolved, paragraphs kept.

    Block elements become paragraph breaks ("\\n\\n") and ``<br>`` a line break, so an entry's
    structure survives into the body the way a plain-text article's does.
    """
    if "<" not in fragment and "&" not in fragment:
        return plain_paragraphs(fragment)
    try:
        root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return plain_paragraphs(fragment)
    for element in list(root.iter(*_DROPPED)):
        element.drop_tree()
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag == "br":
            element.tail = _LINE_BREAK + (element.tail or "")
        elif tag in _BLOCKS:
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
    return plain_paragraphs(root.text_content())


def plain_paragraphs(text: str) -> str:
    """Paragraphs split at blank lines, each collapsed to single spaces."""
    paragraphs = []
    for block in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n").replace("\r", "\n")):
        lines = (" ".join(line.split()) for line in block.split(_LINE_BREAK))
        paragraph = "\n".join(line for line in lines if line)
        if paragraph:
            paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def _language(value: str) -> str:
    primary = value.strip().lower().replace("_", "-").split("-", 1)[0]
    return primary if _LANGUAGE.match(primary) else ""

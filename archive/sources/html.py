"""Saved news article pages (``.html``): main text and metadata via trafilatura.

trafilatura separates the article from the page furniture (menus, related-link lists, cookie
banners, footers) and reads the metadata a page carries (OpenGraph, JSON-LD, ``<meta>``,
htmldate for the publication date). It is only ever given a string or a parsed tree, never a
URL, so nothing is fetched. ``article_from_html`` is shared with the WARC reader, which feeds
it one archived page at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from lxml.html import HtmlElement

from archive.article import Article, slugify
from archive.sources import IngestError, SourceFile
from archive.sources.bylines import byline_names
from archive.sources.fields import lead_title

#: htmldate output: keep the time and offset so the date can be normalised to UTC
_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
_DATE_PARSE_FORMATS = ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
#: captions inside page furniture are not the article's
_CAPTION_XPATH = ("//figcaption[not(ancestor::nav or ancestor::header or ancestor::footer"
                  " or ancestor::aside)]")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")
#: trafilatura's MIN_EXTRACTED_SIZE: shorter results may be its whole-page fallback
SHORT_TEXT = 250
#: earliest publication date accepted from a page's metadata
MIN_DATE = "1800-01-01"


def read(source: SourceFile) -> Iterator[Article]:
    article = article_from_html(source.read_bytes(), source)
    if article is None:
        raise IngestError(source.relative, "no article text found")
    yield article


def article_from_html(html: str | bytes, source: SourceFile, *, url: str = "",
                      fallback_date: datetime | None = None,
                      record: int | None = None) -> Article | None:
    """One page as an Article, or None when the page has no main text.

    ``url`` is used when the page names no canonical URL; ``fallback_date`` (naive UTC, e.g. a
    WARC capture date) when it carries no publication date; ``record`` is the id's record key
    inside a multi-page file. Any parser failure becomes an IngestError naming the record.
    """
    try:
        return _extract(html, source, url, fallback_date, record)
    except IngestError:
        raise
    except Exception as exc:  # trafilatura/lxml raise a wide variety on hostile markup
        raise IngestError(source.relative, f"cannot parse HTML: {type(exc).__name__}: {exc}",
                          record) from exc


def _extract(html: str | bytes, source: SourceFile, url: str,
             fallback_date: datetime | None, record: int | None) -> Article | None:
    from trafilatura import bare_extraction  # heavy import: only when a page is read
    from trafilatura.utils import load_html

    tree = load_html(html) if html else None
    if tree is None:
        return None
    language = page_language(tree)
    captions = page_captions(tree)
    document = bare_extraction(
        tree, url=url or None, with_metadata=True, include_comments=False,
        include_tables=True, include_images=False, include_links=False,
        date_extraction_params=_date_params())
    if document is None or not _is_main_text(tree, document.text or ""):
        return None
    title = headline(_clean(document.title or ""), tree, document.sitename or "",
                     document.url or url)
    body = body_text(document.body, title)
    if not body:
        return None
    date = parse_page_date(document.date) or fallback_date
    return Article(
        id=source.article_id(record),
        title=title or lead_title(body),
        body=body,
        path=source.relative,
        source=_clean(document.sitename or ""),
        date=date,
        date_source="explicit" if date else "unknown",
        captions=captions,
        url=document.url or url,
        author=byline_names(_clean(document.author or ""), document.sitename or "",
                            document.url or url, source.options.source_names),
        topics=topics_of(list(document.tags or []) + list(document.categories or [])),
        language=language,
    )


def _is_main_text(tree: HtmlElement, text: str) -> bool:
    """False when a short result is only trafilatura's whole-page fallback dump.

    Below ``MIN_EXTRACTED_SIZE`` trafilatura falls back to the page's raw text, which on a
    page without an article is its menus. A strict second pass (precision, no fallbacks)
    finds nothing on such a page but still finds a genuinely short article.
    """
    from trafilatura import bare_extraction

    if len(text) >= SHORT_TEXT:
        return True
    strict = bare_extraction(tree, fast=True, favor_precision=True, include_comments=False)
    return strict is not None and bool((strict.text or "").strip())


def _date_params() -> dict[str, Any]:
    """htmldate settings: the original (not modified) date, from markup rather than prose.

    Extensive search would guess a date from any date-like text in the page, which is not
    something the page states about itself, so it stays off. htmldate's default floor
    (1995) would drop the dates of digitised older news, hence an explicit ``min_date``.
    """
    return {
        "original_date": True,
        "extensive_search": False,
        "outputformat": _DATE_FORMAT,
        "min_date": MIN_DATE,
        "max_date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }


def parse_page_date(value: str | None) -> datetime | None:
    """htmldate's string as naive UTC (an offset, when given, is applied)."""
    if not value:
        return None
    for fmt in _DATE_PARSE_FORMATS:
        try:
            parsed = datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(timezone.utc).replace(tzinfo=None)
        return parsed
    return None


def body_text(body: Any, title: str) -> str:
    """Paragraphs of trafilatura's body tree joined by blank lines.

    trafilatura's own text output separates paragraphs by a single newline, which loses the
    difference between a paragraph and a line break; converting block by block keeps it.
    A leading heading that repeats the title is dropped.
    """
    from trafilatura.xml import xmltotxt

    if body is None:
        return ""
    paragraphs: list[str] = []
    for block in body:
        if block.tag == "graphic":
            continue
        text = _clean_block(xmltotxt(block, False))
        if not text:
            continue
        if not paragraphs and block.tag == "head" and _same_text(text, title):
            continue
        paragraphs.append(text)
    return "\n\n".join(paragraphs)


def page_language(tree: HtmlElement) -> str:
    """Primary language subtag from ``<html lang>`` or a content-language meta, lower case."""
    candidates = [tree.get("lang") or "", tree.get("{http://www.w3.org/XML/1998/namespace}lang")
                  or ""]
    candidates += tree.xpath("//meta[translate(@http-equiv,'CONTENT-LANGUAGE',"
                             "'content-language')='content-language']/@content")
    candidates += tree.xpath("//meta[@property='og:locale']/@content")
    for value in candidates:
        primary = str(value).strip().lower().replace("_", "-").split("-", 1)[0]
        if _LANGUAGE.match(primary):
            return primary
    return ""


def page_captions(tree: HtmlElement) -> tuple[str, ...]:
    """Text of ``<figcaption>``s outside page furniture, in page order, without repeats."""
    seen: dict[str, None] = {}
    for element in tree.xpath(_CAPTION_XPATH):
        text = _clean(element.text_content())
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def topics_of(labels: list[str]) -> tuple[str, ...]:
    """Slugs of tags/categories; a comma-joined keyword string counts as several."""
    seen: dict[str, None] = {}
    for label in labels:
        for part in str(label).split(","):
            slug = slugify(part)
            if slug:
                seen.setdefault(slug, None)
    return tuple(seen)


_TITLE_SEPARATOR = re.compile(r"\s+(?:[-|\u2013\u2014\u00b7\u00bb]|::)\s+")


def headline(title: str, tree: HtmlElement, sitename: str, url: str) -> str:
    """The story's headline out of a page title that also names the site or section
    ("Five Social Media Lessons - BusinessWeek", "TechCrunch | 2005 Zuckerberg ...").

    A part the page also shows as a heading wins; else the parts naming the site (its name
    or its address) go, and of what is left the longest is the headline. With no part naming
    the site the title stays whole: "Hezbollah - Islamic State deal" is one headline.
    """
    parts = [p.strip() for p in _TITLE_SEPARATOR.split(title) if p.strip()]
    if len(parts) < 2:
        return title
    headings = {_key(h.text_content()) for h in tree.iter("h1", "h2")}
    shown = [p for p in parts if _key(p) in headings]
    if shown:
        return shown[0]
    site_words = {_key(w) for w in re.split(r"[\s.]+", f"{sitename} {_host(url)}") if len(w) > 2}
    site_words -= {"www", "com", "org", "net", "news", "the"}
    kept = [p for p in parts if not (set(map(_key, p.split())) & site_words)]
    if not kept or len(kept) == len(parts):  # no part names the site: a dash in the headline
        return title
    return max(kept, key=len)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _host(url: str) -> str:
    m = re.match(r"^[a-z]+://([^/:]+)", url or "", re.I)
    return m.group(1) if m else ""


def _clean(text: str) -> str:
    return " ".join(text.split())


def _clean_block(text: str) -> str:
    """Collapse runs of spaces but keep the line breaks inside one block (lists, tables)."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.strip().splitlines())
    return "\n".join(line for line in lines if line)


def _same_text(a: str, b: str) -> bool:
    return bool(b) and slugify(a, 500) == slugify(b, 500)

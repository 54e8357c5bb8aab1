"""Markdown (or text) articles with an optional YAML or TOML front-matter block.

Front matter (``---`` ... ``---`` YAML, or ``+++`` ... ``+++`` TOML) may give title, date, source, url, author, tags/topics,
places and summary; the same names as the record reader are recognised, and stated values win
over anything inferred from the text (a stated date is ``date_source="explicit"``). The body is
indexed as plain text, so Markdown markup is stripped before the plain-text reader's layout
rules (byline, captions, credits, sign-off, title from the lead) are applied.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any

import yaml

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.fields import (Cursor, as_list, as_text, guarded, parse_date, record_fields,
                                    surrogates_replaced, topic_slugs, unique, without_surrogates)
from archive.sources.text import looks_like_headline, parse_text

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TOML_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\n(.*?\n)?\+\+\+[ \t]*(?:\n|\Z)", re.S)
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RULE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HORIZONTAL_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+.*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_QUOTE = re.compile(r"^ {0,3}(?:>[ \t]?)+")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>|~])")
_IMAGE = re.compile(r" ?!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>", re.I)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_SPAN = r"((?:(?!\n[ \t]*\n).)+?)"  # inline markup never crosses a paragraph break
_CODE = re.compile(r"(`+)" + _SPAN + r"\1", re.S)
_STRONG = re.compile(r"(?<![\w*])(\*\*|__)(?=\S)" + _SPAN + r"(?<=\S)\1(?![\w*])", re.S)
_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)" + _SPAN + r"(?<=\S)\1(?![\w*])", re.S)
_STRIKE = re.compile(r"~~(?=\S)" + _SPAN + r"(?<=\S)~~", re.S)
#: escaped characters are parked in the private-use area so no rule reads them as markup
_PARK = 0xE000

_SUMMARY_KEYS = ("summary", "description", "excerpt", "abstract")


def read(source: SourceFile) -> Iterator[Article]:
    """The one article in a Markdown file."""
    cursor = Cursor()
    yield from guarded(source, _article(source), cursor, "empty file (no text)")


def _article(source: SourceFile) -> Iterator[Article]:
    text = source.read_text().replace("\r\n", "\n").replace("\r", "\n")
    meta, body_md = split_front_matter(text, source)
    explicit = _explicit_fields(meta, source)
    heading, body_md = _leading_heading(body_md)
    if heading and not explicit.get("title"):
        explicit["title"] = heading
    elif heading and heading.casefold() != str(explicit["title"]).casefold():
        body_md = f"{heading}\n\n{body_md}"  # a heading other than the title is body text
    plain = markdown_to_text(body_md)
    if not plain.strip() and explicit.get("extra", {}).get("summary"):
        plain = explicit["extra"]["summary"]
    if not plain.strip() and not explicit.get("title"):
        raise IngestError(source.relative, "empty file (no text)")
    # parse_text's own ``source`` parameter is the SourceFile, so the stated one is set after
    stated_source = explicit.pop("source", "")
    article = parse_text(plain, source, headers=False, **explicit)
    if article is None:  # only a title: keep it, with an empty body
        article = Article(id=source.article_id(), title=str(explicit["title"]), body="",
                          path=source.relative, **{k: v for k, v in explicit.items()
                                                   if k != "title"})
    article = _restore_headline(plain, article, str(explicit.get("title", "")))
    yield replace(article, source=stated_source) if stated_source else article


def _restore_headline(plain: str, article: Article, stated_title: str) -> Article:
    """Put back a leading headline that parse_text dropped in favour of the stated title.

    parse_text takes a short first line standing alone as the title and leaves it out of the
    body (the same test is made here); when the front matter names a different title, that
    line is text and must not be lost.
    """
    first, _, rest = plain.replace("\r", "").strip().partition("\n")
    dropped = rest.startswith("\n") and rest.strip() and looks_like_headline(first)
    if not stated_title or not dropped or first.strip().casefold() == stated_title.casefold():
        return article
    body = f"{first.strip()}\n\n{article.body}" if article.body else first.strip()
    return replace(article, body=body)


def split_front_matter(text: str, source: SourceFile) -> tuple[dict[str, Any], str]:
    """(metadata, rest) of a file; YAML between ``---`` lines or TOML between ``+++`` lines
    (Hugo's and Zola's blogs); unreadable metadata is a warning and the file stays text."""
    text = text.lstrip("\ufeff")
    if match := _FRONT_MATTER.match(text):
        meta = _yaml(match.group(1) or "", source)
    elif match := _TOML_FRONT_MATTER.match(text):
        meta = _toml(match.group(1) or "", source)
    else:
        return {}, text
    if meta is _UNREADABLE:
        return {}, text
    if meta is None:
        return {}, text[match.end():]
    if not isinstance(meta, dict):
        source.warn("front matter is not a mapping of names to values; read as text", 1)
        return {}, text
    meta, replaced = without_surrogates(meta)
    if replaced:
        source.warn(f"front matter: {surrogates_replaced(replaced)}", None)
    return meta, text[match.end():]


#: what a front-matter reader returns, after its warning, for metadata it cannot read (YAML
#: reads an empty block as None, which is not a failure)
_UNREADABLE = object()


def _yaml(block: str, source: SourceFile) -> Any:
    """YAML front matter as loaded; _UNREADABLE (with a warning) when it cannot be read."""
    try:
        return yaml.safe_load(block)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        source.warn(f"front matter is not valid YAML ({type(exc).__name__}); read as text",
                    line + 2 if line is not None else None)
        return _UNREADABLE


def _toml(block: str, source: SourceFile) -> Any:
    """TOML front matter as a mapping; _UNREADABLE (with a warning) when it cannot be read."""
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            source.warn("TOML front matter needs Python 3.11 (or tomli); read as text", 1)
            return _UNREADABLE
    try:
        return tomllib.loads(block)
    except (tomllib.TOMLDecodeError, ValueError, TypeError, RecursionError) as exc:
        source.warn(f"front matter is not valid TOML ({exc}); read as text", 1)
        return _UNREADABLE


_NAME_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-")


def _date_from_name(source: SourceFile) -> dict[str, Any]:
    """A blog post's file name carries its date when its front matter does not (Jekyll's
    ``_posts/2016-03-10-title.md``)."""
    named = _NAME_DATE.match(source.inner_name)
    try:
        return {"date": datetime(*(int(g) for g in named.groups())),
                "date_source": "explicit"} if named else {}
    except ValueError:
        return {}


_ADDRESS_KEYS = ("path", "url", "permalink", "slug", "link")
_ADDRESS_DATE = re.compile(r"(?:^|/)((?:19|20)\d\d)/(\d\d)/(\d\d)(?:/|$)")


def _date_from_address(meta: dict[str, Any]) -> dict[str, Any]:
    """A post's own address carries its date when its metadata names none (a Zola blog's
    ``path = "2015/04/10/Fearless-Concurrency"``, a permalink ``/2019/03/07/title/``)."""
    lowered = {str(k).lower(): v for k, v in meta.items()}
    for key in _ADDRESS_KEYS:
        found = _ADDRESS_DATE.search(as_text(lowered.get(key)))
        if found:
            try:
                return {"date": datetime(*(int(g) for g in found.groups())),
                        "date_source": "explicit"}
            except ValueError:
                continue
    return {}


def _explicit_fields(meta: dict[str, Any], source: SourceFile) -> dict[str, Any]:
    """Article fields stated in the front matter, in the form Article wants them."""
    if not meta:
        return _date_from_name(source)
    raw = record_fields(meta, source.options.field_map)
    fields: dict[str, Any] = {}
    for name in ("title", "source", "url", "author", "credits", "dateline", "language",
                 "external_id"):
        value = ", ".join(as_list(raw.get(name), split=False)) if name == "author" \
            else " ".join(as_text(raw.get(name)).split())
        if value:
            fields[name] = value
    when = parse_date(raw.get("date"))
    if when is not None:
        fields["date"], fields["date_source"] = when, "explicit"
    elif raw.get("date") not in (None, ""):
        source.warn(f"front matter date {as_text(raw['date'])[:40]!r} is unreadable", None)
    else:
        fields.update(_date_from_address(meta) or _date_from_name(source))
    fields["topics"] = topic_slugs(raw.get("topics"))
    fields["places"] = unique(as_list(raw.get("places")))
    fields["captions"] = tuple(as_list(raw.get("captions"), split=False))
    summary = _summary(meta)
    if summary:
        fields["extra"] = {"summary": summary}
    return {k: v for k, v in fields.items() if v}


def _summary(meta: dict[str, Any]) -> str:
    lowered = {str(k).lower(): v for k, v in meta.items()}
    return next((" ".join(as_text(lowered[k]).split()) for k in _SUMMARY_KEYS
                 if as_text(lowered.get(k)).strip()), "")


def _leading_heading(markdown: str) -> tuple[str, str]:
    """A first-line ``# Heading`` (or ``Heading`` over ``====``) and the text after it."""
    stripped = markdown.lstrip("\n")
    first, _, rest = stripped.partition("\n")
    match = _ATX_HEADING.match(first)
    if match and len(match.group(1)) == 1:
        return markdown_to_text(match.group(2)).strip(), rest
    second, _, after = rest.partition("\n")
    if first.strip() and re.fullmatch(r" {0,3}=+[ \t]*", second):
        return markdown_to_text(first).strip(), after
    return "", markdown


def markdown_to_text(markdown: str) -> str:
    """Plain text of Markdown: markup gone, paragraphs kept, so snippets show no syntax."""
    parked = _ESCAPE.sub(lambda m: chr(_PARK + ord(m.group(1))), markdown)
    parked = _HTML_COMMENT.sub("", parked)
    lines = _block_lines(parked.split("\n"))
    text = _inline("\n".join(lines))
    return re.sub(r"[\uE000-\uE07F]", lambda m: chr(ord(m.group(0)) - _PARK), text)


def _block_lines(lines: list[str]) -> list[str]:
    """Block-level markup per line: headings, rules, fences, quotes, bullets, tables."""
    out: list[str] = []
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            out.append(line)
            continue
        line = _QUOTE.sub("", line)
        if heading := _ATX_HEADING.match(line):
            out.extend(["", heading.group(2), ""])
            continue
        if _HORIZONTAL_RULE.match(line) or _LINK_DEFINITION.match(line) \
                or _TABLE_RULE.match(line) \
                or (_SETEXT_RULE.match(line) and index and lines[index - 1].strip()):
            out.append("")
            continue
        if _BULLET.match(line):  # each list item its own paragraph, not run together
            out.append("")
            line = _BULLET.sub(r"\1", line)
        if line.lstrip().startswith("|"):
            line = " ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
        out.append(line)
    return out


def _inline(text: str) -> str:
    """Inline markup: images dropped, links to their text, code, emphasis and tags unwrapped."""
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _CODE.sub(lambda m: m.group(2).strip(), text)
    text = _HTML_TAG.sub("", text)
    for pattern in (_STRONG, _EMPHASIS, _STRIKE):
        text = pattern.sub(lambda m: m.group(m.lastindex or 0), text)
    return html.unescape(text) if "&" in text else text

"""Plain-text articles: the seed's layout, "headline on the first line", and wire copy.

Recognised structure, all optional:

* corpus markup lines (``.START``) opening or closing the text, dropped;
* a header block: the first lines, one field each, marked alike (the same leading marks,
  ``-- Headline`` / ``-- By Name`` / ``-- Mon Jan 2, 2012 9:30am EST`` / ``-- http://...``, or
  ``Key: value`` lines); known by its shape, not by one prefix. Its lines are told apart by
  content: an address is the ``url``, ``By ...`` the ``author``, a date (time of day kept) the
  ``date``, the first other line the headline;
* a headline line (short, no sentence-ending punctuation, followed by a blank line);
  without one the title is cut from the lead sentence;
* a byline (``By Jane Doe``) -> ``author``;
* a wire dateline opening the body (``BEIRUT (Reuters) -``) -> ``dateline`` and ``source``,
  and credits or a sign-off closing its last paragraph (``archive.sources.wire``);
* photo captions, paragraphs ending in ``(Photo: ...)`` -> ``captions``;
* credit lines (``(Reporting by ...; Editing by ...)``) -> ``credits``;
* a short trailing sign-off (``Reuters``) -> ``source``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.fields import lead_title, parse_date
from archive.sources.outlets import signoff_source
from archive.sources.wire import strip_wire_tags


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n+")
_CAPTION = re.compile(r"\((?:Photo|Picture|Image|Credit)s?\s*:[^)]*\)\s*$", re.I)
_CREDITS = re.compile(r"^\((?:\w+\s+)?(?:Reporting|Writing|Editing|Additional reporting)\b.*\)$",
                      re.I | re.S)
_BYLINE = re.compile(r"^By\s+([A-Z][\w.'-]+(?:\s+(?:[A-Z][\w.'-]+|and|de|van|von|al-\w+)){0,5})$")
_MARKUP_LINE = re.compile(r"^\.[A-Z][A-Z_]+[ \t]*$")
#: how a first line that is a sentence, not a headline, ends; a question mark is not among them:
#: "Could Yukos be a blessing in disguise?" heads a story as often as a statement does
_SENTENCE_END = re.compile(r"[.!:;\"\u201d]$")


def read(source: SourceFile) -> Iterator[Article]:
    text = source.read_text()
    article = parse_text(text, source)
    if article is None:
        raise IngestError(source.relative, "empty file (no text)")
    yield article


_HEADER_MARKS = re.compile(r"^[^\w\s\"'\u201c(]{1,4}[ \t]*")
_HEADER_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 -]{0,24}):[ \t]+(?P<value>\S.*)$")
_HEADER_KEYS = {"title": "title", "headline": "title", "subject": "title", "by": "author",
                "byline": "author", "author": "author", "from": "author", "date": "date",
                "published": "date", "url": "url", "link": "url", "source": "source"}
_URL = re.compile(r"^(?:https?://|www\.)\S+$", re.I)
_BY = re.compile(r"^By[ \t]+(\S.*)$", re.I)
#: a mail or news header's sender: "Name <address>" or "address (Name)"
_SENDER = re.compile(r"^\s*\"?(?P<a>[^<\"]+?)\"?\s*<[^>]+>\s*$|^\s*\S+@\S+\s*\((?P<b>[^)]+)\)\s*$")
_MAX_KEY_LINES = 30


def header_block(text: str) -> tuple[dict[str, object], str]:
    """The fields of a header block opening ``text`` and the text after it (see the module's
    docstring); ``({}, text)`` when the text does not open with one. Lines of a ``Key:
    value`` block that name no field go to ``extra`` (a mail header's Organization,
    Keywords...)."""
    lines = text.split("\n")
    run = 0
    while run < min(len(lines), _MAX_KEY_LINES) and _HEADER_KEY.match(lines[run].strip()):
        run += 1
    if run >= 2:  # "Key: value" lines, up to a blank or any other line (mail has no blank)
        values = [(m.group("key").strip().lower(), m.group("value").strip())
                  for line in lines[:run] if (m := _HEADER_KEY.match(line.strip()))]
        rest, keyed = "\n".join(lines[run:]), True
    else:
        head, _, rest = text.partition("\n\n")
        marked = [line.strip() for line in head.split("\n")]
        if not 2 <= len(marked) <= 8 or any(not line or len(line) > 200 for line in marked):
            return {}, text
        marks = {m.group(0).strip() for line in marked if (m := _HEADER_MARKS.match(line))}
        if len(marks) != 1 or not all(_HEADER_MARKS.match(line) for line in marked):
            return {}, text
        values, keyed = [("", _HEADER_MARKS.sub("", line)) for line in marked], False
    fields: dict[str, object] = {}
    extra: dict[str, str] = {}
    unplaced: list[str] = []
    for key, value in values:
        name = _HEADER_KEYS.get(key) or ("" if keyed else _kind_of(value))
        if name == "author":
            value = _BY.sub(r"\1", value)
            if key == "from" and (m := _SENDER.match(value)):
                value = (m.group("a") or m.group("b")).strip()
        parsed = parse_date(value) if name == "date" else value
        if name and parsed and name not in fields:
            fields[name] = parsed
        elif not keyed and not name and not fields.get("title"):
            fields["title"] = value
        elif keyed and not name:
            extra.setdefault(key, value)
        else:
            unplaced.append(value)  # kept: it goes back to the top of the body
    if len(fields) < 2:  # one field and some lines: a list or a poem, not a header
        return {}, text
    if extra:
        fields["extra"] = extra
    return fields, "\n\n".join([*unplaced, rest.strip()]) if unplaced else rest.strip()


def _kind_of(value: str) -> str:
    if _URL.match(value):
        return "url"
    if _BY.match(value):
        return "author"
    if re.search(r"\d{4}|\d:\d\d", value) and parse_date(value):
        return "date"
    return ""


def parse_text(text: str, source: SourceFile, *, headers: bool = True,
               **explicit: object) -> Article | None:
    """Split plain text into an Article; ``explicit`` fields (from metadata) win. Markdown
    passes ``headers=False``: its metadata is the front matter, whose lines, when the YAML
    is broken, are text and not a header block."""
    text = without_markup_lines(text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        return None
    header, text = header_block(text) if headers else ({}, text)
    if header:
        header.setdefault("title", "")
        if "date" in header:
            header["date_source"] = "explicit"
        explicit = {**header, **{k: v for k, v in explicit.items() if v}}
        text = text.strip()
        if not text and not header["title"]:
            return None
    paragraphs = [_squash(p) for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    title = ""
    first_line, _, rest = text.partition("\n")
    if header.get("title"):
        pass  # the header block named the headline: the body starts after it
    elif rest.startswith("\n") or rest.strip() == "" and len(paragraphs) == 1:
        if looks_like_headline(first_line) and len(paragraphs) > 1:
            title = first_line.strip()
            paragraphs = paragraphs[1:]

    author = credits = dateline = signoff = ""
    captions: list[str] = []
    body: list[str] = []
    for index, para in enumerate(paragraphs):
        if not body and not author and (m := _BYLINE.match(para)):
            author = m.group(1)
            continue
        if _CAPTION.search(para):
            captions.append(para)
            continue
        if _CREDITS.match(para):
            credits = para.strip("()")
            continue
        if index == len(paragraphs) - 1 and body and is_signoff(para) \
                and (named := signoff_source(para, source.options.source_names)):
            signoff = named
            continue
        body.append(para)

    if not body:
        body, captions = captions, []
    tags = strip_wire_tags("\n\n".join(body), source.options.source_names)
    body_text, dateline = tags.body, tags.dateline
    signoff, credits = signoff or tags.source, credits or tags.credits
    fields: dict[str, object] = {
        "title": title or lead_title(body_text),
        "source": signoff,
        "author": author,
        "credits": credits,
        "dateline": dateline,
        "captions": tuple(captions),
    }
    fields.update({k: v for k, v in explicit.items() if v})
    return Article(id=source.article_id(), body=body_text, path=source.relative,
                   **fields)  # type: ignore[arg-type]


def without_markup_lines(text: str) -> str:
    """``text`` without the corpus markup lines opening or closing it (``.START``, ``.END``).

    Research copies of news text (the Penn Treebank's raw WSJ files and their kin) mark where a
    story starts with a line holding only a dot command; it is neither headline nor text."""
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and (not lines[start].strip() or _MARKUP_LINE.match(lines[start])):
        start += 1
    while end > start and (not lines[end - 1].strip() or _MARKUP_LINE.match(lines[end - 1])):
        end -= 1
    return "\n".join(lines[start:end])


def looks_like_headline(line: str) -> bool:
    line = line.strip()
    words = line.split()
    return 0 < len(words) <= 20 and len(line) <= 150 and not _SENTENCE_END.search(line)


def is_signoff(para: str) -> bool:
    """A short closing line naming the source: ``Reuters``, ``AP``, ``-- BBC News``."""
    words = para.strip(" -\u2013\u2014").split()
    return 0 < len(words) <= 4 and len(para) <= 40 and not re.search(r"[.!?,;:]$", para) \
        and all(w[:1].isupper() or w[:1] in "&(\u00a9" for w in words)


def _squash(paragraph: str) -> str:
    """Join hard-wrapped lines of one paragraph into a single line."""
    return " ".join(line.strip() for line in paragraph.strip().split("\n"))

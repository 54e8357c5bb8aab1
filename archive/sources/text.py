"""Plain-text articles: the seed's layout, "headline on the first line", and wire copy.

Recognised structure, all optional:

* a headline line (short, no sentence-ending punctuation, followed by a blank line);
  without one the title is cut from the lead sentence;
* a byline (``By Jane Doe``) -> ``author``;
* a wire dateline opening the body (``BEIRUT (Reuters) -``) -> ``dateline`` and ``source``;
* photo captions, paragraphs ending in ``(Photo: ...)`` -> ``captions``;
* credit lines (``(Reporting by ...; Editing by ...)``) -> ``credits``;
* a short trailing sign-off (``Reuters``) -> ``source``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.outlets import signoff_source

TITLE_LENGTH = 90

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n+")
_CAPTION = re.compile(r"\((?:Photo|Picture|Image|Credit)s?\s*:[^)]*\)\s*$", re.I)
_CREDITS = re.compile(r"^\((?:\w+\s+)?(?:Reporting|Writing|Editing|Additional reporting)\b.*\)$",
                      re.I | re.S)
_BYLINE = re.compile(r"^By\s+([A-Z][\w.'-]+(?:\s+(?:[A-Z][\w.'-]+|and|de|van|von|al-\w+)){0,5})$")
_DATELINE = re.compile(
    r"^(?P<place>[A-Z][A-Z .'/-]{1,40}?)(?:,\s*[A-Z][\w.]*(?:\s+\d{1,2})?)?\s*"
    r"\((?P<source>[A-Z][\w&. ]{1,30})\)\s*[-\u2013\u2014]+\s*")
_SENTENCE_END = re.compile(r"[.!?:;\"\u201d]$")


def read(source: SourceFile) -> Iterator[Article]:
    text = source.read_text()
    article = parse_text(text, source)
    if article is None:
        raise IngestError(source.relative, "empty file (no text)")
    yield article


def parse_text(text: str, source: SourceFile, **explicit: object) -> Article | None:
    """Split plain text into an Article; ``explicit`` fields (from metadata) win."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return None
    paragraphs = [_squash(p) for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    title = ""
    first_line, _, rest = text.partition("\n")
    if rest.startswith("\n") or rest.strip() == "" and len(paragraphs) == 1:
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

    if body and (m := _DATELINE.match(body[0])):
        dateline = m.group("place").strip().title()
        signoff = signoff or m.group("source").strip()
        body[0] = body[0][m.end():]
    if not body:
        body, captions = captions, []
    body_text = "\n\n".join(body)
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


def looks_like_headline(line: str) -> bool:
    line = line.strip()
    words = line.split()
    return 0 < len(words) <= 20 and len(line) <= 150 and not _SENTENCE_END.search(line)


def is_signoff(para: str) -> bool:
    """A short closing line naming the source: ``Reuters``, ``AP``, ``-- BBC News``."""
    words = para.strip(" -\u2013\u2014").split()
    return 0 < len(words) <= 4 and len(para) <= 40 and not re.search(r"[.!?,;:]$", para) \
        and all(w[:1].isupper() or w[:1] in "&(\u00a9" for w in words)


def lead_title(body: str, limit: int = TITLE_LENGTH) -> str:
    """A readable title from the lead sentence, cut at a word boundary with an ellipsis."""
    lead = body.strip().split("\n", 1)[0]
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z\"\u201c])", lead, maxsplit=1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit + 1].rsplit(" ", 1)[0].rstrip(",;:-\u2013\u2014 ")
    return cut + "\u2026"


def _squash(paragraph: str) -> str:
    """Join hard-wrapped lines of one paragraph into a single line."""
    return " ".join(line.strip() for line in paragraph.strip().split("\n"))

"""SMART test collections: many ``.I`` records per file, each field behind a one-letter marker.

The layout Cornell's SMART system gave the classic retrieval collections (CISI, Cranfield,
CACM, ADI, MED and their kin): a record starts with ``.I`` and its number, then fields each
introduced by a line holding only a marker: ``.T`` title, ``.A`` author (one per line),
``.B`` the bibliographic line, ``.W`` the text, and ``.X``, ``.K``, ``.C``, ``.N`` for
citations, keywords, categories and entry notes (kept out of the article).

The same layout holds a collection's queries (``.I`` and ``.W``, most without a title): a file
whose name says so (``cran.qry``, ``query.text``) or in which most records have no title is
passed over as the collection's data, not read as articles.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from archive.article import Article
from archive.sources import MANIFEST, NotAnArticleFile, SourceFile
from archive.sources.fields import Cursor, guarded, title_from

#: a record's first line: ``.I`` and its number
RECORD = re.compile(r"^\.I[ \t]+(\S+)[ \t]*\r?$", re.M)
_MARKER = re.compile(r"^\.([A-Z])[ \t]*\r?$")
#: name parts that mark a collection's query file
_QUERY_NAMES = re.compile(r"qry|quer", re.I)


def read(source: SourceFile) -> Iterator[Article]:
    """Every record with a title or text, in file order."""
    cursor = Cursor()
    yield from guarded(source, _articles(source, cursor), cursor, "no .I records found")


def _articles(source: SourceFile, cursor: Cursor) -> Iterator[Article]:
    text = source.read_text()
    starts = list(RECORD.finditer(text))
    records = [(m.group(1), text.count("\n", 0, m.start()) + 1,
                _fields(text[m.end():starts[i + 1].start() if i + 1 < len(starts) else None]))
               for i, m in enumerate(starts)]
    titled = sum(1 for _, _, fields in records if fields.get("T", "").strip())
    if records and (_QUERY_NAMES.search(Path(source.inner_name).name) or titled * 2 < len(records)):
        raise NotAnArticleFile(source.relative, "a SMART collection's queries, not its documents",
                               MANIFEST)
    for number, line, fields in records:
        cursor.line = line
        title = " ".join(fields.get("T", "").split())
        body = _paragraphs(fields.get("W", ""))
        if not title and not body:
            source.warn(f"record {number} has neither title nor text; skipped", line)
            continue
        authors = [" ".join(a.split()) for a in fields.get("A", "").splitlines()]
        yield Article(
            id=source.article_id(number), title=title or title_from(body), body=body,
            path=source.relative, date=None, date_source="unknown",
            author="; ".join(a for a in authors if a), external_id=number,
            extra={"citation": " ".join(fields["B"].split())}
            if fields.get("B", "").strip() else {})


def _fields(record: str) -> dict[str, str]:
    """Marker letter -> the lines under it (a repeated marker adds a paragraph to its field)."""
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in record.splitlines():
        m = _MARKER.match(line)
        if m:
            current = fields.setdefault(m.group(1), [])
            if current:
                current.append("")
        elif current is not None:
            current.append(line)
    return {letter: "\n".join(lines) for letter, lines in fields.items()}


def _paragraphs(raw: str) -> str:
    """Paragraphs split at blank lines; the lines inside one joined."""
    parts = (" ".join(p.split()) for p in re.split(r"\n[ \t\r]*\n", raw))
    return "\n\n".join(p for p in parts if p)

"""Reading one input file, before the index is touched: hash it, classify it, read and enrich
its articles, and keep what went wrong.

It needs nothing from the index or the run, so the same code runs in the indexing process and
on a Dask worker (``archive.distributed``); the run decides afterwards, under its lock, what
the result does to the index (``Indexer.take``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from archive.article import Article
from archive.enrich import enrich
from archive.sources import IngestError, NotAnArticleFile, SourceFile, classify, read_articles


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Examined:
    """What reading one changed file gave, before the index is touched.

    It is all a run needs to decide what the file's articles do to the index, so the reading
    can happen elsewhere: in this process, or on a Dask worker (``archive.distributed``), which
    sends this back with each article standing for itself by id and signature.
    """

    relative: str
    size: int
    mtime_ns: int
    digest: str = ""            # "" when the file could not be read (``error`` says why)
    same: bool = False          # its bytes hash as the manifest's: nothing was parsed
    format_name: str | None = None
    rule: str = ""              # why it was passed over, when ``format_name`` is None
    articles: list = field(default_factory=list)  # Articles (or a worker's stand-ins)
    error: IngestError | None = None
    warnings: list[IngestError] = field(default_factory=list)
    read: bool = False          # a reader ran over it (counts in ``files_read``)


def examine(source: SourceFile, size: int, mtime_ns: int, old_digest: str | None) -> Examined:
    """Hash, classify, read and enrich one file whose size or mtime changed."""
    found = Examined(source.relative, size, mtime_ns)
    try:
        found.digest = file_digest(source.path)
    except OSError as exc:
        found.error = IngestError(source.relative, f"cannot read: {exc.strerror}")
        return found
    if old_digest == found.digest:
        found.same = True
        return found
    found.format_name, found.rule = classify(source)
    if found.format_name:
        found.articles, found.error = read_file(source, found.format_name)
        found.read = True
        found.warnings = list(source.warnings)
    if isinstance(found.error, NotAnArticleFile) and not found.articles:
        found.format_name, found.rule = None, found.error.rule
    return found


def read_file(source: SourceFile, format_name: str) -> tuple[list[Article], IngestError | None]:
    """All the articles a file yields, and the error that stopped it, if any."""
    articles: list[Article] = []
    try:
        for article in read_articles(source, format_name):
            articles.append(enrich(article))
    except IngestError as exc:
        return articles, exc
    except Exception as exc:  # a reader bug must not abort the run: report it
        return articles, IngestError(source.relative, f"reader failed: {exc!r}")
    if not articles:
        return articles, IngestError(source.relative, "no articles found")
    return articles, None



"""What a Dask worker runs for an indexing run: read a batch of files, then write the articles
the client asks for as one complete Whoosh segment.

Both run without the index's lock and without touching the index's TOC: the client alone
decides (under its lock) what goes in and commits it. A batch's articles stay in the worker's
memory between the two steps; only a summary travels to the client (each article as its id,
MinHash values and a digest of the document it would write). If the worker dies, Dask reruns
the reading from the same inputs, so nothing is lost and, as only the client commits, nothing
is written twice.

A segment reaches the client one of two ways. Where the worker can see the index folder (a
shared file system: the probe file the client wrote there holds the run's token), it is
written into a folder of its own under ``.incoming`` in the index folder, and the client moves
its files into place. Otherwise it is written into a temporary folder on the worker and its
files come back as bytes through Dask.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from archive import columns, store
from archive.article import Article
from archive.enrich.duplicates import DuplicateFinder, article_text
from archive.reading import Examined, examine
from archive.sources import ReaderOptions, SourceFile

#: the folder, inside the index folder, where workers that see it leave their segments
INCOMING = ".incoming"
#: the file in INCOMING that holds the run's token: a worker that reads it sees the folder
PROBE = "probe"


@dataclass
class Keyed:
    """An article read on a worker, as the client needs it: its id, for the clusters its
    MinHash values, and for "has it changed?" a digest of the document it would write."""

    id: str
    hashes: np.ndarray
    docsum: str


@dataclass
class Planned:
    """One file for a worker to read: where it is, its name in the index, what the client's
    stat saw, and the manifest's hash of it (None for a file new to the index)."""

    path: str
    relative: str
    size: int
    mtime_ns: int
    old_digest: str | None


@dataclass
class Shipped:
    """A segment a worker wrote, with its columnar sidecar: in ``folder`` (shared with the
    client; the sidecar in its ``columns.COLUMNS_DIR``), or as ``files`` and
    ``sidecar_files`` (the sidecar's file names to bytes)."""

    segment: Any
    names: list[str]
    folder: str | None = None
    files: dict[str, bytes] | None = None
    sidecar_files: dict[str, bytes] | None = None


def document_digest(article: Article) -> str:
    """A digest of the Whoosh document an article writes, cluster aside (the cluster is the
    client's to decide): equal digests mean the committed copy is what the file holds now."""
    doc = store.to_document(replace(article, cluster=""))
    text = json.dumps(doc, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_batch(files: list[Planned], options: ReaderOptions) -> tuple[list[Examined],
                                                                      list[Article]]:
    """Read a batch: what each file gave (articles as Keyed), and the articles themselves."""
    finder = DuplicateFinder()
    found: list[Examined] = []
    kept: list[Article] = []
    for planned in files:
        source = SourceFile(Path(planned.path), planned.relative, options)
        result = examine(source, planned.size, planned.mtime_ns, planned.old_digest)
        kept.extend(result.articles)
        result.articles = [
            Keyed(a.id, np.asarray(finder.signature(article_text(a)).hashvalues),
                  document_digest(a)) for a in result.articles]
        found.append(result)
    return found, kept


def summary(batch: tuple[list[Examined], list[Article]]) -> list[Examined]:
    """The part of a read batch that travels to the client."""
    return batch[0]


def sees(staging: str, token: str) -> bool:
    """Whether this worker sees the client's index folder (reads the run's probe file)."""
    try:
        return (Path(staging) / PROBE).read_text("utf-8") == token
    except OSError:
        return False


def write_segment(batch: tuple[list[Examined], list[Article]], clusters: dict[str, str],
                  staging: str | None, token: str, require_shared: bool = False) -> Shipped:
    """The batch's articles named in ``clusters``, with those clusters, as one segment, and
    the segment's columnar sidecar tapped from its postings as they are written (so the
    client need not read the segment back to write it)."""
    articles = [replace(a, cluster=clusters[a.id]) for a in batch[1] if a.id in clusters]
    shared = staging is not None and sees(staging, token)
    if require_shared and not shared:
        raise RuntimeError(f"this worker cannot see the index folder's {staging}")
    folder = Path(tempfile.mkdtemp(prefix="segment-", dir=staging if shared else None))
    try:
        ix = store.create_index(folder)
        writer = store.ArchiveWriter(ix, lock=False,
                                     tap=columns.PostingsTap(folder / columns.COLUMNS_DIR))
        store.add_articles(writer, articles)
        segment = writer.finalize_segment()
        names = sorted(n for n in os.listdir(folder) if segment.segid in n)
        if shared:
            return Shipped(segment, names, folder=str(folder))
        sidecar = folder / columns.COLUMNS_DIR / segment.segment_id()
        return Shipped(segment, names, files={n: (folder / n).read_bytes() for n in names},
                       sidecar_files={p.name: p.read_bytes() for p in sidecar.iterdir()}
                       if sidecar.is_dir() else None)
    finally:
        if not shared:
            shutil.rmtree(folder, ignore_errors=True)

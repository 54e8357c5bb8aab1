"""What a Dask worker runs for a site build's search bundle (``archive site --cluster``).

Every task reads the index itself, read-only, from the folder the client names: so the index
folder must be visible to the workers at the same path (a shared file system), and a worker
that cannot open it says so in one line. A task's inputs are its arguments and the index on
disk, nothing scattered: the article numbering and the weighting's statistics are recomputed
on each worker (once per worker process), so when a worker dies Dask can rerun any task from
its lineage, and every rerun gives the same bytes.

The bundle's work in tasks:

- ``segment_lists``: one Whoosh segment's term and pair lists, cut into its shard files;
- ``article_range``: a range of article numbers: their files, ids, facet values and days.

Files come back as bytes (``FileBatch``): the client's ``OutputFolder`` writes them, and alone
decides what changed.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archive import store
from archive.search import Archive
from archive.site.files import FileBatch
from archive.site.search import articles, postings, segments
from archive.site.search.format import FACETS


class IndexNotShared(RuntimeError):
    """A worker cannot open the index folder the client named: one line for the user."""


class IndexChanged(RuntimeError):
    """The index a worker opened is not the generation the client builds from."""


@dataclass(frozen=True)
class IndexAt:
    """The index as the client opened it: its folder (absolute) and its generation."""

    folder: str
    generation: int


@dataclass
class Opened:
    """One worker process's open index and what every task over it needs."""

    archive: Archive
    numbering: postings.Numbering


_OPENED: dict[IndexAt, Opened] = {}
_LOCK = threading.Lock()   # a worker may run tasks on several threads


def worker_name(worker: Any = None) -> str:
    """This worker's address, for messages (``worker``: one ``client.run`` hands over)."""
    if worker is None:
        try:
            from distributed import get_worker
            worker = get_worker()
        except (ImportError, ValueError):
            return "(address unknown)"
    return f"at {worker.address}"


def opened(at: IndexAt, worker: Any = None) -> Opened:
    """The index ``at`` names, opened once per worker process (an earlier one closed)."""
    with _LOCK:
        found = _OPENED.get(at)
        if found is not None:
            return found
        for old in _OPENED.values():
            old.archive.close()
        _OPENED.clear()
        try:
            archive = Archive(Path(at.folder))
        except (store.IndexMissing, OSError) as exc:
            raise IndexNotShared(
                f"the Dask worker {worker_name(worker)} cannot open the index folder {at.folder} "
                f"({exc}); the site build reads the index on the workers, so they must see "
                "that folder at the same path (a shared file system)") from None
        generation = archive.searcher.reader().generation()
        if generation != at.generation:
            archive.close()
            raise IndexChanged(
                f"the index in {at.folder} is at generation {generation} on the Dask worker "
                f"{worker_name(worker)}, not {at.generation} as on this machine (it changed during "
                "the build, or the worker sees another copy): build the site again")
        found = _OPENED[at] = Opened(archive, postings.Numbering(archive))
        return found


def check_index(at: IndexAt, dask_worker: Any = None) -> int:
    """Run on every worker before the build (``client.run``): opens the index, so a worker
    that cannot see it fails the build at once, and the others have it open when the tasks
    come; the number of articles it holds."""
    return len(opened(at, dask_worker).numbering)


# --- segments' lists ---------------------------------------------------------------------------

def segment_lists(at: IndexAt, index: int, prefix: str, shard_bytes: int,
                  head_size: int) -> tuple[segments.SegmentLists, dict[str, bytes]]:
    """Segment ``index``'s term and pair shard files, as the in-process build writes them."""
    opened_index = opened(at)
    batch = FileBatch()
    work = Path(tempfile.mkdtemp(prefix="archive-segment-"))
    try:
        found = segments.build_segment(opened_index.archive, opened_index.numbering, index,
                                       batch, prefix, shard_bytes, head_size, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return found, batch.files


# --- articles --------------------------------------------------------------------------------

@dataclass
class ArticleRange:
    """A range of articles: what the client needs (files, ids, facet values, days)."""

    first: int
    files: dict[str, bytes] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    facets: list[dict[str, Any]] = field(default_factory=list)
    days: list[int | None] = field(default_factory=list)


def article_range(at: IndexAt, first: int, end: int, prefix: str) -> ArticleRange:
    """Articles ``first`` to ``end`` (exclusive): the article pass of the in-process build."""
    index = opened(at)
    batch = FileBatch()
    done = ArticleRange(first)
    for number, stored in articles.article_pass(index.archive, index.numbering, batch,
                                                prefix, first, end):
        done.ids.append(stored["id"])
        done.facets.append({name: stored.get(name) for name in FACETS})
        done.days.append(articles.day_of(stored, number, index.numbering.dated))
    done.files = batch.files
    return done

"""The bundle's second process: a forked helper (``processes.Child``) that builds units' term
and pair lists while the parent reads the articles, then takes its share of the rest.

Each task (a unit's pair lists, or its term lists) is claimed by whichever process is free
(``claims``); the helper's result reports the tasks' counts and the files it wrote, so the parent's ``OutputFolder`` counts
those files too. Any failure in the helper, or its death, raises ``BundleProcessFailed`` in
the parent.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from whoosh.searching import Searcher

from archive import processes, store
from archive.search import Archive
from archive.site.files import OutputFolder
from archive.site.search.postings import Numbering
from archive.site.search import segments
from archive.site.search.segments import SegmentLists

WHAT = "the search bundle's helper process"


class BundleProcessFailed(processes.ChildFailed):
    """The bundle's helper process failed or died; the bundle is incomplete."""


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB).

    Each process measures its own (RUSAGE_SELF): RUSAGE_CHILDREN would also hold every
    earlier child of the parent, e.g. the indexer's writers."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class OwnReader:
    """The archive's searcher over the same segments, on file handles of this process's own.

    A forked child shares its parent's open files and so each file's read offset: Whoosh's
    plain-read storage (``mmap=False``) seeks, then reads, so two processes reading through
    one handle would read each other's bytes. The same segments opened afresh give the same
    postings, statistics and scores (deletions come with the segment objects)."""

    def __init__(self, archive: Archive):
        reader = archive.searcher.reader()
        # an empty index's one "leaf" is an EmptyReader, whose segment is None
        live = [leaf.segment() for leaf, _ in reader.leaf_readers()
                if leaf.segment() is not None]
        fresh = store.segments_reader(archive.index, live, reader.generation())
        self.index = archive.index
        self.searcher = Searcher(fresh, weighting=archive.searcher.weighting)


def claims(folder: Path, stage: str, parts: Iterable[int]) -> Iterator[int]:
    """The parts (tasks) this process takes: each is claimed by creating a marker file
    (O_EXCL, so exactly one process gets it) just before it is worked on, so whichever
    process is free takes the next one, and both finish at about the same time."""
    for p in parts:
        try:
            os.close(os.open(folder / f"{stage}-{p}.claim",
                             os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        yield p


class Helper:
    """The forked helper, seen from the parent."""

    def __init__(self, child: processes.Child):
        self.child = child
        self.peak_rss_mb = 0.0

    @classmethod
    def start(cls, archive: Archive, numbering: Numbering, root: Path, prefix: str,
              shard_bytes: int, head_size: int, work: Path, todo: list[int]) -> Helper | None:
        """Fork the helper; None (build in one process) when the system refuses a fork."""
        child = processes.Child.start(
            lambda: _run(archive, numbering, root, prefix, shard_bytes, head_size, work,
                              todo),
            WHAT, talks=False, error=BundleProcessFailed)
        return cls(child) if child is not None else None

    def finish(self, out: OutputFolder) -> list[SegmentLists]:
        """Wait for the helper's tasks (a ``SegmentLists`` each, ``segments.combine``
        joins a unit's two); its files join ``out``'s count."""
        lists, wrote, self.peak_rss_mb = self.child.result()
        try:
            out.merge(wrote)
        except ValueError as exc:
            raise BundleProcessFailed(f"the search bundle's helper: {exc}") from None
        return lists

    def stop(self) -> None:
        """Close the pipes; a helper still running (only after a failure) is killed."""
        self.child.stop()


def _run(archive: Archive, numbering: Numbering, root: Path, prefix: str, shard_bytes: int,
         head_size: int, work: Path, todo: list[int]) -> tuple[Any, ...]:
    """The helper's side: the tasks it claims, then its report."""
    out = OutputFolder(root)
    source = OwnReader(archive)
    tasks = segments.tasks(source, todo)
    parts = [segments.build_part(source, numbering, tasks[t][0], tasks[t][1], out, prefix,
                                 shard_bytes, head_size, work)
             for t in claims(work, "task", range(len(tasks)))]
    return parts, out.record(), peak_rss_mb()

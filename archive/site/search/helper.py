"""The bundle's second process: a forked helper (``processes.Child``) that builds the term lists
while the parent reads the articles, then shares the pair partitions with it.

The conversation, over the child's ``processes.Line``:

1. the helper builds the term lists at once (they need no article pass);
2. the parent, its pairs spooled, tells it the partition count; both encode partitions,
   each taking the next unclaimed one, and the helper replies with its (lists, bytes);
3. the parent, the shard count known from the summed sizes, tells it that count; both write
   the pair shards of the partitions they claim, and the helper's result reports what it
   wrote, so the parent's ``OutputFolder`` counts those files too.

Any failure in the helper, or its death, raises ``BundleProcessFailed`` in the parent.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whoosh.searching import Searcher

from archive import processes, store
from archive.search import Archive
from archive.site.files import OutputFolder
from archive.site.search import pairs, postings
from archive.site.search.format import shard_count
from archive.site.search.pairs import PairSpool
from archive.site.search.postings import Numbering

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
        segments = [leaf.segment() for leaf, _ in reader.leaf_readers()
                    if leaf.segment() is not None]
        fresh = store.segments_reader(archive.index, segments, reader.generation())
        self.index = archive.index
        self.searcher = Searcher(fresh, weighting=archive.searcher.weighting)


def claims(folder: Path, stage: str, partitions: int) -> Iterator[int]:
    """The partitions this process takes: each is claimed by creating a marker file (O_EXCL,
    so exactly one process gets it) just before it is worked on, so whichever process is
    free takes the next one, and both finish at about the same time."""
    for p in range(partitions):
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
        self.terms = self.term_shards = 0
        self.peak_rss_mb = 0.0

    @classmethod
    def start(cls, archive: Archive, numbering: Numbering, root: Path, prefix: str,
              shard_bytes: int, head_size: int, work: Path) -> Helper | None:
        """Fork the helper; None (build in one process) when the system refuses a fork."""
        child = processes.Child.start(
            lambda line: _run(archive, numbering, root, prefix, shard_bytes, head_size, work,
                              line),
            WHAT, talks=True, error=BundleProcessFailed)
        return cls(child) if child is not None else None

    def share_pairs(self, spool: PairSpool, out: OutputFolder, prefix: str, shard_bytes: int,
                    head_size: int) -> tuple[int, int]:
        """The pair phase, shared with the helper: (pair lists, pair shards)."""
        folder, partitions = spool.folder, spool.partitions
        self.child.tell(partitions)
        count, total = pairs.encode_partitions(folder, claims(folder, "encode", partitions),
                                               head_size)
        its_count, its_total = self.child.hear()
        nshards = shard_count(total + its_total, shard_bytes, partitions)
        self.child.tell(nshards)
        pairs.write_partitions(folder, claims(folder, "write", partitions), partitions,
                               nshards, out, prefix)
        self.terms, self.term_shards, wrote, self.peak_rss_mb = self.child.result()
        try:
            out.merge(wrote)
        except ValueError as exc:
            raise BundleProcessFailed(f"the search bundle's helper: {exc}") from None
        return count + its_count, nshards

    def stop(self) -> None:
        """Close the pipes; a helper still running (only after a failure) is killed."""
        self.child.stop()


def _run(archive: Archive, numbering: Numbering, root: Path, prefix: str, shard_bytes: int,
         head_size: int, work: Path, line: processes.Line) -> tuple[Any, ...]:
    """The helper's side: terms, then its share of the pair partitions, then its report."""
    out = OutputFolder(root)
    terms, term_shards, _ = postings.build_terms(OwnReader(archive), numbering, out, prefix,
                                                 shard_bytes, head_size)
    partitions = line.receive()   # the parent has spooled every pair
    line.send(pairs.encode_partitions(work, claims(work, "encode", partitions), head_size))
    nshards = line.receive()
    pairs.write_partitions(work, claims(work, "write", partitions), partitions, nshards, out,
                           prefix)
    return terms, term_shards, out.record(), peak_rss_mb()

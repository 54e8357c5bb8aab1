"""What a Dask worker runs for a site build's search bundle (``archive site --cluster``).

Every task reads the index itself, read-only, from the folder the client names: so the index
folder must be visible to the workers at the same path (a shared file system), and a worker
that cannot open it says so in one line. A task's inputs are its arguments and the index on
disk, nothing scattered: the article numbering and the weighting's statistics are recomputed
on each worker (once per worker process), so when a worker dies Dask can rerun any task from
its lineage, and every rerun gives the same bytes.

The bundle's work in tasks:

- ``term_range``: the scored lists of the terms in one range of the term list;
- ``article_range``: a range of article numbers: their files, ids, facet values and days,
  and their pair records by partition;
- the shuffles: ``term_pick``/``pair_pick`` take one group's share of a range's result, and
  ``term_group_files``, ``pair_group`` and ``pair_group_files`` build a group's shards.

Files come back as bytes (``FileBatch``): the client's ``OutputFolder`` writes them, and alone
decides what changed.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archive import store
from archive.search import Archive
from archive.site.files import FileBatch
from archive.site.search import articles, pairs, postings
from archive.site.search.format import FACETS, Entry, entry_bytes


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
    scorer: postings.FieldScorer


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
        found = _OPENED[at] = Opened(archive, postings.Numbering(archive),
                                     postings.FieldScorer(archive))
        return found


def check_index(at: IndexAt, dask_worker: Any = None) -> int:
    """Run on every worker before the build (``client.run``): opens the index, so a worker
    that cannot see it fails the build at once, and the others have it open when the tasks
    come; the number of articles it holds."""
    return len(opened(at, dask_worker).numbering)


# --- term lists --------------------------------------------------------------------------------

def term_range(at: IndexAt, start: str, stop: str | None, head_size: int) -> list[Entry]:
    """The encoded lists of the terms in [start, stop)."""
    index = opened(at)
    return postings.term_entries(index.archive, index.numbering, head_size, index.scorer,
                                 start, stop)


def entries_size(entries: list[Entry] | dict[int, list[Entry]]) -> tuple[int, int]:
    """(lists, shard bytes) of a task's entries: all the client needs to count the shards."""
    if isinstance(entries, dict):
        entries = list(itertools.chain.from_iterable(entries.values()))
    return len(entries), sum(entry_bytes(e) for e in entries)


def term_pick(entries: list[Entry], nshards: int, groups: int, group: int) -> list[Entry]:
    """The lists of one range whose shard falls in ``group`` (shard mod groups)."""
    shards = postings.term_shards(entries, nshards, range(group, nshards, groups))
    return list(itertools.chain.from_iterable(shards.values()))


def term_group_files(picked: list[list[Entry]], nshards: int, groups: int, group: int,
                     prefix: str) -> dict[str, bytes]:
    """The term shard files of ``group`` (every one, empty or not) from each range's pick."""
    shards = postings.term_shards(itertools.chain.from_iterable(picked), nshards,
                                  range(group, nshards, groups))
    batch = FileBatch()
    postings.write_shards(batch, prefix, "t", shards)
    return batch.files


# --- articles and pairs ------------------------------------------------------------------------

@dataclass
class ArticleRange:
    """A range of articles: what the client needs (files, ids, facet values, days), and the
    pair records by partition (which stay on the workers)."""

    first: int
    files: dict[str, bytes] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    facets: list[dict[str, Any]] = field(default_factory=list)
    days: list[int | None] = field(default_factory=list)
    pairs: dict[int, bytes] = field(default_factory=dict)


def article_range(at: IndexAt, first: int, end: int, prefix: str,
                  partitions: int) -> ArticleRange:
    """Articles ``first`` to ``end`` (exclusive): the article pass of the in-process build."""
    index = opened(at)
    batch = FileBatch()
    done = ArticleRange(first)
    chunks: dict[int, list[bytes]] = {}
    for number, stored, found in articles.article_pass(index.archive, index.numbering, batch,
                                                       prefix, index.scorer, first, end):
        done.ids.append(stored["id"])
        done.facets.append({name: stored.get(name) for name in FACETS})
        done.days.append(articles.day_of(stored, number, index.numbering.dated))
        for p, records in pairs.pair_records(number, found, partitions).items():
            chunks.setdefault(p, []).append(records)
    done.files = batch.files
    done.pairs = {p: b"".join(records) for p, records in chunks.items()}
    return done


def article_part(done: ArticleRange) -> ArticleRange:
    """What of a range travels to the client: all but its pair records."""
    return ArticleRange(done.first, done.files, done.ids, done.facets, done.days)


def pair_pick(done: ArticleRange, groups: int, group: int) -> dict[int, bytes]:
    """A range's pair records of the partitions in ``group`` (partition mod groups)."""
    return {p: data for p, data in done.pairs.items() if p % groups == group}


def pair_group(picked: list[dict[int, bytes]], partitions: int, groups: int, group: int,
               head_size: int) -> dict[int, list[Entry]]:
    """Each partition of ``group`` encoded, its records taken range by range in article
    order (as the in-process spool holds them)."""
    return {p: pairs.partition_entries(b"".join(pick.get(p, b"") for pick in picked),
                                       head_size)
            for p in range(group, partitions, groups)}


def pair_group_files(encoded: dict[int, list[Entry]], partitions: int, nshards: int,
                     prefix: str) -> dict[str, bytes]:
    """The pair shard files the partitions of a group own."""
    batch = FileBatch()
    for p, entries in encoded.items():
        postings.write_shards(batch, prefix, "p",
                              pairs.partition_shards(entries, p, partitions, nshards))
    return batch.files

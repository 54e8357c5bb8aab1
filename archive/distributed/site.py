"""The search bundle of a site build on a Dask cluster (``archive site --cluster/--workers``):
the client side.

The workers do what costs: a task per Whoosh segment cuts its term and pair lists into shard
files, and ranges of articles write their files (``archive.distributed.sitetasks``).
The client plans the ranges, writes what comes back into the site's ``OutputFolder`` (so
"what changed" is decided in one place), and does the small serial rest of the in-process
build: id blocks, facets, days, ``meta``. The files are byte for byte the in-process
build's: the same functions run on the same index, only split into ranges.

The plan is a set of tasks submitted at once (``submit``), so the site's pages can be
written here while the workers run it.

Two rules keep a killed worker harmless. Nothing a task needs is scattered: its arguments
and the index are all it reads, so Dask can recompute any lost result from its lineage. And
every future stays held until the build ends, so no result is released while a later task
may still need it rerun; a task counts as failed only if it raised.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from archive.distributed import sitetasks
from archive.distributed.sitetasks import IndexAt, IndexChanged, IndexNotShared
from archive.search import Archive
from archive.site.files import OutputFolder
from archive.site.search import BundleReport, articles, segments
from archive.site.search.bundle import collection_stats, finish_bundle
from archive.site.search.format import BUNDLE_PREFIX
from archive.site.search.postings import Numbering

__all__ = ["BundleTaskFailed", "DistributedBundle", "IndexChanged", "IndexNotShared",
           "SITE_ERRORS"]

#: ranges of articles and of terms per worker: enough that a slow or lost worker's share is
#: small, few enough that the scheduler's per-task cost stays small
RANGES_PER_WORKER = 4


class BundleTaskFailed(RuntimeError):
    """A task of the bundle raised on the cluster (or killed its workers): one line."""


#: what a build on the cluster raises for the user: one line each
SITE_ERRORS = (BundleTaskFailed, IndexChanged, IndexNotShared)


class DistributedBundle:
    """One bundle build on the cluster of ``client`` for ``archive`` (opened from ``folder``,
    which the workers must see at the same path)."""

    def __init__(self, client: Any, archive: Archive, folder: Path, *,
                 prefix: str = BUNDLE_PREFIX, shard_bytes: int = 768, head_size: int = 64,
                 ranges: int | None = None):
        self.client, self.archive = client, archive
        self.at = IndexAt(str(Path(folder).resolve()),
                          archive.searcher.reader().generation())
        self.prefix, self.shard_bytes, self.head_size = prefix, shard_bytes, head_size
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        self.ranges = ranges or RANGES_PER_WORKER * workers
        # the client's own numbering (each worker computes the same from the same index)
        self.numbering = Numbering(archive)
        self.run = secrets.token_hex(4)
        self.futures: list[Any] = []   # every future of the build, held until it ends
        self.what: dict[str, str] = {}  # a task's key -> what it builds, for messages
        self.total = 0                 # tasks in the plan (``done``: those finished)
        self.waited = 0.0              # seconds this process spent waiting for the cluster
        self.started = time.perf_counter()
        self._articles: list[Any] = []
        self._segments: list[Any] = []

    # -- the plan -------------------------------------------------------------------------------

    def submit(self) -> DistributedBundle:
        """Submit every task (a segment's lists each, and ranges of articles); returns at
        once."""
        self.started = time.perf_counter()
        count = len(self.numbering)
        self.check_workers()
        # the largest units of segments first: they take longest
        sizes = [unit.articles for unit in segments.units(self.archive)]
        for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
            self._segments.append(self._submit(
                sitetasks.segment_lists, self.at, i, self.prefix, self.shard_bytes,
                self.head_size, name=f"segment-{i}", priority=1,
                what=f"term and pair lists of segment unit {i}"))
        self._articles = [self._submit(sitetasks.article_range, self.at, first, end, self.prefix,
                                       name=f"articles-{first}", priority=2,
                                       what=f"articles numbered {first} to {end - 1}")
                          for first, end in article_ranges(count, self.ranges)]
        return self

    def check_workers(self) -> None:
        """Have every worker open the index now: one that cannot see it (or sees another
        generation) fails the build before any page is written. A worker joining later
        meets the same check in its first task."""
        began = time.perf_counter()
        try:
            self.client.run(sitetasks.check_index, self.at)
        finally:
            self.waited += time.perf_counter() - began

    def _submit(self, function: Callable[..., Any], *args: Any, name: str,
                priority: int = 0, what: str | None = None) -> Any:
        future = self.client.submit(function, *args, key=f"archive-site-{self.run}-{name}",
                                    priority=priority)
        self.futures.append(future)
        self.what[future.key] = what or f"task {name}"
        self.total += 1
        return future

    # -- the results ----------------------------------------------------------------------------

    def result(self, future: Any) -> Any:
        """A task's result; a failure as one line naming the task it started in (a task
        fails only when it raised, or killed every worker that ran it)."""
        began = time.perf_counter()
        try:
            return future.result()
        except (IndexNotShared, IndexChanged):
            raise
        except Exception as exc:
            # dependents fail with their dependency's error: name the first task that failed
            origin = next((f for f in self.futures if f.status == "error"), future)
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise BundleTaskFailed(f"the search bundle's {self.what[origin.key]} failed on "
                                   f"the Dask cluster: {reason}") from None
        finally:
            self.waited += time.perf_counter() - began

    @property
    def done(self) -> int:
        return sum(1 for future in self.futures if future.status == "finished")

    def finish(self, out: OutputFolder, progress: Callable[[int, int], None] | None = None) \
            -> BundleReport:
        """Wait for the tasks, write their files into ``out``, and the rest of the bundle."""
        before = (out.written, len(out.produced), out.bytes_total)
        count = len(self.numbering)
        tell = progress or (lambda done, total: None)
        try:
            facets = articles.Facets()
            days: list[list[int]] = []
            ids = articles.IdBlocks(out, self.prefix, len(self.numbering))
            documents = articles.document_keys(self.archive, self.numbering)
            rows: list[list[Any]] = []   # the in-process pass's memory of the articles
            for future in self._articles:
                part = self.result(future)
                for relative, data in part.files.items():
                    out.write(relative, data)
                for offset, article_id in enumerate(part.ids):
                    number = part.first + offset
                    ids.add(number, article_id)
                    facets.add(number, part.facets[offset])
                    articles.add_day(days, number, part.days[offset])
                    rows.append(articles.cache_row(
                        documents[number], article_id, part.days[offset], part.facets[offset],
                        len(part.files[f"{self.prefix}/a/{number}.js"])))
                tell(self.done, self.total)
            articles.remember(out, self.prefix, rows)
            lists = []
            for future in self._segments:
                found, files = self.result(future)
                for relative, data in files.items():
                    out.write(relative, data)
                lists.append(found)
                tell(self.done, self.total)
            order = {segid: i for i, segid in enumerate(segments.segment_ids(self.archive))}
            lists.sort(key=lambda found: order[found.segid])
            finish_bundle(out, self.prefix, facets, days, self.numbering, lists,
                          collection_stats(self.archive, self.numbering))
            # the same segment cache as the in-process build's, so a later build reuses
            segments.remember(out, self.prefix, segments.fingerprints(
                self.archive, self.numbering, self.prefix, self.shard_bytes, self.head_size),
                lists)
        finally:
            self.release()
        return BundleReport(
            files=len(out.produced) - before[1], written=out.written - before[0],
            bytes=out.bytes_total - before[2], articles=count,
            terms=sum(found.terms for found in lists), pairs=sum(found.pairs for found in lists),
            term_shards=sum(found.term_shards for found in lists),
            pair_shards=sum(found.pair_shards for found in lists), segments=len(lists),
            seconds=round(time.perf_counter() - self.started, 3))

    def summary(self) -> dict[str, Any]:
        """The cluster's part of the build, for the site's report."""
        return {"scheduler": self.client.scheduler.address, "run": self.run,
                "workers": len(self.client.scheduler_info().get("workers", {})),
                "tasks": self.total, "ranges": self.ranges,
                "client_wait_seconds": round(self.waited, 3)}

    def release(self) -> None:
        """Let go of every future (cancelling whatever still runs after a failure)."""
        futures, self.futures = self.futures, []
        if futures:
            self.client.cancel(futures)


def article_ranges(count: int, ranges: int) -> list[tuple[int, int]]:
    """``count`` article numbers cut into up to ``ranges`` consecutive ranges of about equal
    size: [(first, end)]."""
    ranges = max(1, min(ranges, count))
    cuts = [count * i // ranges for i in range(ranges + 1)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]

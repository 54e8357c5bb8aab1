"""One measurement in a fresh process: ``python -m bench.worker TASK 'JSON args'``.

Prints one JSON line: the task's figures plus ``peak_rss_mb`` (this process's ru_maxrss).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import folder_bytes, peak_rss_mb, rss_parts_mb


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (e.g. Whoosh's writer processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def read_all(inputs: list[str], enrich: bool = False) -> list[Any]:
    from archive.enrich import enrich as enrich_article
    from archive.sources import discover, format_of, read_articles

    out = []
    for source in discover(inputs):
        name = format_of(source)
        if name is None:
            continue
        for article in read_articles(source, name):
            out.append(enrich_article(article) if enrich else article)
    return out


def archive_build(inputs: list[str], index: str, rebuild: bool,
                  columns_from: str | None = "writer", procs: int | None = None,
                  merge_policy: str = "archive", **opts: Any) -> dict[str, Any]:
    """``archive index`` as the CLI runs it (read + enrich + write + commit); ``columns_from``
    and ``procs`` as ``Indexer`` takes them (the sidecars benchmark varies them);
    ``merge_policy`` "whoosh" commits with Whoosh's own MERGE_SMALL instead of the
    archive's policy (the merges benchmark)."""
    from whoosh.writing import MERGE_SMALL

    from archive.indexer import Indexer
    from archive.store import fastwriter

    # writer processes: store.default_procs() unless given, recorded
    indexer = Indexer(Path(index), columns_from=columns_from, procs=procs)
    policy = fastwriter.merge_small_segments
    if merge_policy == "whoosh":
        fastwriter.merge_small_segments = MERGE_SMALL
    started = time.perf_counter()
    try:
        report = indexer.run(inputs, rebuild=rebuild)
    finally:  # a test runs this in its own process
        fastwriter.merge_small_segments = policy
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "procs": indexer.procs, "added": report.added,
            "updated": report.updated,
            "unchanged": report.unchanged, "removed": report.removed,
            "files_read": report.files_read, "bytes": folder_bytes(Path(index))}


def archive_write(inputs: list[str], index: str, **writer: Any) -> dict[str, Any]:
    """Whoosh alone: articles read and enriched first (untimed), then the timed part is
    ``store.add_articles`` + ``commit`` into a fresh index, with the archive's writer settings
    unless ``writer`` overrides them (e.g. ``procs=2, multisegment=True, limitmb=128``)."""
    import shutil

    from archive import store

    articles = read_all(inputs, enrich=True)
    folder = Path(index)
    if folder.exists():
        shutil.rmtree(folder)
    started, cpu_before = time.perf_counter(), cpu_seconds()
    ix = store.create_index(folder)
    w = ix.writer(**writer) if writer else store.open_writer(ix, folder)
    store.add_articles(w, articles)
    w.commit()
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_before
    with ix.searcher() as s:
        docs = s.doc_count()
    return {"seconds": seconds, "write_cpu_seconds": cpu, "docs": docs,
            "bytes": folder_bytes(folder)}


def fts5_build(inputs: list[str], db: str) -> dict[str, Any]:
    """Read with the archive's own readers (no enrichment), then load FTS5."""
    from bench import fts

    started = time.perf_counter()
    articles = read_all(inputs)
    read = time.perf_counter() - started
    count = fts.build(Path(db), articles)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "read_seconds": read, "insert_seconds": seconds - read,
            "docs": count, "bytes": Path(db).stat().st_size}


def read_only(inputs: list[str], enrich: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    articles = read_all(inputs)
    read = time.perf_counter() - started
    enrich_seconds = None
    if enrich:
        from archive.enrich import enrich as enrich_article
        t = time.perf_counter()
        for a in articles:
            enrich_article(a)
        enrich_seconds = time.perf_counter() - t
    return {"seconds": read, "enrich_seconds": enrich_seconds, "docs": len(articles)}


def query_times(system: str, queries: str, index: str | None = None, db: str | None = None
                ) -> dict[str, Any]:
    """One system's latency over the queries bench's query set (in the JSON file
    ``queries``), a warm-up pass then a timed one, as ``bench.queries.measure`` runs it: in a
    process of its own, so the process's peak memory is the query-time memory of that system."""
    from bench import queries as bench_queries

    runners = {"archive": lambda: bench_queries.archive_runner(Path(index or ""), facets=False),
               "archive+facets": lambda: bench_queries.archive_runner(Path(index or ""),
                                                                       facets=True),
               "fts5": lambda: bench_queries.fts5_runner(Path(db or ""))}
    chosen = json.loads(Path(queries).read_text("utf-8"))
    started = time.perf_counter()
    run = runners[system]()
    opened = time.perf_counter() - started
    times = bench_queries.measure({system: run}, chosen)[system]
    # while the index is still open: how much of the resident memory is mapped sidecar
    # pages (file-backed: the page cache's, shared, dropped under memory pressure)
    return {"system": system, "open_seconds": opened, "times": times,
            "rss_after_queries_mb": rss_parts_mb()}


def bundle_build(index: str, site: str, procs: int | None = None) -> dict[str, Any]:
    """The static site's search bundle alone (no article pages), as ``archive site`` builds it."""
    from bench.static_search_bench import build
    return build(Path(index), Path(site), procs=procs)


def duplicate_adds(system: str, folder: str) -> dict[str, Any]:
    """The duplicate finder or its datasketch peer adding a set of signatures."""
    from bench.duplicates import adds
    return adds(system, folder)


TASKS = {"archive_build": archive_build, "archive_write": archive_write,
         "fts5_build": fts5_build, "read_only": read_only, "query_times": query_times,
         "bundle_build": bundle_build, "duplicate_adds": duplicate_adds}


def main() -> None:
    task, args = sys.argv[1], json.loads(sys.argv[2])
    result = TASKS[task](**args)
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    # CPU time (this process and any writer subprocesses): less sensitive than wall time to
    # other work on a shared machine
    result["cpu_seconds"] = round(cpu_seconds(), 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

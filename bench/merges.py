"""What the writer's merge policy costs a build and its queries: one set built both ways.

``whoosh`` commits with Whoosh's own ``MERGE_SMALL``, which weighs every segment by a
Fibonacci rule and so merges ever larger segments as an index grows; ``archive`` with the
policy ``archive index`` uses (``store.fastwriter.merge_small_segments``: only segments under
``SETTLED_SEGMENT_DOCS`` live articles are merged). Each build is a fresh
``Indexer.run(rebuild=True)`` in a process of its own with ``--procs`` writer processes (two
by default: the case that leaves the most segments). Then the queries bench's five kinds of
query, drawn from the index's own headlines (the same queries for both), time each index's
columnar path with facet counts, each in a process of its own: whether the segments left
unmerged cost the queries anything.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import folder_bytes, run_worker

POLICIES = ("whoosh", "archive")


def headline_queries(index: Path, per_kind: int, seed: int) -> list[dict[str, Any]]:
    """The queries bench's query set (``bench.queries.make_queries``'s kinds and fields),
    drawn from the stored headlines and dates of articles picked at random."""
    from archive.search import Archive
    from bench.queries import KINDS, title_words

    rng = random.Random(seed)
    with Archive(index) as archive:
        searcher = archive.searcher
        count = searcher.doc_count_all()
        heads: list[tuple[list[str], str]] = []
        for _ in range(per_kind * len(KINDS) * 20):
            if len(heads) >= per_kind * len(KINDS) or not count:
                break
            fields = searcher.stored_fields(rng.randrange(count))
            words = title_words(fields.get("title") or "")
            if len(words) >= 2:
                date = fields.get("date")
                heads.append((words, str(date.year) if date else "2005"))
    out: list[dict[str, Any]] = []
    for n, kind in enumerate(k for k in KINDS for _ in range(per_kind)):
        words, year = heads[n % len(heads)] if heads else (["news", "today"], "2005")
        i = rng.randrange(len(words) - 1)
        out.append({"kind": kind, "w1": words[i], "w2": words[i + 1],
                    "other": words[rng.randrange(len(words))], "year": year})
    return out


def run(corpora: Sequence[tuple[str, Path]], folder: Path, procs: int = 2, per_kind: int = 60,
        seed: int = 5) -> list[dict[str, Any]]:
    from bench.queries import percentile
    from bench.site_update import segment_count

    rows: list[dict[str, Any]] = []
    for name, source in corpora:
        built: dict[str, dict[str, Any]] = {}
        for policy in POLICIES:
            index = folder / f"{name}-{policy}"
            shutil.rmtree(index, ignore_errors=True)
            result = run_worker("archive_build", inputs=[str(source)], index=str(index),
                                rebuild=True, procs=procs, merge_policy=policy)
            built[policy] = {**result, "segments": segment_count(index),
                             "index_mb": folder_bytes(index) / 1e6}
        queries = folder / f"{name}-queries.json"
        queries.write_text(json.dumps(headline_queries(folder / f"{name}-archive", per_kind,
                                                       seed)), "utf-8")
        whoosh_seconds = built["whoosh"]["seconds"]
        for policy in POLICIES:
            timed = run_worker("query_times", system="archive+facets", queries=str(queries),
                               index=str(folder / f"{name}-{policy}"))
            times = [t for kind in timed["times"].values() for t in kind]
            result = built[policy]
            rows.append({"corpus": name, "policy": policy, "articles": result["added"],
                         "seconds": result["seconds"], "cpu_s": result.get("cpu_seconds"),
                         "x_whoosh": result["seconds"] / whoosh_seconds,
                         "peak_rss_mb": result.get("peak_rss_mb"),
                         "segments": result["segments"], "index_mb": result["index_mb"],
                         "queries": len(times), "p50_ms": percentile(times, 50),
                         "p95_ms": percentile(times, 95)})
        for policy in POLICIES:
            shutil.rmtree(folder / f"{name}-{policy}", ignore_errors=True)
    return rows


COLUMNS = [("corpus", "corpus", ""), ("policy", "merge policy", ""),
           ("articles", "articles", ","), ("seconds", "build s", ".1f"),
           ("cpu_s", "build CPU s", ".1f"), ("x_whoosh", "x whoosh", ".3f"),
           ("peak_rss_mb", "peak RSS MB", ".0f"), ("segments", "segments", ""),
           ("index_mb", "index MB", ".1f"), ("queries", "queries", ""),
           ("p50_ms", "query p50 ms", ".1f"), ("p95_ms", "query p95 ms", ".1f")]

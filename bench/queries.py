"""Query latency: top-10 searches with highlights, archive vs SQLite FTS5, same queries.

Queries are drawn (seeded) from the corpus's real headlines, ``--per-kind`` of each kind:

=============  ===========================================  ==================================
kind           archive query                                FTS5
=============  ===========================================  ==================================
one-word       ``word``                                     ``"word"`` ORDER BY bm25
two-word       ``word1 word2`` (AND)                        ``"word1" "word2"`` (AND)
phrase         ``"word1 word2"`` (adjacent in a headline)   ``"word1 word2"``
field+date     ``title:word date:YYYY`` (headline's year)   ``title:"word"`` AND date in YYYY
sorted         ``word``, sort=newest                        ``"word"`` ORDER BY date DESC
=============  ===========================================  ==================================

Each query asks for the top 10 with a highlighted body snippet: the archive through
``Archive.search(..., facets=False)`` (hits with ``Hit.snippet``) and, as ``archive+facets``,
with the source/year/place/topic facet counts the CLI shows; FTS5 through ``snippet()``.
``archive`` answers from the columnar sidecars (``archive.columns``; phrases there too, on
the sidecar's positions); ``archive, whoosh path`` is the same search with
``use_columns=False``, every query through Whoosh's matchers, as before the columns. ``whoosh top-10 only`` is the floor under
the archive: Whoosh's own top-10 collector on the same parsed query and weighting, with none of
the archive's work (no highlights, exact totals, collapsed copies or fallback). Every system
runs all queries once to warm up, then once timed (``--repeat N``: N timed passes, the systems
taking turns, each query's fastest kept). Indexes are built once into
``bench/data/query-index/<corpus>`` (archive) and ``<corpus>.sqlite`` (FTS5) and reused.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from archive.analysis import STOP_WORDS
from bench.common import run_worker

KINDS = ("one-word", "two-word", "phrase", "field+date", "sorted")


def ensure_indexes(name: str, source: Path, folder: Path) -> tuple[Path, Path]:
    index, db = folder / name, folder / f"{name}.sqlite"
    marker = index / ".bench-complete"
    if not marker.is_file() or not db.is_file() or not _analysed_as_now(index):
        if index.exists():
            shutil.rmtree(index)
        folder.mkdir(parents=True, exist_ok=True)
        run_worker("archive_build", inputs=[str(source)], index=str(index), rebuild=True)
        run_worker("fts5_build", inputs=[str(source)], db=str(db))
        marker.write_text(str(source))
    else:  # an index kept from an earlier run: sidecars of an older layout are rewritten
        from archive import columns, store
        columns.sync_columns(index, store.open_index(index))
    return index, db


def _analysed_as_now(index: Path) -> bool:
    """Whether a kept index was analysed as the archive analyses now (else it is rebuilt: its
    words, and so its results, would be an older version's)."""
    from archive import analysis, store
    return analysis.analyses_alike(store.open_index(index).schema["body"].analyzer)


def title_words(title: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z]+", title.lower())
            if len(w) >= 3 and w not in STOP_WORDS]


def make_queries(db: Path, per_kind: int, seed: int) -> list[dict[str, Any]]:
    con = sqlite3.connect(db)
    heads = [(t, d) for t, d in con.execute("SELECT title, date FROM docs ORDER BY rowid")
             if len(title_words(t)) >= 2]
    con.close()
    rng = random.Random(seed)
    years = sorted({d[:4] for _, d in heads if d}) or ["2005"]
    out: list[dict[str, Any]] = []
    for kind in KINDS:
        for _ in range(per_kind):
            title, date = heads[rng.randrange(len(heads))]
            words = title_words(title)
            i = rng.randrange(len(words) - 1)
            year = date[:4] if date else rng.choice(years)
            out.append({"kind": kind, "w1": words[i], "w2": words[i + 1],
                        "other": words[rng.randrange(len(words))], "year": year})
    return out


def archive_query(q: dict[str, Any]) -> tuple[str, str]:
    """(query text, sort) of a bench query, as a user would type it."""
    kind = q["kind"]
    if kind == "one-word":
        return q["w1"], "relevance"
    if kind == "two-word":
        return f"{q['w1']} {q['other']}", "relevance"
    if kind == "phrase":
        return f'"{q["w1"]} {q["w2"]}"', "relevance"
    if kind == "field+date":
        return f"title:{q['w1']} date:{q['year']}", "relevance"
    return q["w1"], "newest"


def archive_runner(index: Path, facets: bool, use_columns: bool = True
                   ) -> Callable[[dict[str, Any]], int]:
    from archive.search import Archive
    archive = Archive(index, use_columns=use_columns)
    if use_columns and archive.column_index() is None:
        raise SystemExit(f"{index}: no columnar sidecars (delete it to rebuild)")

    def run(q: dict[str, Any]) -> int:
        text, sort = archive_query(q)
        page = archive.search(text, sort=sort, page_size=10, facets=facets)
        return len(page.hits)
    return run


def whoosh_runner(index: Path) -> Callable[[dict[str, Any]], int]:
    """Whoosh alone, as the floor under the archive's layer: the same parsed query and
    weighting, top 10 by Whoosh's own collector (with its block-quality skipping), stored
    titles read; no highlights, no exact total, no copies collapsed, no fallback."""
    from whoosh.sorting import FieldFacet

    from archive.search import Archive
    archive = Archive(index)

    def run(q: dict[str, Any]) -> int:
        text, sort = archive_query(q)
        sortedby = FieldFacet("date", reverse=True) if sort == "newest" else None
        results = archive.searcher.search(archive.parser.parse(text), limit=10,
                                          sortedby=sortedby)
        return len([hit["title"] for hit in results])
    return run


def fts5_runner(db: Path) -> Callable[[dict[str, Any]], int]:
    con = sqlite3.connect(db)
    select = ("SELECT id, title, date, snippet(docs, 1, '[', ']', '\u2026', 24) FROM docs "
              "WHERE docs MATCH ?")

    def run(q: dict[str, Any]) -> int:
        kind, args = q["kind"], []
        if kind == "one-word":
            sql, args = select + " ORDER BY bm25(docs) LIMIT 10", [f'"{q["w1"]}"']
        elif kind == "two-word":
            sql, args = select + " ORDER BY bm25(docs) LIMIT 10", [f'"{q["w1"]}" "{q["other"]}"']
        elif kind == "phrase":
            sql, args = select + " ORDER BY bm25(docs) LIMIT 10", [f'"{q["w1"]} {q["w2"]}"']
        elif kind == "field+date":
            sql = select + " AND date >= ? AND date < ? ORDER BY bm25(docs) LIMIT 10"
            args = [f'title:"{q["w1"]}"', q["year"], str(int(q["year"]) + 1)]
        else:
            sql, args = select + " ORDER BY date DESC LIMIT 10", [f'"{q["w1"]}"']
        return len(con.execute(sql, args).fetchall())
    return run


def measure(systems: dict[str, Callable[[dict[str, Any]], int]],
            queries: Sequence[dict[str, Any]], repeat: int = 1
            ) -> dict[str, dict[str, list[float]]]:
    """Each system's time per query, by kind: every system runs every query once to warm up,
    then ``repeat`` timed passes, each pass every system in turn, and each query keeps its
    fastest time (other jobs on a shared machine only ever slow a query down, and taking
    turns spreads their load over the systems alike)."""
    for runner in systems.values():  # warm-up pass
        for q in queries:
            runner(q)
    best = {name: [float("inf")] * len(queries) for name in systems}
    for _ in range(max(1, repeat)):
        for name, runner in systems.items():
            for i, q in enumerate(queries):
                started = time.perf_counter()
                runner(q)
                best[name][i] = min(best[name][i], (time.perf_counter() - started) * 1000)
    out: dict[str, dict[str, list[float]]] = {}
    for name, times in best.items():
        out[name] = {k: [] for k in KINDS}
        for q, spent in zip(queries, times):
            out[name][q["kind"]].append(spent)
    return out


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile, the one every latency figure of the queries bench uses
    (the scale curve too, so its figures compare with this bench's)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def run(corpora: Sequence[tuple[str, Path]], folder: Path, per_kind: int, seed: int,
        repeat: int = 1) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, source in corpora:
        index, db = ensure_indexes(name, source, folder)
        queries = make_queries(db, per_kind, seed)
        systems = {"archive": archive_runner(index, facets=False),
                   "archive, whoosh path": archive_runner(index, facets=False,
                                                          use_columns=False),
                   "archive+facets": archive_runner(index, facets=True),
                   "whoosh top-10 only": whoosh_runner(index),
                   "fts5": fts5_runner(db)}
        results = measure(systems, queries, repeat)
        fts_all = [t for ts in results["fts5"].values() for t in ts]
        fts_p95 = percentile(fts_all, 95)
        for system, times in results.items():
            every = [t for ts in times.values() for t in ts]
            row = {"corpus": name, "system": system, "queries": len(every),
                   "p50": statistics.median(every), "p95": percentile(every, 95),
                   "vs_fts5_p95": percentile(every, 95) / fts_p95 if fts_p95 else None}
            for kind in KINDS:
                row[f"p95_{kind}"] = percentile(times[kind], 95)
            rows.append(row)
    return rows


COLUMNS = [("corpus", "corpus", ""), ("system", "system", ""), ("queries", "queries", "d"),
           ("p50", "p50 ms", ".1f"), ("p95", "p95 ms", ".1f"), ("vs_fts5_p95", "p95 x FTS5", ".1f")
           ] + [(f"p95_{k}", f"p95 {k}", ".1f") for k in KINDS]

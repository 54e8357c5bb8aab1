"""Relevance: the archive (``archive eval``) beside reference BM25 engines, same queries.

Systems, all scored by ``archive.evaluate`` on the same queries and qrels, top 1000:

* ``archive`` -- the collection's JSONL indexed by ``archive index``, scored by running the
  ``archive eval`` command itself (a subprocess, ``--json``).
* ``bm25s`` -- bm25s (Lucene BM25, k1=1.5, b=0.75) over title + body, with bm25s' own English
  stop list and the Snowball English stemmer (PyStemmer).
* ``bm25s-archive-analyzer`` -- the same bm25s scoring over the archive's own analyzer's tokens,
  separating analysis from scoring.
* ``fts5`` -- SQLite FTS5, ``porter unicode61`` tokenizer, ``ORDER BY bm25()`` (k1=1.2,
  b=0.75); the query is its distinct words, each quoted, joined with OR.
* ``whoosh-bm25f`` -- the archive's own index and free-text query (``Archive.free_text_query``)
  searched with Whoosh's stock ``scoring.BM25F()`` (B=0.75, K1=1.2, no field weights) instead
  of the archive's weighting: what the archive's ranking adds over plain Whoosh.

``summary`` gives per collection the archive's MAP over the best peer's (``vs best``).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from archive.evaluate import EvalReport, evaluate, read_qrels, read_queries
from bench import testcollections
from bench.common import REPO, archive_command

Ranker = Callable[[str], Sequence[str]]


def load_docs(docs_path: Path) -> list[dict[str, Any]]:
    with open(docs_path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def archive_cli(*args: str, ok: tuple[int, ...] = (0,)) -> str:
    """Run the ``archive`` command (a subprocess; in-process under ``BENCH_INPROCESS``);
    an exit status not in ``ok`` raises (``archive search`` exits 1 when nothing matches)."""
    if os.environ.get("BENCH_INPROCESS"):
        from click.testing import CliRunner

        from archive.cli import main
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        if result.exit_code not in ok:
            raise RuntimeError(f"archive {args[0]} failed: {result.output[-2000:]}")
        return result.stdout
    done = subprocess.run(archive_command(*args),
                          capture_output=True, text=True, cwd=REPO)
    if done.returncode not in ok:
        raise RuntimeError(f"archive {args[0]} failed: {done.stderr[-2000:]}")
    return done.stdout


def index_archive(docs_path: Path, index_dir: Path) -> float:
    started = time.perf_counter()
    archive_cli("index", str(docs_path), "--index", str(index_dir), "--rebuild", "--json",
                "--no-progress")
    return time.perf_counter() - started


def eval_archive(queries: Path, qrels: Path, index_dir: Path) -> dict[str, Any]:
    return json.loads(archive_cli("eval", str(queries), str(qrels), "--index", str(index_dir),
                                  "--json"))


def bm25s_ranker(docs: list[dict[str, Any]], analyzer: str = "bm25s") -> Ranker:
    import bm25s
    import Stemmer

    texts = [f"{d.get('title', '')}\n{d.get('body', '')}" for d in docs]
    ids = [str(d["id"]) for d in docs]
    if analyzer == "archive":
        from archive.analysis import news_analyzer
        analyze = news_analyzer()

        def tokens(text: str) -> list[str]:
            return [t.text for t in analyze(text)]

        retriever = bm25s.BM25()
        retriever.index([tokens(t) for t in texts], show_progress=False)
        query_tokens = tokens
    else:
        stemmer = Stemmer.Stemmer("english")
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer,
                                       show_progress=False), show_progress=False)

        def query_tokens(text: str) -> list[str]:
            return bm25s.tokenize([text], stopwords="en", stemmer=stemmer, return_ids=False,
                                  show_progress=False)[0]

    def rank(text: str) -> list[str]:
        words = [w for w in query_tokens(text) if w in retriever.vocab_dict]
        if not words:
            return []
        k = min(1000, len(ids))
        found, scores = retriever.retrieve([words], k=k, show_progress=False)
        return [ids[i] for i, s in zip(found[0], scores[0]) if s > 0]

    return rank


def fts5_ranker(docs: list[dict[str, Any]]) -> Ranker:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, title, body, "
               "tokenize='porter unicode61')")
    db.executemany("INSERT INTO docs VALUES (?, ?, ?)",
                   [(str(d["id"]), d.get("title", ""), d.get("body", "")) for d in docs])

    def rank(text: str) -> list[str]:
        words = list(dict.fromkeys(re.findall(r"\w+", text.lower())))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute("SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) "
                          "LIMIT 1000", (match,))
        return [r[0] for r in rows]

    return rank


def whoosh_bm25f_ranker(index_dir: Path) -> Ranker:
    """Whoosh's stock BM25F over the archive's index, with the archive's free-text query."""
    from whoosh import scoring

    from archive.search import Archive

    archive = Archive(index_dir)
    searcher = archive.index.searcher(weighting=scoring.BM25F())

    def rank(text: str) -> list[str]:
        q = archive.free_text_query(text)
        if q is None:
            return []
        results = searcher.search(q, limit=1000)
        return [archive._tables.doc_key(results.docnum(n))
                for n in range(results.scored_length())]

    rank.close = lambda: (searcher.close(), archive.close())  # type: ignore[attr-defined]
    return rank


def row(collection: str, system: str, report: dict[str, Any], seconds: float
        ) -> dict[str, Any]:
    mean = report["mean"]
    return {"collection": collection, "system": system, "map": mean["ap"],
            "ndcg10": mean["ndcg10"], "p10": mean["p10"], "r100": mean["r100"],
            "queries": report["queries"], "seconds": round(seconds, 2)}


def run(data: Path, names: Sequence[str] = testcollections.COLLECTIONS) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in names:
        docs_path, queries_path, qrels_path = testcollections.paths(data, name)
        if not docs_path.is_file():
            raise FileNotFoundError(f"{docs_path} missing: run `python -m bench convert` first")
        index_dir = data / name / "index"
        build = index_archive(docs_path, index_dir)
        started = time.perf_counter()
        report = eval_archive(queries_path, qrels_path, index_dir)
        rows.append({**row(name, "archive", report, time.perf_counter() - started),
                     "index_seconds": round(build, 2)})
        docs = load_docs(docs_path)
        queries, qrels = read_queries(queries_path), read_qrels(qrels_path)
        for system, make in (("whoosh-bm25f", lambda: whoosh_bm25f_ranker(index_dir)),
                             ("bm25s", lambda: bm25s_ranker(docs)),
                             ("bm25s-archive-analyzer", lambda: bm25s_ranker(docs, "archive")),
                             ("fts5", lambda: fts5_ranker(docs))):
            started = time.perf_counter()
            ranker = make()
            result: EvalReport = evaluate(queries, qrels, ranker)
            getattr(ranker, "close", lambda: None)()
            rows.append(row(name, system, result.to_dict(per_query=False),
                            time.perf_counter() - started))
    return rows


#: the peers the ranking issue names; ``bm25s-archive-analyzer`` is this bench's own diagnostic
#: (bm25s over the archive's analyzer), counted as a peer too unless these are asked for
NAMED_PEERS = ("bm25s", "fts5", "whoosh-bm25f")


def best_peers(rows: Sequence[dict[str, Any]],
               systems: Sequence[str] | None = None) -> dict[str, float]:
    """Per collection, the best MAP of any system but the archive (of ``systems`` only, when
    given)."""
    best: dict[str, float] = {}
    for r in rows:
        if r["system"] != "archive" and (systems is None or r["system"] in systems):
            best[r["collection"]] = max(best.get(r["collection"], 0.0), r["map"])
    return best


def summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per collection: the archive's MAP, the best peer's, and their ratio."""
    out = []
    named_best = best_peers(rows, NAMED_PEERS)
    for name in dict.fromkeys(r["collection"] for r in rows):
        mine = [r for r in rows if r["collection"] == name and r["system"] == "archive"]
        peers = [r for r in rows if r["collection"] == name and r["system"] != "archive"]
        if not mine or not peers:
            continue
        best = max(peers, key=lambda r: r["map"])
        named = named_best.get(name, 0.0)
        out.append({"collection": name, "queries": mine[0]["queries"],
                    "archive": mine[0]["map"], "best_peer": best["system"],
                    "best_map": best["map"],
                    "ratio": mine[0]["map"] / best["map"] if best["map"] else None,
                    "named_ratio": mine[0]["map"] / named if named else None})
    return out


SUMMARY_COLUMNS = [("collection", "collection", ""), ("queries", "queries", "d"),
                   ("archive", "archive MAP", ".4f"), ("best_peer", "best peer", ""),
                   ("best_map", "its MAP", ".4f"), ("ratio", "archive / best", ".3f"),
                   ("named_ratio", "/ best of bm25s, fts5, whoosh", ".3f")]


COLUMNS = [("collection", "collection", ""), ("system", "system", ""), ("map", "MAP", ".4f"),
           ("ndcg10", "nDCG@10", ".4f"), ("p10", "P@10", ".4f"), ("r100", "R@100", ".4f"),
           ("queries", "queries", "d"), ("seconds", "seconds", ".2f")]

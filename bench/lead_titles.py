"""Titles made from the lead, searched or not: ``python -m bench lead-titles``.

A reader that finds no title makes one from the body's lead, and the index does not search it
(``archive.article.title_to_index``): its words are the body's already. The one collection of
the suite without titles (NPL) is where that was seen, so it is checked here on the others:
each collection that has titles is indexed again with every title taken away (records with no
body left are dropped), once as the archive indexes it and once with the lead-made titles
searched as titles (the archive before the change, ``title_to_index`` replaced for the build),
and both are scored over the lever grid (``bench/levers.py``, the settings every scorer
computes) from the same postings. No peers: the two variants are compared with each other, at
the archive's setting and each at its own best setting in hindsight.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from unittest import mock

from bench import levers, testcollections

VARIANTS = ("lead searched", "lead not searched")


def untitled_copy(data: Path, name: str, into: Path) -> int:
    """``name``'s records with their titles taken away, at ``into/docs.jsonl``; the queries
    and judgments beside them. Returns the records written."""
    docs, queries, qrels = testcollections.paths(data, name)
    into.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(docs, encoding="utf-8") as src, \
            open(into / "docs.jsonl", "w", encoding="utf-8") as out:
        for line in src:
            record = json.loads(line)
            if not str(record.get("body") or "").strip():
                continue  # a title-only record would have nothing left
            record["title"] = ""
            out.write(json.dumps(record) + "\n")
            written += 1
    for path in (queries, qrels):
        (into / path.name).write_bytes(path.read_bytes())
    return written


def build(docs: Path, index_dir: Path, lead_searched: bool) -> None:
    """Index ``docs`` at ``index_dir`` in this process (one writer), the lead-made titles
    searched as titles or not."""
    from archive import store
    from archive.indexer import Indexer

    def searched(title: str, body: str) -> str:
        return title
    with mock.patch.object(store.schema, "title_to_index", searched) if lead_searched \
            else nullcontext():
        report = Indexer(index_dir, procs=1).run([docs], rebuild=True)
    if report.skipped:
        raise RuntimeError(f"indexing {docs}: {report.skipped[0]}")


def run(data: Path, work: Path, names: list[str] | None = None) -> dict[str, Any]:
    from archive.evaluate import read_qrels, read_queries

    settings = levers.computable_by_every_scorer(levers.grid() + levers.bm25f_grid())
    current = levers.Setting()
    rows = []
    for name in names or [n for n in testcollections.COLLECTIONS if n != "npl"]:
        if not testcollections.paths(data, name)[0].is_file():
            continue
        folder = work / name
        records = untitled_copy(data, name, folder)
        if not records:
            continue  # e.g. a Reuters copy without the ModApte test split
        queries = read_queries(folder / "queries.tsv")
        qrels = read_qrels(folder / "qrels.txt")
        maps = {}
        for variant in VARIANTS:
            index_dir = folder / variant.replace(" ", "-")
            build(folder / "docs.jsonl", index_dir, variant == "lead searched")
            postings = levers.CollectionPostings.read(index_dir, queries)
            maps[variant] = {s: m["ap"] for s, m in postings.evaluate_many(settings, qrels).items()}
        searched, not_searched = (maps[v] for v in VARIANTS)
        best = {v: max(settings, key=lambda s, v=v: maps[v][s]) for v in VARIANTS}
        rows.append({
            "collection": name, "records": records,
            "searched_now": searched[current], "not_searched_now": not_searched[current],
            "ratio_now": not_searched[current] / searched[current],
            "searched_best": searched[best[VARIANTS[0]]],
            "not_searched_best": not_searched[best[VARIANTS[1]]],
            "ratio_best": not_searched[best[VARIANTS[1]]] / searched[best[VARIANTS[0]]],
            "searched_best_setting": best[VARIANTS[0]].label,
            "not_searched_best_setting": best[VARIANTS[1]].label})
    mean = {key: sum(r[key] for r in rows) / len(rows) for key in ("ratio_now", "ratio_best")} \
        if rows else {}
    return {"rows": rows, "mean": mean, "setting": current.label, "settings": len(settings)}


COLUMNS = [("collection", "collection", ""), ("records", "records", ""),
           ("searched_now", "MAP, lead searched", ".4f"),
           ("not_searched_now", "not searched", ".4f"), ("ratio_now", "ratio", ".3f"),
           ("searched_best", "best MAP, lead searched", ".4f"),
           ("not_searched_best", "not searched", ".4f"), ("ratio_best", "ratio", ".3f")]

"""The duplicate finder's memory and speed against datasketch's MinHashLSH, on the scale set.

The finder lives in the indexing process for a whole build, so its memory an article bounds
how large an archive one machine can index. Both sides get the same signatures (computed once
here from the scale set's articles, as ``archive index`` computes them) and add them one by
one in an article's order, each in a fresh process (``bench.worker duplicate_adds``):

* ``archive``: ``DuplicateFinder.add``, clusters kept as it goes;
* ``datasketch``: what one would write with datasketch: ``MinHashLSH`` (in-memory, the same
  candidate threshold, so the same bands), the signatures in a dict for the Jaccard check
  (the permutations shared, not one set per ``MinHash``), clusters by union-find.

Two sets: the scale set (``--n`` articles: how memory grows; its generator rarely makes a
near-duplicate) and the shared BBC and Reuters corpora together (real wire copies and
re-runs, so the clusters compared below are not trivially empty).

Each system adds the set twice in its process: timed, then again under ``tracemalloc`` (numpy
reports its arrays to it) for the memory the finished structure holds (``held``: what stays
for the rest of a build) and the most it held at once (``peak``: merges and growth), both
over what was traced before it started. The resident set is not used: an interpreter reuses
heap it freed earlier (reading the signatures), so its growth understates. The clusters of
the two are compared: they must be equal (the same definition: an edge where LSH proposes a
pair and its estimated Jaccard reaches the threshold; groups named by their smallest id).
"""

from __future__ import annotations

import hashlib
import json
import time
import tracemalloc
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import run_worker

SYSTEMS = ("archive", "datasketch")


def write_signatures(texts: Iterable[tuple[str, str]], out: Path) -> Path:
    """The articles' ids and signatures (``ids.json``, ``hashes.npy``) under ``out``."""
    from archive.enrich.duplicates import DuplicateFinder

    finder = DuplicateFinder()
    ids: list[str] = []
    rows: list[np.ndarray] = []
    for article_id, text in texts:
        ids.append(article_id)
        rows.append(finder.signature(text).hashvalues)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "hashes.npy", np.array(rows, dtype=np.uint32).reshape(-1, finder.num_perm))
    (out / "ids.json").write_text(json.dumps(ids), "utf-8")
    return out


def scale_texts(articles: Path, n: int) -> Iterator[tuple[str, str]]:
    """The first ``n`` articles of a scale set folder, as ``archive index`` would see them."""
    count = 0
    for path in sorted(articles.glob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if count == n:
                    return
                record = json.loads(line)
                yield f"{path.stem}/{record['id']}", f"{record['title']}\n{record['body']}"
                count += 1


def corpus_texts(folders: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """Every article of real corpora, read by the archive's readers."""
    from archive.enrich.duplicates import article_text
    from bench.worker import read_all

    for article in read_all([str(f) for f in folders]):
        yield article.id, article_text(article)


def adds(system: str, folder: str) -> dict[str, Any]:
    """One system adds every signature in ``folder``, twice: timed, then traced for memory;
    with a digest of the clusters (worker task ``duplicate_adds``)."""
    ids = json.loads((Path(folder) / "ids.json").read_text("utf-8"))
    hashes = np.load(Path(folder) / "hashes.npy")
    build = _archive if system == "archive" else _datasketch
    started = time.perf_counter()
    build(ids, hashes)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    clusters, held = build(ids, hashes)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    groups = sorted(sorted(g) for g in clusters.values() if len(g) > 1)
    return {"system": system, "articles": len(ids), "seconds": seconds,
            "held_mb": (held - base) / 2 ** 20, "peak_mb": (peak - base) / 2 ** 20,
            "clusters": len(groups), "in_clusters": sum(len(g) for g in groups),
            "digest": hashlib.sha256(json.dumps(groups).encode()).hexdigest()[:16]}


def _traced() -> int:
    """Bytes traced now (0 when tracemalloc is off: the timed pass)."""
    return tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0


def _archive(ids: list[str], hashes: np.ndarray) -> tuple[dict[str, set[str]], int]:
    from archive.enrich.duplicates import DuplicateFinder
    from archive.enrich.minhash import Signature

    finder = DuplicateFinder()
    for article_id, row in zip(ids, hashes):
        finder.add(article_id, Signature(row))
    held = _traced()
    return {c: set(m) for c, m in finder.clusters().items()}, held


def _datasketch(ids: list[str], hashes: np.ndarray
                ) -> tuple[dict[str, set[str]], int]:
    from datasketch import MinHash, MinHashLSH

    from archive.enrich import duplicates as dup
    from archive.enrich.minhash import is_empty

    threshold = dup.DEFAULT_THRESHOLD
    lsh = MinHashLSH(threshold=threshold - dup.CANDIDATE_MARGIN, num_perm=dup.DEFAULT_NUM_PERM)
    permutations = MinHash(num_perm=dup.DEFAULT_NUM_PERM, seed=1, scheme="affine32").permutations
    signatures: dict[str, np.ndarray] = {}
    parent: dict[str, str] = {}

    def root(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for article_id, row in zip(ids, hashes):
        values = row.astype(np.uint64)
        parent[article_id] = article_id
        if is_empty(values):
            continue
        minhash = MinHash(seed=1, scheme="affine32", hashvalues=values,
                          permutations=permutations)
        for other in lsh.query(minhash):
            if np.count_nonzero(signatures[other] == values) / len(values) >= threshold:
                a, b = root(article_id), root(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        lsh.insert(article_id, minhash)
        signatures[article_id] = values
    held = _traced()
    groups: dict[str, set[str]] = {}
    for article_id in ids:
        groups.setdefault(root(article_id), set()).add(article_id)
    return groups, held


def run(sets: Sequence[tuple[str, Iterable[tuple[str, str]]]], folder: Path
        ) -> list[dict[str, Any]]:
    """Each named set of (id, text): its signatures written once, then both systems."""
    out: list[dict[str, Any]] = []
    for name, texts in sets:
        signatures = write_signatures(texts, folder / name)
        rows = [{"set": name, **run_worker("duplicate_adds", system=system,
                                           folder=str(signatures))} for system in SYSTEMS]
        peer = rows[-1]
        for row in rows:
            row["us_per_article"] = row["seconds"] / row["articles"] * 1e6
            row["bytes_per_article"] = row["held_mb"] * 2 ** 20 / row["articles"]
            row["x_time"] = row["seconds"] / peer["seconds"]
            row["x_memory"] = row["held_mb"] / peer["held_mb"]
            row["same_clusters"] = row["digest"] == peer["digest"]
        out.extend(rows)
    return out


COLUMNS = [("set", "set", ""), ("system", "system", ""), ("articles", "articles", ","),
           ("us_per_article", "us an add", ".1f"), ("x_time", "x datasketch", ".2f"),
           ("held_mb", "held MB", ".1f"), ("peak_mb", "peak MB", ".1f"),
           ("bytes_per_article", "bytes an article", ",.0f"),
           ("x_memory", "x datasketch", ".2f"), ("clusters", "clusters", ","),
           ("in_clusters", "articles in clusters", ","), ("same_clusters", "same clusters", "")]

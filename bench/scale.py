"""The scale set: 100,000+ realistic articles re-mixed from real BBC and Reuters paragraphs.

Deterministic for a given ``--seed`` and ``--n`` (``random.Random(seed)``, inputs read in
sorted order). How an article is made:

1. Pick a real article from the pooled BBC (2,225) and Reuters-21578 (bodies non-empty) corpora,
   uniformly. Its headline and first paragraph become the new headline and lede, so a
   headline-drawn query still finds a coherent story.
2. Add 2-7 more paragraphs drawn at random from the same corpus's paragraph pool (BBC
   paragraphs with BBC, Reuters with Reuters), so vocabulary and lengths stay realistic.
3. Date: a uniformly random second between 1987-01-01 and 2024-12-31 (spread out, unlike the
   originals' few months); source "BBC" or "Reuters"; the picked article's topics and places.
4. ``id`` = ``scale-NNNNNNN`` (its record id, kept as the article's external id).

Written as JSON Lines, ``--per-file`` (1,000) articles per file, in
``bench/data/scale/articles/`` (git-ignored; regenerate it, never commit it).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(1987, 1, 1)
SPAN_SECONDS = int((datetime(2025, 1, 1) - START).total_seconds())


def _paragraphs(body: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", body) if len(p.split()) >= 5]


def load_sources(corpora: Path) -> list[tuple[str, list[Any]]]:
    from bench.worker import read_all
    bbc = read_all([str(corpora / "bbc")])
    reuters = [a for a in read_all([str(corpora / "reuters21578")]) if _paragraphs(a.body)]
    return [("BBC", [a for a in bbc if _paragraphs(a.body)]), ("Reuters", reuters)]


def generate(corpora: Path, out: Path, n: int, seed: int = 5, per_file: int = 1000
             ) -> dict[str, Any]:
    started = time.perf_counter()
    sources = load_sources(corpora)
    pools = {name: [p for a in arts for p in _paragraphs(a.body)] for name, arts in sources}
    picks = [(name, a) for name, arts in sources for a in arts]
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    stream = None
    written = 0
    for i in range(n):
        if i % per_file == 0:
            if stream:
                stream.close()
            stream = open(out / f"scale-{i // per_file:05d}.jsonl", "w", encoding="utf-8")
        name, base = picks[rng.randrange(len(picks))]
        pool = pools[name]
        paragraphs = [_paragraphs(base.body)[0]]
        paragraphs += [pool[rng.randrange(len(pool))] for _ in range(rng.randint(2, 7))]
        date = START + timedelta(seconds=rng.randrange(SPAN_SECONDS))
        record = {"id": f"scale-{i:07d}", "title": base.title, "body": "\n\n".join(paragraphs),
                  "date": date.isoformat(), "source": name, "topics": list(base.topics),
                  "places": list(base.places)}
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")  # type: ignore[union-attr]
        written += 1
    if stream:
        stream.close()
    return {"articles": written, "files": -(-written // per_file), "seed": seed,
            "bytes": sum(p.stat().st_size for p in out.iterdir()), "folder": str(out),
            "seconds": round(time.perf_counter() - started, 1)}


COLUMNS = [("articles", "articles", ",d"), ("files", "files", "d"), ("seed", "seed", "d"),
           ("bytes", "bytes", ",d"), ("seconds", "seconds", ".1f"), ("folder", "folder", "")]

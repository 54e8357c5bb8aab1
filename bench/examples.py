"""Ten news queries' top 5 on the shared BBC and Reuters corpora: ``python -m bench examples``.

MAP on test collections says how a ranking does on average; a news reader sees one ranked list
at a time. These queries were written before looking at any result (the topics a reader of each
corpus would search for) and are run through the ``archive search`` command itself (AND first,
then any word), so the lists are exactly what a user gets. The indexes are the ones
``python -m bench queries`` builds and reuses (``bench/data/query-index/<corpus>``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.queries import ensure_indexes
from bench.relevance import archive_cli

QUERIES = {
    "bbc": ["tony blair election", "oil prices", "mobile phone", "champions league",
            "oscar nominations", "interest rates", "iraq war", "broadband internet",
            "mourinho chelsea", "music downloads"],
    "reuters": ["oil prices", "gold", "interest rates", "coffee exports brazil", "takeover bid",
                "dollar yen", "opec production", "wheat china", "bank of england",
                "trade deficit japan"],
}


def run(corpora: Path, folder: Path, limit: int = 5) -> list[dict[str, Any]]:
    """One row per (corpus, query): the top ``limit`` titles, and whether the any-word
    relaxation was needed."""
    rows = []
    for name, source in (("bbc", corpora / "bbc"), ("reuters", corpora / "reuters21578")):
        index, _ = ensure_indexes(name, source, folder)
        for query in QUERIES[name]:
            page = json.loads(archive_cli("search", query, "--index", str(index), "--json",
                                          "--limit", str(limit), ok=(0, 1)))
            rows.append({"corpus": name, "query": query, "total": page["total"],
                         "relaxed": page["relaxed"],
                         "top": [" ".join(hit["title"].split()) for hit in page["hits"]]})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as the bench README shows them: one line per query, its titles numbered."""
    lines = []
    for row in rows:
        note = ", any word" if row["relaxed"] else ""
        titles = "; ".join(f"{i}. {t}" for i, t in enumerate(row["top"], 1))
        lines.append(f"- {row['corpus']} `{row['query']}` ({row['total']:,}{note}): {titles}")
    return "\n".join(lines)

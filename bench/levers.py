"""Ranking levers, one at a time, on CISI and Cranfield: ``python -m bench.levers``.

Runs against the indexes ``python -m bench relevance`` built (``bench/data/<name>/index``) and
changes only query-time settings, never the schema or analyzer:

* ``K1``/``B``: Whoosh BM25F's free parameters (archive default K1=1.2, B=0.75);
* ``idf``: ``whoosh`` = log(N / (df + 1)) + 1 (Whoosh's), ``lucene`` = log(1 + (N - df + 0.5) /
  (df + 0.5)) (Lucene's and bm25s');
* ``qtf``: a query word that occurs k times in the query weighs k (standard BM25) instead of 1;
* ``title``: a query-time multiplier on the title field's scores (the schema's index-time
  field_boost=2.0 stays).

``python -m bench.levers combos`` runs the combinations of the levers that helped.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from typing import Any

from whoosh import query as wq
from whoosh import scoring

from archive.evaluate import evaluate, read_qrels, read_queries
from archive.query import SEARCH_FIELDS
from archive.search import Archive
from bench import testcollections
from bench.common import DATA, save, table


class LuceneIdfBM25F(scoring.BM25F):
    def idf(self, searcher, fieldname, text):  # noqa: ANN001 (Whoosh API)
        parent = searcher.get_parent()
        n = parent.doc_frequency(fieldname, text)
        dc = parent.doc_count_all()
        return math.log(1 + (dc - n + 0.5) / (n + 0.5))


def ranker(archive: Archive, qtf: bool, title: float):
    analyzer = archive.index.schema["body"].analyzer

    def rank(text: str) -> list[str]:
        counts = Counter(t.text for t in analyzer(text))
        if not counts:
            return []
        subs = []
        for term, k in counts.items():
            boost = float(k) if qtf else 1.0
            for name in SEARCH_FIELDS:
                b = boost * (title if name == "title" else 1.0)
                if b > 0:
                    subs.append(wq.Term(name, term, boost=b))
        results = archive.searcher.search(wq.Or(subs), limit=1000)
        return [archive.searcher.stored_fields(results.docnum(n)).get("external_id")
                for n in range(results.scored_length())]
    return rank


CONFIGS: list[dict[str, Any]] = [
    {"label": "archive default (K1=1.2 B=0.75 whoosh idf)"},
    {"label": "K1=0.9", "K1": 0.9}, {"label": "K1=1.5", "K1": 1.5}, {"label": "K1=2.0", "K1": 2.0},
    {"label": "B=0.3", "B": 0.3}, {"label": "B=0.5", "B": 0.5}, {"label": "B=0.9", "B": 0.9},
    {"label": "lucene idf", "idf": "lucene"},
    {"label": "qtf", "qtf": True},
    {"label": "title x0 (body+captions only)", "title": 0.0},
    {"label": "title x0.5", "title": 0.5}, {"label": "title x2", "title": 2.0},
    {"label": "lucene idf + qtf", "idf": "lucene", "qtf": True},
    {"label": "lucene idf + qtf + K1=1.5", "idf": "lucene", "qtf": True, "K1": 1.5},
]
COMBOS: list[dict[str, Any]] = [
    {"label": "archive default (K1=1.2 B=0.75 whoosh idf)"},
    {"label": "qtf + title x0.5", "qtf": True, "title": 0.5},
    {"label": "qtf + title x0.5 + B=0.9", "qtf": True, "title": 0.5, "B": 0.9},
    {"label": "lucene idf + qtf + title x0.5", "idf": "lucene", "qtf": True, "title": 0.5},
]


def main() -> None:
    """``python -m bench.levers`` runs every single lever; ``... combos`` the combinations."""
    configs = COMBOS if sys.argv[1:] == ["combos"] else CONFIGS
    rows = []
    for name in testcollections.COLLECTIONS:
        _, queries_path, qrels_path = testcollections.paths(DATA, name)
        queries, qrels = read_queries(queries_path), read_qrels(qrels_path)
        with Archive(DATA / name / "index") as archive:
            for config in configs:
                model = LuceneIdfBM25F if config.get("idf") == "lucene" else scoring.BM25F
                archive.searcher = archive.index.searcher(
                    weighting=model(B=config.get("B", 0.75), K1=config.get("K1", 1.2)))
                report = evaluate(queries, qrels, ranker(archive, config.get("qtf", False),
                                                         config.get("title", 1.0)))
                mean = report.mean
                rows.append({"collection": name, "config": config["label"], "map": mean["ap"],
                             "ndcg10": mean["ndcg10"], "p10": mean["p10"], "r100": mean["r100"]})
    print(table(rows, [("collection", "collection", ""), ("config", "config", ""),
                       ("map", "MAP", ".4f"), ("ndcg10", "nDCG@10", ".4f"),
                       ("p10", "P@10", ".4f"), ("r100", "R@100", ".4f")]))
    print(f"JSON: {save('levers', {'rows': rows})}")


if __name__ == "__main__":
    sys.exit(main())

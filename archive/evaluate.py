"""Search-quality evaluation: run judged queries against an index and score the rankings.

Inputs are the two classic TREC files:

* a queries file, one query per line: ``qid<TAB>query text`` (blank lines and lines starting
  with ``#`` are ignored);
* relevance judgments ("qrels"): ``qid 0 docid grade`` per line, whitespace-separated. A grade
  above 0 means relevant; nDCG uses the grade itself as the gain.

Each query is ranked as free text (``Archive.rank``: its analysed words ORed over the text
fields, never parsed as query syntax), keeping the top 1000. A hit's doc id is the article's
``external_id`` (the ``id`` of a JSON Lines / CSV record) when it has one, else its archive id.

Metrics follow trec_eval's definitions:

* AP (mean: MAP): the precision at the rank of each relevant document retrieved, summed and
  divided by the number of relevant documents in the qrels (unretrieved ones count 0).
* nDCG@10: DCG = sum over ranks i = 1..10 of gain_i / log2(i + 1), gain = grade (linear, as in
  trec_eval's ``ndcg_cut``), divided by the DCG of the ideal ordering of the judged grades.
* P@10: relevant documents in the top 10, divided by 10 (even if fewer were retrieved).
* Recall@100: relevant documents in the top 100, divided by the number of relevant documents.

A query is scored when it is in the queries file and has at least one relevant document in the
qrels; the others are listed (``unjudged``) but do not count towards the means.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

METRICS = ("ap", "ndcg10", "p10", "r100")
METRIC_LABELS = {"ap": "AP", "ndcg10": "nDCG@10", "p10": "P@10", "r100": "R@100"}
DEPTH = 1000

Qrels = dict[str, dict[str, int]]


class EvalInputError(ValueError):
    """A queries or qrels file that cannot be read; the message names file and line."""


# --- reading the inputs --------------------------------------------------------------------

def read_queries(path: Path) -> dict[str, str]:
    """``qid<TAB>text`` lines -> {qid: text}, in file order."""
    queries: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        qid, sep, text = line.partition("\t")
        if not sep or not qid.strip():
            raise EvalInputError(f"{path}:{number}: expected 'qid<TAB>query text'")
        queries[qid.strip()] = text.strip()
    return queries


def read_qrels(path: Path) -> Qrels:
    """TREC qrels ``qid 0 docid grade`` -> {qid: {docid: grade}} (every judged pair kept)."""
    qrels: Qrels = {}
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
        parts = line.split()
        if not parts or line.startswith("#"):
            continue
        if len(parts) != 4:
            raise EvalInputError(f"{path}:{number}: expected 'qid 0 docid grade'")
        qid, _, docid, grade = parts
        try:
            qrels.setdefault(qid, {})[docid] = int(float(grade))
        except ValueError:
            raise EvalInputError(f"{path}:{number}: grade {grade!r} is not a number") from None
    return qrels


# --- the metrics -----------------------------------------------------------------------------

def relevant_count(judged: Mapping[str, int]) -> int:
    return sum(1 for g in judged.values() if g > 0)


def average_precision(ranking: Sequence[str], judged: Mapping[str, int]) -> float:
    total = relevant_count(judged)
    if not total:
        return 0.0
    found, summed = 0, 0.0
    for rank, doc in enumerate(ranking, 1):
        if judged.get(doc, 0) > 0:
            found += 1
            summed += found / rank
    return summed / total


def ndcg(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    def dcg(gains: Iterable[int]) -> float:
        return sum(g / math.log2(i + 1) for i, g in enumerate(gains, 1))

    ideal = dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg(max(judged.get(doc, 0), 0) for doc in ranking[:k]) / ideal


def precision(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    return sum(1 for doc in ranking[:k] if judged.get(doc, 0) > 0) / k


def recall(ranking: Sequence[str], judged: Mapping[str, int], k: int = 100) -> float:
    total = relevant_count(judged)
    if not total:
        return 0.0
    return sum(1 for doc in ranking[:k] if judged.get(doc, 0) > 0) / total


@dataclass(frozen=True)
class QueryScore:
    qid: str
    ap: float
    ndcg10: float
    p10: float
    r100: float
    relevant: int    # relevant documents in the qrels
    retrieved: int   # documents in the ranking


def score_query(qid: str, ranking: Sequence[str], judged: Mapping[str, int]) -> QueryScore:
    return QueryScore(qid, average_precision(ranking, judged), ndcg(ranking, judged, 10),
                      precision(ranking, judged, 10), recall(ranking, judged, 100),
                      relevant_count(judged), len(ranking))


@dataclass
class EvalReport:
    per_query: list[QueryScore] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)   # queries with no relevant document
    missing: list[str] = field(default_factory=list)    # judged queries absent from the queries
    seconds: float = 0.0

    @property
    def mean(self) -> dict[str, float]:
        n = len(self.per_query)
        return {m: (sum(getattr(q, m) for q in self.per_query) / n if n else 0.0)
                for m in METRICS}

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "queries": len(self.per_query),
            "mean": {m: round(v, 4) for m, v in self.mean.items()},
            "unjudged": self.unjudged, "missing": self.missing,
            "seconds": round(self.seconds, 3),
        }
        if per_query:
            data["per_query"] = [
                {**asdict(q), **{m: round(getattr(q, m), 4) for m in METRICS}}
                for q in self.per_query]
        return data


Ranker = Callable[[str], Sequence[str]]


def evaluate(queries: Mapping[str, str], qrels: Qrels, ranker: Ranker) -> EvalReport:
    """Score ``ranker`` (query text -> doc ids, best first) on every judged query."""
    started = time.perf_counter()
    report = EvalReport()
    for qid, text in queries.items():
        judged = qrels.get(qid, {})
        if not relevant_count(judged):
            report.unjudged.append(qid)
            continue
        report.per_query.append(score_query(qid, list(ranker(text))[:DEPTH], judged))
    report.missing = [q for q in qrels if q not in queries and relevant_count(qrels[q])]
    report.seconds = time.perf_counter() - started
    return report


def evaluate_index(folder: Path, queries_path: Path, qrels_path: Path,
                   depth: int = DEPTH) -> EvalReport:
    """Run a queries file against the archive index at ``folder`` and score it."""
    from archive.search import Archive

    queries, qrels = read_queries(queries_path), read_qrels(qrels_path)
    with Archive(folder) as archive:
        return evaluate(queries, qrels,
                        lambda text: [key for key, _ in archive.rank(text, limit=depth)])


def format_table(report: EvalReport, per_query: bool = False) -> str:
    header = f"{'query':<10} " + " ".join(f"{METRIC_LABELS[m]:>8}" for m in METRICS) \
        + f" {'relevant':>8} {'retrieved':>9}"
    lines = [header, "-" * len(header)]
    if per_query:
        for q in report.per_query:
            lines.append(f"{q.qid:<10} " + " ".join(f"{getattr(q, m):>8.4f}" for m in METRICS)
                         + f" {q.relevant:>8} {q.retrieved:>9}")
        lines.append("-" * len(header))
    mean = report.mean
    lines.append(f"{'mean':<10} " + " ".join(f"{mean[m]:>8.4f}" for m in METRICS)
                 + f" {len(report.per_query):>8} queries")
    notes = []
    if report.unjudged:
        notes.append(f"{len(report.unjudged)} queries without relevant documents not scored")
    if report.missing:
        notes.append(f"{len(report.missing)} judged queries missing from the queries file")
    return "\n".join(lines + notes) + "\n"

"""The relevance metrics against a hand-computed case, and ``archive eval`` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from archive.evaluate import (average_precision, evaluate, ndcg, precision, read_qrels,
                              read_queries, recall)

# One query; the system returned d1..d5 in that order. Judged: d1 grade 2, d3 grade 1,
# d6 grade 3 (never retrieved), d9 grade 0 (judged, not relevant). Relevant: d1, d3, d6 = 3.
RANKING = ["d1", "d2", "d3", "d4", "d5"]
JUDGED = {"d1": 2, "d3": 1, "d6": 3, "d9": 0}


def test_average_precision_by_hand() -> None:
    # relevant at rank 1 (precision 1/1) and rank 3 (precision 2/3); d6 never found counts 0
    # AP = (1 + 2/3) / 3 relevant = 1.6667 / 3 = 0.5556
    assert average_precision(RANKING, JUDGED) == pytest.approx((1 + 2 / 3) / 3)
    assert average_precision(RANKING, JUDGED) == pytest.approx(0.5556, abs=1e-4)


def test_ndcg_by_hand() -> None:
    # DCG@10  = 2/log2(1+1) + 0 + 1/log2(3+1)            = 2 + 0.5            = 2.5
    # IDCG@10 = grades sorted 3, 2, 1: 3/log2(2) + 2/log2(3) + 1/log2(4)
    #         = 3 + 1.26186 + 0.5                                           = 4.76186
    # nDCG@10 = 2.5 / 4.76186 = 0.52500
    assert ndcg(RANKING, JUDGED, 10) == pytest.approx(2.5 / (3 + 2 / math.log2(3) + 0.5))
    assert ndcg(RANKING, JUDGED, 10) == pytest.approx(0.5250, abs=1e-4)


def test_precision_and_recall_by_hand() -> None:
    # P@10: 2 relevant in the top 10, divided by 10 although only 5 were returned = 0.2
    assert precision(RANKING, JUDGED, 10) == pytest.approx(0.2)
    # R@100: 2 of the 3 relevant found = 0.6667
    assert recall(RANKING, JUDGED, 100) == pytest.approx(2 / 3)


def test_means_skip_queries_without_relevant_documents() -> None:
    queries = {"q1": "first", "q2": "second", "q3": "unjudged"}
    qrels = {"q1": JUDGED, "q2": {"d7": 1}, "q3": {"d1": 0}, "q4": {"d1": 1}}
    runs = {"first": RANKING, "second": ["d1", "d2"], "unjudged": ["d1"]}
    report = evaluate(queries, qrels, lambda text: runs[text])
    # q2 finds nothing relevant: all metrics 0. MAP = (0.5556 + 0) / 2 = 0.2778
    assert [q.qid for q in report.per_query] == ["q1", "q2"]
    assert report.mean["ap"] == pytest.approx((1 + 2 / 3) / 3 / 2)
    assert report.mean["p10"] == pytest.approx(0.1)
    assert report.unjudged == ["q3"] and report.missing == ["q4"]


def test_readers(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_text("# comment\n1\tfirst query\n\n2\tsecond\n", "utf-8")
    (tmp_path / "r.txt").write_text("1 0 A 2\n1 0 B 0\n2 Q0 C 1.0\n", "utf-8")
    assert read_queries(tmp_path / "q.tsv") == {"1": "first query", "2": "second"}
    assert read_qrels(tmp_path / "r.txt") == {"1": {"A": 2, "B": 0}, "2": {"C": 1}}


DOCS = [
    {"id": "D1", "title": "Cocoa harvest in Bahia", "body": "Rain helped the cocoa crop."},
    {"id": "D2", "title": "Coffee prices fall", "body": "Brazil coffee exports rose."},
    {"id": "D3", "title": "Cocoa and coffee talks", "body": "Producers met in London."},
    {"id": "D4", "title": "Steel output", "body": "Mills cut steel production."},
]


def test_eval_command_end_to_end(tmp_path: Path, cli) -> None:  # noqa: ANN001 (fixture)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS), "utf-8")
    assert cli("index", docs, "--no-progress").exit_code == 0
    # query 2 is full of Whoosh syntax: it must be read as plain words, not parsed
    (tmp_path / "q.tsv").write_text(
        "1\tcocoa crop\n2\tcoffee: (prices OR NOT \"exports\n3\tthe of and\n", "utf-8")
    (tmp_path / "qrels.txt").write_text(
        "1 0 D1 2\n1 0 D3 1\n2 0 D2 1\n3 0 D4 1\n", "utf-8")
    data = cli.json("eval", tmp_path / "q.tsv", tmp_path / "qrels.txt")
    per = {q["qid"]: q for q in data["per_query"]}
    # q1: D1 has both words (cocoa twice), D3 one: AP = (1/1 + 2/2) / 2 = 1
    assert per["1"]["ap"] == 1.0 and per["1"]["retrieved"] == 2
    # q2: only D2 matches coffee + prices + exports best; D3 has coffee too
    assert per["2"]["ap"] == 1.0 and per["2"]["retrieved"] == 2
    # q3: only stop words, nothing retrieved, still scored (0)
    assert per["3"]["ap"] == 0.0 and per["3"]["retrieved"] == 0
    assert data["queries"] == 3
    assert data["mean"]["ap"] == pytest.approx(2 / 3, abs=1e-4)
    table = cli("eval", tmp_path / "q.tsv", tmp_path / "qrels.txt", "--per-query")
    assert table.exit_code == 0
    lines = table.output.splitlines()
    assert lines[0].split()[:5] == ["query", "AP", "nDCG@10", "P@10", "R@100"]
    assert any(line.startswith("mean") and "0.6667" in line for line in lines)


def test_eval_command_bad_input(tmp_path: Path, cli) -> None:  # noqa: ANN001 (fixture)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps(DOCS[0]) + "\n", "utf-8")
    cli("index", docs, "--no-progress")
    (tmp_path / "q.tsv").write_text("no tab here\n", "utf-8")
    (tmp_path / "qrels.txt").write_text("1 0 D1 1\n", "utf-8")
    result = cli("eval", tmp_path / "q.tsv", tmp_path / "qrels.txt")
    assert result.exit_code == 2 and "q.tsv:1" in result.output

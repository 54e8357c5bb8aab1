"""The ingest evaluation set and its bench (bench/ingest.py) work as machinery.

Accuracy is reported, never asserted: these tests only prove that every truth row names a file
that exists and is matched, that the tuning part and both holdouts (the seen one and the
new one) are there, and that every
accuracy the bench computes is a share in [0, 1].
"""

from __future__ import annotations

import json

import pytest

from bench import ingest

SET = ingest.SET


@pytest.fixture(scope="module")
def result() -> dict:
    return ingest.run(SET)


def test_truth_rows_are_well_formed() -> None:
    rows = ingest.load_truth(SET)
    keys = {"file", "entry", "title", "date", "author", "first_words", "holdout"}
    for row in rows:
        assert keys <= set(row), row
        assert (SET / row["file"]).is_file(), row["file"]
        assert row["entry"] is None or (isinstance(row["entry"], int) and row["entry"] >= 0)
        if row["date"] is not None:
            assert len(row["date"]) == 10 and row["date"][4] == "-" and row["date"][7] == "-"
    pairs = [(r["file"], r["entry"]) for r in rows]
    assert len(pairs) == len(set(pairs)), "a (file, entry) pair is listed twice"
    layouts = {r["file"].split("/")[0]: r["holdout"] for r in rows}
    splits = {r["file"].split("/")[0]: ingest.split_of(r) for r in rows}
    for row in rows:  # holdout and split are decided per layout, never per file
        assert row["holdout"] == layouts[row["file"].split("/")[0]]
        assert ingest.split_of(row) == splits[row["file"].split("/")[0]]
    assert {ingest.split_of(r) for r in rows} == set(ingest.SPLITS)


def test_set_size_and_splits() -> None:
    rows = ingest.load_truth(SET)
    files = {r["file"] for r in rows}
    assert len(files) >= 150
    assert len({f.split("/")[0] for f in files}) >= 10
    assert any(r["holdout"] for r in rows) and not all(r["holdout"] for r in rows)
    assert (SET / "PROVENANCE.md").is_file()
    assert sum(p.stat().st_size for p in SET.rglob("*") if p.is_file()) < 10 * 1024 * 1024
    assert all(p.stat().st_size < 200 * 1024 for p in SET.rglob("*") if p.is_file())


def test_every_row_is_judged(result: dict) -> None:
    rows = ingest.load_truth(SET)
    assert len(result["rows"]) == len(rows)
    for judged in result["rows"]:
        assert judged["matched"] or judged["reason"], judged
        assert set(judged["right"]) == set(ingest.FIELDS)


def test_table_shares_are_in_range(result: dict) -> None:
    splits = {row["split"] for row in result["table"]}
    assert splits == {"tuning", "seen holdout", "new holdout", "overall"}
    overall = [r for r in result["table"] if r["split"] == "overall"]
    assert overall[0]["files"] == len({r["file"] for r in ingest.load_truth(SET)})
    for row in result["table"]:
        for name in ingest.FIELDS:
            value = row[name]
            assert value is None or (isinstance(value, float) and 0.0 <= value <= 1.0), row
    json.dumps(result["table"])  # what --json prints


def test_a_file_the_archive_cannot_read_counts_wrong(tmp_path) -> None:
    layout = tmp_path / "broken"
    layout.mkdir()
    (layout / "empty.html").write_bytes(b"")
    (layout / "nul.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "truth.jsonl").write_text(
        json.dumps({"file": "broken/empty.html", "entry": None, "title": "T", "date": None,
                    "author": "A", "first_words": "w", "holdout": False}) + "\n"
        + json.dumps({"file": "broken/nul.txt", "entry": 3, "title": "T", "date": "2020-01-01",
                      "author": None, "first_words": None, "holdout": True}) + "\n",
        encoding="utf-8")
    out = ingest.run(tmp_path)
    assert [r["matched"] for r in out["rows"]] == [False, False]
    assert all(r["reason"] for r in out["rows"])
    for judged in out["rows"]:
        assert not any(judged["right"][f] for f in ingest.FIELDS)


def test_date_rule_allows_time_zones_only() -> None:
    from datetime import datetime
    from types import SimpleNamespace as A
    assert ingest.date_right("2013-09-06", A(date=datetime(2013, 9, 7, 2, 2)))
    assert not ingest.date_right("2013-09-06", A(date=datetime(2013, 9, 8, 2, 2)))
    assert ingest.date_right(None, A(date=None))
    assert not ingest.date_right(None, A(date=datetime(2020, 1, 1)))
    assert ingest.author_right("Tomas Sedovic, Nurzhan Saken",
                               A(author="Tomas Sedovic and Nurzhan Saken"))

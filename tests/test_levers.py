"""The lever selection (bench/levers.py): leave-one-collection-out picks on the others and
reports the held-out MAP, on a made-up table; and the grid's numpy ranking is the archive's own
ranking, on a real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archive.evaluate import read_qrels, read_queries
from archive.search import Archive
from bench import levers
from bench.levers import CollectionPostings, Setting

A, B, C = Setting(k1=0.9), Setting(k1=1.2), Setting(k1=2.0)


def test_leave_one_out_picks_on_the_others_and_reports_the_held_out() -> None:
    # C is best on x in hindsight, but A wins on y and z, so x held out gets A's MAP
    maps = {"x": {A: 0.30, B: 0.20, C: 0.40},
            "y": {A: 0.50, B: 0.45, C: 0.10},
            "z": {A: 0.20, B: 0.30, C: 0.10}}
    best_peer = {"x": 0.30, "y": 0.50, "z": 0.20}
    rows, chosen = levers.leave_one_out(maps, best_peer, [A, B, C])
    by = {r["collection"]: r for r in rows}
    # held out x: on y, z the ratios are A (1.0 + 1.0) / 2, B (0.9 + 1.5) / 2, C (0.2 + 0.5) / 2
    assert by["x"]["picked"] == B.label and by["x"]["map"] == 0.20
    assert by["x"]["hindsight"] == 0.40 and by["x"]["ratio"] == pytest.approx(0.20 / 0.30)
    # held out y: on x, z: A (1 + 1) / 2 = 1.0, B (0.667 + 1.5) / 2 = 1.083, C (1.333 + 0.5) / 2
    assert by["y"]["picked"] == B.label and by["y"]["map"] == 0.45
    # held out z: on x, y: A (1 + 1) / 2, B (0.667 + 0.9) / 2, C (1.333 + 0.2) / 2
    assert by["z"]["picked"] == A.label and by["z"]["map"] == 0.20
    # on all three: A 1.0, B (0.667 + 0.9 + 1.5) / 3 = 1.022, C (1.333 + 0.2 + 0.5) / 3 = 0.678
    assert chosen == B
    assert levers.criterion(maps, best_peer, B, maps) == pytest.approx((2 / 3 + 0.9 + 1.5) / 3)


def test_equal_settings_go_to_the_earlier_one() -> None:
    maps = {"x": {A: 0.3, B: 0.3}, "y": {A: 0.2, B: 0.2}}
    assert levers.pick(maps, {"x": 0.3, "y": 0.2}, [B, A], ["x", "y"]) == B


def test_the_grid_has_no_duplicates_and_holds_the_defaults() -> None:
    settings = levers.grid()
    assert len(settings) == len(set(settings))
    assert Setting() in settings
    # with the title weighed 0 its length normalisation means nothing: one setting, not three
    zero = [s for s in settings if s.title == 0 and s.k1 == 1.2 and s.b == 0.75
            and s.idf == "lucene" and s.qtf]
    assert len(zero) == 1


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path):  # noqa: ANN201
    """The first 300 CISI documents, indexed by ``archive index``, with CISI's queries."""
    from click.testing import CliRunner

    from archive.cli import main
    from bench.testcollections import convert

    root = tmp_path_factory.mktemp("levers")
    convert(corpora_dir, root, ("cisi",))
    docs = root / "cisi" / "docs.jsonl"
    lines = docs.read_text("utf-8").splitlines()[:300]
    docs.write_text("\n".join(lines) + "\n", "utf-8")
    index = root / "index"
    result = CliRunner().invoke(main, ["index", str(docs), "--index", str(index), "--json",
                                       "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    kept = {json.loads(line)["id"] for line in lines}
    qrels = {q: {d: g for d, g in judged.items() if d in kept}
             for q, judged in read_qrels(root / "cisi" / "qrels.txt").items()}
    queries = dict(list(read_queries(root / "cisi" / "queries.tsv").items())[:40])
    return index, queries, qrels


@pytest.mark.parametrize("setting", [Setting(), Setting(k1=2.0, b=0.3, title_b=1.0, title=1.0,
                                                        idf="whoosh", qtf=False)])
def test_the_grid_ranks_as_the_archive_does(collection, setting: Setting) -> None:  # noqa: ANN001
    """Same results: each query's top 1000 from the numpy grid equals the archive's own
    search under a ``NewsBM25F`` with the same parameters (the real Whoosh path)."""
    from archive.ranking import NewsBM25F

    index, queries, _ = collection
    postings = CollectionPostings.read(index, queries)
    with Archive(index) as archive:
        archive.searcher = archive.index.searcher(weighting=NewsBM25F(
            B=setting.b, K1=setting.k1, field_weights={"title": setting.title},
            field_B={"title": setting.title_b}, idf_form=setting.idf))
        compared = 0
        for qid, text in queries.items():
            q = archive.free_text_query(text)
            if q is None:
                continue
            if not setting.qtf:
                for leaf in q.subqueries:
                    leaf.boost = 1.0
            results = archive.searcher.search(q, limit=1000)
            expected = [archive.searcher.stored_fields(results.docnum(n))["external_id"]
                        for n in range(results.scored_length())]
            assert postings.rank(postings.queries[qid], setting) == expected, qid
            compared += 1
        assert compared >= 30


def test_the_grid_scores_as_archive_eval(collection) -> None:  # noqa: ANN001
    """The vectorised metrics equal ``archive.evaluate``'s over the archive's own rankings."""
    from archive.evaluate import evaluate

    index, queries, qrels = collection
    postings = CollectionPostings.read(index, queries)
    with Archive(index) as archive:
        expected = evaluate(queries, qrels,
                            lambda text: [key for key, _ in archive.rank(text)]).mean
    got = postings.evaluate_many([Setting(), Setting(k1=2.0)], qrels)
    assert got[Setting()] == pytest.approx(expected)
    assert got[Setting(k1=2.0)] != got[Setting()]

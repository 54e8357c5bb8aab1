"""The lever selection (bench/levers.py): leave-one-collection-out picks on the others and
reports the held-out MAP, on a made-up table; and the grid's numpy ranking is the archive's own
ranking, on a real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from whoosh import query as wq

from archive.evaluate import read_qrels, read_queries
from archive.search import Archive
from bench import levers
from bench.levers import CollectionPostings, Setting

A, B, C = Setting(k1=0.9), Setting(k1=1.2), Setting(k1=2.0)


def test_leave_one_out_picks_on_the_others_and_reports_the_held_out() -> None:
    # C is best on x in hindsight, but A holds on y and z, so x held out gets A's MAP
    maps = {"x": {A: 0.30, B: 0.20, C: 0.40},
            "y": {A: 0.50, B: 0.45, C: 0.10},
            "z": {A: 0.20, B: 0.30, C: 0.10}}
    best_peer = {"x": 0.30, "y": 0.50, "z": 0.20}
    rows, chosen = levers.leave_one_out(maps, best_peer, [A, B, C])
    by = {r["collection"]: r for r in rows}
    # ratios: A 1.0 / 1.0 / 1.0, B 0.667 / 0.9 / 1.5, C 1.333 / 0.2 / 0.5
    # held out x: on y, z the worst ratios are A 1.0, B 0.9, C 0.2 (B's mean, 1.2, is the best:
    # a mean would pick B and pay y's loss with z's gain)
    assert by["x"]["picked"] == A.label and by["x"]["map"] == 0.30
    assert by["x"]["hindsight"] == 0.40 and by["x"]["ratio"] == pytest.approx(1.0)
    assert by["y"]["picked"] == A.label and by["z"]["picked"] == A.label
    assert chosen == A
    assert levers.criterion(maps, best_peer, B, maps) == pytest.approx((2 / 3 + 0.9 + 1.5) / 3)
    assert levers.worst(maps, best_peer, B, maps) == pytest.approx(2 / 3)
    # the named peers' ratio rides along and changes no pick
    named = {"x": 0.25, "y": 0.50, "z": 0.20}
    again, chosen_again = levers.leave_one_out(maps, best_peer, [A, B, C], named_peer=named)
    assert [r["picked"] for r in again] == [r["picked"] for r in rows] and chosen_again == A
    assert {r["collection"]: r["named_ratio"] for r in again}["x"] == pytest.approx(0.30 / 0.25)


def test_the_mean_decides_between_settings_whose_worst_collection_is_equal() -> None:
    maps = {"x": {A: 0.30, B: 0.30}, "y": {A: 0.20, B: 0.25}}
    assert levers.pick(maps, {"x": 0.3, "y": 0.2}, [A, B], ["x", "y"]) == B


def test_the_setting_in_use_is_kept_unless_the_picks_gain_held_out() -> None:
    D = Setting(k1=3.0)
    # ratios: A 1.0 / 1.0 / 1.0, B 1.1 / 0.9 / 1.05, C 0.333 / 1.2 / 1.5, D 0.2 everywhere
    maps = {"x": {A: 0.30, B: 0.33, C: 0.10, D: 0.06},
            "y": {A: 0.50, B: 0.45, C: 0.60, D: 0.10},
            "z": {A: 0.20, B: 0.21, C: 0.30, D: 0.04}}
    best_peer = {"x": 0.30, "y": 0.50, "z": 0.20}

    def verdict(current: Setting) -> str:
        computable = levers.selection(maps, best_peer, [A, B, C, D], current)
        return levers.verdict({"computable": computable,
                               "current_criterion": levers.criterion(maps, best_peer, current,
                                                                     maps),
                               "current_worst": levers.worst(maps, best_peer, current, maps)})
    # A is the pick on all three (worst 1.0); held out the picks are C for x (0.333), B for y
    # (0.9), A for z (1.0): worst 0.333, mean 0.744
    assert verdict(A).startswith("the pick")
    # B (worst 0.9) stands better in sample than the picks do held out: kept
    assert verdict(B).startswith("kept: the pick (" + A.label)
    # D (worst 0.2) stands worse: the picks gain held out, change it
    assert verdict(D).endswith("change it")


def test_equal_settings_go_to_the_earlier_one() -> None:
    maps = {"x": {A: 0.3, B: 0.3}, "y": {A: 0.2, B: 0.2}}
    assert levers.pick(maps, {"x": 0.3, "y": 0.2}, [B, A], ["x", "y"]) == B


def test_the_grid_has_no_duplicates_and_holds_the_defaults() -> None:
    settings = levers.grid()
    assert len(settings) == len(set(settings))
    assert Setting() in settings + levers.bm25f_grid()
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
                                                        idf="whoosh", qtf=False, form="sum",
                                                        df="field")])
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
                for word in q.subqueries:
                    word.boost = 1.0
            if setting.form == "sum":   # each field's term scored apart: Whoosh's own Or
                q = wq.Or([wq.Or(list(word.subqueries), boost=word.boost)
                           for word in q.subqueries])
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


# -- the true BM25F form against a direct computation ------------------------------------------

TINY = [
    ("1", "Coffee prices rise", "Coffee growers say coffee prices rose as frost hit Brazil."),
    ("2", "Brazil frost", "Frost damaged the crop in Brazil and exports fell."),
    ("3", "Markets", "Coffee coffee coffee and tea markets were quiet in London, with little "
                     "news for traders and dealers all through a long and slow session."),
    ("4", "Tea exports", "Tea exports from Kenya rose."),
    ("5", "Coffee", "A short note."),
    ("6", "Oil prices fall", "Oil prices fell in a long session of trading in which brokers "
                             "said coffee was not mentioned."),
    ("7", "Kenya tea", "Kenya tea auction prices."),
]
TINY_QUERIES = {"a": "coffee prices brazil", "b": "coffee coffee frost", "c": "tea exports kenya",
                "d": "coffee"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from archive.cli import main

    root = tmp_path_factory.mktemp("bm25f")
    docs = root / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": i, "title": t, "body": b}) + "\n"
                            for i, t, b in TINY), "utf-8")
    result = CliRunner().invoke(main, ["index", str(docs), "--index", str(root / "index"),
                                       "--json", "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root / "index"


def reference_scores(index: Path, text: str, setting: Setting) -> dict[str, float]:
    """Each article's score for ``text`` computed directly, article by article, from the
    stored text run through the schema's analyzer (not from postings): the textbook formula
    of ``setting``'s form, to check the grid's vectorised one against."""
    from collections import Counter

    from archive.ranking import IDF_FORMS

    with Archive(index) as archive:
        schema, searcher = archive.index.schema, archive.searcher
        reader = searcher.reader()
        analyzer = schema["body"].analyzer
        n = reader.doc_count_all()
        tokens: list[dict[str, list[str]]] = []
        for docnum in range(n):
            stored = searcher.stored_fields(docnum)
            fields = {}
            for name in levers.TEXT_FIELDS:
                fields[name] = [t.text for t in analyzer(stored.get(name) or "")]
                # the lengths are the tokens counted: the quantised byte is exact this small
                assert reader.doc_field_length(docnum, name, 0) == len(fields[name])
            tokens.append(fields)
        keys = [searcher.stored_fields(d)["external_id"] for d in range(n)]
        boost = {name: schema[name].format.field_boost for name in levers.TEXT_FIELDS}
    average = {f: (sum(len(d[f]) for d in tokens) / n) or 1 for f in levers.TEXT_FIELDS}
    query = Counter(t.text for t in analyzer(text))
    idf = IDF_FORMS[setting.idf]
    out: dict[str, float] = {}
    for docnum, doc in enumerate(tokens):
        total, matched = 0.0, False
        for word, count in query.items():
            qtf = count if setting.qtf else 1
            field_df = {f: sum(word in d[f] for d in tokens) for f in levers.TEXT_FIELDS}
            df = {"max": max(field_df.values()),
                  "any": sum(any(word in d[f] for f in levers.TEXT_FIELDS) for d in tokens)}
            combined = 0.0
            for f in levers.TEXT_FIELDS:
                tf = doc[f].count(word) * boost[f]
                if not tf:
                    continue
                matched = True
                b, weight = setting.field_b(f), setting.field_weight(f)
                norm = 1 - b + b * len(doc[f]) / average[f]
                if setting.form == "bm25f":
                    combined += weight * tf / norm
                else:
                    word_idf = idf(n, field_df[f] if setting.df == "field" else df[setting.df])
                    total += weight * qtf * word_idf * tf * (setting.k1 + 1) \
                        / (tf + setting.k1 * norm)
            if setting.form == "bm25f" and combined:
                total += qtf * idf(n, df[setting.df]) * combined * (setting.k1 + 1) \
                    / (combined + setting.k1)
        if matched:
            out[keys[docnum]] = total
    return out


BM25F_SETTINGS = [Setting(k1=1.2, b=0.75, title_b=0.3, title=0.5, form="bm25f", df="max"),
                  Setting(k1=2.0, b=0.5, title_b=0.0, title=1.0, form="bm25f", df="any"),
                  Setting(k1=0.9, b=0.9, title_b=0.75, title=0.25, qtf=False, form="bm25f",
                          df="any"),
                  Setting(k1=1.2, b=0.75, title_b=0.75, title=0.5, form="sum", df="any"),
                  Setting()]


@pytest.mark.parametrize("setting", BM25F_SETTINGS, ids=lambda s: s.label)
def test_the_grid_scores_each_form_as_the_direct_computation(tiny: Path,
                                                            setting: Setting) -> None:
    postings = CollectionPostings.read(tiny, TINY_QUERIES)
    for qid, text in TINY_QUERIES.items():
        expected = reference_scores(tiny, text, setting)
        matrix = levers.QueryMatrix(postings, postings.queries[qid], {})
        scores = matrix.scores([setting])[0]
        got = {postings.keys[d]: float(s) for d, s in zip(matrix.docs, scores)}
        assert got == pytest.approx(expected, rel=1e-12), (qid, setting.label)
        assert postings.rank(postings.queries[qid], setting) == \
            sorted(expected, key=lambda k: (-expected[k], postings.keys.index(k)))


def test_bm25f_is_not_the_sum_form(tiny: Path) -> None:
    """The forms differ where a word is in both title and body: the check above can fail."""
    bm25f = reference_scores(tiny, "coffee", Setting(form="bm25f", df="max"))
    summed = reference_scores(tiny, "coffee", Setting(form="sum", df="max"))
    assert bm25f.keys() == summed.keys()
    # article 1 holds coffee in title and body: the sum form saturates twice and adds
    ratio = {k: summed[k] / bm25f[k] for k in bm25f}
    assert ratio["1"] > ratio["3"] * 1.2


def test_bm25f_grid_settings_are_distinct_and_grouped() -> None:
    settings = levers.grid() + levers.bm25f_grid()
    assert len(settings) == len(set(settings))
    assert {s.form for s in settings} == {"sum", "bm25f"}
    # in BM25F the title weight acts before the saturation: it splits the groups
    assert Setting(form="bm25f", title=0.5).saturation != \
        Setting(form="bm25f", title=1.0).saturation
    assert Setting(form="sum", title=0.5).saturation == \
        Setting(form="sum", title=1.0).saturation

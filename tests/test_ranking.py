"""The archive's ranking (archive/ranking.py): scores follow the documented formula exactly,
and every path that scores (CLI search, eval's free text) uses it."""

from __future__ import annotations

import math

import pytest
from whoosh import query as wq

from archive import ranking
from archive.query import SEARCH_FIELDS
from archive.search import Archive


@pytest.fixture(scope="module")
def archive(news_index):  # noqa: ANN001, ANN201
    with Archive(news_index.index) as opened:
        yield opened


def test_lucene_idf_by_hand() -> None:
    # N=5 articles, the word in 2: log(1 + (5 - 2 + 0.5) / (2 + 0.5)) = log(2.4)
    assert ranking.lucene_idf(5, 2) == pytest.approx(math.log(2.4))
    assert ranking.lucene_idf(5, 5) > 0  # never negative, unlike Robertson's idf


def _posting(archive: Archive, docnum: int, name: str, term: str) -> tuple[float, float] | None:
    """The indexed weight and Whoosh's stored length of ``term`` in ``name`` of ``docnum``."""
    reader = archive.searcher.reader()
    if (name, term.encode()) not in reader:
        return None
    postings = reader.postings(name, term.encode())
    postings.skip_to(docnum)
    if not postings.is_active() or postings.id() != docnum:
        return None
    boost = archive.index.schema[name].format.field_boost
    tf = postings.weight()  # the field boost is already folded into the indexed weight
    assert tf == pytest.approx(boost * postings.value_as("frequency"))
    return tf, reader.doc_field_length(docnum, name)


def bm25_by_hand(archive: Archive, docnum: int, name: str, term: str) -> float:
    """A term asked of one field: that field's BM25 times the field's weight."""
    reader = archive.searcher.reader()
    found = _posting(archive, docnum, name, term)
    assert found is not None
    tf, length = found
    average = archive.searcher.avg_field_length(name)
    idf = ranking.lucene_idf(reader.doc_count_all(), reader.doc_frequency(name, term.encode()))
    k1, b = ranking.K1, ranking.FIELD_B.get(name, ranking.B)
    weight = ranking.FIELD_WEIGHTS.get(name, 1.0)
    return weight * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))


def bm25f_by_hand(archive: Archive, docnum: int, term: str) -> float:
    """A word over the text fields (the module docstring): each field's tf over its length
    normalisation, times its weight, summed, saturated once, times the idf of the word's
    largest document frequency over the fields."""
    reader = archive.searcher.reader()
    combined = 0.0
    for name in SEARCH_FIELDS:
        found = _posting(archive, docnum, name, term)
        if found is None:
            continue
        tf, length = found
        b = ranking.FIELD_B.get(name, ranking.B)
        norm = 1 - b + b * length / archive.searcher.avg_field_length(name)
        combined += ranking.FIELD_WEIGHTS.get(name, 1.0) * tf / norm
    df = max(reader.doc_frequency(name, term.encode()) for name in SEARCH_FIELDS)
    k1 = ranking.K1
    return ranking.lucene_idf(reader.doc_count_all(), df) * combined * (k1 + 1) / (combined + k1)


@pytest.mark.parametrize("name", ["title", "body"])
def test_a_term_scores_as_the_formula_says(archive: Archive, name: str) -> None:
    results = archive.searcher.search(wq.Term(name, "volcano"), limit=None)
    assert len(results) >= 1
    for hit in results:
        assert hit.score == pytest.approx(bm25_by_hand(archive, hit.docnum, name, "volcano"))


def test_field_weights_are_the_rankings(archive: Archive) -> None:
    weighting = archive.searcher.weighting
    for name in SEARCH_FIELDS:
        assert weighting.field_weight(name) == ranking.FIELD_WEIGHTS.get(name, 1.0)
    for name in ("title", "body"):
        assert weighting.scorer(archive.searcher, name, b"volcano").weight == \
            ranking.FIELD_WEIGHTS.get(name, 1.0)


@pytest.mark.parametrize("use_columns", [True, False])
def test_a_word_scores_its_fields_as_one_term(news_index, use_columns: bool) -> None:  # noqa: ANN001
    with Archive(news_index.index, use_columns=use_columns) as opened:
        hits = opened.search("volcano", facets=False).hits
        assert hits
        in_title = 0
        for hit in hits:
            docnum = opened.searcher.document_number(id=hit.id)
            expected = bm25f_by_hand(opened, docnum, "volcano")
            assert hit.score == pytest.approx(expected, abs=1e-4)
            per_field = sum(bm25_by_hand(opened, docnum, name, "volcano")
                            for name in SEARCH_FIELDS
                            if _posting(opened, docnum, name, "volcano"))
            if _posting(opened, docnum, "title", "volcano"):
                in_title += 1
                # saturated once: less than the fields' scores added, as Whoosh would
                assert hit.score < per_field
        assert in_title


def test_a_word_repeated_in_free_text_weighs_more(archive: Archive) -> None:
    once = dict(archive.rank("fishing village"))
    twice = dict(archive.rank("fishing fishing village"))
    query = archive.free_text_query("fishing fishing village")
    boosts = {word.subqueries[0].text: word.boost for word in query.subqueries}
    assert boosts["fish"] == 2.0 and boosts["villag"] == 1.0
    assert set(once) == set(twice)
    for key in once:
        assert twice[key] > once[key]
    assert all(sorted(t.fieldname for t in word.subqueries) == sorted(SEARCH_FIELDS)
               for word in query.subqueries)


def test_a_title_made_from_the_lead_is_shown_but_not_searched(tmp_path) -> None:  # noqa: ANN001
    """A reader makes a title from the lead when the source gave none; searched as a headline
    it would count the lead twice. The made title is stored and shown, the body's words are
    searched once: the article scores as one whose headline does not hold the word."""
    from archive import store
    from archive.article import Article, lead_title

    body = "Volcano erupts near the coast\nAsh covered the town and its harbour."
    made = Article(id="made", title=lead_title(body), body=body, path="made.txt")
    given = Article(id="given", title="Harbour town under ash", body=body, path="given.txt")
    assert made.title == "Volcano erupts near the coast"
    ix = store.create_index(tmp_path / "index")
    writer = store.open_writer(ix, tmp_path / "index")
    store.add_articles(writer, [made, given])
    writer.commit()
    with Archive(tmp_path / "index") as archive:
        scores = dict(archive.rank("volcano"))
        assert set(scores) == {"made", "given"}
        assert scores["made"] == pytest.approx(scores["given"])
        assert archive.search("title:volcano").total == 0
        assert [h.id for h in archive.search("title:harbour").hits] == ["given"]
        assert archive.article("made").title == made.title  # still what lists show

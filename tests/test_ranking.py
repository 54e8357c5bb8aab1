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


def bm25_by_hand(archive: Archive, docnum: int, name: str, term: str) -> float:
    """The module docstring's formula, from the index's own counts."""
    reader = archive.searcher.reader()
    postings = reader.postings(name, term.encode())
    postings.skip_to(docnum)
    assert postings.id() == docnum
    boost = archive.index.schema[name].format.field_boost
    tf = postings.weight()  # the field boost is already folded into the indexed weight
    assert tf == pytest.approx(boost * postings.value_as("frequency"))
    length = reader.doc_field_length(docnum, name)
    average = archive.searcher.avg_field_length(name)
    idf = ranking.lucene_idf(reader.doc_count_all(), reader.doc_frequency(name, term.encode()))
    k1, b = ranking.K1, ranking.B
    weight = ranking.FIELD_WEIGHTS.get(name, 1.0)
    return weight * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))


@pytest.mark.parametrize("name", ["title", "body"])
def test_a_term_scores_as_the_formula_says(archive: Archive, name: str) -> None:
    results = archive.searcher.search(wq.Term(name, "volcano"), limit=None)
    assert len(results) >= 1
    for hit in results:
        assert hit.score == pytest.approx(bm25_by_hand(archive, hit.docnum, name, "volcano"))


def test_title_words_weigh_half_at_query_time(archive: Archive) -> None:
    scorer = archive.searcher.weighting.scorer(archive.searcher, "title", b"volcano")
    assert scorer.weight == 0.5
    assert archive.searcher.weighting.scorer(archive.searcher, "body", b"volcano").weight == 1.0


def test_a_search_score_is_the_sum_over_fields(archive: Archive) -> None:
    hit = archive.search("volcano", facets=False).hits[0]
    docnum = archive.searcher.document_number(id=hit.id)
    expected = sum(bm25_by_hand(archive, docnum, name, "volcano") for name in ("title", "body"))
    assert hit.score == pytest.approx(expected, abs=1e-4)


def test_a_word_repeated_in_free_text_weighs_more(archive: Archive) -> None:
    once = dict(archive.rank("fishing village"))
    twice = dict(archive.rank("fishing fishing village"))
    query = archive.free_text_query("fishing fishing village")
    boosts = {(t.fieldname, t.text): t.boost for t in query.subqueries}
    assert boosts[("body", "fish")] == 2.0 and boosts[("body", "villag")] == 1.0
    assert set(once) == set(twice)
    for key in once:
        assert twice[key] > once[key]
    assert all(t.fieldname in SEARCH_FIELDS for t in query.subqueries)

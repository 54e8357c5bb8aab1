"""How the archive scores a match: BM25F with Lucene's idf, a word's fields scored as one.

Whoosh's stock ``BM25F`` was measured against other BM25 engines, first on CISI and Cranfield,
then on seven test collections with every parameter here chosen by leave-one-collection-out
(``python -m bench relevance``; ``bench/levers.py``; tables in the README's Performance section
and bench/README.md). What holds on collections it was not picked on is the archive's ranking:

* **A word's fields scored as one** (Robertson and Zaragoza's BM25F): a word searched in the
  title, body and captions has each field's term frequency divided by that field's length
  normalisation and multiplied by the field's weight; the sum is saturated once with ``K1``.
  Whoosh's BM25F instead saturates each field apart and adds the scores, so a word found in
  three fields counts nearly three times, and a long story mentioning the word everywhere
  beats a short one about it. The word's idf comes from its largest document frequency over
  those fields (Lucene's ``CombinedFieldQuery``): every scorer holds each field's frequency
  (Whoosh, the columns, the site's lists), where the number of articles holding the word in
  any field is kept by none.
* **Lucene's idf**, ``log(1 + (N - df + 0.5) / (df + 0.5))``, instead of Whoosh's
  ``log(N / (df + 1)) + 1``: Whoosh's adds a constant 1 that flattens the difference between
  rare and common words, so a document matching many common words beats one matching the
  rare word the searcher cared about.
* **Repeated query words count** (``free_text_query``): a word given twice in a free-text
  query weighs twice, as in textbook BM25.

``K1``, ``B``, ``FIELD_B`` and ``FIELD_WEIGHTS`` are the selection's pick over all seven
collections among the settings every scorer can compute, the worst collection's standing against
the best peer first and the mean second (``bench.levers.standing``: the ranking must hold on
every collection, not on average), and stay while a new pick gains only in hindsight
(``bench.levers.verdict``). Two collections never used to pick anything
(``bench.testcollections.CHECKS``) are where a change of setting is confirmed; the title's
weight multiplies its
indexed term frequency, which holds the index-time boost already. A fuzzy word, wildcard or
prefix scores each word it reaches as such a term too (``archive.expansions``). A term asked
of one field alone (``title:word``) and a phrase are that field's BM25 with the same
parameters, the score times the field's weight; for one field the two forms differ only by
where the weight applies.

Everything that scores reads this one weighting: the CLI's searches (Whoosh's matchers,
``archive.words`` for a word over several fields, and the columns), ``archive eval`` and the
static site's bundle, which recomputes the formula in the browser, so the browser ranks as the
CLI does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from whoosh import scoring

#: a field's weight on its term frequency before a word's fields are summed (fields not named
#: weigh 1)
FIELD_WEIGHTS: dict[str, float] = {"title": 2.0}

#: length normalisation: ``B`` for every field not named in ``FIELD_B``
B = 0.3
FIELD_B: dict[str, float] = {"title": 0.75}
K1 = 1.5
#: the idf form, a key of ``IDF_FORMS``
IDF = "lucene"
#: how a word over several fields is scored (names ``bench/levers.py``'s grid uses): one
#: BM25F term, its idf from the fields' largest document frequency
FORM = "bm25f"
WORD_DF = "max"


def lucene_idf(doc_count: int, doc_frequency: int) -> float:
    """Lucene's (and bm25s') BM25 idf: always positive, and 0-centred on half the corpus."""
    return math.log(1 + (doc_count - doc_frequency + 0.5) / (doc_frequency + 0.5))


def whoosh_idf(doc_count: int, doc_frequency: int) -> float:
    """Whoosh's stock idf, kept as a lever for ``python -m bench levers`` to measure against."""
    return math.log(doc_count / (doc_frequency + 1)) + 1


IDF_FORMS: dict[str, Callable[[int, int], float]] = {"lucene": lucene_idf, "whoosh": whoosh_idf}


class WeightedBM25FScorer(scoring.BM25FScorer):
    """Whoosh's BM25F scorer, its score multiplied by the field's weight.

    The multiplier is applied inside ``_score`` so Whoosh's block-quality bounds (used to skip
    blocks that cannot reach the top N) are multiplied alike and stay safe.
    """

    def __init__(self, searcher: Any, fieldname: str, text: bytes, B: float, K1: float,
                 weight: float, qf: float = 1):
        self.weight = weight  # before Whoosh's setup, which scores the block bound
        super().__init__(searcher, fieldname, text, B, K1, qf=qf)

    def _score(self, weight: float, length: float) -> float:
        return self.weight * scoring.bm25(self.idf, weight, length, self.avgfl, self.B, self.K1)


class NewsBM25F(scoring.BM25F):
    """BM25F with Lucene's idf and per-field weights (see the module docstring). Whoosh asks
    ``scorer`` for one field's term; a word over several fields is scored by
    ``archive.words.FieldedWord`` from ``field_tf_function``, ``word_idf`` and ``saturated``."""

    def __init__(self, B: float = B, K1: float = K1,
                 field_weights: dict[str, float] | None = None,
                 field_B: dict[str, float] | None = None, idf_form: str = IDF,
                 **kwargs: float):
        per_field = {f"{name}_B": value
                     for name, value in (FIELD_B if field_B is None else field_B).items()}
        super().__init__(B=B, K1=K1, **{**per_field, **kwargs})
        self.field_weights = dict(FIELD_WEIGHTS if field_weights is None else field_weights)
        if idf_form not in IDF_FORMS:
            raise ValueError(f"unknown idf form {idf_form!r} (known: {', '.join(IDF_FORMS)})")
        self.idf_form = idf_form
        self._idf_of = IDF_FORMS[idf_form]

    def field_B(self, fieldname: str) -> float:
        """The length normalisation ``fieldname`` is scored with."""
        return self._field_B.get(fieldname, self.B)

    def field_weight(self, fieldname: str) -> float:
        return self.field_weights.get(fieldname, 1.0)

    def idf(self, searcher: Any, fieldname: str, text: bytes) -> float:
        parent = searcher.get_parent()
        return self.idf_of(parent.doc_count_all(), parent.doc_frequency(fieldname, text))

    def idf_of(self, doc_count: int, doc_frequency: int) -> float:
        """The idf ``idf`` gives a term, from the counts (for callers that already hold them)."""
        return self._idf_of(doc_count, doc_frequency)

    def score_function(self, searcher: Any, fieldname: str, doc_frequency: int, *,
                       doc_count: int | None = None,
                       avg_length: float | None = None) -> Callable[[Any, Any], Any]:
        """``score(weight, length)`` of a term of ``fieldname`` held by ``doc_frequency``
        articles: the arithmetic of this weighting's scorer for it, for callers that already
        hold the term's document frequency (a whole-index pass), without the scorer's own
        per-term index lookups. Works element by element on numpy arrays alike, so each
        score equals the one a search computes. ``doc_count`` and ``avg_length`` replace the
        searcher's (for statistics kept from another time, ``store.statistics``)."""
        parent = searcher.get_parent()
        idf = self.idf_of(parent.doc_count_all() if doc_count is None else doc_count,
                          doc_frequency)
        if avg_length is None:
            avg_length = parent.avg_field_length(fieldname) or 1
        B, K1 = self.field_B(fieldname), self.K1
        field_weight = self.field_weight(fieldname)

        def score(weight: Any, length: Any) -> Any:
            return field_weight * scoring.bm25(idf, weight, length, avg_length, B, K1)
        return score

    # -- a word over several fields (``archive.words``) ------------------------------------

    def field_tf_function(self, searcher: Any, fieldname: str, *,
                          avg_length: float | None = None) -> Callable[[Any, Any], Any]:
        """``tf(weight, length)``: a posting's term frequency in ``fieldname`` over the field's
        length normalisation, times the field's weight, the part of a word's combined term
        frequency that field gives. Element by element on numpy arrays alike. ``avg_length``
        replaces the searcher's (which is then not read: a unit of the site's lists)."""
        if avg_length is None:
            avg_length = searcher.get_parent().avg_field_length(fieldname) or 1
        B, field_weight = self.field_B(fieldname), self.field_weight(fieldname)

        def tf(weight: Any, length: Any) -> Any:
            return field_weight * weight / ((1 - B) + B * length / avg_length)
        return tf

    def word_idf(self, doc_count: int, doc_frequencies: Any) -> float:
        """A word's idf over several fields: from its largest document frequency among them."""
        return self.idf_of(doc_count, max(doc_frequencies))

    def saturated(self, combined_tf: Any) -> Any:
        """A word's combined term frequency, saturated: what its idf multiplies."""
        return combined_tf * (self.K1 + 1) / (combined_tf + self.K1)

    def unsaturated(self, saturated: float) -> float:
        """The combined term frequency ``saturated`` comes from (infinite past the bound
        ``K1 + 1``): what a matcher must reach to score ``saturated``."""
        if saturated >= self.K1 + 1:
            return math.inf
        return self.K1 * saturated / (self.K1 + 1 - saturated)

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: float = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return scoring.WeightScorer.for_(searcher, fieldname, text)
        B = self.field_B(fieldname)
        return WeightedBM25FScorer(searcher, fieldname, text, B, self.K1,
                                   self.field_weight(fieldname), qf=qf)


def weighting() -> NewsBM25F:
    """The archive's weighting model, for ``index.searcher(weighting=...)``."""
    return NewsBM25F()

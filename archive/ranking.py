"""How the archive scores a match: BM25F with Lucene's idf and per-field weights.

Whoosh's stock ``BM25F`` was measured against other BM25 engines on CISI and Cranfield
(``python -m bench.levers``; table in the README's Performance section) and three levers
helped on both collections, so they are the archive's ranking:

* **Lucene's idf**, ``log(1 + (N - df + 0.5) / (df + 0.5))``, instead of Whoosh's
  ``log(N / (df + 1)) + 1``: Whoosh's adds a constant 1 that flattens the difference between
  rare and common words, so a document matching many common words beats one matching the
  rare word the searcher cared about.
* **Field weights at query time**: the title field keeps its index-time boost (a title word
  counts twice toward the title's term frequency), but its score is then weighed 0.5, so a
  word in a short title does not outweigh the same word repeated through the body.
* **Repeated query words count** (``free_text_query``): a word given twice in a free-text
  query weighs twice, as in textbook BM25.

Everything that scores reads this one weighting: the CLI's searches, ``archive eval`` and the
static site's precomputed per-(term, article) scores, so the browser ranks as the CLI does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from whoosh import scoring

#: query-time multipliers on a field's BM25F score (fields not named weigh 1)
FIELD_WEIGHTS: dict[str, float] = {"title": 0.5}

B = 0.75
K1 = 1.2


def lucene_idf(doc_count: int, doc_frequency: int) -> float:
    """Lucene's (and bm25s') BM25 idf: always positive, and 0-centred on half the corpus."""
    return math.log(1 + (doc_count - doc_frequency + 0.5) / (doc_frequency + 0.5))


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
    """BM25F with Lucene's idf and per-field score weights (see the module docstring)."""

    def __init__(self, B: float = B, K1: float = K1,
                 field_weights: dict[str, float] | None = None, **kwargs: float):
        super().__init__(B=B, K1=K1, **kwargs)
        self.field_weights = dict(FIELD_WEIGHTS if field_weights is None else field_weights)

    def field_weight(self, fieldname: str) -> float:
        return self.field_weights.get(fieldname, 1.0)

    def idf(self, searcher: Any, fieldname: str, text: bytes) -> float:
        parent = searcher.get_parent()
        return self.idf_of(parent.doc_count_all(), parent.doc_frequency(fieldname, text))

    @staticmethod
    def idf_of(doc_count: int, doc_frequency: int) -> float:
        """The idf ``idf`` gives a term, from the counts (for callers that already hold them)."""
        return lucene_idf(doc_count, doc_frequency)

    def score_function(self, searcher: Any, fieldname: str,
                       doc_frequency: int) -> Callable[[Any, Any], Any]:
        """``score(weight, length)`` of a term of ``fieldname`` held by ``doc_frequency``
        articles: the arithmetic of this weighting's scorer for it, for callers that already
        hold the term's document frequency (a whole-index pass), without the scorer's own
        per-term index lookups. Works element by element on numpy arrays alike, so each
        score equals the one a search computes."""
        parent = searcher.get_parent()
        idf = self.idf_of(parent.doc_count_all(), doc_frequency)
        avg_length = parent.avg_field_length(fieldname) or 1
        B, K1 = self._field_B.get(fieldname, self.B), self.K1
        field_weight = self.field_weight(fieldname)

        def score(weight: Any, length: Any) -> Any:
            return field_weight * scoring.bm25(idf, weight, length, avg_length, B, K1)
        return score

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: float = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return scoring.WeightScorer.for_(searcher, fieldname, text)
        B = self._field_B.get(fieldname, self.B)
        return WeightedBM25FScorer(searcher, fieldname, text, B, self.K1,
                                   self.field_weight(fieldname), qf=qf)


def weighting() -> NewsBM25F:
    """The archive's weighting model, for ``index.searcher(weighting=...)``."""
    return NewsBM25F()

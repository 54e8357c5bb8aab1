"""Related articles for many articles at once: Whoosh's ``more_like`` computed on arrays.

The site shows, under each article, the articles most like it: Whoosh's ``more_like`` on the
body (the document's ten key terms by the Bo1 expansion model, weighted by their key-term
score over the best one's, searched as one ``Or`` query with the archive's weighting). Asked
once per article that is one full search each, the costliest part of a site build. Here every
article's key terms and every candidate's score come from one pass over the body postings:

* key terms: Bo1 of each (article, term) from the term's count in the article and its
  frequency in the collection, the same formula in the same order of operations as
  ``whoosh.classify``, ties broken by the word as Whoosh does;
* candidates: a sparse product of each article's key-term weights with the key terms'
  posting scores (the weighting's own BM25 arithmetic, element by element), ranked by score
  then document number, as Whoosh's top-N collector ranks.

The collection statistics (each word's document frequency and count, the article count, the
average body length) come from the index's snapshot (``store.statistics``) when it has one, so
a day's new articles do not re-rank every list; with the snapshot taken from the index as it
is, the lists are Whoosh's. ``tests/test_related.py`` compares them article by article.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from archive import store
from archive.store.statistics import CollectionStats

FIELD = "body"
KEY_TERMS = 10
#: articles whose candidate scores are computed in one sparse product (bounds its memory)
BATCH = 512


@dataclass
class _Postings:
    """Every live body posting as parallel arrays, with per-term collection statistics."""

    docs: np.ndarray          # global document number of each posting
    terms: np.ndarray         # term number of each posting (terms numbered in word order)
    counts: np.ndarray        # the posting's weight (the word's count in the article)
    doc_frequency: np.ndarray  # per term, over every segment (deleted articles included)
    frequency: np.ndarray     # per term: total weight in the collection
    words: list[bytes]


def _read_postings(reader: Any) -> _Postings:
    # word -> [id arrays, weight arrays, document frequency, collection frequency]
    by_word: dict[bytes, list[Any]] = {}
    for leaf, offset in reader.leaf_readers():
        if FIELD not in leaf.schema or not leaf.doc_count():
            continue
        for btext, info, ids, weights in store.field_postings(leaf, FIELD):
            found = by_word.setdefault(btext, [[], [], 0, 0.0])
            found[0].append(ids + offset)
            found[1].append(weights)
            found[2] += info.doc_frequency()
            found[3] += info.weight()
    words = sorted(by_word)
    docs, terms, counts = [], [], []
    doc_frequency = np.zeros(len(words), dtype=np.int64)
    frequency = np.zeros(len(words), dtype=np.float64)
    for number, word in enumerate(words):
        id_parts, weight_parts, df, cf = by_word[word]
        for ids, weights in zip(id_parts, weight_parts):
            docs.append(ids)
            counts.append(weights)
            terms.append(np.full(len(ids), number, dtype=np.int64))
        doc_frequency[number], frequency[number] = df, cf
    join = (lambda parts, dtype: np.concatenate(parts).astype(dtype) if parts
            else np.zeros(0, dtype=dtype))
    return _Postings(join(docs, np.int64), join(terms, np.int64), join(counts, np.float64),
                     doc_frequency, frequency, words)


def _postings_from_columns(columns: Any) -> _Postings:
    """``_read_postings`` from the columnar sidecars (``archive.columns``): the same postings
    and statistics, read from mapped arrays instead of walking Whoosh's posting blocks."""
    words, docs, terms, counts = columns.every_posting(FIELD)
    doc_frequency = np.bincount(terms, minlength=len(words)).astype(np.int64)
    frequency = np.bincount(terms, weights=counts, minlength=len(words)).astype(np.float64)
    return _Postings(docs, terms, counts, doc_frequency, frequency, words)


@dataclass
class _Weights:
    """The collection statistics the lists are weighed by, per term of ``_Postings``."""

    doc_count: int
    avg_length: float
    doc_frequency: np.ndarray
    frequency: np.ndarray


def _weights(postings: _Postings, searcher: Any, stats: CollectionStats | None) -> _Weights:
    """The snapshot's statistics when there is one, else the index's own."""
    if stats is None:
        return _Weights(searcher.reader().doc_count_all(),
                        searcher.avg_field_length(FIELD) or 1, postings.doc_frequency,
                        postings.frequency)
    doc_frequency, frequency = stats.aligned(postings.words)
    return _Weights(stats.doc_count, stats.avg_length, doc_frequency, frequency)


def _key_terms(postings: _Postings, weights: _Weights, doc_count: int,
               rows: np.ndarray) -> sparse.csr_matrix:
    """Each article's key terms and their weights, as Whoosh's ``Expander`` picks them."""
    keep = np.isin(postings.docs, rows)
    docs, terms = postings.docs[keep], postings.terms[keep]
    counts = postings.counts[keep]
    # Bo1: count * log2((1 + f) / f) + log2(1 + f), f = collection frequency / N; the logs
    # per term with math.log, as whoosh.classify.Bo1Model.score computes them
    share = weights.frequency / weights.doc_count
    ratio_log = np.array([math.log((1.0 + f) / f, 2) if f > 0 else 0.0 for f in share])
    plus_log = np.array([math.log(1.0 + f, 2) for f in share])
    bo1 = counts * ratio_log[terms] + plus_log[terms]
    # weights are divided by the article's best score (``expanded_terms``, normalize=False)
    best = np.zeros(doc_count)
    np.maximum.at(best, docs, bo1)
    # (a word only articles newer than a snapshot use weighs nothing by its statistics, and
    # is no key term)
    weight = np.divide(bo1, best[docs], out=np.zeros_like(bo1), where=best[docs] > 0)
    order = np.lexsort((terms, -weight, docs))
    docs, terms, weight = docs[order], terms[order], weight[order]
    first = np.searchsorted(docs, docs, side="left")
    top = ((np.arange(len(docs)) - first) < KEY_TERMS) & (weight > 0)
    return sparse.csr_matrix((weight[top], (docs[top], terms[top])),
                             shape=(doc_count, len(postings.words)))


def _term_scores(postings: _Postings, weights: _Weights, searcher: Any, needed: np.ndarray,
                 doc_count: int, lengths: np.ndarray) -> sparse.csr_matrix:
    """The weighting's score of every posting of the ``needed`` terms, terms by articles."""
    weighting = searcher.weighting
    keep = np.isin(postings.terms, needed)
    docs, terms = postings.docs[keep], postings.terms[keep]
    counts = postings.counts[keep]
    scores = np.zeros(len(docs))
    starts = np.searchsorted(terms, needed, side="left")   # postings are in term order
    ends = np.searchsorted(terms, needed, side="right")
    functions: dict[int, Any] = {}  # one per document frequency: many terms share one
    for term, lo, hi in zip(needed, starts, ends):
        df = int(weights.doc_frequency[term])
        if df not in functions:
            functions[df] = weighting.score_function(searcher, FIELD, df,
                                                     doc_count=weights.doc_count,
                                                     avg_length=weights.avg_length)
        scores[lo:hi] = functions[df](counts[lo:hi], lengths[docs[lo:hi]])
    return sparse.csr_matrix((scores, (terms, docs)), shape=(len(postings.words), doc_count))


def related_table(searcher: Any, articles: Iterable[int], limit: int,
                  clusters: list[str], columns: Any = None,
                  stats: CollectionStats | None = None) -> dict[int, list[int]]:
    """For each article (document number) in ``articles``, the numbers of up to ``limit``
    articles most like it, other copies of its own wire story left out. With ``columns``
    (the index's ``archive.columns.ColumnIndex``) the postings and lengths are read from
    its sidecars; the lists are the same. ``stats``: the statistics to weigh by (the
    index's snapshot); without, the index's own."""
    wanted = np.array(sorted(set(articles)), dtype=np.int64)
    reader = searcher.reader()
    doc_count = reader.doc_count_all()
    out: dict[int, list[int]] = {int(d): [] for d in wanted}
    if not len(wanted) or not doc_count:
        return out
    if columns is not None:
        postings = _postings_from_columns(columns)
        lengths = columns.field_lengths(FIELD)
    else:
        postings = _read_postings(reader)
        lengths = np.array([reader.doc_field_length(d, FIELD, 1) for d in range(doc_count)],
                           dtype=np.float64)
    live = np.zeros(doc_count, dtype=bool)
    live[np.fromiter(reader.all_doc_ids(), dtype=np.int64)] = True
    alive = live[postings.docs]
    postings = _Postings(postings.docs[alive], postings.terms[alive], postings.counts[alive],
                         postings.doc_frequency, postings.frequency, postings.words)
    weights = _weights(postings, searcher, stats)
    keys = _key_terms(postings, weights, doc_count, wanted)
    scores = _term_scores(postings, weights, searcher, np.unique(keys.indices), doc_count,
                          lengths)
    top = limit + 5  # as many as the Whoosh path asked for before leaving out copies
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start:start + BATCH]
        product = (keys[batch] @ scores).tocsr()
        for row, docnum in enumerate(batch):
            lo, hi = product.indptr[row], product.indptr[row + 1]
            candidates, values = product.indices[lo:hi], product.data[lo:hi]
            others = candidates != docnum
            candidates, values = candidates[others], values[others]
            if len(values) > top:  # only those scoring at least the top-th best can rank
                floor = np.partition(values, len(values) - top)[len(values) - top]
                contenders = values >= floor
                candidates, values = candidates[contenders], values[contenders]
            best = np.lexsort((candidates, -values))[:top]
            cluster = clusters[docnum]
            out[int(docnum)] = [int(c) for c in candidates[best]
                                if not cluster or clusters[c] != cluster][:limit]
    return out

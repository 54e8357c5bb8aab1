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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from archive import store
from archive.store.statistics import CollectionStats

if TYPE_CHECKING:
    from scipy import sparse

FIELD = "body"
KEY_TERMS = 10
#: articles whose candidate scores are computed in one sparse product (bounds its memory)
BATCH = 512


def _csr(*args: Any, **kwargs: Any) -> sparse.csr_matrix:
    """``scipy.sparse.csr_matrix``, SciPy imported on first use: only related lists need
    it, and its import is a good share of every command's start."""
    from scipy import sparse
    return sparse.csr_matrix(*args, **kwargs)


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
    return _csr((weight[top], (docs[top], terms[top])), shape=(doc_count, len(postings.words)))


@dataclass
class KeyTerms:
    """Articles' key terms and their weights (``_key_terms``), one row per key term, an
    article's rows together (``of`` makes them in document number order). They depend on
    the article and the statistics snapshot only, so a later build takes an unchanged
    article's as they are (by its new document number) instead of picking them again."""

    docs: np.ndarray      # the article's document number
    terms: np.ndarray     # the word's place in ``words``
    weights: np.ndarray
    words: list[bytes]

    @staticmethod
    def of(keys: sparse.csr_matrix, words: list[bytes]) -> KeyTerms:
        """The rows of ``_key_terms``'s matrix (columns numbered as ``words``)."""
        docs = np.repeat(np.arange(keys.shape[0], dtype=np.int64), np.diff(keys.indptr))
        return KeyTerms(docs, keys.indices.astype(np.int64), keys.data.astype(np.float64),
                        words)

    def matrix(self, words: list[bytes], doc_count: int) -> tuple[sparse.csr_matrix,
                                                                   np.ndarray]:
        """These key terms as ``_key_terms`` gives them for a pass whose terms are
        ``words``, and the articles they are for (one with a word not among ``words`` is
        left out, to be picked again)."""
        term_of = {word: number for number, word in enumerate(words)}
        mapped = np.array([term_of.get(word, -1) for word in self.words],
                          dtype=np.int64)[self.terms]
        inside = (self.docs >= 0) & (self.docs < doc_count)
        keep = ~np.isin(self.docs, self.docs[(mapped < 0) | ~inside])
        keys = _csr((self.weights[keep], (self.docs[keep], mapped[keep])),
                    shape=(doc_count, len(words)))
        return keys, np.unique(self.docs[keep])


def _term_scores(postings: _Postings, weights: _Weights, searcher: Any, needed: np.ndarray,
                 doc_count: int, lengths: np.ndarray,
                 among: np.ndarray | None = None) -> sparse.csr_matrix:
    """The weighting's score of every posting of the ``needed`` terms (of the articles
    ``among`` only, when given), terms by articles."""
    weighting = searcher.weighting
    keep = np.isin(postings.terms, needed)
    if among is not None:
        keep &= np.isin(postings.docs, among)
    docs, terms = postings.docs[keep], postings.terms[keep]
    counts = postings.counts[keep]
    scores = np.zeros(len(docs))
    starts = np.searchsorted(terms, needed, side="left")   # postings are in term order
    ends = np.searchsorted(terms, needed, side="right")
    held = ends > starts   # (of a few articles, most needed terms have no posting)
    functions: dict[int, Any] = {}  # one per document frequency: many terms share one
    for term, lo, hi in zip(needed[held], starts[held], ends[held]):
        df = int(weights.doc_frequency[term])
        if df not in functions:
            functions[df] = weighting.score_function(searcher, FIELD, df,
                                                     doc_count=weights.doc_count,
                                                     avg_length=weights.avg_length)
        scores[lo:hi] = functions[df](counts[lo:hi], lengths[docs[lo:hi]])
    return _csr((scores, (terms, docs)), shape=(len(postings.words), doc_count))


@dataclass
class Ranked:
    """An article's best candidates, best first (score falling, then document number), as
    document numbers and scores: the ``limit + 5`` a list is cut from (copies of the
    article's own story are left out after), and one more, the best left out. A later
    build merges new articles into them instead of ranking every article again."""

    numbers: np.ndarray
    scores: np.ndarray
    #: set when an earlier full list had candidates taken out (edited or gone since): every
    #: article not among ``numbers`` and not ranked again scores at most this (the score of
    #: the earlier list's last candidate), so a merge holds only if it reaches past it
    bound: float | None = None


def candidates_kept(limit: int) -> int:
    """How many candidates a ``Ranked`` holds: as many as the Whoosh path asked for before
    leaving out copies, and one more."""
    return limit + 6


def _holds(found: Ranked, bound: float, count: int) -> bool:
    """Whether a merge into a list with candidates taken out (``Ranked.bound``) is what a
    fresh pass gives: it is full, and no article it could not see outranks the ones it
    shows (strictly above the bound) nor its last, the best left out."""
    return len(found.scores) == count and found.scores[-2] > bound and found.scores[-1] >= bound


@dataclass
class _Pass:
    """What scoring any article against any other needs, read once."""

    postings: _Postings
    weights: _Weights
    lengths: np.ndarray
    doc_count: int


def _prepare(searcher: Any, columns: Any, stats: CollectionStats | None) -> _Pass:
    reader = searcher.reader()
    doc_count = reader.doc_count_all()
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
    return _Pass(postings, _weights(postings, searcher, stats), lengths, doc_count)


def _best(candidates: np.ndarray, values: np.ndarray, count: int) -> Ranked:
    """The ``count`` best of the candidates, by score falling then document number."""
    if len(values) > count:  # only those scoring at least the count-th best can rank
        floor = np.partition(values, len(values) - count)[len(values) - count]
        contenders = values >= floor
        candidates, values = candidates[contenders], values[contenders]
    best = np.lexsort((candidates, -values))[:count]
    return Ranked(candidates[best].astype(np.int64), values[best])


def _unmoved(product: sparse.csr_matrix, earlier: list[Ranked], count: int) -> np.ndarray:
    """Per row of ``product`` (new candidates' scores), whether merging them into the row's
    full earlier list leaves it as it was: each scores below its last (one tying with the
    last could still displace it, by document number)."""
    tops = np.full(len(earlier), -np.inf)
    starts = product.indptr[:-1]
    held = np.diff(product.indptr) > 0
    if held.any():
        tops[held] = np.maximum.reduceat(product.data, starts[held])
    lasts = np.array([found.scores[-1] if len(found.scores) == count else -np.inf
                      for found in earlier], dtype=np.float64)
    return tops < lasts


def _rank(keys: sparse.csr_matrix, rows: np.ndarray, scores: sparse.csr_matrix, count: int,
          previous: Mapping[int, Ranked] | None = None) -> dict[int, Ranked]:
    """Each row's ``count`` best candidates among the columns of ``scores``; with
    ``previous``, merged with the row's earlier best (none of them among the columns)."""
    out: dict[int, Ranked] = {}
    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        product = (keys[batch] @ scores).tocsr()
        unmoved = _unmoved(product, [previous[int(d)] for d in batch], count) \
            if previous is not None else np.zeros(len(batch), dtype=bool)
        for row, docnum in enumerate(batch):
            if unmoved[row]:
                earlier = previous[int(docnum)]
                out[int(docnum)] = Ranked(earlier.numbers, earlier.scores)
                continue
            lo, hi = product.indptr[row], product.indptr[row + 1]
            candidates, values = product.indices[lo:hi], product.data[lo:hi]
            others = candidates != docnum
            candidates, values = candidates[others], values[others]
            if previous is not None:
                earlier = previous[int(docnum)]
                candidates = np.concatenate([earlier.numbers, candidates])
                values = np.concatenate([earlier.scores, values])
            out[int(docnum)] = _best(candidates, values, count)
    return out


def related_lists(ranked: Mapping[int, Ranked], clusters: list[str],
                  limit: int) -> dict[int, list[int]]:
    """The related lists of ``ranked_table``'s candidates: each article's best
    ``limit + 5``, copies of its own story left out, cut to ``limit``."""
    out = {}
    for docnum, found in ranked.items():
        cluster = clusters[docnum]
        out[docnum] = [int(c) for c in found.numbers[:candidates_kept(limit) - 1]
                       if not cluster or clusters[c] != cluster][:limit]
    return out


def ranked_table(searcher: Any, articles: Iterable[int], limit: int, columns: Any = None,
                 stats: CollectionStats | None = None,
                 previous: Mapping[int, Ranked] | None = None,
                 changed: Iterable[int] = (), known: KeyTerms | None = None
                 ) -> tuple[dict[int, Ranked], KeyTerms]:
    """Each article's ``Ranked`` candidates (see ``related_table``), and every article's key
    terms (those of ``known``, an earlier call's of articles unchanged since by their
    current document numbers, taken as they are; the others picked).

    With ``previous`` (an earlier build's ``Ranked`` of articles whose content is unchanged
    since, by their current document numbers, weighed by the same statistics, candidates
    changed or gone since taken out, with their ``bound``) and ``changed`` (the document
    numbers of every article new or changed since): those articles are ranked by merging
    the changed ones into their earlier best, and only the others are ranked against every
    article. A merge is exact where the earlier best was cut between two different scores;
    where a tie straddles the cut, or a list that had candidates taken out does not reach
    past its bound, the article is ranked afresh.
    """
    wanted = np.array(sorted(set(articles)), dtype=np.int64)
    reader = searcher.reader()
    if not len(wanted) or not reader.doc_count_all():
        return {int(d): Ranked(np.zeros(0, np.int64), np.zeros(0)) for d in wanted}, \
            KeyTerms.of(_csr((0, 0)), [])
    count = candidates_kept(limit)
    previous = {d: found for d, found in (previous or {}).items()
                if found.bound is not None or len(found.scores) < count
                or found.scores[-2] != found.scores[-1]}
    run = _prepare(searcher, columns, stats)
    keys, picked = known.matrix(run.postings.words, run.doc_count) if known is not None \
        else (None, np.zeros(0, dtype=np.int64))
    picked_now = _key_terms(run.postings, run.weights, run.doc_count,
                            wanted[~np.isin(wanted, picked)])
    keys = picked_now if keys is None else keys + picked_now
    merged = wanted[np.isin(wanted, np.fromiter(previous, dtype=np.int64, count=len(previous)))]
    afresh = wanted[~np.isin(wanted, merged)]
    ranked: dict[int, Ranked] = {}
    if len(afresh):
        scores = _term_scores(run.postings, run.weights, searcher,
                              np.unique(keys[afresh].indices), run.doc_count, run.lengths)
        ranked.update(_rank(keys, afresh, scores, count))
    if len(merged):
        new = np.array(sorted(set(changed)), dtype=np.int64)
        scores = _term_scores(run.postings, run.weights, searcher,
                              np.unique(keys[merged].indices), run.doc_count, run.lengths,
                              among=new)
        ranked.update(_rank(keys, merged, scores, count, previous))
        unsure = np.array([d for d in merged if previous[int(d)].bound is not None
                           and not _holds(ranked[int(d)], previous[int(d)].bound, count)],
                          dtype=np.int64)
        if len(unsure):
            scores = _term_scores(run.postings, run.weights, searcher,
                                  np.unique(keys[unsure].indices), run.doc_count, run.lengths)
            ranked.update(_rank(keys, unsure, scores, count))
    return ranked, KeyTerms.of(keys, run.postings.words)


def related_table(searcher: Any, articles: Iterable[int], limit: int,
                  clusters: list[str], columns: Any = None,
                  stats: CollectionStats | None = None) -> dict[int, list[int]]:
    """For each article (document number) in ``articles``, the numbers of up to ``limit``
    articles most like it, other copies of its own wire story left out. With ``columns``
    (the index's ``archive.columns.ColumnIndex``) the postings and lengths are read from
    its sidecars; the lists are the same. ``stats``: the statistics to weigh by (the
    index's snapshot); without, the index's own."""
    return related_lists(ranked_table(searcher, articles, limit, columns, stats)[0],
                         clusters, limit)

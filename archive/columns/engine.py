"""A parsed Whoosh query answered from the columnar sidecars, with Whoosh's exact scores.
One idea: a query tree evaluated on whole postings arrays, as Whoosh would score it.

Whoosh's matchers walk postings one document at a time in Python; here each term's postings
are whole numpy arrays, an AND is a vectorised intersection, an OR an accumulation into a
score array, NOT a complement, and the top of the ranking comes from ``argpartition``. The
scores are the searcher's weighting (``archive.ranking.NewsBM25F``) computed by its own
``score_function`` over the same term frequencies, field lengths, idf and average lengths
Whoosh reads, so each score equals the one Whoosh computes; the order is the archive's: best
score first, equal scores newest first (as ``Archive`` reorders Whoosh's collector, which
leaves them by document number, and as the site's search does), and for the date sorts
undated last, then by date, then by document number.

Phrases and proximity take their candidates from the columns (the documents holding every
word) and keep those where the sidecar's positions (Whoosh's, copied when the segment was
written) put the words in order within the slop; wildcards, prefixes and fuzzy words expand
through each segment's term list as the archive's expansion matcher does
(``archive.expansions``) and score the words on the columns.

What the engine does not take raises ``Unsupported`` and the caller answers from Whoosh;
``FALLBACK_FORMS`` names those forms (the differential tests run each through both paths).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import query as wq

from archive import expansions, query, store, words
from archive.columns.sidecar import COLUMNS_DIR, FIELDS, Sidecar

#: Query forms answered by Whoosh instead, with an example of each: fields without
#: postings in the sidecar (ids, addresses, clusters, paths), ranges other than dates.
FALLBACK_FORMS: tuple[tuple[str, str], ...] = (
    ("id field", "id:0123456789abcdef"),
    ("url field", "url:example"),
    ("cluster field", "cluster:0123456789abcdef"),
    ("term range", "title:[a TO c]"),
)


class Unsupported(Exception):
    """A query form the columns do not answer (the message names it)."""


@dataclass
class Match:
    """The documents a query matches (global document numbers, ascending; deleted ones
    left out) and their scores; ``terms``: each of the query's terms (not under a NOT) and
    the documents holding it, for the matched terms Whoosh's highlighter asks a hit for."""

    docs: np.ndarray
    scores: np.ndarray
    terms: dict[tuple[str, bytes], np.ndarray] = field(default_factory=dict)


_EMPTY = Match(np.zeros(0, dtype=np.int64), np.zeros(0))


def _intersect(a: Match, b: Match) -> Match:
    if len(a.docs) > len(b.docs):
        a, b = b, a
    if not len(a.docs):
        return _EMPTY
    at = np.searchsorted(b.docs, a.docs)
    at[at == len(b.docs)] = 0
    keep = b.docs[at] == a.docs
    return Match(a.docs[keep], a.scores[keep] + b.scores[at[keep]])


def _summed(docs: list[np.ndarray], values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The documents of several parts (each without repeats, ascending) and, per document,
    the sum of its values over the parts."""
    if len(docs) == 1:
        return docs[0], values[0]
    merged, inverse = np.unique(np.concatenate(docs), return_inverse=True)
    return merged, np.bincount(inverse, np.concatenate(values), minlength=len(merged))


#: a document's place in a phrase's occurrence numbers: positions and slop stay under half
_SPAN = 1 << 32


def _member(docs: np.ndarray, within: np.ndarray) -> np.ndarray:
    """A mask over ``docs``: which of them are in ``within`` (both ascending)."""
    if not len(within):
        return np.zeros(len(docs), dtype=bool)
    at = np.searchsorted(within, docs)
    at[at == len(within)] = 0
    return within[at] == docs


class ColumnIndex:
    """The sidecars of every segment of one open searcher, as one columnar index."""

    def __init__(self, searcher: Any, sidecars: list[tuple[Sidecar, int]]):
        self.searcher = searcher
        self.reader = searcher.reader()
        self.weighting = searcher.weighting
        self.sidecars = sidecars
        self.doc_count = self.reader.doc_count_all()
        self._live: np.ndarray | None = None
        self._orders: dict[str, np.ndarray] = {}
        self._columns: dict[str, np.ndarray] = {}
        self._facets: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = {}
        self._clusters: np.ndarray | None = None
        self._lengths: dict[str, np.ndarray] = {}
        self._table = store.length_table()
        self.terms: dict[tuple[str, bytes], np.ndarray] = {}  # terms met while evaluating
        self._within: np.ndarray | None = None  # the filter's documents, while matching

    @classmethod
    def open(cls, folder: Path, searcher: Any) -> ColumnIndex | None:
        """The columns of ``searcher``'s segments; None when any segment lacks its sidecar
        (the index changed since the last sync: the caller uses Whoosh)."""
        reader = searcher.reader()
        sidecars: list[tuple[Sidecar, int]] = []
        if reader.doc_count_all():
            for leaf, offset in reader.leaf_readers():
                segment_id = leaf.segment().segment_id()
                sidecar = Sidecar.open(folder / COLUMNS_DIR / segment_id, segment_id,
                                       leaf.doc_count_all())
                if sidecar is None:
                    return None
                sidecars.append((sidecar, offset))
        return cls(searcher, sidecars)

    # -- per-document columns ------------------------------------------------------------------

    def mappings(self) -> list[Any]:
        """The sidecars' files mapped so far."""
        return [mapping for sidecar, _ in self.sidecars for mapping in sidecar.mappings()]

    def _concat(self, name: str, dtype: Any) -> np.ndarray:
        """A per-document column over every segment, read once per open index."""
        if name not in self._columns:
            out = np.zeros(self.doc_count, dtype=dtype)
            for sidecar, offset in self.sidecars:
                out[offset:offset + sidecar.doc_count] = sidecar.column(name)
            self._columns[name] = out
        return self._columns[name]

    @property
    def live(self) -> np.ndarray:
        """Which documents are not deleted (Whoosh's own deletion sets)."""
        if self._live is None:
            live = np.ones(self.doc_count, dtype=bool)
            for leaf, offset in (self.reader.leaf_readers() if self.doc_count else []):
                if leaf.has_deletions():
                    gone = np.fromiter(leaf.deleted_docs_set, dtype=np.int64)
                    live[offset + gone] = False
            self._live = live
        return self._live

    def clusters(self) -> np.ndarray:
        """docnum -> a number per wire-copy cluster (equal names, equal numbers)."""
        if self._clusters is None:
            numbers: dict[str, int] = {}
            out = np.zeros(self.doc_count, dtype=np.int64)
            for sidecar, offset in self.sidecars:
                mapping = np.array([numbers.setdefault(name, len(numbers))
                                    for name in sidecar.cluster_names()], dtype=np.int64)
                local = sidecar.column("cluster")
                if len(local):
                    out[offset:offset + sidecar.doc_count] = mapping[local]
            self._clusters = out
        return self._clusters

    def order(self, sort: str) -> np.ndarray:
        """docnum -> its place in the date sort ``sort`` ("newest"/"oldest") of every
        document: dated first, then by date, ties by document number."""
        if sort not in self._orders:
            dated = self._concat("dated", np.int8)
            date = self._concat("date", np.uint64)
            if sort == "newest":  # a new array: the cached column stays as read
                date = np.iinfo(np.uint64).max - date
            ranked = np.lexsort((np.arange(self.doc_count), date, -dated.astype(np.int16)))
            position = np.empty(self.doc_count, dtype=np.int64)
            position[ranked] = np.arange(self.doc_count)
            self._orders[sort] = position
        return self._orders[sort]

    def field_lengths(self, fieldname: str) -> np.ndarray:
        """docnum -> the field's length as Whoosh's scorer reads it (its decoded length
        byte; 1 where the field keeps no lengths, Whoosh's default)."""
        if fieldname not in self._lengths:
            out = np.ones(self.doc_count)
            for sidecar, offset in self.sidecars:
                columns = sidecar.field(fieldname)
                if columns is not None and columns.lengths is not None:
                    out[offset:offset + sidecar.doc_count] = self._table[columns.lengths]
            self._lengths[fieldname] = out
        return self._lengths[fieldname]

    def _facet_postings(self, fieldname: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Every posting of a facet field over all segments: its words, and for each
        posting the document (global number) and the word's number."""
        if fieldname not in self._facets:
            numbers: dict[bytes, int] = {}
            docs: list[np.ndarray] = []
            words: list[np.ndarray] = []
            for sidecar, offset in self.sidecars:
                columns = sidecar.field(fieldname)
                if columns is None or not len(columns.words):
                    continue
                mapping = np.array([numbers.setdefault(columns.words[i], len(numbers))
                                    for i in range(len(columns.words))], dtype=np.int64)
                docs.append(columns.docs.astype(np.int64) + offset)
                words.append(np.repeat(mapping, np.diff(columns.starts)))
            names = [word.decode("utf-8") for word in numbers]
            self._facets[fieldname] = (
                names, np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64),
                np.concatenate(words) if words else np.zeros(0, dtype=np.int64))
        return self._facets[fieldname]

    def every_posting(self, fieldname: str) -> tuple[list[bytes], np.ndarray, np.ndarray,
                                                     np.ndarray]:
        """Every posting of a field over all segments, deleted documents included (as
        Whoosh's term statistics count them): the field's words in sorted order, and per
        posting its document (global number), its word's number in that order and its
        weight, ordered by word, then document."""
        per_segment = []
        found: set[bytes] = set()
        for sidecar, offset in self.sidecars:
            columns = sidecar.field(fieldname)
            if columns is None or not len(columns.words):
                continue
            words = [columns.words[i] for i in range(len(columns.words))]
            found.update(words)
            per_segment.append((columns, offset, words))
        ordered = sorted(found)
        number = {word: i for i, word in enumerate(ordered)}
        docs, terms, weights = [], [], []
        for columns, offset, words in per_segment:
            mapping = np.array([number[word] for word in words], dtype=np.int64)
            docs.append(columns.docs.astype(np.int64) + offset)
            terms.append(np.repeat(mapping, np.diff(columns.starts)))
            weights.append(columns.weights.astype(np.float64))
        if not docs:
            empty = np.zeros(0, dtype=np.int64)
            return ordered, empty, empty, np.zeros(0, dtype=np.float64)
        all_terms = np.concatenate(terms)
        # segments in index order, each's documents ascending within a word: a stable sort
        # by word leaves every word's documents ascending
        order = np.argsort(all_terms, kind="stable")
        return (ordered, np.concatenate(docs)[order], all_terms[order],
                np.concatenate(weights)[order])

    def facet_counts(self, fieldname: str, docs: np.ndarray) -> dict[str, int]:
        """How many of ``docs`` (live documents) hold each word of a facet field."""
        names, posting_docs, posting_words = self._facet_postings(fieldname)
        chosen = np.zeros(self.doc_count, dtype=bool)
        chosen[docs] = True
        counts = np.bincount(posting_words[chosen[posting_docs]], minlength=len(names))
        return {names[i]: int(counts[i]) for i in np.flatnonzero(counts)}

    # -- evaluation -----------------------------------------------------------------------------

    def postings(self, fieldname: str, word: bytes) -> tuple[np.ndarray, np.ndarray]:
        """A term's documents (global numbers, deleted ones included) and weights."""
        docs: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        for sidecar, offset in self.sidecars:
            columns = sidecar.field(fieldname)
            found = columns.postings(word) if columns is not None else None
            if found is not None:
                docs.append(found[0].astype(np.int64) + offset)
                weights.append(found[1])
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if len(docs) == 1:
            return docs[0], np.asarray(weights[0], dtype=np.float64)
        return np.concatenate(docs), np.concatenate(weights).astype(np.float64)

    def _column_field(self, fieldname: str) -> Any:
        """The schema's field a query part names: None when the index has no such field
        (nothing matches), ``Unsupported`` when the sidecars keep no columns for it."""
        schema = self.searcher.schema
        if fieldname not in schema:
            return None
        if fieldname not in FIELDS:
            raise Unsupported(f"{fieldname}: field without columns")
        return schema[fieldname]

    def _term(self, q: wq.Term) -> Match:
        fieldname = q.fieldname
        field = self._column_field(fieldname)
        if field is None:
            return _EMPTY
        try:
            word = field.to_bytes(q.text)
        except ValueError:
            return _EMPTY
        docs, weights = self.postings(fieldname, word)
        self.terms[(fieldname, word)] = docs
        if not len(docs):
            return _EMPTY
        if field.scorable and hasattr(self.weighting, "score_function"):
            score = self.weighting.score_function(self.searcher, fieldname, len(docs))
            scores = score(weights, self.field_lengths(fieldname)[docs])
        elif field.scorable:
            raise Unsupported("a weighting without score_function")
        else:
            scores = weights.copy()  # Whoosh's WeightScorer: the posting's weight
        if q.boost != 1.0:
            scores = scores * q.boost
        return Match(docs, scores)

    def _fielded_word(self, q: words.FieldedWord) -> Match:
        """A word over several text fields, scored as ``FieldedWord``'s matcher scores it:
        each field's term frequency share summed per document, saturated once, times the
        word's idf (from its largest document frequency over the fields) and the boost."""
        if not hasattr(self.weighting, "field_tf_function"):
            raise Unsupported("a weighting without field_tf_function")
        frequencies: list[int] = []
        docs: list[np.ndarray] = []
        shares: list[np.ndarray] = []
        for term in q.subqueries:
            field = self._column_field(term.fieldname)
            if field is None:
                continue
            try:
                word = field.to_bytes(term.text)
            except ValueError:
                continue
            held, weights = self.postings(term.fieldname, word)
            self.terms[(term.fieldname, word)] = held
            frequencies.append(len(held))
            if len(held):
                tf = self.weighting.field_tf_function(self.searcher, term.fieldname)
                docs.append(held)
                shares.append(tf(weights, self.field_lengths(term.fieldname)[held]))
        if not docs:
            return _EMPTY
        found, combined = _summed(docs, shares)
        idf = self.weighting.word_idf(self.doc_count, frequencies)
        return Match(found, idf * q.boost * self.weighting.saturated(combined))

    def _phrase(self, q: wq.Phrase) -> Match:
        """Words in order within ``q.slop`` positions of each other: the documents holding
        every word (an AND on the columns), kept where their positions place them so.

        Whoosh scores a phrase as the AND of its words (its ``SpanNear2`` matcher wraps the
        words' intersection and keeps that matcher's score, times the phrase's boost), so
        the kept documents keep the AND's scores."""
        fieldname = q.fieldname
        field = self._column_field(fieldname)
        if field is None:
            return _EMPTY
        if not field.format or not field.format.supports("positions"):
            raise Unsupported(f"{fieldname}: a phrase on a field without positions")
        words: list[bytes] = []
        for text in q.words:
            try:
                words.append(field.to_bytes(text))
            except ValueError:
                return _EMPTY
        before = dict(self.terms)
        found: Match | None = None
        for text, word in zip(q.words, words):
            docs, _ = self.postings(fieldname, word)
            if not len(docs):  # Whoosh: a word not in the index matches nothing
                self.terms = before
                return _EMPTY
            part = self._term(wq.Term(fieldname, text))
            found = part if found is None else _intersect(found, part)
        assert found is not None
        alive = self.live[found.docs]
        if self._within is not None:  # the rest are dropped by the filter anyway
            alive &= _member(found.docs, self._within)
        found = Match(found.docs[alive], found.scores[alive])
        keep = self._in_sequence(fieldname, words, q.slop, found.docs)
        # Whoosh records a phrase's words as matched only where the phrase matched
        self.terms = before
        for word in words:
            held = before.get((fieldname, word))
            self.terms[(fieldname, word)] = found.docs[keep] if held is None else \
                np.union1d(held, found.docs[keep])
        if q.boost != 1.0:
            return Match(found.docs[keep], found.scores[keep] * q.boost)
        return Match(found.docs[keep], found.scores[keep])

    def _in_sequence(self, fieldname: str, words: list[bytes], slop: int,
                     docs: np.ndarray) -> np.ndarray:
        """A mask over ``docs`` (global numbers, ascending, each holding every word): where
        the words occur in order, each one to ``slop`` positions after the one before (what
        Whoosh's ``SpanNear2(ordered=True, mindist=1)`` asks of the spans: a word's
        position ``p`` continues a run ending at ``e`` when ``1 <= p - e <= slop``, and the
        run then ends at ``p``).

        The positions are the sidecar's, word by word over the documents still in the
        running: each occurrence becomes one number, its document's place above its
        position (``_SPAN`` apart, so no slop reaches across documents), and one
        ``searchsorted`` over the ends of the runs so far finds, for every occurrence of the
        next word at once, the nearest run end at or after ``p - slop``."""
        keep = np.zeros(len(docs), dtype=bool)
        slop = min(int(slop), _SPAN // 2)
        for sidecar, offset in self.sidecars:
            first = int(np.searchsorted(docs, offset))
            last = int(np.searchsorted(docs, offset + sidecar.doc_count))
            if first == last:
                continue
            columns = sidecar.field(fieldname)
            if columns is None or columns.positions is None:
                raise Unsupported(f"{fieldname}: a sidecar without positions")
            local = docs[first:last] - offset
            running = np.arange(last - first, dtype=np.int64)
            ends: np.ndarray | None = None
            for word in words:
                counts, positions = columns.positions_in(word, local[running])
                if len(positions) and int(positions.max()) >= _SPAN // 2:
                    raise Unsupported(f"{fieldname}: a position past {_SPAN // 2}")
                spans = np.repeat(running, counts) * _SPAN + positions  # ascending
                if ends is not None:
                    at = np.searchsorted(ends, spans - slop)
                    inside = at < len(ends)
                    inside[inside] = ends[at[inside]] < spans[inside]
                    spans = spans[inside]
                ends = spans
                if not len(ends):
                    break
                held = ends // _SPAN
                first_of = np.ones(len(held), dtype=bool)
                np.not_equal(held[1:], held[:-1], out=first_of[1:])
                running = held[first_of]
            else:
                keep[first + running] = True
        return keep

    def _expansion(self, q: Any) -> Match:
        """A fuzzy word, wildcard or prefix, scored as the archive's expansion matcher
        (``archive.expansions``) scores it: Whoosh asks each segment for the words the
        query reaches there, every such word takes the idf of the most common of them and
        its own boost, and a document holding several sums them."""
        fieldname = q.field()
        field = self._column_field(fieldname)
        if field is None:
            return _EMPTY
        if field.scorable and not hasattr(self.weighting, "score_function") \
                or not hasattr(self.weighting, "idf_of"):
            raise Unsupported("a weighting without score_function or idf_of")
        lengths = self.field_lengths(fieldname) if field.scorable else None
        docs: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        held: dict[bytes, list[np.ndarray]] = {}
        for (leaf, offset), (sidecar, _) in zip(self.reader.leaf_readers(), self.sidecars):
            reached = expansions.expansion_words(q, leaf, self.searcher)
            assert reached is not None
            words, frequency = reached
            columns = sidecar.field(fieldname)
            if not words or columns is None:
                continue
            score = self.weighting.score_function(self.searcher, fieldname, frequency) \
                if lengths is not None else None
            seg_docs: list[np.ndarray] = []
            seg_scores: list[np.ndarray] = []
            for text, boost in words:
                word = field.to_bytes(text)
                found = columns.postings(word)
                if found is None:
                    continue
                local = found[0].astype(np.int64) + offset
                weights = np.asarray(found[1], dtype=np.float64)
                got = score(weights, lengths[local]) if score is not None else weights.copy()
                seg_docs.append(local)
                seg_scores.append(got * boost if boost != 1.0 else got)
                held.setdefault(word, []).append(local)
            if not seg_docs:
                continue
            merged, summed = _summed(seg_docs, seg_scores)
            docs.append(merged)
            scores.append(summed)
        for word, parts in held.items():
            self.terms[(fieldname, word)] = np.concatenate(parts)
        if not docs:
            return _EMPTY
        return Match(np.concatenate(docs), np.concatenate(scores))

    def _fielded_expansion(self, q: expansions.FieldedExpansion) -> Match:
        """A fuzzy word, wildcard or prefix over several text fields, scored as its matcher
        scores it: per segment, the words it reaches in any of the fields, each one BM25F
        term over them (``_fielded_word``'s arithmetic) with the shared idf and its boost."""
        if not hasattr(self.weighting, "field_tf_function"):
            raise Unsupported("a weighting without field_tf_function")
        fields = [(sub.field(), self._column_field(sub.field())) for sub in q.subqueries]
        fields = [(name, column) for name, column in fields if column is not None]
        shares = {name: self.weighting.field_tf_function(self.searcher, name)
                  for name, _ in fields}
        docs: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        held: dict[tuple[str, bytes], list[np.ndarray]] = {}
        for (leaf, offset), (sidecar, _) in zip(self.reader.leaf_readers(), self.sidecars):
            reached, frequency = q.reached(leaf, self.searcher)
            if not reached:
                continue
            idf = self.weighting.idf_of(self.doc_count, frequency)
            seg_docs: list[np.ndarray] = []
            seg_scores: list[np.ndarray] = []
            for text, boost in reached:
                word_docs: list[np.ndarray] = []
                word_tfs: list[np.ndarray] = []
                for name, column in fields:
                    columns = sidecar.field(name)
                    word = column.to_bytes(text)
                    found = columns.postings(word) if columns is not None else None
                    if found is None:
                        continue
                    local = found[0].astype(np.int64) + offset
                    word_docs.append(local)
                    word_tfs.append(shares[name](np.asarray(found[1], dtype=np.float64),
                                                 self.field_lengths(name)[local]))
                    held.setdefault((name, word), []).append(local)
                if not word_docs:
                    continue
                merged, combined = _summed(word_docs, word_tfs)
                seg_docs.append(merged)
                seg_scores.append(idf * boost * self.weighting.saturated(combined))
            if seg_docs:
                merged, summed = _summed(seg_docs, seg_scores)
                docs.append(merged)
                scores.append(summed)
        for key, parts in held.items():
            self.terms[key] = np.concatenate(parts)
        if not docs:
            return _EMPTY
        return Match(np.concatenate(docs), np.concatenate(scores))

    def _compound(self, q: wq.CompoundQuery) -> Match:
        subs = q.subqueries
        if not subs:
            return _EMPTY
        if len(subs) == 1:  # Whoosh uses the one subquery's matcher, its boost unapplied
            return self._eval(subs[0])
        parts = [self._eval(sub) for sub in subs]
        if type(q) is wq.And:
            found = parts[0]
            for part in parts[1:]:
                found = _intersect(found, part)
        else:
            total = sum(len(p.docs) for p in parts)
            if total * 8 >= self.doc_count:  # dense accumulation: no sort
                scores = np.zeros(self.doc_count)
                hit = np.zeros(self.doc_count, dtype=bool)
                for part in parts:
                    scores[part.docs] += part.scores
                    hit[part.docs] = True
                docs = np.flatnonzero(hit)
                found = Match(docs, scores[docs])
            else:
                found = Match(*_summed([p.docs for p in parts], [p.scores for p in parts]))
        if q.boost != 1.0:
            found = Match(found.docs, found.scores * q.boost)
        return found

    def _date_range(self, q: wq.NumericRange) -> Match:
        """A range of the ``date`` (or ``dated``) column, each match scoring the constant
        Whoosh's range gives (one posting weight, times the boost)."""
        if q.fieldname == "date":
            values = self._concat("date", np.uint64)
            present = self._concat("dated", np.int8) > 0
            field = self.searcher.schema["date"]
            start = None if q.start is None else field.prepare_number(q.start)
            end = None if q.end is None else field.prepare_number(q.end)
        else:
            values = self._concat("dated", np.int8).astype(np.uint64)
            present = values >= 0
            start, end = q.start, q.end
        mask = present.copy()
        if start is not None:
            mask &= values > start if q.startexcl else values >= start
        if end is not None:
            mask &= values < end if q.endexcl else values <= end
        docs = np.flatnonzero(mask)
        return Match(docs, np.full(len(docs), float(q.boost)))

    def _eval(self, q: Any) -> Match:
        kind = type(q)
        if kind is wq.Term:
            return self._term(q)
        if kind is wq.Phrase:
            return self._phrase(q)
        if kind is words.FieldedWord:
            return self._fielded_word(q)
        if kind is expansions.FieldedExpansion:
            return self._fielded_expansion(q)
        if expansions.is_expansion(q):
            return self._expansion(q)
        if kind in (wq.And, wq.Or):
            if kind is wq.Or and (q.minmatch or q.scale):
                raise Unsupported("an OR with minmatch or scale")
            return self._compound(q)
        if kind is wq.AndNot or kind is query.Exclusion:
            if q.boost != 1.0:
                raise Unsupported("a boosted AND NOT")
            positive, negative = self._eval(q.a), self._unmatched(q.b)
            keep = ~_member(positive.docs, negative.docs)
            return Match(positive.docs[keep], positive.scores[keep])
        if kind is wq.Not:
            excluded = self._unmatched(q.query)
            mask = np.ones(self.doc_count, dtype=bool)
            mask[excluded.docs] = False
            docs = np.flatnonzero(mask)
            return Match(docs, np.ones(len(docs)))  # Whoosh's InverseMatcher scores 1
        if kind is wq.Every and q.fieldname in (None, "", "*"):
            docs = np.arange(self.doc_count, dtype=np.int64)
            return Match(docs, np.full(self.doc_count, float(q.boost)))
        if kind in (wq.NumericRange, wq.DateRange) and q.fieldname in ("date", "dated"):
            return self._date_range(q)
        if q is wq.NullQuery or kind is type(wq.NullQuery):
            return _EMPTY
        raise Unsupported(kind.__name__)

    def _unmatched(self, q: Any) -> Match:
        """What a NOT excludes: its words are not among the query's matched terms."""
        terms = dict(self.terms)
        found = self._eval(q)
        self.terms = terms
        return found

    def match(self, q: Any, filter_query: Any = None) -> Match:
        """The live documents ``q`` matches (within ``filter_query``'s, if given), scored."""
        self.terms = {}
        within = None
        if filter_query is not None:  # a filter's words are not the query's matches
            within = self._unmatched(filter_query).docs
        self._within = within  # only these need a phrase's positions read
        try:
            found = self._eval(q)
        finally:
            self._within = None
        keep = self.live[found.docs]
        if within is not None:
            keep &= _member(found.docs, within)
        return Match(found.docs[keep], found.scores[keep], dict(self.terms))

    def rank(self, found: Match, sort: str, missing: np.ndarray | None = None) -> Ranked:
        """``found`` in ``sort`` order; ``missing`` (a relaxed query's missing-word counts)
        ranks first by it, as ``query.most_words_first`` does."""
        if sort == "relevance":
            keys = [-found.scores] if missing is None else [missing, -found.scores]
            return Ranked(self, found, keys,
                          ties=(lambda: self.order("newest")) if missing is None else None)
        return Ranked(self, found, [self.order(sort)[found.docs]])

    def words_missing(self, words: list[Any], docs: np.ndarray) -> np.ndarray:
        """How many of ``words`` (queries) each of ``docs`` does not match."""
        missing = np.zeros(len(docs), dtype=np.int64)
        for word in words:
            missing += ~_member(docs, self._eval(word).docs)
        return missing


class Ranked:
    """Matches in a ranking, read a top slice at a time (a page needs only its slice)."""

    def __init__(self, columns: ColumnIndex, found: Match, keys: list[np.ndarray],
                 ties: Callable[[], np.ndarray] | None = None):
        self.columns = columns
        self.found = found
        self.keys = keys  # most significant first; ties by document number
        # a relevance ranking's equal scores go newest first (docnum -> place in the "newest"
        # order), as Whoosh's path and the site's search order them; read only on a tie
        self._ties = ties

    @property
    def total(self) -> int:
        return len(self.found.docs)

    def _order(self, among: np.ndarray) -> np.ndarray:
        docs = self.found.docs[among]
        keys = [key[among] for key in self.keys]
        if self._ties is not None and len(among) > 1:
            last = np.sort(keys[-1])
            if (last[1:] == last[:-1]).any():
                keys.append(self._ties()[docs])
        return among[np.lexsort([docs] + keys[::-1])]

    def top(self, k: int) -> np.ndarray:
        """Positions (into the matches) of the first ``k`` in rank order."""
        n = self.total
        if k >= n:
            return self._order(np.arange(n))
        primary = self.keys[0]
        threshold = np.partition(primary, k - 1)[k - 1]
        return self._order(np.flatnonzero(primary <= threshold))[:k]

    def story_count(self) -> int:
        """How many wire stories the matches hold (copies counted once): the distinct
        cluster numbers of the matches, marked in a table as long as the index (cluster
        numbers are below its document count) rather than sorted, since a common word
        matches a large part of a large archive."""
        seen = np.zeros(self.columns.doc_count, dtype=bool)
        seen[self.columns.clusters()[self.found.docs]] = True
        return int(np.count_nonzero(seen))

    def top_stories(self, k: int) -> np.ndarray:
        """Positions of the first ``k`` matches in rank order that are each the best-ranked
        copy of their story."""
        clusters = self.columns.clusters()
        want = k
        while True:
            first = self.top(want)
            _, at = np.unique(clusters[self.found.docs[first]], return_index=True)
            if len(at) >= k or want >= self.total:
                return first[np.sort(at)[:k]]
            want *= 4

    def matched_terms(self, docnum: int) -> list[tuple[str, bytes]]:
        """The query's terms (not under a NOT) that ``docnum`` holds: what Whoosh records
        per hit (``terms=True``) for its highlighter."""
        return [term for term, docs in self.found.terms.items()
                if len(docs) and _member(np.array([docnum]), docs)[0]]

    def entries(self, positions: np.ndarray) -> list[tuple[float, int]]:
        """(score, docnum) of the matches at ``positions``."""
        return [(float(self.found.scores[p]), int(self.found.docs[p])) for p in positions]

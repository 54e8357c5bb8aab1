"""The term posting lists: articles numbered in date order, each (term, article) pair scored
by the archive's own weighting, lists cut into shard files.

- Articles are **numbered in date order** (oldest first, undated last), so date filters and
  date sorts are number ranges and need no per-article dates in the browser.
- Every (term, article) pair carries the **score the archive's weighting gives that one term**
  (``archive.ranking``, through the searcher's own scorers) over title, body and captions,
  summed over the fields, quantized to 8 bits per posting list. An AND query's CLI score is
  the sum of its terms' scores, so summing these reproduces the CLI ranking.
- Posting lists live in **term-hashed shard files** (CRC-32 of the term: no dictionary to
  download); a long list's tail sits in tier files (``format.make_entry``).

The term lists need no pass over the articles' text, so the two-process build hands them to
the helper (``helper.py``) while this process reads the articles (``articles.py``).
"""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from archive import store
from archive.search import Archive
from archive.site.files import Writes
from archive.site.search.format import Entry, entry_bytes, key_hash, make_entry, script, \
    shard_count, tail_name

if TYPE_CHECKING:
    from archive.site.search.helper import OwnReader


class Numbering:
    """Article numbers in date order: oldest first, undated last, index order breaking ties."""

    def __init__(self, archive: Archive):
        reader = archive.searcher.reader()
        keys = []
        if reader.doc_count_all():  # an empty index's reader has no columns at all
            raw = reader.column_reader("date", translate=False)
            dated = reader.column_reader("dated", translate=True)
        for docnum in reader.all_doc_ids():
            has_date = bool(dated[docnum])
            keys.append((0 if has_date else 1, raw[docnum] if has_date else 0, docnum))
        keys.sort()
        self.docnums = array("I", (k[2] for k in keys))
        self.number_of = array("i", [-1]) * reader.doc_count_all()
        for number, docnum in enumerate(self.docnums):
            self.number_of[docnum] = number
        self.dated = sum(1 for k in keys if k[0] == 0)

    def __len__(self) -> int:
        return len(self.docnums)


class FieldScorer:
    """A term's score in one article's field from its count (pairs need it per article).

    Asks the archive's own weighting for the score function of (field, term) and feeds it
    what a posting would: the count times the field's index-time boost (Whoosh's posting
    weight) and the stored field length. So pair scores follow the archive's ranking (idf,
    field weights) exactly as the postings-based term scores do, with no formula of their own.
    The terms' document frequencies are read in one pass over each field's term list, not
    looked up term by term.
    """

    def __init__(self, archive: Archive | OwnReader):
        self.searcher = archive.searcher
        schema = archive.index.schema
        self.boost = {f: schema[f].format.field_boost for f in store.TEXT_FIELDS}
        self.cache: dict[str, dict[str, Any]] = {f: {} for f in store.TEXT_FIELDS}
        self.doc_frequency: dict[str, dict[bytes, int]] = {}

    def _doc_frequency(self, name: str, term: str) -> int:
        table = self.doc_frequency.get(name)
        if table is None:
            table = self.doc_frequency[name] = {}
            for leaf, _ in self.searcher.reader().leaf_readers():
                if name in leaf.schema:
                    for word, info in leaf.iter_field(name):
                        table[word] = table.get(word, 0) + info.doc_frequency()
        return table.get(term.encode("utf-8"), 0)

    def scorer(self, name: str, term: str) -> Any:
        cache = self.cache[name]
        found = cache.get(term)
        if found is None:
            found = cache[term] = self.searcher.weighting.score_function(
                self.searcher, name, self._doc_frequency(name, term))
        return found

    def scores(self, docnum: int, name: str, counts: Counter[str]) -> dict[str, float]:
        length = self.searcher.doc_field_length(docnum, name, 1)
        boost = self.boost[name]
        return {t: self.scorer(name, t)(c * boost, length) for t, c in counts.items()}


def _term_postings(reader: Any, start: str = "", stop: str | None = None) \
        -> Iterator[tuple[str, list[tuple[str, int, Any, Any]]]]:
    """Each term of the text fields in order (those in [start, stop) only), with its postings
    as arrays per field (in name order) and segment (in index order):
    (term, [(field, segment, ids, weights)])."""
    leaves = [leaf for leaf, _ in reader.leaf_readers()]
    first, last = start.encode("utf-8"), None if stop is None else stop.encode("utf-8")

    def one(name: str, segment: int) -> Iterator[tuple[str, str, int, Any, Any]]:
        for word, _info, ids, weights in store.field_postings(leaves[segment], name, first,
                                                              last):
            yield word.decode("utf-8"), name, segment, ids, weights

    streams = [one(name, i) for name in store.TEXT_FIELDS
               for i, leaf in enumerate(leaves) if name in leaf.schema]
    merged = heapq.merge(*streams, key=lambda part: part[:3])
    for term, parts in itertools.groupby(merged, key=lambda part: part[0]):
        yield term, [part[1:] for part in parts]


class _LeafLengths:
    """Each segment's field lengths, read once (a posting's score needs its article's)."""

    def __init__(self, archive: Archive | OwnReader):
        self.leaves = list(archive.searcher.reader().leaf_readers())
        self.lengths: list[dict[str, np.ndarray]] = []
        for leaf, _ in self.leaves:
            count = leaf.doc_count_all()
            # (None for an article without the field: it has no postings there to score)
            self.lengths.append({name: np.array([leaf.doc_field_length(d, name, 1) or 0
                                                 for d in range(count)], dtype=np.float64)
                                 for name in store.TEXT_FIELDS if name in leaf.schema})


def _term_scores(scorer: FieldScorer, leaves: _LeafLengths, numbering: Numbering, term: str,
                 parts: list[tuple[str, int, Any, Any]]) -> dict[int, float]:
    """The archive's own score of ``term`` per article, summed over the fields holding it.

    Per segment, each posting goes through the weighting's score function for (field, term)
    with the posting's weight and the article's field length: what ``scorer.score(matcher)``
    computes, on arrays (the build reads every posting of the index); the sums are made in
    the order the postings come, field by field, as a search adds them."""
    scores: dict[int, float] = {}
    number_of = np.frombuffer(numbering.number_of, dtype=np.int32)
    for name, segment, ids, weights in parts:
        numbers = number_of[leaves.leaves[segment][1] + ids]
        live = numbers >= 0   # -1: a deleted article
        values = scorer.scorer(name, term)(weights[live],
                                           leaves.lengths[segment][name][ids[live]])
        for number, value in zip(numbers[live].tolist(), values.tolist()):
            scores[number] = scores.get(number, 0.0) + value
    return scores


def build_terms(archive: Archive | OwnReader, numbering: Numbering, out: Writes,
                prefix: str, shard_bytes: int, head_size: int,
                scorer: FieldScorer | None = None) -> tuple[int, int, int]:
    """Stream the index's terms; hold only each list's compact encoding until shards are cut.
    Returns (term lists, term shards, files written)."""
    entries = term_entries(archive, numbering, head_size, scorer)
    nshards = shard_count(sum(entry_bytes(e) for e in entries), shard_bytes)
    files = write_shards(out, prefix, "t", term_shards(entries, nshards, range(nshards)))
    return len(entries), nshards, files


def term_entries(archive: Archive | OwnReader, numbering: Numbering, head_size: int,
                 scorer: FieldScorer | None = None, start: str = "",
                 stop: str | None = None) -> list[Entry]:
    """The scored, encoded lists of the terms in [start, stop) (every term by default): a
    range is independent of any other, so a cluster's tasks can each take one."""
    reader = archive.searcher.reader()
    scorer = scorer or FieldScorer(archive)
    leaves = _LeafLengths(archive)
    entries: list[Entry] = []
    for term, parts in _term_postings(reader, start, stop):
        scores = _term_scores(scorer, leaves, numbering, term, parts)
        if scores:
            entries.append(make_entry(term, scores, head_size))
    return entries


def term_shards(entries: Iterable[Entry], nshards: int,
                wanted: Iterable[int]) -> dict[int, list[Entry]]:
    """The ``wanted`` shards (each, empty or not) of term lists cut into ``nshards`` by hash."""
    shards: dict[int, list[Entry]] = {s: [] for s in wanted}
    for entry in entries:
        found = shards.get(key_hash(entry.key) % nshards)
        if found is not None:
            found.append(entry)
    return shards


def write_shards(out: Writes, prefix: str, namespace: str,
                 shards: dict[int, list[Entry]]) -> int:
    """Write the given shards (empty ones too, so a lookup never misses a file) and their
    tails; the files written."""
    files = 0
    for shard, entries in shards.items():
        entries = sorted(entries, key=lambda e: e.key)
        name = f"{namespace}/{shard}"
        out.write(f"{prefix}/{name}.js", script(name, [e.shard_row() for e in entries]))
        files += 1
        for index, entry in enumerate(entries):
            for tier, (_, _, data) in enumerate(entry.tiers):
                tname = tail_name(namespace, shard, index, tier)
                out.write(f"{prefix}/{tname}.js", script(tname, data))
                files += 1
    return files

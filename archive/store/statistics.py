"""The collection statistics related-article lists are weighed by, kept as a snapshot.

Which articles are most like an article depends on how rare each of its words is in the
whole collection: the word's document frequency and total count, the number of articles and
the average body length. Read from the live index, every new article nudges all of these, so
every article's list may re-rank, and bringing a site up to date after a day's news would
rewrite nearly every article page. Weighed by a snapshot instead, an old article's list
changes only when a new or edited article ranks into it or one of its related articles goes.

``archive index`` takes the snapshot (``renew``) when the index has none and again once the
number of live articles has moved by more than ``RENEW_AFTER`` of the number it was taken
at, so the weights follow the collection without changing every day. It lives in the index
folder, so a site brought up to date and a fresh build of the same index read the same one.
An index without one (written before snapshots, or by hand) is weighed live.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: the snapshot's file in the index folder
SNAPSHOT = "related-stats.npz"
#: the share of articles added or removed since the snapshot after which it is taken again
RENEW_AFTER = 0.1
#: the field whose statistics are kept (the one related lists are computed on)
FIELD = "body"


@dataclass
class CollectionStats:
    """Per-word and collection-wide counts of ``FIELD``, as Whoosh's reader gives them."""

    articles: int           # live articles when taken (decides when to take it again)
    doc_count: int          # every document, deleted ones included (as Whoosh's idf counts)
    avg_length: float       # the field's average length over ``doc_count``
    words: list[bytes]      # in byte order
    doc_frequency: np.ndarray
    frequency: np.ndarray   # each word's total count in the collection
    fingerprint: str = ""   # digest of the snapshot's file ("" for live statistics)
    _positions: dict[bytes, int] | None = field(default=None, repr=False)

    def aligned(self, words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """(document frequencies, total counts) of ``words`` (0 for a word the snapshot
        does not hold: one only articles newer than the snapshot use)."""
        if self._positions is None:
            self._positions = {word: i for i, word in enumerate(self.words)}
        where = np.array([self._positions.get(w, -1) for w in words], dtype=np.int64)
        known = where >= 0
        doc_frequency = np.zeros(len(words), dtype=np.int64)
        frequency = np.zeros(len(words), dtype=np.float64)
        doc_frequency[known] = self.doc_frequency[where[known]]
        frequency[known] = self.frequency[where[known]]
        return doc_frequency, frequency


def take(reader: Any) -> CollectionStats:
    """The statistics of an open reader's collection, from its term tables (no postings)."""
    counts: dict[bytes, list[float]] = {}
    for leaf, _offset in reader.leaf_readers():
        if FIELD not in leaf.schema or not leaf.doc_count_all():
            continue
        for word, info in leaf.iter_field(FIELD):
            found = counts.setdefault(word, [0, 0.0])
            found[0] += info.doc_frequency()
            found[1] += info.weight()
    words = sorted(counts)
    doc_count = reader.doc_count_all()
    length = reader.field_length(FIELD) if FIELD in reader.schema else 0
    return CollectionStats(
        articles=reader.doc_count(), doc_count=doc_count,
        avg_length=(length / (doc_count or 1)) or 1,
        words=words, doc_frequency=np.array([counts[w][0] for w in words], dtype=np.int64),
        frequency=np.array([counts[w][1] for w in words], dtype=np.float64))


def _encode(stats: CollectionStats) -> bytes:
    offsets = np.cumsum([0] + [len(w) for w in stats.words], dtype=np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, counts=np.array([stats.articles, stats.doc_count], dtype=np.int64),
             avg_length=np.array([stats.avg_length], dtype=np.float64),
             text=np.frombuffer(b"".join(stats.words), dtype=np.uint8), offsets=offsets,
             doc_frequency=stats.doc_frequency, frequency=stats.frequency)
    return buffer.getvalue()


def read(folder: Path) -> CollectionStats | None:
    """The index's snapshot, or None when it has none (or one that cannot be read)."""
    try:
        data = (Path(folder) / SNAPSHOT).read_bytes()
        with np.load(io.BytesIO(data)) as arrays:
            counts, offsets = arrays["counts"], arrays["offsets"]
            text = arrays["text"].tobytes()
            words = [text[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
            return CollectionStats(
                articles=int(counts[0]), doc_count=int(counts[1]),
                avg_length=float(arrays["avg_length"][0]), words=words,
                doc_frequency=arrays["doc_frequency"], frequency=arrays["frequency"],
                fingerprint=hashlib.sha256(data).hexdigest())
    except (OSError, ValueError, KeyError, IndexError, EOFError):
        return None


def due(stats: CollectionStats | None, articles: int) -> bool:
    """Whether a snapshot taken at ``stats.articles`` should be taken again at ``articles``."""
    if stats is None or stats.articles <= 0:
        return articles > 0
    return abs(articles - stats.articles) > RENEW_AFTER * stats.articles


def renew(folder: Path, index: Any, *, force: bool = False) -> bool:
    """Take the snapshot of ``index`` (held by the caller's writer lock) if it has none, or
    its article count has moved past ``RENEW_AFTER``, or ``force``: whether it was taken."""
    folder = Path(folder)
    with index.reader() as reader:
        if not force and not due(read(folder), reader.doc_count()):
            return False
        data = _encode(take(reader))
    temp = folder / (SNAPSHOT + ".tmp")
    temp.write_bytes(data)
    os.replace(temp, folder / SNAPSHOT)
    return True

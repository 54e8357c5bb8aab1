"""What a site build remembers of the related-article lists, so the next one ranks little.

The lists are weighed by the index's statistics snapshot (``store.statistics``), so while
it stays, an article's candidates keep their scores until the article or a candidate
changes. The cache keeps each article's ranked candidates (``related.Ranked``) with the
digest of every article's stored fields; the next build hands the candidates of articles
unchanged since (the candidates changed or gone since taken out, with a bound on what they
may have left room for: ``related.Ranked.bound``) to ``Archive.related_ranked`` with the
articles new or changed since, which merges those in. With the same collection (the same
articles, contents and document numbers) the lists themselves are reused. Every article's
key terms are kept too (``related.KeyTerms``): an unchanged article's are taken as they are,
not picked again.

The candidates are kept as arrays (positions in the id table, scores as the float64 bytes):
a score must come back exactly as it was computed for a merge to rank as a fresh pass does.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from archive.related import KeyTerms, Ranked, candidates_kept
from archive.search import Listed

RELATED_CACHE = ".archive-related.json"
#: the layout of the cache (and of the ranking it keeps): another one is not read
FORMAT = 3
#: hex digits of an article's digest kept to tell an unchanged article
DIGEST = 24


@dataclass
class Earlier:
    """What an earlier build leaves this one: the lists when the collection is the same,
    else the candidates it can merge into and the articles that changed."""

    lists: dict[str, list[str]] | None = None
    previous: dict[int, Ranked] = field(default_factory=dict)
    changed: list[int] = field(default_factory=list)
    keys: KeyTerms | None = None   # the unchanged articles' key terms


def collection_key(limit: int, fingerprint: str, listings: Mapping[int, Listed]) -> str:
    """The lists' inputs: the list length, the snapshot, every live article's number and
    stored fields."""
    rows = sorted((number, listed.id, listed.digest) for number, listed in listings.items())
    return hashlib.sha256(json.dumps([FORMAT, limit, fingerprint, rows]).encode("utf-8")
                          ).hexdigest()


def _array(cache: dict[str, Any], name: str, dtype: Any) -> np.ndarray:
    return np.frombuffer(base64.b64decode(cache[name]), dtype=dtype)


def earlier(cache: dict[str, Any], key: str, basis: list[Any],
            listings: Mapping[int, Listed]) -> Earlier:
    """Read what ``cache`` (the last build's, possibly empty or of another layout) offers a
    build of ``listings`` whose collection key is ``key`` and whose ranking is ``basis``
    (format, list length, snapshot)."""
    lists = cache.get("lists")
    if cache.get("collection") == key and isinstance(lists, dict):
        return Earlier(lists=lists)
    everything = Earlier(changed=sorted(listings))
    if cache.get("basis") != basis or not basis[2]:   # another ranking, or weighed live
        return everything
    try:
        ids, digests = cache["ids"], cache["digests"]
        counts = _array(cache, "counts", np.uint8).astype(np.int64)
        positions = _array(cache, "candidates", np.int32)
        scores = _array(cache, "scores", np.float64)
        key_counts = _array(cache, "key_counts", np.uint8).astype(np.int64)
        key_terms = _array(cache, "key_terms", np.int32).astype(np.int64)
        key_weights = _array(cache, "key_weights", np.float64)
        words = [word.encode("utf-8", "surrogatepass") for word in cache["key_words"]]
        if not (len(ids) == len(digests) == len(counts) == len(key_counts)) or \
                int(counts.sum()) != len(positions) or len(positions) != len(scores) or \
                int(key_counts.sum()) != len(key_terms) or len(key_terms) != len(key_weights) or \
                len(key_terms) and not 0 <= key_terms.min() <= key_terms.max() < len(words):
            return everything
    except (KeyError, TypeError, ValueError, UnicodeError):
        return everything
    now = {listed.id: (number, listed.digest[:DIGEST]) for number, listed in listings.items()}
    # each earlier article's current number, -1 where it went or changed
    number_of = np.array([now[i][0] if i in now and now[i][1] == d else -1
                          for i, d in zip(ids, digests)], dtype=np.int64)
    unchanged = {int(n) for n in number_of if n >= 0}
    candidates = number_of[positions] if len(positions) else np.zeros(0, np.int64)
    ends = np.cumsum(counts)
    previous = {}
    full = candidates_kept(basis[1])
    for row, number in enumerate(number_of):
        if number < 0:
            continue
        start = ends[row] - counts[row]
        found, found_scores = candidates[start:ends[row]], scores[start:ends[row]]
        still = found >= 0
        if still.all():
            previous[int(number)] = Ranked(found, found_scores)
        else:   # the changed ones are ranked again; what they leave needs a bound
            previous[int(number)] = Ranked(found[still], found_scores[still],
                                           float(found_scores[-1]) if counts[row] == full
                                           else None)
    key_docs = np.repeat(number_of, key_counts)
    kept = key_docs >= 0
    return Earlier(previous=previous,
                   changed=sorted(n for n in listings if n not in unchanged),
                   keys=KeyTerms(key_docs[kept], key_terms[kept], key_weights[kept], words))


def remember(key: str, basis: list[Any], listings: Mapping[int, Listed],
             lists: dict[str, list[str]], ranked: Mapping[int, Ranked],
             keys: KeyTerms) -> dict[str, Any]:
    """The cache a build leaves: its lists, and every article's candidates and key terms by
    id."""
    order = np.array(sorted(ranked), dtype=np.int64)
    sizes = np.array([len(ranked[n].numbers) for n in order.tolist()], dtype=np.int64)
    named = np.concatenate([np.zeros(0, np.int64)] + [ranked[n].numbers for n in order.tolist()])
    found = np.concatenate([np.zeros(0)] + [ranked[n].scores for n in order.tolist()])
    row_of = np.repeat(np.arange(len(order)), sizes)
    # a row naming an article without a row is left out (the next build ranks it afresh),
    # and so, in turn, is a row naming a row left out
    kept = np.ones(len(order), dtype=bool)
    while True:
        lost = kept[row_of] & ~np.isin(named, order[kept])
        if not lost.any():
            break
        kept[row_of[lost]] = False
    numbers = order[kept].tolist()
    counts = sizes[kept].astype(np.uint8)
    inside = kept[row_of]
    candidates = np.searchsorted(order[kept], named[inside]).astype(np.int32)
    scores = found[inside].astype(np.float64)
    # the rows' key terms, in row order (``keys`` holds an article's together, numbers
    # ascending), their words numbered among those used
    order = order[kept]
    held = np.isin(keys.docs, order)
    key_counts = (np.searchsorted(keys.docs, order, side="right") -
                  np.searchsorted(keys.docs, order, side="left")).astype(np.uint8)
    used, key_terms = np.unique(keys.terms[held], return_inverse=True)
    encode = (lambda array: base64.b64encode(array.tobytes()).decode("ascii"))
    return {"collection": key, "basis": basis, "lists": lists,
            "ids": [listings[n].id for n in numbers],
            "digests": [listings[n].digest[:DIGEST] for n in numbers],
            "counts": encode(counts), "candidates": encode(candidates),
            "scores": encode(scores),
            "key_words": [keys.words[t].decode("utf-8", "surrogatepass") for t in used.tolist()],
            "key_counts": encode(key_counts),
            "key_terms": encode(key_terms.astype(np.int32)),
            "key_weights": encode(keys.weights[held].astype(np.float64))}

"""What a site build remembers of the related-article lists, so the next one ranks little.

The lists are weighed by the index's statistics snapshot (``store.statistics``), so while
it stays, an article's candidates keep their scores until the article or a candidate
changes. The cache keeps each article's ranked candidates (``related.Ranked``) with the
digest of every article's stored fields; the next build hands the candidates of articles
unchanged since (the candidates changed or gone since taken out, with a bound on what they
may have left room for: ``related.Ranked.bound``) to ``Archive.related_ranked`` with the
articles new or changed since, which merges those in. With the same collection (the same
articles, contents and document numbers) the lists themselves are reused.

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

from archive.related import Ranked, candidates_kept
from archive.search import Listed

RELATED_CACHE = ".archive-related.json"
#: the layout of the cache (and of the ranking it keeps): another one is not read
FORMAT = 2
#: hex digits of an article's digest kept to tell an unchanged article
DIGEST = 24


@dataclass
class Earlier:
    """What an earlier build leaves this one: the lists when the collection is the same,
    else the candidates it can merge into and the articles that changed."""

    lists: dict[str, list[str]] | None = None
    previous: dict[int, Ranked] = field(default_factory=dict)
    changed: list[int] = field(default_factory=list)


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
        if not (len(ids) == len(digests) == len(counts)) or \
                int(counts.sum()) != len(positions) or len(positions) != len(scores):
            return everything
    except (KeyError, TypeError, ValueError):
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
    return Earlier(previous=previous,
                   changed=sorted(n for n in listings if n not in unchanged))


def remember(key: str, basis: list[Any], listings: Mapping[int, Listed],
             lists: dict[str, list[str]], ranked: Mapping[int, Ranked]) -> dict[str, Any]:
    """The cache a build leaves: its lists, and every article's candidates by id."""
    # (a row naming an article outside ``ranked`` is left out: the next build ranks it afresh)
    numbers = [n for n in sorted(ranked) if all(int(c) in ranked for c in ranked[n].numbers)]
    position = {number: i for i, number in enumerate(numbers)}
    counts = np.array([len(ranked[n].numbers) for n in numbers], dtype=np.uint8)
    candidates = np.array([position[int(c)] for n in numbers for c in ranked[n].numbers],
                          dtype=np.int32)
    scores = np.concatenate([ranked[n].scores for n in numbers]).astype(np.float64) \
        if numbers else np.zeros(0)
    encode = (lambda array: base64.b64encode(array.tobytes()).decode("ascii"))
    return {"collection": key, "basis": basis, "lists": lists,
            "ids": [listings[n].id for n in numbers],
            "digests": [listings[n].digest[:DIGEST] for n in numbers],
            "counts": encode(counts), "candidates": encode(candidates),
            "scores": encode(scores)}

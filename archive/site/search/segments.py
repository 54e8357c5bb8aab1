"""The term and pair lists of a few Whoosh segments: the part of the bundle that updates in place.
One idea: lists that depend on their own segments only.

Why per segment: a Whoosh segment never changes once written (a day's ``archive index`` adds a
small one, deletions are kept beside it, merges replace a few small ones by one), so lists cut
from one segment's articles are rewritten only when that segment is new. Nothing in them may
depend on the rest of the collection, so a posting holds what the index holds for it (each
field's weight and length) and each list's head its per-field document frequency in this
segment; ``meta`` holds the collection's count and average lengths, and the browser computes
the archive's BM25F (``archive.ranking``) from them, summing each word's frequencies over the
live segments as Whoosh does. Lists are cut by a segment-local order (the same formula with
the segment's own averages and frequencies), and each tail tier carries a bound, so the browser
bounds what it has not fetched yet: a pair's tier per field its highest weights and
weight-to-length ratios; a word's tier its highest combined term frequency at the unit's own
averages, which ``meta`` relates to the collection's by one factor per unit (``units_rho``).

Why units: a word's first query fetches one shard per list set, and Whoosh lets a few dozen
small segments pile up before it merges them. So the lists are cut per *unit*: a run of
consecutive segments grouped the way a binary counter carries (``units``), at most a few per
size level, so their number grows with the logarithm of the collection. The grouping is a
function of the index's segment list alone (a fresh build groups as an update does), and a
new segment joins the end of the list, so a day's update rewrites the lists of the newest
units only; now and then a carry rewrites a few small units as one.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import pickle
import struct
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import scoring

from archive import __version__, store
from archive.site.files import OutputFolder, Writes
from archive.site.search.format import FORMAT_VERSION, FieldedEntry, entry_bytes, key_hash, \
    make_fielded_entry, shard_count
from archive.site.search.pairs import Tokens
from archive.site.search.postings import Numbering, write_shards

FIELDS = store.TEXT_FIELDS
#: pair spool record: key length, article number, then per field (weight a, weight b, length)
PAIR_RECORD = struct.Struct("<HI" + "III" * len(FIELDS))
#: what the last build of an output folder wrote per segment (a builder's cache, never
#: published: the bundle is the same without it, only slower to bring up to date)
SEGMENT_CACHE = ".archive-segments.json"


#: a unit level holds up to this many times the articles of the level below; this many
#: consecutive units of one level are cut as one
FANOUT = 4
#: the articles (deleted copies included) below which a unit is of the lowest level
LEVEL_BASE = 1000


@dataclass(frozen=True)
class Unit:
    """Consecutive live segments whose lists are cut together."""

    positions: tuple[int, ...]   # the segments' places among the reader's leaves
    segids: tuple[str, ...]
    articles: int                # documents in them, deleted copies included

    @property
    def uid(self) -> str:
        """A one-segment unit is named by its segment, a larger one by its segments."""
        if len(self.segids) == 1:
            return self.segids[0]
        return "u" + hashlib.sha256(" ".join(self.segids).encode()).hexdigest()[:15]

    @property
    def level(self) -> int:
        level, ceiling = 0, LEVEL_BASE * FANOUT
        while self.articles >= ceiling:
            level, ceiling = level + 1, ceiling * FANOUT
        return level


def units(source: Any) -> list[Unit]:
    """The live segments in index order, grouped: each segment is pushed as a unit, and
    while the last ``FANOUT`` units are of one level they become one unit. A new segment
    comes last in the index's list, so it changes the newest units only."""
    stack: list[Unit] = []
    for position, (leaf, _) in enumerate(source.searcher.reader().leaf_readers()):
        if leaf.segment() is None:
            continue
        stack.append(Unit((position,), (leaf.segment().segid,), leaf.doc_count_all()))
        while len(stack) >= FANOUT and len({u.level for u in stack[-FANOUT:]}) == 1:
            run = stack[-FANOUT:]
            del stack[-FANOUT:]
            stack.append(Unit(tuple(p for u in run for p in u.positions),
                              tuple(s for u in run for s in u.segids),
                              sum(u.articles for u in run)))
    return stack


def _members(source: Any, unit: Unit) -> list[tuple[Any, int]]:
    leaves = list(source.searcher.reader().leaf_readers())
    return [leaves[p] for p in unit.positions]


def _superseded(members: list[tuple[Any, int]], numbering: Numbering) -> list[np.ndarray]:
    """Per member segment, which of its documents hold a number a later member also holds:
    older copies of an article edited since, left out of the unit's lists (its newest copy
    is the one they hold, deleted or not)."""
    number_of = np.frombuffer(numbering.number_of, dtype=np.int32)
    later = np.zeros(0, dtype=np.int32)
    masks: list[np.ndarray] = [np.zeros(0, dtype=bool)] * len(members)
    for i in reversed(range(len(members))):
        leaf, offset = members[i]
        numbers = number_of[offset:offset + leaf.doc_count_all()]
        masks[i] = (numbers >= 0) & np.isin(numbers, later)
        later = np.union1d(later, numbers[numbers >= 0])
    return masks


@dataclass
class SegmentLists:
    """What one unit's lists came to (``meta`` lists each unit, as ``segs``, with its
    counts; ``segid`` is the unit's id)."""

    segid: str
    terms: int
    term_shards: int
    pairs: int
    pair_shards: int
    files: int

    def meta_row(self) -> list[Any]:
        return [self.segid, self.term_shards, self.pair_shards]


def fingerprints(source: Any, numbering: Numbering, prefix: str, shard_bytes: int,
                 head_size: int) -> list[tuple[str, str]]:
    """(unit id, fingerprint) per unit: everything its files depend on (its segments, which
    are immutable; the numbers their articles have; the build's parameters)."""
    weighting = source.searcher.weighting
    params = json.dumps([__version__, FORMAT_VERSION, prefix, shard_bytes, head_size,
                         "bm25f", weighting.K1, [weighting.field_B(f) for f in FIELDS],
                         [weighting.field_weight(f) for f in FIELDS], FANOUT, LEVEL_BASE])
    out = []
    for unit in units(source):
        digest = hashlib.sha256(params.encode())
        for leaf, offset in _members(source, unit):
            digest.update(leaf.segment().segid.encode())
            digest.update(numbering.number_of[offset:offset + leaf.doc_count_all()].tobytes())
        out.append((unit.uid, digest.hexdigest()))
    return out


def _read_cache(out: OutputFolder) -> dict[str, Any]:
    try:
        cache = json.loads((out.root / SEGMENT_CACHE).read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def kept(out: OutputFolder, prefix: str, prints: list[tuple[str, str]]) -> list[SegmentLists]:
    """The segments whose files the last build into ``out`` wrote from the same fingerprint
    and which are all still there with their sizes: counted as produced, not rebuilt."""
    cache = _read_cache(out)
    found = []
    for segid, fingerprint in prints:
        entry = cache.get(segid)
        if not isinstance(entry, dict) or entry.get("fp") != fingerprint:
            continue
        files = entry.get("files", {})
        if isinstance(files, dict) and out.keep_all(files):
            found.append(SegmentLists(segid, *entry["lists"], files=0))
    return found


def remember(out: OutputFolder, prefix: str, prints: list[tuple[str, str]],
             lists: list[SegmentLists]) -> None:
    """Write the segment cache ``kept`` reads: each segment's fingerprint, counts, files
    (the sizes of a kept segment's files are the ones the last build noted)."""
    by_segid = {found.segid: found for found in lists}
    earlier = _read_cache(out)
    cache: dict[str, Any] = {}
    for segid, fingerprint in prints:   # a kept unit's entry stays as it was
        noted = earlier.get(segid)
        if isinstance(noted, dict) and noted.get("fp") == fingerprint and \
                by_segid[segid].files == 0 and isinstance(noted.get("files"), dict):
            cache[segid] = noted
    lead = f"{prefix}/s/"
    files: dict[str, list[str]] = {segid: [] for segid, _ in prints if segid not in cache}
    for path in out.produced if files else ():
        if path.startswith(lead):
            segid = path[len(lead):].split("/", 1)[0]
            if segid in files:
                files[segid].append(path)
    for segid, fingerprint in prints:
        if segid in files:
            found = by_segid[segid]
            cache[segid] = {
                "fp": fingerprint,
                "lists": [found.terms, found.term_shards, found.pairs, found.pair_shards],
                "files": {path: out.size_of(path) for path in sorted(files[segid])}}
    cache = {segid: cache[segid] for segid, _ in prints}
    tmp = out.root / (SEGMENT_CACHE + ".tmp")
    tmp.write_text(json.dumps(cache), "utf-8")
    tmp.replace(out.root / SEGMENT_CACHE)


def segment_ids(source: Any) -> list[str]:
    """The units' ids in index order (an empty index has none)."""
    return [unit.uid for unit in units(source)]


class _Order:
    """The unit-local ranking a list is cut by: the archive's BM25F with the unit's own
    article count, frequencies and averages, so it never depends on other units and stays
    close to the collection's. A word's fields are scored as one term (``archive.words``), a
    pair's words per field (the client's ``fieldedScore`` alike)."""

    def __init__(self, weighting: Any, members: list[tuple[Any, int]]):
        self.count = sum(leaf.doc_count_all() for leaf, _ in members) or 1
        self.weighting = weighting
        self.idf_of = weighting.idf_of
        averages = [own or 1 for own in _unit_averages(members)]
        self.params = [(weighting.field_weight(f), weighting.field_B(f), weighting.K1, avg)
                       for f, avg in zip(FIELDS, averages)]
        self.shares = [weighting.field_tf_function(None, f, avg_length=avg)
                       for f, avg in zip(FIELDS, averages)]

    def word_tf(self, fields: tuple[tuple[int, ...], ...]) -> float:
        """A word's posting's combined term frequency at the unit's own averages (what a
        tier's bound keeps: ``units_rho`` relates it to the collection's)."""
        return sum(share(values[0], values[-1])
                   for share, values in zip(self.shares, fields) if values)

    def __call__(self, fields: tuple[tuple[int, ...], ...], dfs: list[int]) -> float:
        if max(len(values) - 1 for values in fields if values) == 1:
            return self.weighting.word_idf(self.count, dfs) * \
                self.weighting.saturated(self.word_tf(fields))
        total = 0.0
        for f, ((fw, B, K1, avg), values) in enumerate(zip(self.params, fields)):
            for i, w in enumerate(values[:-1]):
                idf = self.idf_of(self.count, dfs[i * len(FIELDS) + f])
                total += fw * scoring.bm25(idf, w, values[-1], avg, B, K1)
        return total


def units_rho(source: Any) -> dict[str, float]:
    """Per unit, the most the collection's average lengths can raise a posting's combined
    term frequency over its value at the unit's own (the bound its tiers keep). A field's
    term frequency over ``(1 - B) + B * length / average`` grows, when the average grows from
    ``a`` to ``g``, by at most ``g / a``; so the largest such ratio over the fields the unit
    holds, and never below 1."""
    searcher = source.searcher
    overall = [searcher.avg_field_length(f) or 1 for f in FIELDS]
    out: dict[str, float] = {}
    for unit in units(source):
        own = _unit_averages(_members(source, unit))
        out[unit.uid] = max([1.0] + [whole / mine for whole, mine in zip(overall, own) if mine])
    return out


def _unit_averages(members: list[tuple[Any, int]]) -> list[float]:
    """Per text field, the unit's own average length (0 where it holds none): what its lists
    are cut and bound by."""
    count = sum(leaf.doc_count_all() for leaf, _ in members) or 1
    return [sum(leaf.field_length(f) for leaf, _ in members) / count for f in FIELDS]


def _lengths(leaf: Any) -> dict[str, np.ndarray]:
    count = leaf.doc_count_all()
    return {name: np.array([leaf.doc_field_length(d, name, 1) or 0 for d in range(count)],
                           dtype=np.int64) for name in FIELDS if name in leaf.schema}


def _whole(value: float) -> int:
    if value != int(value) or value < 1:
        raise ValueError(f"a posting weight the bundle cannot hold: {value!r}")
    return int(value)


def term_lists(members: list[tuple[Any, int]], superseded: list[np.ndarray],
               numbering: Numbering, order: _Order, head_size: int) -> Iterator[FieldedEntry]:
    """The unit's term lists, one at a time in term order (a large unit's do not fit in
    memory together), each with its per-field document frequencies summed over the unit's
    segments as Whoosh sums them. Deleted articles whose number lives on (an edited article)
    stay in; the browser drops them by the unit's deletion list. Of an article with copies
    in two of the unit's segments the newer copy is listed."""
    number_of = np.frombuffer(numbering.number_of, dtype=np.int32)

    def stream(m: int, fi: int) -> Iterator[tuple[str, int, int, Any, Any, Any]]:
        leaf, _ = members[m]
        for word, info, ids, weights in store.field_postings(leaf, FIELDS[fi]):
            yield word.decode("utf-8"), fi, m, info, ids, weights

    lengths = [_lengths(leaf) for leaf, _ in members]
    # ordered by term, field, then segment: a newer segment's posting comes last
    streams = [stream(m, fi) for m, (leaf, _) in enumerate(members)
               for fi, name in enumerate(FIELDS) if name in leaf.schema]
    merged = heapq.merge(*streams, key=lambda part: part[:3])
    pages = store.MappedPages(members)
    for term, parts in itertools.groupby(merged, key=lambda part: part[0]):
        pages.step()
        dfs = [0] * len(FIELDS)
        postings: dict[int, list[tuple[int, ...]]] = {}
        for _, fi, m, info, ids, weights in parts:
            dfs[fi] += info.doc_frequency()
            numbers = number_of[members[m][1] + ids]
            kept = (numbers >= 0) & ~superseded[m][ids]
            for n, w, length in zip(numbers[kept].tolist(), weights[kept].tolist(),
                                    lengths[m][FIELDS[fi]][ids[kept]].tolist()):
                postings.setdefault(n, [()] * len(FIELDS))[fi] = (_whole(w), int(length))
        if postings:
            fielded = {n: tuple(f) for n, f in postings.items()}
            yield make_fielded_entry(term, dfs, fielded, order, head_size, order.word_tf)


def unit_dfs(members: list[tuple[Any, int]]) -> dict[str, list[int]]:
    """Each term's per-field document frequency over the unit's segments, from their term
    tables alone: what ``term_lists`` sums as it walks the postings, for a pairs task that
    runs apart from the unit's terms task."""
    dfs_of: dict[str, list[int]] = {}
    pages = store.MappedPages(members)
    for leaf, _ in members:
        for fi, name in enumerate(FIELDS):
            if name not in leaf.schema:
                continue
            for word, info in leaf.iter_field(name):
                pages.step()
                term = word.decode("utf-8") if isinstance(word, bytes) else word
                dfs_of.setdefault(term, [0] * len(FIELDS))[fi] += info.doc_frequency()
    return dfs_of


def pair_spool(source: Any, members: list[tuple[Any, int]], superseded: list[np.ndarray],
               numbering: Numbering, folder: Path, partitions: int) -> int:
    """Each article's adjacent-word pairs (with both words' weights and the field's length
    per field) spooled to ``partitions`` files: the pair vocabulary never sits in RAM."""
    schema = source.index.schema
    tokenize = {name: Tokens(schema[name].analyzer) for name in FIELDS}
    boost = {name: schema[name].format.field_boost for name in FIELDS}
    files = [open(folder / f"pairs-{p}.bin", "wb") for p in range(partitions)]
    records = 0
    pages = store.MappedPages(members)
    try:
        for (leaf, offset), older in zip(members, superseded):
            records += _spool_segment(leaf, offset, older, numbering, tokenize, boost, files,
                                      partitions, pages)
    finally:
        for f in files:
            f.close()
    return records


def _spool_segment(leaf: Any, offset: int, superseded: np.ndarray, numbering: Numbering,
                   tokenize: dict[str, Tokens], boost: dict[str, float], files: list[Any],
                   partitions: int, pages: store.MappedPages) -> int:
    records = 0
    for d in range(leaf.doc_count_all()):
        pages.step()
        number = numbering.number_of[offset + d]
        if number < 0 or superseded[d]:
            continue
        stored = leaf.stored_fields(d)
        found: dict[str, list[int]] = {}
        for fi, name in enumerate(FIELDS):
            # only text the index searched: a title copied from the body's lead is stored
            # but not indexed (``store.to_document``), and has no length
            length = int(leaf.doc_field_length(d, name, 0) or 0)
            tokens = tokenize[name](stored.get(name, "")) if length else []
            if len(tokens) < 2:
                continue
            counts = Counter(tokens)
            for a, b in set(zip(tokens, tokens[1:])):
                row = found.setdefault(f"{a} {b}", [0] * (3 * len(FIELDS)))
                row[3 * fi:3 * fi + 3] = [_whole(counts[a] * boost[name]),
                                          _whole(counts[b] * boost[name]), length]
        chunks: dict[int, list[bytes]] = defaultdict(list)
        for key, row in found.items():
            data = key.encode("utf-8")
            chunks[zlib.crc32(data) % partitions].append(
                PAIR_RECORD.pack(len(data), number, *row) + data)
        for p, chunk in chunks.items():
            files[p].write(b"".join(chunk))
        records += len(found)
    return records


def _pair_entries(data: bytes, dfs_of: dict[str, list[int]], order: _Order,
                  head_size: int) -> list[FieldedEntry]:
    lists: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = defaultdict(dict)
    pos, size = 0, PAIR_RECORD.size
    while pos < len(data):
        length, number, *row = PAIR_RECORD.unpack_from(data, pos)
        pos += size
        key = data[pos:pos + length].decode("utf-8")
        pos += length
        lists[key][number] = tuple(tuple(row[3 * f:3 * f + 3]) if row[3 * f] else ()
                                   for f in range(len(FIELDS)))
    out = []
    empty = [0] * len(FIELDS)
    for key, postings in lists.items():
        a, b = key.split(" ")
        out.append(make_fielded_entry(key, dfs_of.get(a, empty) + dfs_of.get(b, empty),
                                      postings, order, head_size))
    return out


#: the most spool partitions a unit's lists are cut into (each is an open file while the
#: unit's pairs are spooled)
MAX_PARTITIONS = 128


def partitions_for(articles: int) -> int:
    """Spool partitions for a unit of ``articles``: a power of two, one per 512 articles up
    to ``MAX_PARTITIONS`` (a small unit cut into many would write as many pair shards at
    least; a large one's partition is read into memory whole, so its size is what the
    build holds: at the cap it grows with the unit)."""
    p = 1
    while p < MAX_PARTITIONS and p * 512 < articles:
        p *= 2
    return p


#: the two tasks a unit's lists are built in (any process may take either): its pair lists
#: (the larger, so listed first) and its term lists
PARTS = ("pairs", "terms")


def build_segment(source: Any, numbering: Numbering, index: int, out: Writes, prefix: str,
                  shard_bytes: int, head_size: int, work: Path) -> SegmentLists:
    """Write unit ``index``'s term and pair shards under ``s/UNITID/``."""
    return combine([build_part(source, numbering, index, part, out, prefix, shard_bytes,
                               head_size, work) for part in PARTS])[0]


def tasks(source: Any, todo: list[int]) -> list[tuple[int, str]]:
    """The (unit, part) tasks of the units in ``todo``, the costliest first (a unit's pairs
    cost a few times its terms), so the two processes of a build finish close together
    even when one unit holds most of the articles."""
    sizes = {i: unit.articles for i, unit in enumerate(units(source))}
    return sorted(((i, part) for i in todo for part in PARTS),
                  key=lambda task: (-sizes[task[0]] * (3 if task[1] == "pairs" else 1),
                                    task[0], task[1]))


def combine(parts: list[SegmentLists]) -> list[SegmentLists]:
    """One ``SegmentLists`` per unit from its parts' (each counts what its part wrote)."""
    by_unit: dict[str, SegmentLists] = {}
    for found in parts:
        held = by_unit.get(found.segid)
        by_unit[found.segid] = found if held is None else SegmentLists(
            found.segid, held.terms + found.terms, held.term_shards + found.term_shards,
            held.pairs + found.pairs, held.pair_shards + found.pair_shards,
            held.files + found.files)
    return list(by_unit.values())


def build_part(source: Any, numbering: Numbering, index: int, part: str, out: Writes,
               prefix: str, shard_bytes: int, head_size: int, work: Path) -> SegmentLists:
    """Write unit ``index``'s term shards (``part`` "terms") or pair shards ("pairs")."""
    unit = units(source)[index]
    members = _members(source, unit)
    segid = unit.uid
    order = _Order(source.searcher.weighting, members)
    superseded = _superseded(members, numbering)
    folder = work / f"seg-{segid}-{part}"
    folder.mkdir(parents=True, exist_ok=True)
    partitions = partitions_for(unit.articles)
    namespace = f"s/{segid}/{part[0]}"
    made = _entries(source, members, superseded, numbering, order, head_size, folder,
                    partitions, part)
    if partitions == 1:   # a small unit's lists (a day's new segment) are held, not spooled
        entries = list(made)
        count, total = len(entries), sum(entry_bytes(e) for e in entries)
        nshards = shard_count(total, shard_bytes, partitions)
        files = _write(out, prefix, namespace, entries, nshards)
    else:
        spools = [open(folder / f"entries-{p}.pickle", "wb") for p in range(partitions)]
        count, total = 0, 0
        try:   # every entry spooled to its key's partition as it is made
            for entry in made:
                spools[key_hash(entry.key) % partitions].write(
                    pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
                count += 1
                total += entry_bytes(entry)
        finally:
            for spool in spools:
                spool.close()
        # then written a partition at a time: shard s holds keys of partition s mod
        # partitions only (the count is a multiple)
        nshards = shard_count(total, shard_bytes, partitions)
        files = sum(_write(out, prefix, namespace, _unpickled(folder / f"entries-{p}.pickle"),
                           nshards, range(p, nshards, partitions))
                    for p in range(partitions))
    if part == "terms":
        return SegmentLists(segid, count, nshards, 0, 0, files)
    return SegmentLists(segid, 0, 0, count, nshards, files)


def _entries(source: Any, members: list[tuple[Any, int]], superseded: list[np.ndarray],
             numbering: Numbering, order: _Order, head_size: int, folder: Path,
             partitions: int, part: str) -> Iterator[FieldedEntry]:
    """A unit's term lists (``part`` "terms") or pair lists ("pairs"), made a few at a
    time: the pairs are spooled by partition first (their vocabulary never sits in RAM)."""
    if part == "terms":
        yield from term_lists(members, superseded, numbering, order, head_size)
        return
    dfs_of = unit_dfs(members)
    pair_spool(source, members, superseded, numbering, folder, partitions)
    for p in range(partitions):
        path = folder / f"pairs-{p}.bin"
        encoded = _pair_entries(path.read_bytes(), dfs_of, order, head_size)
        path.unlink()
        yield from encoded


def _unpickled(path: Path) -> Iterator[FieldedEntry]:
    """The entries ``pickle.dump`` put in a spool file one after another; the file goes."""
    with open(path, "rb") as f:
        while True:
            try:
                yield pickle.load(f)
            except EOFError:
                break
    path.unlink()


def _write(out: Writes, prefix: str, namespace: str, entries: Iterable[FieldedEntry],
           nshards: int, wanted: Iterator[int] | range | None = None) -> int:
    every = range(nshards) if wanted is None else wanted
    shards: dict[int, list[Any]] = {s: [] for s in every}
    for entry in entries:
        found = shards.get(key_hash(entry.key) % nshards)
        if found is not None:
            found.append(entry)
    return write_shards(out, prefix, namespace, shards)


def deletions(source: Any, numbering: Numbering) -> dict[str, list[int]]:
    """Per unit, the numbers its lists hold for deleted articles (the browser skips them
    there): an edited article's old copy keeps its number in its old unit."""
    out: dict[str, list[int]] = {}
    for unit in units(source):
        members = _members(source, unit)
        if not any(leaf.has_deletions() for leaf, _ in members):
            continue
        numbers = sorted(n for (leaf, offset), older in zip(members,
                                                            _superseded(members, numbering))
                         if leaf.has_deletions()
                         for d in range(leaf.doc_count_all())
                         if leaf.is_deleted(d) and not older[d]
                         for n in [numbering.number_of[offset + d]] if n >= 0)
        if numbers:
            out[unit.uid] = numbers
    return out

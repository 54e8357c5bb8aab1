"""The static site's own search: a bundle of small script files built from the archive's index.

Why not a general static-search engine: a news archive needs the CLI's query language and the
CLI's ranking, and the search must work when the site is opened from disk. So the archive
exports what its Whoosh index already knows, precomputed and split so a browser fetches little:

- Articles are **numbered in date order** (oldest first, undated last), so date filters and date
  sorts are number ranges and need no per-article dates in the browser.
- Every (term, article) pair carries the **score the archive's weighting gives that one term**
  (``archive.ranking``, through the searcher's own scorers) over title, body and captions,
  summed over the fields, **quantized to 8 bits** per posting list
  (linear against the list's maximum). An AND query's CLI score is the sum of its terms' scores,
  so summing these reproduces the CLI ranking.
- Posting lists live in **term-hashed shard files** of a few KB (CRC-32 of the term: no
  dictionary to download).
  A long list keeps only its top-scoring ``head`` postings in the shard; the rest sit in tail
  files, in tiers of falling score, fetched only when a safe bound says they could change the
  page being shown (or when exact counts are wanted).
- **Adjacent-word pairs** (over the analyzed tokens, stop words already removed, exactly as
  Whoosh's phrase positions are) have their own posting lists, so phrases need no article text.
  A pair's score is the Whoosh phrase score: the two terms' scores in the fields holding it.
- **One file per article** (metadata, page path and text), fetched only for shown results.
- **Filter counts are lazy**: a first page of results needs only list heads, so exact totals
  and the filter counts (whole lists, facet columns, and the ``counts.js`` client code) are
  fetched only when a visitor opens the filter panel.
- **Facets**: posting files per facet value in hash buckets (for ``source:``/``place:``/
  ``topic:`` filters: no value listing needed), and per-block columns of facet values with
  the value listing in ``facets`` (for the filter counts).
- **Dates**: ``meta`` holds each year's first article number; one small file per year holds
  its day table, fetched only when a date filter starts or ends inside that year. So a first
  query loads a ``meta`` of a few hundred bytes whatever the archive's size.

Every file is a classic script calling ``__archiveBundle(name, data)``, so the bundle loads
through ``<script>`` elements, which (unlike ``fetch``) work from ``file://`` too.
"""

from __future__ import annotations

import base64
import heapq
import importlib.resources
import itertools
import json
import math
import os
import pickle
import re
import resource
import shutil
import struct
import tempfile
import time
import zlib
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import markupsafe
import numpy as np
from whoosh.searching import Searcher

from archive import analysis, processes, store
from archive.search import Archive
from archive.site import urls
from archive.site.files import OutputFolder

FORMAT_VERSION = 2
CALLBACK = "__archiveBundle"
FACETS = ("source", "place", "topic")
#: Articles per facet-column file (the filter counts read the blocks a result set touches).
COLUMN_BLOCK = 4096
#: Tail tier k holds head_size * TIER_GROWTH**k postings: few requests for a full list.
TIER_GROWTH = 4
#: Pair records are spread over this many temporary partitions while the build streams.
PAIR_PARTITIONS = 32
#: The client's sources, found through the package: a checkout's folders are not installed.
ASSET_FOLDER = importlib.resources.files("archive.templates") / "site" / "assets" / "search"
#: The client, in load order: served as one file, search.js (one request, and gzip sees them
#: together); counts.js, the filter panel's code, is fetched only when that panel opens.
CLIENT_FILES = ("engine.js", "ui.js")
CLIENT_SCRIPT = "search.js"
COUNTS_SCRIPT = "counts.js"
CLIENT_PREFIX = "assets/search/"


@dataclass
class BundleReport:
    """What a bundle build produced (the site builder folds it into its own report)."""

    files: int = 0
    written: int = 0
    bytes: int = 0
    articles: int = 0
    terms: int = 0
    pairs: int = 0
    term_shards: int = 0
    pair_shards: int = 0
    seconds: float = 0.0
    peak_rss_mb: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- small encodings shared with the browser (engine.js mirrors each) ---------------------------

def key_hash(text: str) -> int:
    """CRC-32 of the UTF-8 bytes: the browser finds a term's shard with no dictionary.

    (zlib's C CRC-32: the build hashes every pair occurrence, ~11 million at 100k articles.)"""
    return zlib.crc32(text.encode("utf-8"))


def varints(values: Iterable[int]) -> bytearray:
    out = bytearray()
    for v in values:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return out


def read_varints(data: bytes, count: int, pos: int = 0) -> tuple[list[int], int]:
    out: list[int] = []
    for _ in range(count):
        v = shift = 0
        while True:
            b = data[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        out.append(v)
    return out, pos


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def encode_postings(numbers: list[int], qs: list[int]) -> str:
    """Postings sorted by article number: delta varints, then one score byte each, base64."""
    deltas = [n - p for n, p in zip(numbers, [-1] + numbers[:-1])]
    return b64(varints(deltas) + bytes(qs))


def decode_postings(text: str, count: int) -> tuple[list[int], list[int]]:
    data = base64.b64decode(text)
    deltas, pos = read_varints(data, count)
    numbers, last = [], -1
    for d in deltas:
        last += d
        numbers.append(last)
    return numbers, list(data[pos:pos + count])


def script(name: str, data: Any) -> bytes:
    """A bundle file: ``__archiveBundle("name", <JSON>);`` (JSON is valid JavaScript)."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"{CALLBACK}({json.dumps(name)},{payload});\n".encode("utf-8")


def parse_script(content: bytes) -> tuple[str, Any]:
    """Read a bundle file back (the Python reference reader and tests use it)."""
    text = content.decode("utf-8").strip()
    if not text.startswith(CALLBACK + "(") or not text.endswith(");"):
        raise ValueError("not a bundle file")
    name, rest = json.JSONDecoder().raw_decode(text, len(CALLBACK) + 1)
    return name, json.loads(text[rest + 1:-2])


def quantize(score: float, top: float) -> int:
    """Linear 8 bits against the list's best score; never 0 (0 would read as 'no posting')."""
    return max(1, min(255, round(score / top * 255))) if top > 0 else 1


def dequantize(q: int, top: float) -> float:
    """The browser computes exactly ``q * top / 255`` in float64 too, so scores tie alike."""
    return q * top / 255


# --- posting lists: head in the shard, tails in tiers --------------------------------------------

@dataclass
class Entry:
    """One term's (or pair's) posting list, split for the shard and its tail files."""

    key: str
    df: int
    top: float
    head: str                       # encoded postings of the head
    tiers: list[tuple[int, int, str]] = field(default_factory=list)  # (count, max q, data)

    def shard_row(self) -> list[Any]:
        row: list[Any] = [self.key, self.df, self.top, self.head]
        if self.tiers:
            row.append([[count, bound] for count, bound, _ in self.tiers])
        return row


def make_entry(key: str, scores: dict[int, float], head_size: int) -> Entry:
    """Quantize, order by score (ties: lower number first), cut into head and tiers."""
    # Six significant digits are plenty for 8-bit scores and keep the shard rows short.
    if len(scores) == 1:            # most pairs: one article (no ranking, no tiers)
        (number, score), = scores.items()
        top = float(f"{score:.6g}")
        return Entry(key, 1, top, encode_postings([number], [quantize(score, top)]))
    top = float(f"{max(scores.values()):.6g}")
    ranked = sorted(((quantize(s, top), n) for n, s in scores.items()),
                    key=lambda qn: (-qn[0], qn[1]))
    chunks, start, size = [], 0, head_size
    while start < len(ranked):
        chunks.append(ranked[start:start + size])
        start += size
        size = head_size * TIER_GROWTH ** len(chunks)
    encoded = []
    for chunk in chunks:
        by_number = sorted(chunk, key=lambda qn: qn[1])
        encoded.append((len(chunk), chunk[0][0],
                        encode_postings([n for _, n in by_number], [q for q, _ in by_number])))
    return Entry(key, len(scores), top, encoded[0][2], encoded[1:])


def tail_name(namespace: str, shard: int, index: int, tier: int) -> str:
    return f"{namespace}/{shard}-{index}-{tier + 1}"


def write_shards(out: OutputFolder, prefix: str, namespace: str, nshards: int,
                 shards: dict[int, list[Entry]]) -> int:
    """Write every shard (empty ones too, so a lookup never misses a file) and its tails."""
    return _write_some_shards(out, prefix, namespace,
                              {s: shards.get(s, []) for s in range(nshards)})


def shard_count(total_bytes: int, shard_bytes: int, multiple: int = 1) -> int:
    n = max(1, math.ceil(total_bytes / max(1, shard_bytes)))
    return math.ceil(n / multiple) * multiple


def entry_bytes(entry: Entry) -> int:
    return len(entry.key.encode("utf-8")) + len(entry.head) + 24


# --- the build -----------------------------------------------------------------------------------

class _Numbering:
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


def _term_postings(reader: Any) -> Iterator[tuple[str, list[tuple[str, int, Any, Any]]]]:
    """Each term of the text fields in order, with its postings as arrays per field (in
    name order) and segment (in index order): (term, [(field, segment, ids, weights)])."""
    leaves = [leaf for leaf, _ in reader.leaf_readers()]

    def one(name: str, segment: int) -> Iterator[tuple[str, str, int, Any, Any]]:
        for word, _info, ids, weights in store.field_postings(leaves[segment], name):
            yield word.decode("utf-8"), name, segment, ids, weights

    streams = [one(name, i) for name in store.TEXT_FIELDS
               for i, leaf in enumerate(leaves) if name in leaf.schema]
    merged = heapq.merge(*streams, key=lambda part: part[:3])
    for term, parts in itertools.groupby(merged, key=lambda part: part[0]):
        yield term, [part[1:] for part in parts]


class _LeafLengths:
    """Each segment's field lengths, read once (a posting's score needs its article's)."""

    def __init__(self, archive: Archive | _OwnReader):
        self.leaves = list(archive.searcher.reader().leaf_readers())
        self.lengths: list[dict[str, np.ndarray]] = []
        for leaf, _ in self.leaves:
            count = leaf.doc_count_all()
            # (None for an article without the field: it has no postings there to score)
            self.lengths.append({name: np.array([leaf.doc_field_length(d, name, 1) or 0
                                                 for d in range(count)], dtype=np.float64)
                                 for name in store.TEXT_FIELDS if name in leaf.schema})


def _term_scores(scorer: _FieldScorer, leaves: _LeafLengths, numbering: _Numbering, term: str,
                 parts: list[tuple[str, int, Any, Any]]) -> dict[int, float]:
    """The archive's own score of ``term`` per article, summed over the fields holding it.

    Per segment, each posting goes through the weighting's score function for (field, term)
    with the posting's weight and the article's field length: what ``scorer.score(matcher)``
    computes, on arrays (the build reads some 10 million postings at 100k); the sums are
    made in the order the postings come, field by field, as a search adds them."""
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


def _build_terms(archive: Archive | _OwnReader, numbering: _Numbering, out: OutputFolder,
                 prefix: str, shard_bytes: int, head_size: int,
                 scorer: _FieldScorer | None = None) -> tuple[int, int, int]:
    """Stream the index's terms; hold only each list's compact encoding until shards are cut."""
    reader = archive.searcher.reader()
    scorer = scorer or _FieldScorer(archive)
    leaves = _LeafLengths(archive)
    entries: list[tuple[int, Entry]] = []
    total = 0
    for term, parts in _term_postings(reader):
        scores = _term_scores(scorer, leaves, numbering, term, parts)
        if not scores:
            continue
        entry = make_entry(term, scores, head_size)
        entries.append((key_hash(term), entry))
        total += entry_bytes(entry)
    nshards = shard_count(total, shard_bytes)
    shards: dict[int, list[Entry]] = defaultdict(list)
    for h, entry in entries:
        shards[h % nshards].append(entry)
    files = write_shards(out, prefix, "t", nshards, shards)
    return len(entries), nshards, files


class _PairSpool:
    """Pair postings spooled to temporary partitions: the pair vocabulary never sits in RAM."""

    RECORD = struct.Struct("<HId")

    def __init__(self, folder: Path, partitions: int = PAIR_PARTITIONS):
        self.folder = folder
        self.partitions = partitions
        self.files = [open(folder / f"pairs-{p}.bin", "wb") for p in range(partitions)]
        self.records = 0

    def add(self, number: int, pairs: dict[str, float]) -> None:
        """One article's pairs, each to the partition its key hashes to."""
        parts = self.partitions
        chunks: dict[int, list[bytes]] = defaultdict(list)
        pack = self.RECORD.pack
        for key, score in pairs.items():
            data = key.encode("utf-8")
            chunks[zlib.crc32(data) % parts].append(pack(len(data), number, score) + data)
        for p, records in chunks.items():
            self.files[p].write(b"".join(records))
        self.records += len(pairs)

    def close(self) -> None:
        for f in self.files:
            f.close()


def _read_partition(folder: Path, partition: int) -> dict[str, dict[int, float]]:
    """A spooled partition's pair lists (a function: the helper process reads them too)."""
    lists: dict[str, dict[int, float]] = defaultdict(dict)
    data = (folder / f"pairs-{partition}.bin").read_bytes()
    record = _PairSpool.RECORD
    pos, size = 0, record.size
    while pos < len(data):
        length, number, score = record.unpack_from(data, pos)
        pos += size
        key = data[pos:pos + length].decode("utf-8")
        pos += length
        lists[key][number] = score
    return lists


class _FieldScorer:
    """A term's score in one article's field from its count (pairs need it per article).

    Asks the archive's own weighting for the score function of (field, term) and feeds it
    what a posting would: the count times the field's index-time boost (Whoosh's posting
    weight) and the stored field length. So pair scores follow the archive's ranking (idf,
    field weights) exactly as the postings-based term scores do, with no formula of their own.
    The terms' document frequencies are read in one pass over each field's term list, not
    looked up term by term.
    """

    def __init__(self, archive: Archive | _OwnReader):
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


class _Tokens:
    """The analyzed tokens of a text field in position order (adjacent here = adjacent to a
    Whoosh phrase).

    The archive's one fast path (``analysis.FastText``) computes them when the chain is the
    archive's and drops stop words without leaving gaps; Whoosh's generator chain costs a few
    microseconds per token. The two are compared on the first articles of every build: any
    difference and the build uses the analyzer."""

    CHECKED = 200

    def __init__(self, analyzer: Any):
        self.analyzer = analyzer
        fast = analysis.FastText.for_analyzer(analyzer)
        self.fast = fast if fast is not None and fast.renumbers else None
        self.checked = 0

    def __call__(self, text: str) -> list[str]:
        if not text:
            return []
        if self.fast is None:
            return [t.text for t in self.analyzer(text)]
        tokens = self.fast.tokens(text)
        if self.checked < self.CHECKED:
            self.checked += 1
            if tokens != [t.text for t in self.analyzer(text)]:
                self.fast = None
                return [t.text for t in self.analyzer(text)]
        return tokens


def _article_pairs(scorer: _FieldScorer, tokenize: dict[str, _Tokens], docnum: int,
                   stored: dict[str, Any]) -> dict[str, float]:
    """Each adjacent pair's Whoosh phrase score in this article, summed over its fields."""
    pairs: dict[str, float] = {}
    for name in store.TEXT_FIELDS:
        tokens = tokenize[name](stored.get(name, ""))
        if len(tokens) < 2:
            continue
        term_scores = scorer.scores(docnum, name, Counter(tokens))
        for a, b in set(zip(tokens, tokens[1:])):
            key = f"{a} {b}"
            pairs[key] = pairs.get(key, 0.0) + term_scores[a] + term_scores[b]
    return pairs


class _Facets:
    """Facet values per article (for columns and filter posting lists), gathered in one pass."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, int]] = {f: {} for f in FACETS}   # key -> value id
        self.display: dict[str, list[str]] = {f: [] for f in FACETS}
        self.postings: dict[str, list[array]] = {f: [] for f in FACETS}
        self.columns: dict[str, list[list[int]]] = {f: [] for f in FACETS}

    def add(self, number: int, stored: dict[str, Any]) -> None:
        for name in FACETS:
            ids = []
            for display in store.split_list(stored.get(name)):
                key = display.strip().lower()
                vid = self.values[name].get(key)
                if vid is None:
                    vid = self.values[name][key] = len(self.display[name])
                    self.display[name].append(display)
                    self.postings[name].append(array("I"))
                if vid not in ids:
                    ids.append(vid)
                    self.postings[name][vid].append(number)
            self.columns[name].append(ids)

    def order(self, name: str) -> list[int]:
        """Value ids by falling count, then key: the order the filter controls list them."""
        keys = list(self.values[name])
        return sorted(range(len(keys)), key=lambda v: (-len(self.postings[name][v]), keys[v]))


def _article_record(stored: dict[str, Any]) -> dict[str, Any]:
    """What a shown result needs (fetched ten at a time, so every byte counts ten times):
    title, date, source, places (when any), page folder, body, captions (when any).

    The page path is ``page_path(record)``: its date folder and ``/index.html`` are not
    repeated, nor, for an ASCII headline, the slug made from it (``h`` is then only the id's
    suffix; ``u`` the whole folder name otherwise, where JavaScript's Unicode tables might
    slugify differently). Article ids are in the ``i/BLOCK`` files (the browser never needs
    them).
    """
    date = stored.get("date")
    title = stored.get("title", "")
    path = urls.article_path(stored["id"], title, date)
    folder = f"{date.year:04d}/{date.month:02d}/{date.day:02d}/" if date else "undated/"
    if not (path.startswith(folder) and path.endswith(PAGE_END)):
        raise ValueError(f"unexpected article path {path!r}")
    name = path[len(folder):-len(PAGE_END)]
    record = {
        "t": title,
        "d": date.date().isoformat() if date else None,
        "s": stored.get("source", ""),
        "pl": list(store.split_list(stored.get("place"))),
        "b": stored.get("body", ""), "c": stored.get("captions", ""),
    }
    slug = urls.title_slug(title) + "-"
    if title.isascii() and name.startswith(slug):
        record["h"] = name[len(slug):]
    else:
        record["u"] = name
    return {k: v for k, v in record.items() if v or k in ("t", "d", "b")}


PAGE_END = "/index.html"


def page_path(record: dict[str, Any]) -> str:
    """An article record's page path (engine.js pagePath does the same)."""
    folder = record["d"].replace("-", "/") if record.get("d") else "undated"
    name = record["u"] if "u" in record else f"{urls.title_slug(record['t'])}-{record['h']}"
    return f"{folder}/{name}{PAGE_END}"


def _build_articles(archive: Archive, numbering: _Numbering, out: OutputFolder, prefix: str,
                    spool: _PairSpool, facets: _Facets,
                    scorer: _FieldScorer) -> list[list[int]]:
    """One pass over the stored articles in number order: article files, pairs, facets, days."""
    reader = archive.searcher.reader()
    schema = archive.index.schema
    tokenize = {name: _Tokens(schema[name].analyzer) for name in store.TEXT_FIELDS}
    days: list[list[int]] = []
    ids: list[str] = []
    for number, docnum in enumerate(numbering.docnums):
        stored = reader.stored_fields(docnum)
        name = f"a/{number}"
        out.write(f"{prefix}/{name}.js", script(name, _article_record(stored)))
        ids.append(stored["id"])
        if len(ids) == COLUMN_BLOCK or number == len(numbering) - 1:
            iname = f"i/{number // COLUMN_BLOCK}"
            out.write(f"{prefix}/{iname}.js", script(iname, ids))
            ids = []
        spool.add(number, _article_pairs(scorer, tokenize, docnum, stored))
        facets.add(number, stored)
        date = stored.get("date") if number < numbering.dated else None
        if date is not None:
            day = date.year * 10000 + date.month * 100 + date.day
            if not days or days[-1][0] != day:
                days.append([day, number])
    return days


def _build_pairs(spool: _PairSpool, out: OutputFolder, prefix: str, shard_bytes: int,
                 head_size: int) -> tuple[int, int, int]:
    """Encode each partition's pair lists, then cut shards (a multiple of the partitions)."""
    every = range(spool.partitions)
    count, total = _encode_partitions(spool.folder, every, head_size)
    nshards = shard_count(total, shard_bytes, spool.partitions)
    files = _write_partitions(spool.folder, every, spool.partitions, nshards, out, prefix)
    return count, nshards, files


def _encode_partitions(folder: Path, ps: Iterable[int], head_size: int) -> tuple[int, int]:
    """``_encode_partition`` of each of ``ps``: (entries, shard bytes) summed."""
    count, total = 0, 0
    for p in ps:
        entries, size = _encode_partition(folder, p, head_size)
        count, total = count + entries, total + size
    return count, total


def _write_partitions(folder: Path, ps: Iterable[int], partitions: int, nshards: int,
                      out: OutputFolder, prefix: str) -> int:
    """``_write_partition`` of each of ``ps``: the files written."""
    return sum(_write_partition(folder, p, partitions, nshards, out, prefix) for p in ps)


def _encode_partition(folder: Path, p: int, head_size: int) -> tuple[int, int]:
    """One partition's entries, pickled beside the spool until the shard count is known
    (it depends on every partition's bytes); returns (entries, their shard bytes)."""
    entries = [make_entry(key, scores, head_size)
               for key, scores in _read_partition(folder, p).items()]
    with open(folder / f"entries-{p}.pickle", "wb") as f:
        pickle.dump(entries, f, protocol=pickle.HIGHEST_PROTOCOL)
    (folder / f"pairs-{p}.bin").unlink()
    return len(entries), sum(entry_bytes(e) for e in entries)


def _write_partition(folder: Path, p: int, partitions: int, nshards: int, out: OutputFolder,
                     prefix: str) -> int:
    """Write the shards partition ``p`` owns: a key's shard is its hash mod ``nshards``, a
    multiple of the partitions, so shard s holds keys of partition s mod partitions only."""
    with open(folder / f"entries-{p}.pickle", "rb") as f:
        entries = pickle.load(f)
    shards: dict[int, list[Entry]] = defaultdict(list)
    for entry in entries:
        shards[key_hash(entry.key) % nshards].append(entry)
    own = {s: shards.get(s, []) for s in range(p, nshards, partitions)}
    return _write_some_shards(out, prefix, "p", own)


def _write_some_shards(out: OutputFolder, prefix: str, namespace: str,
                       shards: dict[int, list[Entry]]) -> int:
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


def facet_file(facet: str, key: str, buckets: int) -> str:
    """The posting file of a facet value, found from its key alone (no listing needed)."""
    return f"f/{facet}/{key_hash(key) % buckets}"


def _write_facets(facets: _Facets, out: OutputFolder, prefix: str,
                  articles: int) -> tuple[dict[str, list[list[Any]]], dict[str, int], int]:
    """Filter posting files (hash buckets, every one written so a lookup never misses a
    file) and count columns (values renumbered in display order)."""
    listing: dict[str, list[list[Any]]] = {}
    buckets: dict[str, int] = {}
    files = 0
    for name in FACETS:
        order = facets.order(name)
        rank = {vid: i for i, vid in enumerate(order)}
        keys = list(facets.values[name])
        listing[name] = [[keys[v], facets.display[name][v], len(facets.postings[name][v])]
                         for v in order]
        buckets[name] = max(1, len(keys))
        by_file: dict[str, list[list[Any]]] = {
            f"f/{name}/{b}": [] for b in range(buckets[name])}
        for vid in order:
            numbers = list(facets.postings[name][vid])
            deltas = [n - p for n, p in zip(numbers, [-1] + numbers[:-1])]
            by_file[facet_file(name, keys[vid], buckets[name])].append(
                [keys[vid], len(numbers), b64(varints(deltas))])
        for fname, rows in by_file.items():
            out.write(f"{prefix}/{fname}.js", script(fname, rows))
            files += 1
        column = facets.columns[name]
        for block in range(math.ceil(articles / COLUMN_BLOCK)):
            values: list[int] = []
            for ids in column[block * COLUMN_BLOCK:(block + 1) * COLUMN_BLOCK]:
                values.append(len(ids))
                values.extend(sorted(rank[v] for v in ids))
            cname = f"c/{name}/{block}"
            out.write(f"{prefix}/{cname}.js", script(cname, b64(varints(values))))
            files += 1
    return listing, buckets, files


def _years(days: list[list[int]]) -> list[list[int]]:
    """[year, first article number] per year with dated articles, oldest first."""
    out: list[list[int]] = []
    for day, first in days:
        if not out or out[-1][0] != day // 10000:
            out.append([day // 10000, first])
    return out


def _write_days(days: list[list[int]], dated: int, out: OutputFolder, prefix: str) -> int:
    """One file per year: ``[mmdd, articles that day, ...]`` (the year's first number is in
    ``meta``), so a date filter fetches at most the two years its ends fall in."""
    by_year: dict[int, list[int]] = defaultdict(list)
    for i, (day, first) in enumerate(days):
        end = days[i + 1][1] if i + 1 < len(days) else dated
        by_year[day // 10000] += [day % 10000, end - first]
    for year, flat in by_year.items():
        out.write(f"{prefix}/d/{year}.js", script(f"d/{year}", flat))
    return len(by_year)


def _year_listing(days: list[list[int]], dated: int) -> list[list[Any]]:
    counts: Counter[int] = Counter()
    for i, (day, first) in enumerate(days):
        end = days[i + 1][1] if i + 1 < len(days) else dated
        counts[day // 10000] += end - first
    return [[str(y), str(y), c] for y, c in sorted(counts.items(), key=lambda yc: (-yc[1], yc[0]))]


def build_bundle(archive: Archive, out: OutputFolder, *, prefix: str = "search/bundle",
                 shard_bytes: int = 768, head_size: int = 128,
                 procs: int | None = None) -> BundleReport:
    """Write the search bundle for ``archive`` under ``prefix`` (plus the client scripts).

    Streams: article texts are read one at a time; term lists are kept as their compact
    encodings until shards are cut; pair lists are spooled to temporary partitions.

    ``shard_bytes`` is the target size of a shard file: a query fetches about that much per
    word (gzip makes it less), so small shards keep first queries small; at 100k articles
    768 bytes gives ~110,000 shard files, 4 KB a fifth as many (for hosts that limit file
    counts) at some 3-4 KB more per query. ``head_size`` postings of a list sit in its shard.

    With two processes (``procs``; by default when a second process pays, see
    ``processes.second_process_pays``), a forked helper builds the term lists while this
    process reads the articles, then both encode and write the pair partitions: the same
    files, byte for byte, in about half the wall time.
    """
    started = time.perf_counter()
    before = (out.written, len(out.produced), out.bytes_total)
    numbering = _Numbering(archive)
    facets = _Facets()
    scorer = _FieldScorer(archive)   # the weighting's scorers, shared by pairs and terms
    work = Path(tempfile.mkdtemp(prefix="archive-bundle-"))
    helper: _Helper | None = None
    try:
        if (procs or (2 if processes.second_process_pays() else 1)) > 1 and \
                hasattr(os, "fork"):
            helper = _Helper.start(archive, numbering, out.root, prefix, shard_bytes, head_size,
                                   work)
        spool = _PairSpool(work)
        days = _build_articles(archive, numbering, out, prefix, spool, facets, scorer)
        spool.close()
        if helper is None:
            pairs, pair_shards, _ = _build_pairs(spool, out, prefix, shard_bytes, head_size)
        else:
            pairs, pair_shards = helper.share_pairs(spool, out, prefix, shard_bytes, head_size)
    finally:
        if helper is not None:
            helper.stop()   # reaped already after success; killed after a failure
        shutil.rmtree(work, ignore_errors=True)
    if helper is None:
        terms, term_shards, _ = _build_terms(archive, numbering, out, prefix, shard_bytes,
                                             head_size, scorer)
    else:
        terms, term_shards = helper.terms, helper.term_shards
    listing, buckets, _ = _write_facets(facets, out, prefix, len(numbering))
    listing["year"] = _year_listing(days, numbering.dated)
    out.write(f"{prefix}/facets.js", script("facets", listing))
    _write_days(days, numbering.dated, out, prefix)
    # Everything a first query needs before its postings: a few hundred bytes at any size.
    meta = {
        "v": FORMAT_VERSION, "n": len(numbering), "dated": numbering.dated,
        "shards": {"t": term_shards, "p": pair_shards}, "block": COLUMN_BLOCK,
        "fb": buckets, "years": _years(days),
    }
    out.write(f"{prefix}/meta.js", script("meta", meta))
    for relative, data in asset_files().items():
        out.write(relative, data)
    return BundleReport(
        files=len(out.produced) - before[1], written=out.written - before[0],
        bytes=out.bytes_total - before[2], articles=len(numbering), terms=terms, pairs=pairs,
        term_shards=term_shards, pair_shards=pair_shards,
        seconds=round(time.perf_counter() - started, 3),
        # the helper's own peak (its RUSAGE_SELF, sent with its report): RUSAGE_CHILDREN
        # would also hold every earlier child of this process, e.g. the indexer's writers
        peak_rss_mb=max(peak_rss_mb(), helper.peak_rss_mb if helper else 0.0))


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --- two processes -------------------------------------------------------------------------------

class BundleProcessFailed(processes.ChildFailed):
    """The bundle's helper process failed or died; the bundle is incomplete."""


class _OwnReader:
    """The archive's searcher over the same segments, on file handles of this process's own.

    A forked child shares its parent's open files and so each file's read offset: Whoosh's
    plain-read storage (``mmap=False``) seeks, then reads, so two processes reading through
    one handle would read each other's bytes. The same segments opened afresh give the same
    postings, statistics and scores (deletions come with the segment objects)."""

    def __init__(self, archive: Archive):
        reader = archive.searcher.reader()
        # an empty index's one "leaf" is an EmptyReader, whose segment is None
        segments = [leaf.segment() for leaf, _ in reader.leaf_readers()
                    if leaf.segment() is not None]
        fresh = archive.index._reader(archive.index.storage, reader.schema, segments,
                                      reader.generation())
        self.index = archive.index
        self.searcher = Searcher(fresh, weighting=archive.searcher.weighting)


def _claims(folder: Path, stage: str, partitions: int) -> Iterator[int]:
    """The partitions this process takes: each is claimed by creating a marker file (O_EXCL,
    so exactly one process gets it) just before it is worked on, so whichever process is
    free takes the next one, and both finish at about the same time."""
    for p in range(partitions):
        try:
            os.close(os.open(folder / f"{stage}-{p}.claim",
                             os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        yield p


class _Helper:
    """The forked helper, seen from the parent: two pipes, orders down and replies up.

    The helper builds the term lists (which need no article pass) at once; when the parent
    has spooled the pairs, both encode the pair partitions, then, the shard count known
    from their summed sizes, both write the pair shards, each taking the next unclaimed
    partition. It reports the files it wrote so the parent's ``OutputFolder`` counts them.
    Any failure in the helper, or its death, raises ``BundleProcessFailed`` here."""

    def __init__(self, pid: int, orders: Any, replies: Any):
        self.pid, self.orders, self.replies = pid, orders, replies
        self.terms = self.term_shards = 0
        self.peak_rss_mb = 0.0

    @classmethod
    def start(cls, archive: Archive, numbering: _Numbering, root: Path, prefix: str,
              shard_bytes: int, head_size: int, work: Path) -> _Helper | None:
        """Fork the helper; None (build in one process) when the system refuses a fork."""
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            return None
        if pid:
            os.close(down_r)
            os.close(up_w)
            return cls(pid, os.fdopen(down_w, "wb"), os.fdopen(up_r, "rb"))
        code = 1  # pragma: no cover - the child, which never returns
        try:
            os.close(down_w)
            os.close(up_r)
            processes.die_with_parent()
            with os.fdopen(down_r, "rb") as orders, os.fdopen(up_w, "wb") as replies:
                try:
                    _helper_run(archive, numbering, root, prefix, shard_bytes, head_size, work,
                                orders, replies)
                except BaseException as exc:
                    _send(replies, ("error", f"{type(exc).__name__}: {exc}"))
            code = 0
        finally:
            os._exit(code)

    def share_pairs(self, spool: _PairSpool, out: OutputFolder, prefix: str, shard_bytes: int,
                    head_size: int) -> tuple[int, int]:
        """The pair phase, shared with the helper: (pair lists, pair shards)."""
        folder, partitions = spool.folder, spool.partitions
        self._order(("encode", partitions))
        count, total = _encode_partitions(folder, _claims(folder, "encode", partitions),
                                          head_size)
        _, its_count, its_total = self._reply("encoded")
        nshards = shard_count(total + its_total, shard_bytes, partitions)
        self._order(("write", nshards))
        _write_partitions(folder, _claims(folder, "write", partitions), partitions, nshards,
                          out, prefix)
        _, self.terms, self.term_shards, wrote, self.peak_rss_mb = self._reply("done")
        try:
            out.merge(wrote)
        except ValueError as exc:
            raise BundleProcessFailed(f"the search bundle's helper: {exc}") from None
        self._reap()
        return count + its_count, nshards

    def _order(self, message: tuple[Any, ...]) -> None:
        try:
            _send(self.orders, message)
        except OSError:   # the helper is gone: its reply says why
            self._reply("")

    def _reply(self, expected: str) -> tuple[Any, ...]:
        try:
            message = pickle.load(self.replies)
        except Exception:   # EOF (the helper died) or a torn message
            message = ("died",)
        if message[0] == expected:
            return message
        status = self._reap()
        if message[0] == "error":
            raise BundleProcessFailed(f"the search bundle's helper process failed: "
                                      f"{message[1]}")
        raise BundleProcessFailed(f"the search bundle's helper process died "
                                  f"(wait status {status})")

    def _reap(self) -> int:
        """Wait for the helper to exit (it does once it has replied or failed)."""
        if not self.pid:
            return 0
        pid, self.pid = self.pid, 0
        return os.waitpid(pid, 0)[1]

    def stop(self) -> None:
        """Close the pipes; a helper still running (only after a failure) is killed."""
        for stream in (self.orders, self.replies):
            try:
                stream.close()
            except OSError:
                pass
        if self.pid:
            pid, self.pid = self.pid, 0
            processes.kill_and_reap(pid)


def _send(stream: Any, message: tuple[Any, ...]) -> None:
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _helper_run(archive: Archive, numbering: _Numbering, root: Path, prefix: str,
                shard_bytes: int, head_size: int, work: Path, orders: Any, replies: Any) -> None:
    """The helper's side: terms, then its share of the pair partitions, then its report."""
    out = OutputFolder(root)
    terms, term_shards, _ = _build_terms(_OwnReader(archive), numbering, out, prefix,
                                         shard_bytes, head_size)
    _, partitions = pickle.load(orders)   # the parent has spooled every pair
    count, total = _encode_partitions(work, _claims(work, "encode", partitions), head_size)
    _send(replies, ("encoded", count, total))
    _, nshards = pickle.load(orders)
    _write_partitions(work, _claims(work, "write", partitions), partitions, nshards, out,
                      prefix)
    _send(replies, ("done", terms, term_shards, out.record(), peak_rss_mb()))


# --- the client ---------------------------------------------------------------------------------

_EXPORT = re.compile(r"^export\s+(?=(?:const|let|function|class)\b)", re.M)
_EXPORTED = re.compile(r"^export\s+(?:const|let|function|class)\s+([A-Za-z_$][\w$]*)", re.M)


def classic_analysis(source: str) -> str:
    """analysis.js (an ES module) as a classic script defining ``ArchiveAnalysis``.

    Chromium refuses module scripts from ``file://``, so the site loads classic scripts; the
    module stays the single source of truth and this wrapper is derived from it at build time.
    """
    names = _EXPORTED.findall(source)
    if "export default" in source or re.search(r"^\s*(?:import|export)\b(?!\s+(?:const|let|"
                                               r"function|class))", source, re.M):
        raise ValueError("analysis.js uses an export form the classic wrapper cannot convert")
    body = _EXPORT.sub("", source)
    exported = ", ".join(names)
    return (f"// Generated from analysis.js by archive/site/static_search.py: do not edit.\n"
            f"(function (root) {{\n\"use strict\";\n{body}\n"
            f"root.ArchiveAnalysis = {{ {exported} }};\n}})(typeof globalThis !== \"undefined\" "
            f"? globalThis : this);\n")


_COMMENT_LINE = re.compile(r"^[ \t]*//.*\n", re.M)
_DOC_COMMENT = re.compile(r"^[ \t]*/\*(?:[^*]|\*(?!/))*\*/[ \t]*\n", re.M)


def without_comments(source: str) -> str:
    """The client as served: the same code, less its whole-line comments, indentation and
    blank lines.

    Only lines that hold nothing but a comment (``// ...``, ``/** ... */``) go, and the
    leading blanks of lines outside a template literal; code, names and line breaks stay as
    written, so the served file is still readable, and a third of the bytes a visitor fetched
    before the first result were comments and indentation. The sources keep them (the first
    line, naming the file's role and its source, is kept too)."""
    head, _, rest = source.partition("\n")
    code = _DOC_COMMENT.sub("", _COMMENT_LINE.sub("", rest))
    lines, in_template = [], False
    for line in code.split("\n"):
        if not in_template:
            line = line.strip()
            if not line:
                continue
        lines.append(line)
        if line.count("`") % 2:
            in_template = not in_template
    return head + "\n" + "\n".join(lines) + "\n"


def asset_files() -> dict[str, bytes]:
    """Client files the site needs, by path relative to the site root: ``search.js`` (the
    classic-script form of analysis.js, then engine.js and ui.js, each as written less its
    whole-line comments) and ``counts.js``."""
    parts = [classic_analysis((ASSET_FOLDER / "analysis.js").read_text("utf-8"))]
    parts += [(ASSET_FOLDER / name).read_text("utf-8") for name in CLIENT_FILES]
    return {
        CLIENT_PREFIX + CLIENT_SCRIPT: "".join(map(without_comments, parts)).encode("utf-8"),
        CLIENT_PREFIX + COUNTS_SCRIPT: without_comments(
            (ASSET_FOLDER / COUNTS_SCRIPT).read_text("utf-8")).encode("utf-8"),
    }


def page_markup(root: str, prefix: str = "search/bundle") -> markupsafe.Markup:
    """The search page's form, results region and scripts (``root`` leads back to the site root).

    Without JavaScript the form still submits ``q`` to this page, and the noscript note says
    search needs scripts; with it, ui.js reads the URL and runs the search.
    """
    esc = markupsafe.escape
    scripts = f'<script src="{esc(root + CLIENT_PREFIX + CLIENT_SCRIPT)}" defer></script>\n'
    return markupsafe.Markup(f"""<div class="archive-search" id="archive-search"
     data-bundle="{esc(root + prefix + '/')}" data-root="{esc(root)}">
<form class="search-form" role="search" action="" method="get">
  <label for="search-q">Search the archive</label>
  <input id="search-q" name="q" type="search" autocomplete="off" spellcheck="false">
  <label for="search-sort">Sort by</label>
  <select id="search-sort" name="sort">
    <option value="relevance">Relevance</option>
    <option value="newest">Newest first</option>
    <option value="oldest">Oldest first</option>
  </select>
  <button type="submit">Search</button>
</form>
<noscript><p>Searching needs JavaScript; you can still browse by date, source, place and
topic.</p></noscript>
<p class="search-status" role="status" aria-live="polite"></p>
<details class="search-filters"><summary>Filters and exact counts</summary><div></div></details>
<ol class="search-results"></ol>
<nav class="search-pages" aria-label="Result pages"></nav>
</div>
{scripts}""")

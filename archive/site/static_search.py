"""The static site's own search: a bundle of small script files built from the archive's index.

Why not a general static-search engine: a news archive needs the CLI's query language and the
CLI's ranking, and the search must work when the site is opened from disk. So the archive
exports what its Whoosh index already knows, precomputed and split so a browser fetches little:

- Articles are **numbered in date order** (oldest first, undated last), so date filters and date
  sorts are number ranges and need no per-article dates in the browser.
- Every (term, article) pair carries the **score Whoosh's BM25F gives that one term** over
  title, body and captions, summed over the fields, **quantized to 8 bits** per posting list
  (linear against the list's maximum). An AND query's CLI score is the sum of its terms' scores,
  so summing these reproduces the CLI ranking.
- Posting lists live in **term-hashed shard files** of a few KB (no dictionary to download).
  A long list keeps only its top-scoring ``head`` postings in the shard; the rest sit in tail
  files, in tiers of falling score, fetched only when a safe bound says they could change the
  page being shown (or when exact counts are wanted).
- **Adjacent-word pairs** (over the analyzed tokens, stop words already removed, exactly as
  Whoosh's phrase positions are) have their own posting lists, so phrases need no article text.
  A pair's score is the Whoosh phrase score: the two terms' scores in the fields holding it.
- **One file per article** (metadata, page path and text), fetched only for shown results.
- **Facets**: one posting file per facet value (for ``source:``/``place:``/``topic:`` filters)
  and per-block columns of facet values (for the filter counts); years come from the day table.

Every file is a classic script calling ``__archiveBundle(name, data)``, so the bundle loads
through ``<script>`` elements, which (unlike ``fetch``) work from ``file://`` too.
"""

from __future__ import annotations

import base64
import heapq
import json
import math
import pickle
import re
import resource
import shutil
import struct
import tempfile
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import markupsafe
from whoosh.scoring import bm25

from archive import store
from archive.search import Archive
from archive.site import urls
from archive.site.files import OutputFolder

FORMAT_VERSION = 1
CALLBACK = "__archiveBundle"
FACETS = ("source", "place", "topic")
#: Articles per facet-column file (the filter counts read the blocks a result set touches).
COLUMN_BLOCK = 4096
#: Tail tier k holds head_size * TIER_GROWTH**k postings: few requests for a full list.
TIER_GROWTH = 4
#: Pair records are spread over this many temporary partitions while the build streams.
PAIR_PARTITIONS = 32
ASSET_FOLDER = Path(__file__).resolve().parents[2] / "templates" / "site" / "assets" / "search"
CLIENT_FILES = ("engine.js", "ui.js")
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

def fnv1a(text: str) -> int:
    """32-bit FNV-1a of the UTF-8 bytes: the browser finds a term's shard with no dictionary."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


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
        raw = reader.column_reader("date", translate=False)
        dated = reader.column_reader("dated", translate=True)
        keys = []
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


def _term_stream(reader: Any) -> Iterator[tuple[str, str]]:
    """(term, field) over the text fields, merged into one sorted stream."""
    def field_terms(name: str) -> Iterator[tuple[str, str]]:
        for term in reader.field_terms(name) if name in reader.schema else []:
            yield term, name
    return heapq.merge(*(field_terms(f) for f in store.TEXT_FIELDS))


def _term_scores(archive: Archive, numbering: _Numbering, term: str,
                 fields: list[str]) -> dict[int, float]:
    """Whoosh's own BM25F score of ``term`` per article, summed over the fields holding it."""
    searcher = archive.searcher
    reader = searcher.reader()
    scores: dict[int, float] = {}
    for name in fields:
        tb = term.encode("utf-8")
        scorer = searcher.weighting.scorer(searcher, name, tb)
        m = reader.postings(name, tb)
        number_of = numbering.number_of
        while m.is_active():
            number = number_of[m.id()]
            if number >= 0:
                scores[number] = scores.get(number, 0.0) + scorer.score(m)
            m.next()
    return scores


def _build_terms(archive: Archive, numbering: _Numbering, out: OutputFolder, prefix: str,
                 shard_bytes: int, head_size: int) -> tuple[int, int, int]:
    """Stream the index's terms; hold only each list's compact encoding until shards are cut."""
    reader = archive.searcher.reader()
    entries: list[tuple[int, Entry]] = []
    total = 0
    stream = _term_stream(reader)
    for term, group in _group_by_term(stream):
        scores = _term_scores(archive, numbering, term, group)
        if not scores:
            continue
        entry = make_entry(term, scores, head_size)
        entries.append((fnv1a(term), entry))
        total += entry_bytes(entry)
    nshards = shard_count(total, shard_bytes)
    shards: dict[int, list[Entry]] = defaultdict(list)
    for h, entry in entries:
        shards[h % nshards].append(entry)
    files = write_shards(out, prefix, "t", nshards, shards)
    return len(entries), nshards, files


def _group_by_term(stream: Iterator[tuple[str, str]]) -> Iterator[tuple[str, list[str]]]:
    current, fields = None, []
    for term, name in stream:
        if term != current:
            if current is not None:
                yield current, fields
            current, fields = term, []
        fields.append(name)
    if current is not None:
        yield current, fields


class _PairSpool:
    """Pair postings spooled to temporary partitions: the pair vocabulary never sits in RAM."""

    RECORD = struct.Struct("<HId")

    def __init__(self, folder: Path, partitions: int = PAIR_PARTITIONS):
        self.folder = folder
        self.partitions = partitions
        self.files = [open(folder / f"pairs-{p}.bin", "wb") for p in range(partitions)]
        self.records = 0

    def add(self, key: str, number: int, score: float) -> None:
        data = key.encode("utf-8")
        h = fnv1a(key)
        self.files[h % self.partitions].write(self.RECORD.pack(len(data), number, score) + data)
        self.records += 1

    def close(self) -> None:
        for f in self.files:
            f.close()

    def read(self, partition: int) -> dict[str, dict[int, float]]:
        lists: dict[str, dict[int, float]] = defaultdict(dict)
        data = (self.folder / f"pairs-{partition}.bin").read_bytes()
        pos, size = 0, self.RECORD.size
        while pos < len(data):
            length, number, score = self.RECORD.unpack_from(data, pos)
            pos += size
            key = data[pos:pos + length].decode("utf-8")
            pos += length
            lists[key][number] = score
        return lists


class _FieldScorer:
    """BM25F of a term in one article's field from its counts (pairs need it per article).

    Uses Whoosh's ``bm25`` with the index's own statistics: idf, average field length, the
    stored (quantized) field length, and the field boost folded into the weight, which is what
    the postings-based scores above use.
    """

    def __init__(self, archive: Archive):
        self.searcher = archive.searcher
        self.reader = archive.searcher.reader()
        weighting = archive.searcher.weighting
        self.B, self.K1 = getattr(weighting, "B", 0.75), getattr(weighting, "K1", 1.2)
        self.field_B = getattr(weighting, "_field_B", {})
        schema = archive.index.schema
        self.boost = {f: schema[f].format.field_boost for f in store.TEXT_FIELDS}
        self.avgfl = {f: self.searcher.avg_field_length(f) or 1 for f in store.TEXT_FIELDS}
        self.idf_cache: dict[str, dict[str, float]] = {f: {} for f in store.TEXT_FIELDS}

    def idf(self, name: str, term: str) -> float:
        cache = self.idf_cache[name]
        value = cache.get(term)
        if value is None:
            value = cache[term] = self.searcher.idf(name, term.encode("utf-8"))
        return value

    def scores(self, docnum: int, name: str, counts: Counter[str]) -> dict[str, float]:
        length = self.reader.doc_field_length(docnum, name)
        b = self.field_B.get(name, self.B)
        return {t: bm25(self.idf(name, t), c * self.boost[name], length, self.avgfl[name], b,
                        self.K1) for t, c in counts.items()}


def _field_tokens(analyzer: Any, text: str) -> list[str]:
    """The analyzed tokens in position order: adjacent here means adjacent to a Whoosh phrase."""
    return [t.text for t in analyzer(text)] if text else []


def _article_pairs(scorer: _FieldScorer, analyzer: Any, docnum: int,
                   stored: dict[str, Any]) -> dict[str, float]:
    """Each adjacent pair's Whoosh phrase score in this article, summed over its fields."""
    pairs: dict[str, float] = {}
    for name in store.TEXT_FIELDS:
        tokens = _field_tokens(analyzer, stored.get(name, ""))
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
            for display in store._split_list(stored.get(name)):
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
    date = stored.get("date")
    title = stored.get("title", "")
    return {
        "id": stored["id"], "t": title,
        "d": date.date().isoformat() if date else None,
        "ds": stored.get("date_source", "unknown"),
        "s": stored.get("source", ""),
        "pl": list(store._split_list(stored.get("place"))),
        "tp": list(store._split_list(stored.get("topic"))),
        "u": urls.article_path(stored["id"], title, date),
        "b": stored.get("body", ""), "c": stored.get("captions", ""),
    }


def _build_articles(archive: Archive, numbering: _Numbering, out: OutputFolder, prefix: str,
                    spool: _PairSpool, facets: _Facets) -> list[list[int]]:
    """One pass over the stored articles in number order: article files, pairs, facets, days."""
    reader = archive.searcher.reader()
    scorer = _FieldScorer(archive)
    analyzer = store.news_analyzer()
    days: list[list[int]] = []
    for number, docnum in enumerate(numbering.docnums):
        stored = reader.stored_fields(docnum)
        name = f"a/{number}"
        out.write(f"{prefix}/{name}.js", script(name, _article_record(stored)))
        for key, score in _article_pairs(scorer, analyzer, docnum, stored).items():
            spool.add(key, number, score)
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
    total, count = 0, 0
    for p in range(spool.partitions):
        entries = [make_entry(key, scores, head_size) for key, scores in spool.read(p).items()]
        count += len(entries)
        total += sum(entry_bytes(e) for e in entries)
        with open(spool.folder / f"entries-{p}.pickle", "wb") as f:
            pickle.dump(entries, f, protocol=pickle.HIGHEST_PROTOCOL)
        (spool.folder / f"pairs-{p}.bin").unlink()
    nshards = shard_count(total, shard_bytes, spool.partitions)
    files = 0
    for p in range(spool.partitions):
        with open(spool.folder / f"entries-{p}.pickle", "rb") as f:
            entries = pickle.load(f)
        shards: dict[int, list[Entry]] = defaultdict(list)
        for entry in entries:
            shards[fnv1a(entry.key) % nshards].append(entry)
        own = {s: shards.get(s, []) for s in range(p, nshards, spool.partitions)}
        files += _write_some_shards(out, prefix, "p", own)
    return count, nshards, files


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


def _write_facets(facets: _Facets, out: OutputFolder, prefix: str,
                  articles: int) -> tuple[dict[str, list[list[Any]]], int]:
    """Filter posting files and count columns; values renumbered in display order."""
    listing: dict[str, list[list[Any]]] = {}
    files = 0
    for name in FACETS:
        order = facets.order(name)
        rank = {vid: i for i, vid in enumerate(order)}
        keys = list(facets.values[name])
        listing[name] = [[keys[v], facets.display[name][v], len(facets.postings[name][v])]
                         for v in order]
        for i, vid in enumerate(order):
            numbers = list(facets.postings[name][vid])
            fname = f"f/{name}/{i}"
            deltas = [n - p for n, p in zip(numbers, [-1] + numbers[:-1])]
            out.write(f"{prefix}/{fname}.js", script(fname, b64(varints(deltas))))
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
    return listing, files


def _year_listing(days: list[list[int]], dated: int) -> list[list[Any]]:
    counts: Counter[int] = Counter()
    for i, (day, first) in enumerate(days):
        end = days[i + 1][1] if i + 1 < len(days) else dated
        counts[day // 10000] += end - first
    return [[str(y), str(y), c] for y, c in sorted(counts.items(), key=lambda yc: (-yc[1], yc[0]))]


def build_bundle(archive: Archive, out: OutputFolder, *, prefix: str = "search/bundle",
                 shard_bytes: int = 4096, head_size: int = 128) -> BundleReport:
    """Write the search bundle for ``archive`` under ``prefix`` (plus the client scripts).

    Streams: article texts are read one at a time; term lists are kept as their compact
    encodings until shards are cut; pair lists are spooled to temporary partitions.
    """
    started = time.perf_counter()
    before = (out.written, len(out.produced), out.bytes_total)
    numbering = _Numbering(archive)
    facets = _Facets()
    work = Path(tempfile.mkdtemp(prefix="archive-bundle-"))
    try:
        spool = _PairSpool(work)
        days = _build_articles(archive, numbering, out, prefix, spool, facets)
        spool.close()
        pairs, pair_shards, _ = _build_pairs(spool, out, prefix, shard_bytes, head_size)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    terms, term_shards, _ = _build_terms(archive, numbering, out, prefix, shard_bytes, head_size)
    listing, _ = _write_facets(facets, out, prefix, len(numbering))
    listing["year"] = _year_listing(days, numbering.dated)
    meta = {
        "v": FORMAT_VERSION, "n": len(numbering), "dated": numbering.dated,
        "shards": {"t": term_shards, "p": pair_shards}, "block": COLUMN_BLOCK,
        "days": days, "facets": listing,
    }
    out.write(f"{prefix}/meta.js", script("meta", meta))
    for relative, data in asset_files().items():
        out.write(relative, data)
    return BundleReport(
        files=len(out.produced) - before[1], written=out.written - before[0],
        bytes=out.bytes_total - before[2], articles=len(numbering), terms=terms, pairs=pairs,
        term_shards=term_shards, pair_shards=pair_shards,
        seconds=round(time.perf_counter() - started, 3), peak_rss_mb=peak_rss_mb())


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


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


def asset_files() -> dict[str, bytes]:
    """Client files the site needs, by path relative to the site root."""
    files = {CLIENT_PREFIX + "analysis-classic.js":
             classic_analysis((ASSET_FOLDER / "analysis.js").read_text("utf-8")).encode("utf-8")}
    for name in CLIENT_FILES:
        path = ASSET_FOLDER / name
        if path.is_file():
            files[CLIENT_PREFIX + name] = path.read_bytes()
    return files


def page_markup(root: str, prefix: str = "search/bundle") -> markupsafe.Markup:
    """The search page's form, results region and scripts (``root`` leads back to the site root).

    Without JavaScript the form still submits ``q`` to this page, and the noscript note says
    search needs scripts; with it, ui.js reads the URL and runs the search.
    """
    esc = markupsafe.escape
    scripts = "".join(f'<script src="{esc(root + CLIENT_PREFIX + name)}" defer></script>\n'
                      for name in ("analysis-classic.js", "engine.js", "ui.js"))
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
<div class="search-filters" aria-label="Filters"></div>
<p class="search-status" role="status" aria-live="polite"></p>
<ol class="search-results"></ol>
<nav class="search-pages" aria-label="Result pages"></nav>
</div>
{scripts}""")

"""The bundle's file format: what the build writes and what the browser (and the Python
reference reader in the tests) reads back.

Each encoding here has its mirror in ``client/engine.js``; the two change together, with
``FORMAT_VERSION``. Every file is a classic script calling ``__archiveBundle(name, data)``,
so the bundle loads through ``<script>`` elements, which (unlike ``fetch``) work from
``file://`` too.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from archive import store
from archive.site import urls

FORMAT_VERSION = 5
CALLBACK = "__archiveBundle"
#: Where the site keeps the bundle, relative to its root.
BUNDLE_PREFIX = "search/bundle"
FACETS = ("source", "place", "topic")
#: Articles per facet-column file (the filter counts read the blocks a result set touches).
COLUMN_BLOCK = 4096
#: Tail tier k holds head_size * TIER_GROWTH**k postings: few requests for a full list.
TIER_GROWTH = 4
#: A list of at least head_size * BLOCK_MIN_HEADS postings is also kept in number blocks of
#: head_size * BLOCK_HEADS postings each (see ``number_blocks``).
BLOCK_MIN_HEADS = 64
BLOCK_HEADS = 1
PAGE_END = "/index.html"


# --- small encodings shared with the browser (engine.js mirrors each) ---------------------------

def key_hash(text: str) -> int:
    """CRC-32 of the UTF-8 bytes: the browser finds a term's shard with no dictionary.

    (zlib's C CRC-32: the build hashes every pair occurrence.)"""
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


def number_deltas(numbers: list[int]) -> list[int]:
    """Ascending article numbers as gaps, the first stored + 1 (engine.js ``undelta``)."""
    return [n - p for n, p in zip(numbers, [-1] + numbers[:-1])]


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


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


# --- posting lists: head in the shard, tails in tiers --------------------------------------------

@dataclass
class FieldedEntry:
    """One segment's list of a term (or pair): per-field document frequencies in the
    segment (a pair: its first word's, then its second's), the posting count, the head's
    encoded postings and the tiers (count, per-field bound, data).

    A posting is its article number and, per text field, ``0`` when the field does not hold
    it, else the field's weight (a pair: both words' weights) and the field's length."""

    key: str
    dfs: list[int]
    count: int
    head: str
    tiers: list[tuple[int, list[list[int]], str]] = field(default_factory=list)
    #: a long list again, in number order: postings per block, the blocks' first numbers
    #: (the block index, its own file) and each block's encoded postings
    block_size: int = 0
    blocks: list[tuple[int, str]] = field(default_factory=list)

    def shard_row(self) -> list[Any]:
        row: list[Any] = [self.key, self.dfs, self.count, self.head]
        if self.tiers:
            row.append([[count, bound] for count, bound, _ in self.tiers])
        if self.blocks:
            row.append(self.block_size)
        return row

    def block_index(self) -> str:
        """The blocks' first numbers, delta varints as a list's (engine.js ``resolve``)."""
        return b64(varints(number_deltas([first for first, _ in self.blocks])))


Fielded = tuple[tuple[int, ...], ...]


def encode_fielded(postings: list[tuple[int, Fielded]]) -> str:
    """Postings sorted by number: delta varints, then each posting's fields as varints."""
    deltas = number_deltas([n for n, _ in postings])
    values: list[int] = []
    for _, fields in postings:
        for values_of_field in fields:
            values.extend(values_of_field or (0,))
    return b64(varints(deltas) + varints(values))


def decode_fielded(text: str, count: int, arity: int, nfields: int) \
        -> list[tuple[int, Fielded]]:
    """``encode_fielded``'s inverse (``arity``: weights per field, 1 for terms, 2 for pairs)."""
    data = base64.b64decode(text)
    deltas, pos = read_varints(data, count)
    out, last = [], -1
    for d in deltas:
        last += d
        fields = []
        for _ in range(nfields):
            (first,), pos = read_varints(data, 1, pos)
            if first == 0:
                fields.append(())
                continue
            rest, pos = read_varints(data, arity, pos)
            fields.append((first, *rest))
        out.append((last, tuple(fields)))
    return out


def field_bound(postings: list[tuple[int, Fielded]], nfields: int) -> list[list[float]]:
    """Per field, for each weight: its highest, and the highest weight-to-length ratio
    (rounded up), among ``postings``; empty when none holds the field. BM25's term part
    ``w (K1+1) / (w + K1 (1-B) + K1 B len / avg)`` grows with both, so scored with these
    (engine.js ``boundScore``) nothing in the list scores more, at any average length."""
    out: list[list[float]] = []
    for f in range(nfields):
        held = [fields[f] for _, fields in postings if fields[f]]
        if not held:
            out.append([])
            continue
        bound: list[float] = []
        for i in range(len(held[0]) - 1):
            ratio = max(v[i] / v[-1] if v[-1] else 1e9 for v in held)
            bound += [max(v[i] for v in held), rounded_up(ratio)]
        out.append(bound)
    return out


def rounded_up(value: float) -> float:
    """``value`` in six significant digits, never below it (a bound kept short in JSON)."""
    return float(f"{value * (1 + 2e-6):.6g}")


def make_fielded_entry(key: str, dfs: list[int], postings: dict[int, Fielded],
                       rank: Any, head_size: int, word_tf: Any = None) -> FieldedEntry:
    """Order by ``rank(fields, dfs)`` (falling; ties: lower number first), cut into head
    and tiers. With ``word_tf`` (a word's list) a tier's bound is its postings' highest
    ``word_tf(fields)`` (rounded up) after an empty list per field (engine.js ``boundScore``);
    without, each field's ``field_bound``."""
    nfields = len(next(iter(postings.values())))
    ranked = sorted(postings.items(), key=lambda nf: (-rank(nf[1], dfs), nf[0]))
    chunks, start, size = [], 0, head_size
    while start < len(ranked):
        chunks.append(sorted(ranked[start:start + size]))
        start += size
        size = head_size * TIER_GROWTH ** len(chunks)
    tiers = [(len(chunk), field_bound(chunk, nfields) if word_tf is None else
              [[] for _ in range(nfields)] + [rounded_up(max(word_tf(f) for _, f in chunk))],
              encode_fielded(chunk)) for chunk in chunks[1:]]
    entry = FieldedEntry(key, dfs, len(postings), encode_fielded(chunks[0]), tiers)
    if len(postings) >= head_size * BLOCK_MIN_HEADS:
        entry.block_size = head_size * BLOCK_HEADS
        entry.blocks = number_blocks(sorted(postings.items()), entry.block_size)
    return entry


def number_blocks(postings: list[tuple[int, Fielded]], size: int) -> list[tuple[int, str]]:
    """A long list cut in number order into blocks of ``size`` postings: (first number,
    encoded postings) each.

    Tiers are cut by score, so learning whether one given article is in a common word's list
    (an AND or NOT with a rarer word, whose few articles are the candidates) would mean
    reading the whole list; block ``j`` holds every posting from its first number up to the
    next block's, so the browser reads one block per candidate instead, where that is
    fewer postings than the list's next tier (engine.js ``resolve``)."""
    return [(postings[i][0], encode_fielded(postings[i:i + size]))
            for i in range(0, len(postings), size)]


def entry_bytes(entry: FieldedEntry) -> int:
    """An entry's share of its shard file (what the shard count is cut from)."""
    return len(entry.key.encode("utf-8")) + len(entry.head) + 24


def shard_count(total_bytes: int, shard_bytes: int, multiple: int = 1) -> int:
    n = max(1, math.ceil(total_bytes / max(1, shard_bytes)))
    return math.ceil(n / multiple) * multiple


def tail_name(namespace: str, shard: int, index: int, tier: int) -> str:
    return f"{namespace}/{shard}-{index}-{tier + 1}"


def block_name(namespace: str, shard: int, index: int, block: int | None = None) -> str:
    """A number block's file, or (``block`` None) the list's block index."""
    return f"{namespace}/{shard}-{index}-b" + ("" if block is None else str(block))


def facet_file(facet: str, key: str, buckets: int) -> str:
    """The posting file of a facet value, found from its key alone (no listing needed)."""
    return f"f/{facet}/{key_hash(key) % buckets}"


# --- article files --------------------------------------------------------------------------------

def article_record(stored: dict[str, Any]) -> dict[str, Any]:
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


def page_path(record: dict[str, Any]) -> str:
    """An article record's page path (engine.js pagePath does the same)."""
    folder = record["d"].replace("-", "/") if record.get("d") else "undated"
    name = record["u"] if "u" in record else f"{urls.title_slug(record['t'])}-{record['h']}"
    return f"{folder}/{name}{PAGE_END}"

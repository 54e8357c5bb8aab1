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

FORMAT_VERSION = 2
CALLBACK = "__archiveBundle"
#: Where the site keeps the bundle, relative to its root.
BUNDLE_PREFIX = "search/bundle"
FACETS = ("source", "place", "topic")
#: Articles per facet-column file (the filter counts read the blocks a result set touches).
COLUMN_BLOCK = 4096
#: Tail tier k holds head_size * TIER_GROWTH**k postings: few requests for a full list.
TIER_GROWTH = 4
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


def entry_bytes(entry: Entry) -> int:
    """An entry's share of its shard file (what the shard count is cut from)."""
    return len(entry.key.encode("utf-8")) + len(entry.head) + 24


def shard_count(total_bytes: int, shard_bytes: int, multiple: int = 1) -> int:
    n = max(1, math.ceil(total_bytes / max(1, shard_bytes)))
    return math.ceil(n / multiple) * multiple


def tail_name(namespace: str, shard: int, index: int, tier: int) -> str:
    return f"{namespace}/{shard}-{index}-{tier + 1}"


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

"""The adjacent-word pair lists, so phrases need no article text in the browser.

Pairs are taken over the analyzed tokens (stop words already removed, exactly as Whoosh's
phrase positions are); a pair's score is the Whoosh phrase score: the two terms' scores in
the fields holding it. The pair vocabulary is far larger than the term vocabulary, so pairs
are spooled to temporary partitions as the article pass finds them, then each partition is
encoded and written on its own: a process (this one or the helper) takes whole partitions.
"""

from __future__ import annotations

import pickle
import struct
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from archive import analysis, store
from archive.site.files import OutputFolder
from archive.site.search.format import Entry, entry_bytes, key_hash, make_entry, shard_count
from archive.site.search.postings import FieldScorer, write_shards

#: Pair records are spread over this many temporary partitions while the build streams.
PAIR_PARTITIONS = 32


class Tokens:
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


def article_pairs(scorer: FieldScorer, tokenize: dict[str, Tokens], docnum: int,
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


class PairSpool:
    """Pair postings spooled to temporary partitions: the pair vocabulary never sits in RAM."""

    def __init__(self, folder: Path, partitions: int = PAIR_PARTITIONS):
        self.folder = folder
        self.partitions = partitions
        self.files = [open(folder / f"pairs-{p}.bin", "wb") for p in range(partitions)]
        self.records = 0

    def add(self, number: int, pairs: dict[str, float]) -> None:
        """One article's pairs, each to the partition its key hashes to."""
        for p, records in pair_records(number, pairs, self.partitions).items():
            self.files[p].write(records)
        self.records += len(pairs)

    def close(self) -> None:
        for f in self.files:
            f.close()


#: a spooled pair posting: key length, article number, score; the key's bytes follow
RECORD = struct.Struct("<HId")


def pair_records(number: int, pairs: dict[str, float], partitions: int) -> dict[int, bytes]:
    """One article's pairs as spool records, by the partition each key hashes to."""
    chunks: dict[int, list[bytes]] = defaultdict(list)
    pack = RECORD.pack
    for key, score in pairs.items():
        data = key.encode("utf-8")
        chunks[zlib.crc32(data) % partitions].append(pack(len(data), number, score) + data)
    return {p: b"".join(records) for p, records in chunks.items()}


def read_records(data: bytes) -> dict[str, dict[int, float]]:
    """Spool records' pair lists (articles in the order the records come)."""
    lists: dict[str, dict[int, float]] = defaultdict(dict)
    pos, size = 0, RECORD.size
    while pos < len(data):
        length, number, score = RECORD.unpack_from(data, pos)
        pos += size
        key = data[pos:pos + length].decode("utf-8")
        pos += length
        lists[key][number] = score
    return lists


def partition_entries(data: bytes, head_size: int) -> list[Entry]:
    """A partition's spooled records as encoded pair lists."""
    return [make_entry(key, scores, head_size) for key, scores in read_records(data).items()]


def partition_shards(entries: list[Entry], p: int, partitions: int,
                     nshards: int) -> dict[int, list[Entry]]:
    """The shards partition ``p`` owns: a key's shard is its hash mod ``nshards``, a multiple
    of the partitions, so shard s holds keys of partition s mod partitions only."""
    shards: dict[int, list[Entry]] = defaultdict(list)
    for entry in entries:
        shards[key_hash(entry.key) % nshards].append(entry)
    return {s: shards.get(s, []) for s in range(p, nshards, partitions)}


def build_pairs(spool: PairSpool, out: OutputFolder, prefix: str, shard_bytes: int,
                head_size: int) -> tuple[int, int, int]:
    """Encode each partition's pair lists, then cut shards (a multiple of the partitions):
    (pair lists, pair shards, files written), all in this process."""
    every = range(spool.partitions)
    count, total = encode_partitions(spool.folder, every, head_size)
    nshards = shard_count(total, shard_bytes, spool.partitions)
    files = write_partitions(spool.folder, every, spool.partitions, nshards, out, prefix)
    return count, nshards, files


def encode_partitions(folder: Path, ps: Iterable[int], head_size: int) -> tuple[int, int]:
    """``encode_partition`` of each of ``ps``: (entries, shard bytes) summed."""
    count, total = 0, 0
    for p in ps:
        entries, size = encode_partition(folder, p, head_size)
        count, total = count + entries, total + size
    return count, total


def write_partitions(folder: Path, ps: Iterable[int], partitions: int, nshards: int,
                     out: OutputFolder, prefix: str) -> int:
    """``write_partition`` of each of ``ps``: the files written."""
    return sum(write_partition(folder, p, partitions, nshards, out, prefix) for p in ps)


def encode_partition(folder: Path, p: int, head_size: int) -> tuple[int, int]:
    """One partition's entries, pickled beside the spool until the shard count is known
    (it depends on every partition's bytes); returns (entries, their shard bytes)."""
    entries = partition_entries((folder / f"pairs-{p}.bin").read_bytes(), head_size)
    with open(folder / f"entries-{p}.pickle", "wb") as f:
        pickle.dump(entries, f, protocol=pickle.HIGHEST_PROTOCOL)
    (folder / f"pairs-{p}.bin").unlink()
    return len(entries), sum(entry_bytes(e) for e in entries)


def write_partition(folder: Path, p: int, partitions: int, nshards: int, out: OutputFolder,
                    prefix: str) -> int:
    """Write the shards partition ``p`` owns (``partition_shards``)."""
    with open(folder / f"entries-{p}.pickle", "rb") as f:
        entries = pickle.load(f)
    return write_shards(out, prefix, "p", partition_shards(entries, p, partitions, nshards))

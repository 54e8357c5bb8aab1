"""MinHash signatures and LSH bands, computing what datasketch computes without importing it.

datasketch is slow to import and its pure-Python LSH holds a set for every band key; the
duplicate finder (``archive.enrich.duplicates``) needs only one hash scheme and in-memory
bands, so they are written here on numpy. The settings are pinned (seed, scheme, hash
function, the banding datasketch's optimiser picks) so signatures saved with an index stay
comparable; ``tests/test_indexer_speed.py`` holds the values, the (bands, rows) and the
candidates to datasketch's own.
"""

from __future__ import annotations

import zlib

import numpy as np

#: datasketch's MinHash settings these signatures reproduce (MinHash(num_perm, seed=1,
#: scheme="affine32", hashfunc=crc32)): pinned so saved signatures stay comparable.
SCHEME = "affine32"
SEED = 1
#: a slot's value before any shingle is hashed into it
MAX32 = 0xFFFFFFFF
#: datasketch's _FMIX_CONSTANTS[32]: the MurmurHash3 finalizer that pre-mixes each hash
_FMIX32 = (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35),
           np.uint32(16))
#: MinHashLSH's (bands, rows) for (LSH threshold, num_perm), as datasketch's _optimal_param
#: (equal weights) computes them; other settings ask datasketch (tests compare the two).
LSH_PARAMS = {(0.65, 128): (16, 8)}


class Signature:
    """A MinHash signature: what DuplicateFinder.add takes (a datasketch MinHash made with
    the same settings is accepted too)."""

    __slots__ = ("hashvalues", "seed", "scheme")

    def __init__(self, hashvalues: np.ndarray):
        self.hashvalues = hashvalues
        self.seed = SEED
        self.scheme = SCHEME

    def __len__(self) -> int:
        return len(self.hashvalues)


def signature(grams: set[str], num_perm: int) -> Signature:
    """MinHash of a set of shingles: the values datasketch's ``MinHash(num_perm, seed=1,
    scheme="affine32", hashfunc=crc32).update_batch`` gives, computed in one numpy pass."""
    a, b = _permutations(num_perm)
    values = np.full(num_perm, MAX32, dtype=np.uint32)
    if grams:
        hv = np.fromiter((zlib.crc32(g.encode("utf-8")) for g in grams), dtype=np.uint32,
                         count=len(grams))
        s1, m1, s2, m2, s3 = _FMIX32
        hv = hv ^ (hv >> s1)
        hv = hv * m1
        hv = hv ^ (hv >> s2)
        hv = hv * m2
        hv = hv ^ (hv >> s3)
        values = np.minimum(values, (hv.reshape(-1, 1) * a + b).min(axis=0))
    return Signature(values)


def hash32(data: bytes) -> int:
    """CRC-32 of a shingle (the hash ``signature`` uses): stable across runs and machines,
    and far faster than SHA-1.

    Collisions among the few hundred shingles of one article are rare enough to be noise next
    to MinHash's own estimation error.
    """
    return zlib.crc32(data)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated Jaccard similarity: the share of MinHash slots two signatures agree on."""
    return float(np.count_nonzero(a == b)) / len(a)


_PERMUTATIONS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _permutations(num_perm: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutations for seed 1: h -> a * h + b mod 2^32, a odd."""
    if num_perm not in _PERMUTATIONS:
        gen = np.random.RandomState(SEED)
        a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
        _PERMUTATIONS[num_perm] = (a, b)
    return _PERMUTATIONS[num_perm]


def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) for an LSH threshold, as datasketch's MinHashLSH chooses them."""
    params = LSH_PARAMS.get((round(threshold, 6), num_perm))
    if params is None:  # datasketch's optimiser (imports scipy: slow, so the table above)
        from datasketch.lsh import _optimal_param
        params = _optimal_param(threshold, num_perm, 0.5, 0.5)
    return params


class Bands:
    """MinHash LSH: the candidates of a signature are the signatures equal to it in at least
    one of ``bands`` bands of ``rows`` values (datasketch's MinHashLSH, in-memory storage).

    A band key held by one article maps to its id, by several to a set of ids: most keys
    are held once, and a set for each would multiply the tables' memory.
    """

    def __init__(self, bands: int, rows: int):
        self.ranges = [(i * rows, (i + 1) * rows) for i in range(bands)]
        self.tables: list[dict[bytes, str | set[str]]] = [{} for _ in range(bands)]

    def _keys(self, hashes: np.ndarray) -> list[bytes]:
        values = hashes.astype(np.uint32)
        return [values[start:end].tobytes() for start, end in self.ranges]

    @staticmethod
    def _put(table: dict[bytes, str | set[str]], band: bytes, key: str) -> None:
        found = table.get(band)
        if found is None:
            table[band] = key
        elif isinstance(found, str):
            if found != key:
                table[band] = {found, key}
        else:
            found.add(key)

    def insert(self, key: str, hashes: np.ndarray) -> None:
        for table, band in zip(self.tables, self._keys(hashes)):
            self._put(table, band, key)

    def insert_many(self, keys: list[str], rows: np.ndarray) -> None:
        """``insert`` of each row, done by numpy and dict builds where it can (a load).

        Into an empty table a band's keys go in with one ``dict.update`` and only the rows
        whose band value is shared (found by ``np.unique``) are grouped in Python: key by
        key, loading a large archive's signatures was the slow part of opening the finder.
        """
        values = rows.astype(np.uint32)
        for table, (start, end) in zip(self.tables, self.ranges):
            band = np.ascontiguousarray(values[:, start:end])
            packed = band.view(np.dtype((np.void, band.shape[1] * band.itemsize))).ravel()
            column = packed.tolist()
            if table:
                for key, value in zip(keys, column):
                    self._put(table, value, key)
                continue
            table.update(zip(column, keys))
            if len(table) == len(column):
                continue
            _, inverse, counts = np.unique(packed, return_inverse=True, return_counts=True)
            shared: dict[bytes, set[str]] = {}
            for n in np.flatnonzero(counts[inverse.ravel()] > 1).tolist():
                shared.setdefault(column[n], set()).add(keys[n])
            table.update(shared)

    def remove(self, key: str, hashes: np.ndarray) -> None:
        for table, band in zip(self.tables, self._keys(hashes)):
            found = table[band]
            if isinstance(found, str):
                del table[band]
                continue
            found.discard(key)
            if len(found) == 1:
                table[band] = next(iter(found))

    def query(self, hashes: np.ndarray) -> set[str]:
        out: set[str] = set()
        for table, band in zip(self.tables, self._keys(hashes)):
            found = table.get(band)
            if found is None:
                continue
            if isinstance(found, str):
                out.add(found)
            else:
                out |= found
        return out

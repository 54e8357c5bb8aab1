"""MinHash signatures and LSH bands, computing what datasketch computes without importing it.

datasketch is slow to import and its pure-Python LSH holds a set for every band key; the
duplicate finder (``archive.enrich.duplicates``) needs only one hash scheme and in-memory
bands, so they are written here on numpy. The settings are pinned (seed, scheme, hash
function, the banding datasketch's optimiser picks) so signatures saved with an index stay
comparable; ``tests/test_indexer_speed.py`` holds the values, the (bands, rows) and the
candidates to datasketch's own.
"""

from __future__ import annotations

import bisect
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


def is_empty(values: np.ndarray) -> np.ndarray | bool:
    """Whether a signature (or each row of a matrix of them) is that of a text with no
    words: every slot still at its initial value."""
    return (np.asarray(values) == MAX32).all(axis=-1)


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


class SignatureRows:
    """Signatures as rows of one uint32 matrix, kept in blocks so growing never copies what
    is held (a whole archive's signatures in one array would be copied at each doubling).

    A row is addressed by its number, given in order of arrival; a matrix handed over whole
    (a load) becomes one block as it is, without a copy.
    """

    BLOCK = 1 << 14

    def __init__(self, width: int):
        self.width = width
        self._blocks: list[np.ndarray] = []
        self._starts: list[int] = []
        self._count = 0
        self._room = 0  # rows still free in the last block

    def __len__(self) -> int:
        return self._count

    def append(self, values: np.ndarray) -> int:
        """Store one signature; returns its row number."""
        if not self._room:
            self._blocks.append(np.empty((self.BLOCK, self.width), dtype=np.uint32))
            self._starts.append(self._count)
            self._room = self.BLOCK
        self._blocks[-1][self.BLOCK - self._room] = values
        self._room -= 1
        self._count += 1
        return self._count - 1

    def adopt(self, matrix: np.ndarray) -> range:
        """Take a whole uint32 matrix as the next rows (no copy); returns their numbers."""
        if len(matrix):
            if self._room:  # the rows of a partly filled block must stay contiguous
                self._blocks[-1] = self._blocks[-1][:self.BLOCK - self._room]
                self._room = 0
            self._blocks.append(matrix)
            self._starts.append(self._count)
            self._count += len(matrix)
        return range(self._count - len(matrix), self._count)

    def __getitem__(self, row: int) -> np.ndarray:
        block = bisect.bisect_right(self._starts, row) - 1
        return self._blocks[block][row - self._starts[block]]

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The signatures of several rows, as a (len(rows), width) matrix."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(self._blocks) == 1:
            return self._blocks[0][rows]
        out = np.empty((len(rows), self.width), dtype=np.uint32)
        which = np.searchsorted(np.array(self._starts), rows, side="right") - 1
        for block in np.unique(which).tolist():
            chosen = which == block
            out[chosen] = self._blocks[block][rows[chosen] - self._starts[block]]
        return out


class Bands:
    """MinHash LSH: the candidates of a signature are the rows equal to it in at least one of
    ``bands`` bands of ``rows`` values (datasketch's MinHashLSH, in-memory storage).

    Held as numpy arrays, not dicts (a dict entry and a bytes key for each band of each
    article cost kilobytes an article): each band of each signature is reduced to a 64-bit
    key (a hash of its values, with the band's number in its low part), and the keys are kept
    sorted beside their row numbers, found by binary search. New keys wait in a small dict
    that is merged into the sorted arrays when it fills. A key match is only a candidate:
    the band's values are compared with the row's own (``signatures``), so a hash collision
    never adds one. Removed rows are remembered and left out of answers (they are rare: an
    edited story).
    """

    PENDING = 4096

    def __init__(self, bands: int, rows: int, signatures: SignatureRows):
        self.bands, self.rows = bands, rows
        self.signatures = signatures
        self._keys = np.zeros(0, dtype=np.uint64)
        self._rows = np.zeros(0, dtype=np.uint32)
        self._pending: dict[int, list[int]] = {}  # key -> rows, for the last inserts
        self._pending_count = 0
        self._removed: set[int] = set()
        self._band_numbers = np.arange(bands, dtype=np.uint64)
        self._multipliers = np.random.RandomState(SEED).randint(
            0, 1 << 62, rows, dtype=np.uint64) * np.uint64(2) + np.uint64(1)

    def band_keys(self, values: np.ndarray) -> np.ndarray:
        """(n, bands) keys of n signatures: a multiply-and-add hash of each band's values
        through MurmurHash3's 64-bit finaliser, its low part replaced by the band's number."""
        words = np.asarray(values).astype(np.uint64)[:, :self.bands * self.rows]
        keys = (words.reshape(len(words), self.bands, self.rows) * self._multipliers).sum(
            axis=2, dtype=np.uint64)
        keys ^= keys >> np.uint64(33)
        keys *= _FMIX64
        keys ^= keys >> np.uint64(33)
        return keys - keys % np.uint64(self.bands) + self._band_numbers

    def insert(self, row: int, keys: np.ndarray | None = None) -> None:
        """Add a stored signature's bands (``keys``: its ``band_keys``, if already known)."""
        if self._pending_count >= self.PENDING:
            self._merge()
        if keys is None:
            keys = self.band_keys(self.signatures[row][None, :])[0]
        for key in keys.tolist():
            self._pending.setdefault(key, []).append(row)
        self._pending_count += 1

    def insert_many(self, rows: np.ndarray) -> None:
        """``insert`` of each row, sorted in one pass (a load)."""
        rows = np.asarray(rows, dtype=np.uint32)
        if not len(rows):
            return
        self._merge()
        keys = np.concatenate([self.band_keys(self.signatures.take(rows[i:i + _CHUNK]))
                               .ravel() for i in range(0, len(rows), _CHUNK)])
        self._add_sorted(keys, np.repeat(rows, self.bands))

    def remove(self, row: int) -> None:
        self._removed.add(row)

    def query(self, hashes: np.ndarray, keys: np.ndarray | None = None) -> set[int]:
        """The live rows sharing at least one band with ``hashes`` (``keys``: its
        ``band_keys``, if already known)."""
        if keys is None:
            keys = self.band_keys(np.asarray(hashes)[None, :])[0]
        rows: list[int] = []
        bands: list[int] = []
        if len(self._keys):
            low = np.searchsorted(self._keys, keys, side="left")
            high = np.searchsorted(self._keys, keys, side="right")
            for band in np.flatnonzero(high > low).tolist():
                found = self._rows[low[band]:high[band]].tolist()
                rows.extend(found)
                bands.extend([band] * len(found))
        for band, key in enumerate(keys.tolist()):
            found = self._pending.get(key, ())
            rows.extend(found)
            bands.extend([band] * len(found))
        if not rows:
            return set()
        own = np.asarray(hashes, dtype=np.uint32)[:self.bands * self.rows] \
            .reshape(self.bands, self.rows)
        theirs = self.signatures.take(np.array(rows))[:, :self.bands * self.rows] \
            .reshape(len(rows), self.bands, self.rows)
        same = (theirs[np.arange(len(rows)), bands] == own[bands]).all(axis=1)
        return {row for row, keep in zip(rows, same.tolist()) if keep} - self._removed

    def _merge(self) -> None:
        if self._pending:
            keys = np.array([k for k, rows in self._pending.items() for _ in rows],
                            dtype=np.uint64)
            rows = np.array([r for found in self._pending.values() for r in found],
                            dtype=np.uint32)
            self._add_sorted(keys, rows)
            self._pending.clear()
        self._pending_count = 0

    def _add_sorted(self, keys: np.ndarray, rows: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        keys, rows = keys[order], rows[order]
        if not len(self._keys):
            self._keys, self._rows = keys, rows
            return
        at = np.searchsorted(self._keys, keys, side="right")
        self._keys = np.insert(self._keys, at, keys)
        self._rows = np.insert(self._rows, at, rows)


#: rows whose band keys are computed at once in a bulk insert
_CHUNK = 1 << 16
#: MurmurHash3's 64-bit finaliser constant, for the band keys
_FMIX64 = np.uint64(0xFF51AFD7ED558CCD)

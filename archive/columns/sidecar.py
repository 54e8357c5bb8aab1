"""One segment's columnar sidecar: its postings and per-document columns as numpy arrays.
One idea: what never changes in a segment, laid out once in the shape numpy reads.

A Whoosh segment never changes once written, so what a query needs from it can be laid out
once, beside it, in the shape numpy works on: per field, the sorted term list and, for each
term, its documents and weights, and in a field with positions each posting's positions
(what a phrase checks, so it reads nothing from Whoosh); per scored field, each document's
length byte (decoded the way Whoosh's scorer decodes it, so scores stay exact); and the
columns a ranking or a wire-copy collapse reads (date, whether dated, cluster). Every
array is a ``.npy`` file opened with ``mmap_mode="r"``: opening a sidecar reads no
postings, and the page cache shares them between processes.

Layout: ``<index>/columns/<segment id>/``, written into a temporary folder and renamed into
place whole, with ``meta.json`` naming the segment and its document count (a sidecar whose
meta does not match its segment is stale and not used).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import threading
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from archive import store

#: held while a .npy file is opened (see ``Sidecar._load``)
_LOADING = threading.Lock()
#: the descriptors asked for when the hard limit is unlimited
DESCRIPTORS_WANTED = 1 << 16
COLUMNS_DIR = "columns"
#: bumped whenever the layout changes: a sidecar of another version is rebuilt
#: (2: positions)
VERSION = 2
#: the fields whose postings a sidecar holds; queries on other fields fall back to Whoosh
FIELDS = ("title", "body", "captions", "source", "place", "topic", "author", "year",
          "language")
META = "meta.json"


class _Words:
    """A sorted term list stored as one byte blob and end offsets, read as a sequence of
    bytes (so ``bisect`` finds a term without loading the list into Python objects)."""

    #: words whose number is remembered (a query looks a word up once per use of it)
    REMEMBER = 4096

    def __init__(self, blob: np.ndarray, ends: np.ndarray):
        self.blob, self.ends = blob, ends
        self._found: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> bytes:
        start = int(self.ends[i - 1]) if i else 0
        return self.blob[start:int(self.ends[i])].tobytes()

    def find(self, word: bytes) -> int:
        """The term's number, or -1 when the segment does not hold it."""
        found = self._found.get(word)
        if found is None:
            i = bisect_left(self, word)
            found = i if i < len(self) and self[i] == word else -1
            if len(self._found) >= self.REMEMBER:
                self._found.clear()
            self._found[word] = found
        return found


@functools.cache
def allow_descriptors() -> int | None:
    """Raise this process's soft limit on open files to its hard limit, once; the new soft
    limit (None where there is no such limit).

    Every mapped array holds a file descriptor (numpy's memmap keeps its ``mmap.mmap``, which
    keeps a duplicate of the file's), and a large archive's searches map thousands of arrays:
    a search that runs out of descriptors falls back to Whoosh for good, several times slower,
    with nothing said. Systems commonly set a low soft limit under a far higher hard one,
    which any process may raise itself to."""
    try:
        import resource  # noqa: PLC0415 - POSIX only
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    for wanted in (hard, DESCRIPTORS_WANTED):
        if wanted == resource.RLIM_INFINITY or wanted <= soft:
            continue
        try:  # macOS refuses more than its OPEN_MAX under an unlimited hard limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            return wanted
        except (ValueError, OSError):
            continue
    return soft


@dataclass
class Positions:
    """A field's positions in one segment: posting ``j`` (of ``FieldColumns.docs``) holds
    ``counts[j]`` of them; term ``i``'s come one posting after another from
    ``positions[starts[i]:]``, each posting's ascending. Plain arrays, each in the
    narrowest unsigned type that holds it: no gaps or variable-length codes, so a phrase
    gathers any postings' positions with one index array."""

    counts: np.ndarray
    starts: np.ndarray
    positions: np.ndarray


@dataclass
class FieldColumns:
    """One field's postings in one segment: term ``i``'s documents are
    ``docs[starts[i]:starts[i + 1]]`` (segment document numbers, ascending), its weights
    (term frequency times the field boost, as Whoosh stores them) at the same places."""

    words: _Words
    starts: np.ndarray
    docs: np.ndarray
    weights: np.ndarray
    lengths: np.ndarray | None  # length bytes per document; None for unscored fields
    positions: Positions | None = None  # None for a field without positions

    def postings(self, word: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        i = self.words.find(word)
        if i < 0:
            return None
        start, end = int(self.starts[i]), int(self.starts[i + 1])
        return self.docs[start:end], self.weights[start:end]

    def positions_in(self, word: bytes, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The word's positions in each of ``wanted`` (segment document numbers, ascending,
        each holding the word): how many in each, and all of them, document after
        document, as int64 arrays."""
        i = self.words.find(word)
        if i < 0 or not len(wanted) or self.positions is None:
            return np.zeros(len(wanted), dtype=np.int64), np.zeros(0, dtype=np.int64)
        start, end = int(self.starts[i]), int(self.starts[i + 1])
        at = np.searchsorted(self.docs[start:end], wanted)
        counts = self.positions.counts[start:start + int(at[-1]) + 1].astype(np.int64)
        ends = np.cumsum(counts)  # within the term's positions, where each posting's end
        took = counts[at]
        first = int(self.positions.starts[i]) + ends[at] - took
        # each wanted posting's run of positions, run after run: one index array
        runs = np.cumsum(took)
        index = np.repeat(first - (runs - took), took) + np.arange(int(runs[-1]) if
                                                                   len(runs) else 0)
        return took, self.positions.positions[index].astype(np.int64)


class Sidecar:
    """One segment's sidecar, opened mapped (``Sidecar.open``)."""

    def __init__(self, folder: Path, meta: dict[str, Any]):
        self.folder = folder
        self.segment_id: str = meta["segment"]
        self.doc_count: int = meta["doc_count"]
        self.fields: tuple[str, ...] = tuple(meta["fields"])
        self.positional: frozenset[str] = frozenset(meta.get("positions", ()))
        self._fields: dict[str, FieldColumns] = {}

    @classmethod
    def open(cls, folder: Path, segment_id: str, doc_count: int) -> Sidecar | None:
        """The sidecar in ``folder`` if it is whole and matches the segment, else None."""
        allow_descriptors()
        meta = read_meta(folder)
        if meta is None or meta.get("version") != VERSION or \
                meta.get("segment") != segment_id or meta.get("doc_count") != doc_count:
            return None
        return cls(folder, meta)

    def _load(self, name: str) -> np.ndarray:
        # a plain array over the mapped file: numpy's memmap subclass costs a Python-level
        # hook on every slice, and a term lookup slices the word list a score of times.
        # One thread at a time: numpy reads a .npy header with ast.literal_eval, and before
        # 3.11.8 CPython's AST constructor raised a spurious SystemError ("recursion depth
        # mismatch", python/cpython#106905) when threads parsed at once (a served archive's
        # request threads opening the same index).
        with _LOADING:
            return np.load(self.folder / f"{name}.npy", mmap_mode="r").view(np.ndarray)

    def mappings(self) -> list[Any]:
        """The files this sidecar keeps mapped: its opened fields' arrays (a column read
        once, to be copied, is unmapped when it goes), for ``store.release_mappings``."""
        arrays: list[Any] = []
        for columns in self._fields.values():
            arrays += [columns.words.blob, columns.words.ends, columns.starts, columns.docs,
                       columns.weights, columns.lengths]
            if columns.positions is not None:
                arrays += [columns.positions.counts, columns.positions.starts,
                           columns.positions.positions]
        # the view's base is numpy's memmap, whose base is the mmap.mmap
        return [array.base.base for array in arrays
                if array is not None and isinstance(array.base, np.memmap)]

    def field(self, name: str) -> FieldColumns | None:
        if name not in self.fields:
            return None
        if name not in self._fields:
            lengths_file = self.folder / f"{name}.lengths.npy"
            positions = Positions(self._load(f"{name}.counts"),
                                  self._load(f"{name}.position_starts"),
                                  self._load(f"{name}.positions")) \
                if name in self.positional else None
            self._fields[name] = FieldColumns(
                _Words(self._load(f"{name}.words"), self._load(f"{name}.word_ends")),
                self._load(f"{name}.starts"), self._load(f"{name}.docs"),
                self._load(f"{name}.weights"),
                self._load(f"{name}.lengths") if lengths_file.exists() else None,
                positions)
        return self._fields[name]

    def column(self, name: str) -> np.ndarray:
        """A per-document column: ``dated`` (0/1), ``date`` (Whoosh's sortable value),
        ``cluster`` (a number per cluster name, see ``cluster_names``)."""
        return self._load(name)

    def cluster_names(self) -> list[str]:
        words = _Words(self._load("cluster_names"), self._load("cluster_name_ends"))
        return [words[i].decode("utf-8") for i in range(len(words))]


def read_meta(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _blob(words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum([len(w) for w in words], dtype=np.int64) if words else \
        np.zeros(0, dtype=np.int64)
    return np.frombuffer(b"".join(words), dtype=np.uint8), ends


Terms = list[tuple[bytes, Any, Any]]  # (word, document numbers, weights), in word order
#: a field's positions, its postings in the order of its terms: (count per posting, positions)
FieldPositions = tuple[np.ndarray, np.ndarray]


def _positional(leaf: Any, name: str) -> bool:
    field_format = leaf.schema[name].format
    return bool(field_format) and field_format.supports("positions")


def write_sidecar(columns_dir: Path, leaf: Any, postings: dict[str, Terms] | None = None,
                  positions: dict[str, FieldPositions] | None = None) -> Path:
    """Write the sidecar of one segment (a Whoosh segment reader) under ``columns_dir``;
    replaces any sidecar of the same segment. Returns its folder.

    ``postings`` and ``positions`` are fields' postings and positions as the writer wrote
    them (``PostingsTap``); a field not given (or, with positions, given without them) is
    read back from the segment."""
    segment_id = leaf.segment().segment_id()
    doc_count = leaf.doc_count_all()
    with new_sidecar(columns_dir, segment_id) as temp:
        fields = [name for name in FIELDS if name in leaf.schema]
        positional = [name for name in fields if _positional(leaf, name)]
        for name in fields:
            given = (postings or {}).get(name)
            given_positions = (positions or {}).get(name) if name in positional else None
            if given is None or (name in positional and given_positions is None):
                given, given_positions = _read_back(leaf, name, name in positional)
            _write_field(temp, leaf, name, given, given_positions)
        _write_columns(temp, leaf, doc_count)
        (temp / META).write_text(json.dumps({
            "version": VERSION, "segment": segment_id, "doc_count": doc_count,
            "fields": fields, "positions": positional}), encoding="utf-8")
    return columns_dir / segment_id


@contextmanager
def new_sidecar(columns_dir: Path, segment_id: str) -> Iterator[Path]:
    """A temporary folder under ``columns_dir`` to write a segment's sidecar into; when the
    block ends without error it replaces that segment's sidecar whole (``place_sidecar``),
    and when not it is removed: a reader never opens half a sidecar."""
    columns_dir.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{segment_id}.", dir=columns_dir))
    try:
        yield temp
        place_sidecar(temp, columns_dir, segment_id)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def place_sidecar(folder: Path, columns_dir: Path, segment_id: str) -> Path:
    """Rename a whole sidecar ``folder`` (on the index's file system) into place as the
    sidecar of ``segment_id``, replacing any sidecar the segment had. Returns where it is."""
    columns_dir.mkdir(parents=True, exist_ok=True)
    final = columns_dir / segment_id
    if final.exists():
        shutil.rmtree(final)
    os.replace(folder, final)
    return final


#: postings whose positions are decoded in one go when read back (bounds the bytes held)
_BATCH = 50_000


def _read_back(leaf: Any, name: str, positional: bool
               ) -> tuple[Terms, FieldPositions | None]:
    """A field's postings (and positions) read from the finished segment."""
    if not positional:
        return [(word, docs, weights)
                for word, _info, docs, weights in store.field_postings(leaf, name)], None
    field_format = leaf.schema[name].format
    terms: Terms = []
    counts: list[np.ndarray] = []
    chunks: list[np.ndarray] = []
    pending: list[bytes] = []

    def decode() -> None:
        got = store.position_arrays(field_format, pending)
        counts.append(got[0])
        chunks.append(got[1])
        pending.clear()

    for word, docs, weights, values in store.field_postings_values(leaf, name):
        terms.append((word, docs, weights))
        pending.extend(values)
        if len(pending) >= _BATCH:
            decode()
    decode()
    return terms, (np.concatenate(counts), np.concatenate(chunks))


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` (never negative) in the narrowest unsigned type that holds them all."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.int64)


def _write_field(folder: Path, leaf: Any, name: str, terms: Terms,
                 positions: FieldPositions | None) -> None:
    words = [word for word, _, _ in terms]
    blob, ends = _blob(words)
    counts = np.array([len(docs) for _, docs, _ in terms], dtype=np.int64)
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    all_docs = np.concatenate([np.asarray(docs, dtype=np.int32) for _, docs, _ in terms]) \
        if terms else np.zeros(0, np.int32)
    all_weights = np.concatenate([np.asarray(w, dtype=np.float64) for _, _, w in terms]) \
        if terms else np.zeros(0)
    narrow = all_weights.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64), all_weights):  # Whoosh's own block type
        all_weights = narrow
    np.save(folder / f"{name}.words.npy", blob)
    np.save(folder / f"{name}.word_ends.npy", ends)
    np.save(folder / f"{name}.starts.npy", starts)
    np.save(folder / f"{name}.docs.npy", all_docs)
    np.save(folder / f"{name}.weights.npy", all_weights)
    if positions is not None:
        held, flat = positions
        if len(held) != len(all_docs) or int(held.sum()) != len(flat):
            raise ValueError(f"{name}: {len(held)} postings' positions for "
                             f"{len(all_docs)} postings")
        before = np.zeros(len(held) + 1, dtype=np.int64)
        np.cumsum(held, out=before[1:])
        np.save(folder / f"{name}.counts.npy", _narrow(held))
        np.save(folder / f"{name}.position_starts.npy", _narrow(before[starts]))
        np.save(folder / f"{name}.positions.npy", _narrow(flat))
    if leaf.schema[name].scorable:
        lengths = store.field_length_bytes(leaf, name)
        if lengths is not None:
            np.save(folder / f"{name}.lengths.npy", lengths)


def _write_columns(folder: Path, leaf: Any, doc_count: int) -> None:
    dated = np.zeros(doc_count, dtype=np.int8)
    date = np.zeros(doc_count, dtype=np.uint64)
    clusters = np.zeros(doc_count, dtype=np.int32)
    names: list[bytes] = []
    if doc_count:
        if leaf.has_column("dated"):
            column = leaf.column_reader("dated", translate=True)
            dated[:] = [column[d] for d in range(doc_count)]
        if leaf.has_column("date"):
            column = leaf.column_reader("date", translate=False)
            date[:] = [column[d] for d in range(doc_count)]
        if leaf.has_column("cluster"):
            column = leaf.column_reader("cluster")
            values = [column[d] for d in range(doc_count)]
        else:  # an index written before cluster was a column
            values = [leaf.stored_fields(d).get("cluster") or f"\0{d}" for d in range(doc_count)]
        numbers: dict[str, int] = {}
        for d, value in enumerate(values):
            clusters[d] = numbers.setdefault(value, len(numbers))
        names = [value.encode("utf-8") for value in numbers]
    blob, ends = _blob(names)
    np.save(folder / "dated.npy", dated)
    np.save(folder / "date.npy", date)
    np.save(folder / "cluster.npy", clusters)
    np.save(folder / "cluster_names.npy", blob)
    np.save(folder / "cluster_name_ends.npy", ends)


class PostingsTap:
    """A segment's postings for the sidecar, taken as the archive's writer writes them.

    Reading a segment's postings back from Whoosh (its pickled, compressed blocks) cost
    about a tenth of a build; the writer has every term's documents and weights in hand
    as it writes them, so it hands them here (``store.ArchiveWriter(tap=...)``) and the
    sidecar is written when the segment is whole. Weights are stored as Whoosh's blocks
    store them (``_write_field`` keeps float32 only where that is exact), and positions
    decoded by the function that decodes them read back (``store.position_arrays``), so
    the sidecar equals one read back. A segment written without a tap (Whoosh's own
    merges, a Dask worker's) gets its sidecar from ``sync_columns``.
    """

    fields = frozenset(FIELDS)

    def __init__(self, columns_dir: Path):
        self.columns_dir = columns_dir
        self.terms: dict[str, Terms] = {}
        self.positions: dict[str, list[FieldPositions]] = {}

    def add(self, fieldname: str, word: bytes, docs: list[int], weights: list[float]) -> None:
        self.terms.setdefault(fieldname, []).append(
            (word, np.array(docs, dtype=np.int32),
             np.array(weights, dtype=np.float32).astype(np.float64)))

    def add_positions(self, fieldname: str, counts: np.ndarray, positions: np.ndarray
                      ) -> None:
        """The positions of the field's next postings, in the order ``add`` gave them."""
        self.positions.setdefault(fieldname, []).append((_narrow(counts), _narrow(positions)))

    def finish(self, leaf: Any) -> None:
        """Write the sidecar of the segment just written (``leaf`` reads it)."""
        terms, self.terms = self.terms, {}
        chunks, self.positions = self.positions, {}
        positions: dict[str, FieldPositions] = {}
        for name in FIELDS:  # a field the segment has no term in: empty lists, not a read
            terms.setdefault(name, [])
            parts = chunks.get(name, [])
            if (parts or not terms[name]) and name in leaf.schema and _positional(leaf, name):
                positions[name] = (
                    np.concatenate([c for c, _ in parts]) if parts else np.zeros(0, np.int64),
                    np.concatenate([p for _, p in parts]) if parts else np.zeros(0, np.int64))
        write_sidecar(self.columns_dir, leaf, terms, positions)

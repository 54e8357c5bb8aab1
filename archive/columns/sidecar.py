"""One segment's columnar sidecar: its postings and per-document columns as numpy arrays.

A Whoosh segment never changes once written, so what a query needs from it can be laid out
once, beside it, in the shape numpy works on: per field, the sorted term list and, for each
term, its documents and weights; per scored field, each document's length byte (decoded
the way Whoosh's scorer decodes it, so scores stay exact); and the columns a ranking or a
wire-copy collapse reads (date, whether dated, cluster). Every array is a ``.npy`` file
opened with ``mmap_mode="r"``: opening a sidecar reads no postings, and the page cache
shares them between processes.

Layout: ``<index>/columns/<segment id>/``, written into a temporary folder and renamed into
place whole, with ``meta.json`` naming the segment and its document count (a sidecar whose
meta does not match its segment is stale and not used).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from archive import store

COLUMNS_DIR = "columns"
#: bumped whenever the layout changes: a sidecar of another version is rebuilt
VERSION = 1
#: the fields whose postings a sidecar holds; queries on other fields fall back to Whoosh
FIELDS = ("title", "body", "captions", "source", "place", "topic", "author", "year",
          "language")
META = "meta.json"


class _Words:
    """A sorted term list stored as one byte blob and end offsets, read as a sequence of
    bytes (so ``bisect`` finds a term without loading the list into Python objects)."""

    def __init__(self, blob: np.ndarray, ends: np.ndarray):
        self.blob, self.ends = blob, ends

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> bytes:
        start = int(self.ends[i - 1]) if i else 0
        return self.blob[start:int(self.ends[i])].tobytes()

    def find(self, word: bytes) -> int:
        """The term's number, or -1 when the segment does not hold it."""
        i = bisect_left(self, word)
        return i if i < len(self) and self[i] == word else -1


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

    def postings(self, word: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        i = self.words.find(word)
        if i < 0:
            return None
        start, end = int(self.starts[i]), int(self.starts[i + 1])
        return self.docs[start:end], self.weights[start:end]


class Sidecar:
    """One segment's sidecar, opened mapped (``Sidecar.open``)."""

    def __init__(self, folder: Path, meta: dict[str, Any]):
        self.folder = folder
        self.segment_id: str = meta["segment"]
        self.doc_count: int = meta["doc_count"]
        self.fields: tuple[str, ...] = tuple(meta["fields"])
        self._fields: dict[str, FieldColumns] = {}

    @classmethod
    def open(cls, folder: Path, segment_id: str, doc_count: int) -> Sidecar | None:
        """The sidecar in ``folder`` if it is whole and matches the segment, else None."""
        meta = read_meta(folder)
        if meta is None or meta.get("version") != VERSION or \
                meta.get("segment") != segment_id or meta.get("doc_count") != doc_count:
            return None
        return cls(folder, meta)

    def _load(self, name: str) -> np.ndarray:
        return np.load(self.folder / f"{name}.npy", mmap_mode="r")

    def field(self, name: str) -> FieldColumns | None:
        if name not in self.fields:
            return None
        if name not in self._fields:
            lengths_file = self.folder / f"{name}.lengths.npy"
            self._fields[name] = FieldColumns(
                _Words(self._load(f"{name}.words"), self._load(f"{name}.word_ends")),
                self._load(f"{name}.starts"), self._load(f"{name}.docs"),
                self._load(f"{name}.weights"),
                np.load(lengths_file, mmap_mode="r") if lengths_file.exists() else None)
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


def write_sidecar(columns_dir: Path, leaf: Any,
                  postings: dict[str, Terms] | None = None) -> Path:
    """Write the sidecar of one segment (a Whoosh segment reader) under ``columns_dir``;
    replaces any sidecar of the same segment. Returns its folder.

    ``postings`` are fields' postings as the writer wrote them (``PostingsTap``); a field
    not given is read back from the segment."""
    segment_id = leaf.segment().segment_id()
    doc_count = leaf.doc_count_all()
    columns_dir.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{segment_id}.", dir=columns_dir))
    try:
        fields = [name for name in FIELDS if name in leaf.schema]
        for name in fields:
            given = (postings or {}).get(name)
            _write_field(temp, leaf, name, given if given is not None else [
                (word, docs, weights)
                for word, _info, docs, weights in store.field_postings(leaf, name)])
        _write_columns(temp, leaf, doc_count)
        (temp / META).write_text(json.dumps({
            "version": VERSION, "segment": segment_id, "doc_count": doc_count,
            "fields": fields}), encoding="utf-8")
        final = columns_dir / segment_id
        if final.exists():
            shutil.rmtree(final)
        os.replace(temp, final)
        return final
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _write_field(folder: Path, leaf: Any, name: str, terms: Terms) -> None:
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
    store them (``_write_field`` keeps float32 only where that is exact), so the sidecar
    equals one read back. A segment written without a tap (Whoosh's own merges, a Dask
    worker's) gets its sidecar from ``sync_columns``.
    """

    fields = frozenset(FIELDS)

    def __init__(self, columns_dir: Path):
        self.columns_dir = columns_dir
        self.terms: dict[str, Terms] = {}

    def add(self, fieldname: str, word: bytes, docs: list[int], weights: list[float]) -> None:
        self.terms.setdefault(fieldname, []).append(
            (word, np.array(docs, dtype=np.int32),
             np.array(weights, dtype=np.float32).astype(np.float64)))

    def finish(self, leaf: Any) -> None:
        """Write the sidecar of the segment just written (``leaf`` reads it)."""
        terms, self.terms = self.terms, {}
        for name in FIELDS:  # a field the segment has no term in: an empty list, not a read
            terms.setdefault(name, [])
        write_sidecar(self.columns_dir, leaf, terms)

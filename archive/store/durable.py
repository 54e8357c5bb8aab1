"""The index on disk: commits that survive a power cut, and opening the newest whole one.

Whoosh commits by writing the new segment files, then the new TOC (table of contents) to a
temporary name renamed into place, then deleting the files no TOC needs any more. Readers
open the newest TOC, so a killed writer leaves the previous generation in force. Whoosh never
fsyncs, though: after a power cut the renamed TOC could name segment data that never reached
the disk. DurableStorage adds the missing fsyncs, ``open_index`` falls back to the newest
generation whose files are all present, and ``tidy`` removes what a stopped writer left.

Importing this module also makes Whoosh read memory-mapped segments in place (MappedFile).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from whoosh import index
from whoosh.filedb import compound
from whoosh.filedb.compound import CompoundStorage
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import BufferFile
from whoosh.index import TOC, FileIndex

from archive.store.errors import IndexDamaged, IndexMissing, IndexOutdated
from archive.store.fastwriter import compound_part_ends
from archive.store.manifest import MANIFEST
from archive.store.schema import INDEX_NAME, build_schema

DEFAULT_INDEX = Path("index")

_TOC_RE = re.compile(r"^_%s_(\d+)\.toc$" % INDEX_NAME)
#: a table of contents Whoosh was writing when its run stopped (check.py reports them)
TOC_TEMP_RE = re.compile(r"^_%s_\d+\.toc\..+$" % INDEX_NAME)
_SEGMENT_RE = re.compile(r"^(%s_[0-9a-z]+)\.[A-Za-z0-9_.]+$" % INDEX_NAME)


def _fsync(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ViewReader:
    """A read-only file over a memoryview that never copies more than a ``read`` asks for."""

    __slots__ = ("_view", "_pos", "_end")

    def __init__(self, view: memoryview):
        self._view, self._pos, self._end = view, 0, len(view)

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        if start >= self._end:
            return b""
        self._pos = self._end if size is None or size < 0 else min(start + size, self._end)
        return self._view[start:self._pos].tobytes()

    def readline(self, size: int | None = -1) -> bytes:
        end = self._end if size is None or size < 0 else min(self._pos + size, self._end)
        rest = self._view[self._pos:end].tobytes() if self._pos < end else b""
        line = rest[:rest.find(b"\n") + 1] or rest
        self._pos += len(line)
        return line

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos + (self._pos if whence == 1 else self._end if whence == 2 else 0)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self._view = memoryview(b"")


class MappedFile(BufferFile):
    """Whoosh's BufferFile without its copy.

    Whoosh opens each part of a memory-mapped segment as a BufferFile, which copies the part
    into a ``BytesIO`` at once: opening a large index cost time and twice its size in memory
    (the mapped pages plus the copies), in every process that searches. Reading through the
    mapping instead opens it at once, at the same query speed (bench/README.md has the
    measurements).
    """

    def __init__(self, buf: Any, name: str | None = None, onclose: Any = None):
        self._buf = buf
        self._name = name
        self.file = ViewReader(memoryview(buf))
        self.onclose = onclose
        self.is_real = False
        self.is_closed = False


compound.BufferFile = MappedFile  # what CompoundStorage.open_file builds over a mapping


class DurableStorage(FileStorage):
    """A FileStorage whose commits survive a power cut, not only a killed process.

    Just before a new TOC is renamed into place, every segment file and the TOC itself are
    fsynced; just after, the folder is (so the rename is on disk before old files go).
    """

    def rename_file(self, oldname: str, newname: str, safe: bool = False) -> None:
        is_toc = bool(_TOC_RE.match(newname))
        if is_toc:
            for name in os.listdir(self.folder):
                if _SEGMENT_RE.match(name):
                    _fsync(os.path.join(self.folder, name))
            _fsync(os.path.join(self.folder, oldname))
        super().rename_file(oldname, newname, safe)
        if is_toc:
            _fsync(self.folder, directory=True)


class _ArchiveIndex(FileIndex):
    """Whoosh's FileIndex, but re-reading the TOC (``ix.schema`` and every new reader read
    it afresh) survives a writer replacing it mid-read: Whoosh retries opening the segments,
    not this, so a reader could fail with FileNotFoundError on ``_archive_N.toc``."""

    def _read_toc(self) -> TOC:
        for attempt in range(50):
            try:
                return super()._read_toc()
            except FileNotFoundError:
                if attempt == 49:
                    raise
                time.sleep(0.01)
        raise AssertionError("unreachable")


class _PinnedIndex(_ArchiveIndex):
    """An index opened at an older generation because the newest one is unusable."""

    def __init__(self, storage: FileStorage, generation: int, broken: list[int]):
        # FileIndex.__init__ would read the newest TOC, the broken one: set up by hand.
        self.storage = storage
        self._schema = None
        self.indexname = INDEX_NAME
        self.generation = generation
        self.broken = broken  # the newer generations passed over

    def latest_generation(self) -> int:
        return self.generation

    def _read_toc(self) -> TOC:
        return TOC.read(self.storage, self.indexname, gen=self.generation, schema=self._schema)


def toc_generations(folder: Path) -> list[int]:
    """The generations of the index's TOC files, newest first."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((int(m.group(1)) for m in map(_TOC_RE.match, names) if m), reverse=True)


def missing_segment_files(folder: Path, toc: TOC) -> list[str]:
    """Files the segments of ``toc`` need that are absent or too short to be whole."""
    missing = []
    for segment in toc.segments:
        if segment.is_compound():
            name = segment.make_filename(segment.COMPOUND_EXT)
            try:
                size = (folder / name).stat().st_size
            except OSError:
                missing.append(name)
                continue
            if size < 12 or not _compound_whole(folder / name, size):
                missing.append(name)
        elif not any(n.startswith(segment.segment_id() + ".") for n in os.listdir(folder)):
            missing.append(segment.segment_id() + ".*")
    return missing


def _compound_whole(path: Path, size: int) -> bool:
    """Whether a compound segment file is as long as its own directory says (its header
    points at the directory, written last, which lists every part's offset and length)."""
    try:
        parts = CompoundStorage(FileStorage(str(path.parent)).open_file(path.name),
                                use_mmap=False)
    except Exception:  # the header points past the end, or the directory is garbled
        return False
    try:
        return all(end <= size for end in compound_part_ends(parts))
    except Exception:
        return False
    finally:
        parts.close()


def exists(folder: Path) -> bool:
    return bool(toc_generations(folder))


def open_index(folder: Path | str, *, mmap: bool = True) -> index.Index:
    """The index at ``folder``, at its newest usable generation, checked to be current.

    ``mmap=False`` reads segment files with plain reads instead of mapping them: a pass over
    every posting then holds only what it keeps, not the touched pages of the mapping, but
    runs slower, and searches slow down more (bench/README.md has the measurements).
    """
    ix = _open_newest_usable(Path(folder), mmap)
    missing = sorted(set(build_schema().names()) - set(ix.schema.names()))
    if missing:
        ix.close()
        raise IndexOutdated(folder, missing)
    return ix


def _open_newest_usable(folder: Path, mmap: bool = True) -> index.Index:
    """Open the newest generation whose TOC reads and whose segment files are all there.

    An older generation is used only when the newest is unusable (a power cut before the
    data reached the disk, or damage); the next writer deletes the broken newer TOCs.
    """
    generations = toc_generations(folder)
    if not generations:
        raise IndexMissing(folder)
    storage = DurableStorage(str(folder), supports_mmap=mmap)
    for _attempt in range(20):
        first_problem = ""
        for gen in generations:
            try:
                toc = TOC.read(storage, INDEX_NAME, gen=gen)
                missing = missing_segment_files(folder, toc)
            except Exception as exc:  # a truncated or garbled TOC: Whoosh raises assorted types
                problem = f"_{INDEX_NAME}_{gen}.toc unreadable: {exc!r}"
            else:
                problem = f"missing or truncated: {', '.join(missing)}" if missing else ""
            if not problem and gen != generations[0]:
                return _PinnedIndex(storage, gen, [g for g in generations if g > gen])
            if not problem:
                try:
                    return _ArchiveIndex(storage, indexname=INDEX_NAME)
                except OSError as exc:  # its TOC replaced by a newer one just now
                    problem = f"_{INDEX_NAME}_{gen}.toc vanished: {exc!r}"
            first_problem = first_problem or problem
        # A writer committing meanwhile deletes the files of the generation we were reading
        # (after its new TOC is in place): look again rather than report damage.
        now = toc_generations(folder)
        if now == generations:
            break
        generations = now or generations
    raise IndexDamaged(folder, first_problem)


def create_index(folder: Path) -> index.Index:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)
    return DurableStorage(str(folder)).create_index(build_schema(), indexname=INDEX_NAME)


def tidy(ix: index.Index, folder: Path) -> None:
    """Remove what an interrupted writer left: temporary TOCs and TOCs newer than the
    generation in force (a pinned index's broken ones). Orphaned segment files go at the
    next commit (Whoosh deletes every file the new TOC does not name)."""
    for gen in getattr(ix, "broken", ()):
        (folder / f"_{INDEX_NAME}_{gen}.toc").unlink(missing_ok=True)
    for name in os.listdir(folder):
        if TOC_TEMP_RE.match(name):
            (folder / name).unlink(missing_ok=True)


def index_bytes(folder: Path) -> int:
    """The index's size on disk: its files and those of its columnar sidecars."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def resolve_index(option: str | None) -> Path:
    """``--index`` wins, then ``$ARCHIVE_INDEX``, then ``./index``."""
    return Path(option or os.environ.get("ARCHIVE_INDEX") or DEFAULT_INDEX)

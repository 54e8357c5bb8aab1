"""Writing the site's output folder: only files whose bytes changed are touched.

Re-publishing a site after adding a few articles then uploads only what changed (rsync, S3
sync and friends compare content or mtimes), and a rebuild over an unchanged index rewrites
nothing at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from archive.site.urls import is_safe


ADDED, CHANGED, REMOVED = "A", "M", "D"

#: What one process's folder hands to another's ``merge``: (produced, written, unchanged,
#: bytes, bytes written, changes).
Record = tuple[list[str], int, int, int, int, dict[str, str]]


class Writes(Protocol):
    """What the bundle's parts write through: an ``OutputFolder``, or a ``FileBatch``."""

    def write(self, relative: str, content: str | bytes) -> bool: ...


@dataclass
class FileBatch:
    """Files made where the output folder is not (a Dask worker), kept as bytes until the
    build's own ``OutputFolder`` writes them: that folder alone decides what changed, so its
    accounting (and ``--changes``) is the same wherever a file was made."""

    files: dict[str, bytes] = field(default_factory=dict)

    def write(self, relative: str, content: str | bytes) -> bool:
        self.files[relative] = content.encode("utf-8") if isinstance(content, str) else content
        return True

    def write_into(self, out: OutputFolder) -> None:
        for relative, data in self.files.items():
            out.write(relative, data)


class UnsafePath(ValueError):
    """A page path that would land outside the output folder."""


@dataclass
class OutputFolder:
    """The site's output folder, with a record of what this build wrote."""

    root: Path
    produced: set[str] = field(default_factory=set)
    written: int = 0        # files whose bytes this build wrote: ``added`` + ``changed``
    unchanged: int = 0
    bytes_total: int = 0
    bytes_written: int = 0  # what those writes put on disk (what a publish step uploads)
    #: path -> ADDED (no file there before) or CHANGED (a file with other bytes replaced):
    #: what a publish step must upload (``archive site --changes``)
    changes: dict[str, str] = field(default_factory=dict)
    _folders: set[str] = field(default_factory=set, repr=False)  # made by this build

    def write(self, relative: str, content: str | bytes) -> bool:
        """Write ``relative`` if its content differs; True when the file was (re)written."""
        if not is_safe(relative):
            raise UnsafePath(f"refusing to write outside the site folder: {relative!r}")
        data = content.encode("utf-8") if isinstance(content, str) else content
        target = os.path.join(self.root, relative)
        first_time = relative not in self.produced  # a later write of a path replaces it
        self.produced.add(relative)
        if first_time:
            self.bytes_total += len(data)
        existed = True
        try:
            if os.stat(target).st_size == len(data):
                with open(target, "rb") as existing:
                    if existing.read() == data:
                        self.unchanged += first_time
                        return False
        except FileNotFoundError:
            existed = False
            folder = os.path.dirname(target)
            if folder not in self._folders:  # a site has tens of thousands of page folders
                os.makedirs(folder, exist_ok=True)
                self._folders.add(folder)
        head, name = os.path.split(target)
        tmp = os.path.join(head, f".{name}.tmp")
        with open(tmp, "wb") as stream:
            stream.write(data)
        os.replace(tmp, target)
        self.written += first_time
        self.bytes_written += len(data)
        if first_time or relative not in self.changes:
            self.changes[relative] = CHANGED if existed else ADDED
        return True

    def size_of(self, relative: str) -> int:
        """The size of a file in the folder, -1 when it is not there."""
        try:
            return os.stat(os.path.join(self.root, relative)).st_size
        except FileNotFoundError:
            return -1

    def keep(self, relative: str, expected_size: int | None = None) -> bool:
        """Count a file an earlier build wrote as produced again, unread and unwritten (the
        caller knows its bytes are what this build would write); False when it is gone, or
        has another size than ``expected_size`` (what the earlier build wrote)."""
        size = self.size_of(relative)
        if size < 0 or expected_size is not None and size != expected_size:
            return False
        self.keep_unread(relative, size)
        return True

    def keep_all(self, files: dict[str, int]) -> bool:
        """``keep`` for many files at once (path -> the size an earlier build wrote): all of
        them when each is there with its size, else none (False). Files of one folder are
        looked up from that folder, not each from the root."""
        by_folder: dict[str, list[tuple[str, int]]] = {}
        for relative, size in files.items():
            folder, _, name = relative.rpartition("/")
            by_folder.setdefault(folder, []).append((name, size))
        for folder, names in by_folder.items():
            try:
                fd = os.open(os.path.join(self.root, folder), os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                return False
            try:
                for name, size in names:
                    if os.stat(name, dir_fd=fd).st_size != size:
                        return False
            except OSError:
                return False
            finally:
                os.close(fd)
        fresh = files.keys() - self.produced
        self.produced.update(fresh)
        self.unchanged += len(fresh)
        self.bytes_total += sum(files[relative] for relative in fresh)
        return True

    def keep_unread(self, relative: str, size: int) -> None:
        """``keep`` for a file the caller has just seen there at ``size``."""
        if relative not in self.produced:
            self.produced.add(relative)
            self.unchanged += 1
            self.bytes_total += size

    @property
    def added(self) -> int:
        return sum(1 for kind in self.changes.values() if kind == ADDED)

    @property
    def changed(self) -> int:
        return sum(1 for kind in self.changes.values() if kind == CHANGED)

    def record(self) -> Record:
        """What this build wrote here, for another process's folder to ``merge``."""
        return sorted(self.produced), self.written, self.unchanged, self.bytes_total, \
            self.bytes_written, dict(self.changes)

    def merge(self, record: Record) -> None:
        """Count files another process of this build wrote as if this one had written them."""
        produced, written, unchanged, bytes_total, bytes_written, changes = record
        if not self.produced.isdisjoint(produced):
            raise ValueError("two processes of one build wrote the same file")
        self.produced.update(produced)
        self.written += written
        self.unchanged += unchanged
        self.bytes_total += bytes_total
        self.bytes_written += bytes_written
        self.changes.update(changes)

    def remove_stale(self, previous: set[str]) -> int:
        """Delete files an earlier build wrote that this build no longer produces (each
        recorded in ``changes`` as REMOVED)."""
        removed = 0
        for relative in sorted(previous - self.produced):
            if not is_safe(relative):
                continue
            target = self.root / relative
            if target.is_file():
                target.unlink()
                removed += 1
                self.changes[relative] = REMOVED
                _prune_empty_parents(target.parent, self.root)
        return removed

    def change_lines(self) -> list[str]:
        """``A path``, ``M path`` or ``D path`` per file this build added, modified or
        deleted, in path order: the list ``archive site --changes`` writes for a publish step
        (the letters are git's, so ``grep -v '^D '`` and ``cut -c3-`` make an upload list)."""
        return [f"{kind} {path}" for path, kind in sorted(self.changes.items())]


def _prune_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent

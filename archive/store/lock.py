"""The writer lock of an index folder, held for a whole indexing run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from archive.store.errors import IndexBusy
from archive.store.schema import INDEX_NAME

#: the writer lock's file in the index folder; the name Whoosh's own writers lock, so a plain
#: Whoosh writer, ``archive check`` and an indexing run all exclude one another
WRITE_LOCK = f"{INDEX_NAME}_WRITELOCK"


class IndexLock:
    """The writer lock of one index folder, held by an indexing run from before it looks at
    the folder until after its last commit.

    Whoosh's writers lock only while one writer is open, and only once an index exists: two
    runs on a new folder both created the index (one deleting the other's first TOC, or both
    adding every article), and a run waiting between another's commits had already read the
    manifest and the index it was about to change. This lock is taken first, on a file of
    the archive's own made with ``O_CREAT`` in a folder made with ``mkdir(exist_ok=True)``,
    both harmless to repeat at once, so whoever gets it sees what the previous holder
    committed. The writers opened under it (``open_writer(..., lock=...)``) skip Whoosh's
    lock. An ``flock``: the kernel drops it when the holding process dies.
    """

    def __init__(self, folder: Path, timeout: float = 10.0):
        self.folder = folder
        self.timeout = timeout
        self.fd: int | None = None  # open while held

    def acquire(self) -> IndexLock:
        """Wait up to ``timeout`` seconds for the lock; IndexBusy if it stays taken."""
        import fcntl

        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / WRITE_LOCK, os.O_CREAT | os.O_WRONLY, 0o666)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise IndexBusy(self.folder, self.timeout) from None
                time.sleep(0.1)
            except BaseException:
                os.close(fd)
                raise
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            import fcntl

            fd, self.fd = self.fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> IndexLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

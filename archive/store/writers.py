"""Writers for an indexing run: one process or two, opened under the run's lock.

``open_writer`` picks the writer (ArchiveWriter, SplitWriter, or Whoosh's own as the
reference), maps Whoosh's lock timeout to IndexBusy and tidies what an interrupted writer
left; ``abandon_writer`` and ``discard_writer`` end one that will not commit.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from whoosh import index
from whoosh.index import LockError

from archive import processes
from archive.store.durable import tidy
from archive.store.errors import IndexBusy, WriterProcessFailed
from archive.store.fastwriter import ArchiveWriter, release, whoosh_writer
from archive.store.lock import IndexLock

#: a commit with fewer additions than this is written in one process (a fork costs more
#: than it saves on a small commit)
SPLIT_MIN_DOCS = 500

#: how a segment writer process is named in its failures
WRITER_PROCESS = "a segment writer process"


class SplitWriter:
    """A writer that builds each commit's additions as ``procs`` segments at once.

    Additions are buffered until ``commit``, then cut into ``procs`` contiguous runs: the
    first is written by this process, each other one by a forked child into a segment of its
    own, listed after this process's segment in the new TOC, so documents keep the order
    they were added in. The TOC is written only once every segment is whole, by this process,
    which holds the lock throughout: the commit protocol (fsyncs, TOC rename, manifest after
    it) is unchanged, and a failed or killed child fails the commit, leaving the previous one
    in force. Deletions go straight to this process's writer, as with a SegmentWriter.

    The children are ``processes.Child``: each reports its segment, or its error with the
    ``errno`` an OSError carried (a full disk is reported as the OSError it was), as its
    result. Where the system refuses a fork, this process writes the whole commit.

    Memory: each process's posting pool gets ``limitmb / procs``; the buffer holds at most
    one commit's documents (``commit_every``).
    """

    def __init__(self, ix: index.Index, *, timeout: float, limitmb: int, procs: int,
                 split_min: int = SPLIT_MIN_DOCS, lock: IndexLock | None = None,
                 tap: Callable[[], Any] | None = None):
        self.procs = max(1, procs)
        self.limitmb = max(8, limitmb // self.procs)
        self.split_min = split_min
        self.ix = ix
        self.lock = lock  # the caller's, held for longer than this writer; else Whoosh's own
        self.tap = tap  # each process's writer gets a tap of its own
        self.main = ArchiveWriter(ix, timeout=timeout, delay=0.25, limitmb=self.limitmb,
                                  lock=lock is None, tap=tap() if tap else None)
        self._docs: list[dict[str, Any]] = []

    @property
    def is_closed(self) -> bool:
        return self.main.is_closed

    def add_document(self, **doc: Any) -> None:
        self._docs.append(doc)

    def delete_by_term(self, fieldname: str, text: str, searcher: Any = None) -> int:
        return self.main.delete_by_term(fieldname, text, searcher=searcher)

    def delete_document(self, docnum: int) -> None:
        self.main.delete_document(docnum)

    def cancel(self) -> None:
        self._docs = []
        self.main.cancel()

    def release(self) -> None:
        """Drop the buffer and release the lock and files without committing."""
        self._docs = []
        release(self.main)

    def commit(self) -> None:
        docs, self._docs = self._docs, []
        procs = self.procs if len(docs) >= self.split_min else 1
        cuts = [len(docs) * k // procs for k in range(procs + 1)]
        children: list[processes.Child] = []
        try:
            for k in range(1, procs):
                child = processes.Child.start(
                    partial(self._write_segment, docs[cuts[k]:cuts[k + 1]]), WRITER_PROCESS)
                if child is None:  # no fork here: this process writes the whole commit
                    for started in children:
                        started.stop()
                    children, cuts[1] = [], len(docs)
                    break
                children.append(child)
            for doc in docs[:cuts[1]]:
                self.main.add_document(**doc)
            del docs
            if not children:
                self.main.commit()
                return
            self.main.commit(more_segments=lambda: [self._collect(c) for c in children])
            children = []
        finally:
            for child in children:  # only after a failure: stop and reap what is left
                child.stop()

    def _write_segment(self, docs: list[dict[str, Any]]) -> tuple[Any, ...]:
        """In a forked child: ``docs`` as a segment of their own, or what went wrong."""
        lock = self.lock if self.lock is not None else getattr(self.main, "writelock", None)
        if getattr(lock, "fd", None) is not None:
            # Drop this process's share of the lock (closing, not unlocking, which would
            # free the parent's too): were the parent killed, the lock must go with it (a
            # flock lives while any process holds its file open)
            os.close(lock.fd)
        try:
            w = ArchiveWriter(self.ix, lock=False, limitmb=self.limitmb,
                              tap=self.tap() if self.tap else None)
            for doc in docs:
                w.add_document(**doc)
            return ("segment", w.finalize_segment())
        except BaseException as exc:
            return ("error", type(exc).__name__, str(exc), getattr(exc, "errno", None),
                    getattr(exc, "strerror", None), getattr(exc, "filename", None))

    @staticmethod
    def _collect(child: processes.Child) -> Any:
        try:
            message = child.result()
        except processes.ChildFailed as exc:  # it died before reporting
            raise WriterProcessFailed(str(exc)) from None
        if message[0] == "segment":
            return message[1]
        _, kind, text, err, strerror, filename = message
        if err is not None:  # e.g. a full disk: report it as the OSError it was
            raise OSError(err, strerror or text, filename)
        raise WriterProcessFailed(f"{WRITER_PROCESS} failed: {kind}: {text}")


def default_procs() -> int:
    """Writer processes for a run: two when a second core is there and idle, else one.

    Splitting a commit costs some more CPU (two term dictionaries instead of one), so it only
    pays when the second process gets a core of its own; on a machine already busy (load
    average at or above cores - 1) one process is faster. ``Indexer(procs=N)`` decides
    explicitly; the index holds the same articles either way.
    """
    cores = processes.usable_cores()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return 2 if cores >= 2 and load < cores - 1 else 1


def open_writer(ix: index.Index, folder: Path, lock_timeout: float = 10.0,
                limitmb: int = 256, fast: bool = True, procs: int = 1,
                split_min: int = SPLIT_MIN_DOCS, lock: IndexLock | None = None,
                tap: Callable[[], Any] | None = None) -> Any:
    """A Whoosh writer that waits up to ``lock_timeout`` seconds for the lock.

    The lock is an ``fcntl`` lock on a file in the index folder: the kernel drops it when the
    holding process dies, so a killed writer never leaves a stale lock behind. Given ``lock``
    (an IndexLock the caller holds for a whole run), the writer takes no lock of its own.
    ``fast=False`` gives Whoosh's own SegmentWriter (the reference the tests compare
    ArchiveWriter with); ``procs`` > 1 a SplitWriter, which writes large commits in that
    many processes. ``tap`` makes a ``columns.PostingsTap`` for each ArchiveWriter, which
    writes each new segment's columnar sidecar from the postings as they are written.
    """
    if lock is not None and lock.fd is None:
        raise ValueError(f"open_writer: the lock on {folder} is not held")
    take = lock is None  # Whoosh's own lock, for this writer only
    try:
        if fast and procs > 1:
            writer = SplitWriter(ix, timeout=lock_timeout, limitmb=limitmb, procs=procs,
                                 split_min=split_min, lock=lock, tap=tap)
        elif fast:
            writer = ArchiveWriter(ix, timeout=lock_timeout, delay=0.25, limitmb=limitmb,
                                   lock=take, tap=tap() if tap else None)
        else:
            writer = whoosh_writer(ix, timeout=lock_timeout, delay=0.25, limitmb=limitmb,
                                   lock=take)
    except LockError:
        raise IndexBusy(folder, lock_timeout) from None
    tidy(ix, folder)  # safe now: we hold the lock
    return writer


def abandon_writer(w: Any) -> None:
    """Cancel a writer after a failure, releasing its lock even if cancelling fails too
    (e.g. the disk is full): the previous commit stays in force."""
    if w.is_closed:
        return
    try:
        w.cancel()
    except Exception:
        try:
            if isinstance(w, SplitWriter):
                w.release()
            else:
                release(w)
        except Exception:
            pass


def discard_writer(w: Any, folder: Path) -> None:
    """Cancel a writer that wrote nothing and remove the empty segment files it opened (a
    cancelled Whoosh writer leaves them for the next commit to sweep)."""
    main = getattr(w, "main", w)
    segment = getattr(main, "newsegment", None)
    w.cancel()
    if segment is None:
        return
    prefix = segment.segment_id() + "."
    for name in os.listdir(folder):
        if name.startswith(prefix):
            (folder / name).unlink(missing_ok=True)

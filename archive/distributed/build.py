"""An indexing run whose reading and segment writing happen on a Dask cluster.

The client (this process) does what needs the whole picture or the lock: it discovers the
files and stats them (an unchanged file is not sent anywhere), plans batches, applies each
batch's results in the order of the files (deletions, counts, the manifest), clusters wire
copies from the gathered MinHash values, adds the workers' segments to the index in its
commits and restamps clusters, exactly as the in-process run (``archive.indexer``) does,
whose code it reuses. The workers read, extract, enrich, compute signatures, and write the
segments (``archive.distributed.tasks``).

Pipelining: a window of batches is being read while the client applies the oldest; a batch's
segment is written as soon as its clusters are known, with a higher priority than reading
ahead, so a worker holds few batches in memory.

Each segment comes with its columnar sidecar (``archive.columns``), written by the worker
from the postings as it writes them; ``install`` puts it in place with the segment, so the
client's sync at the end of the run only removes the sidecars of merged-away segments and
writes those of the segments its own commits merged.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections import deque
from pathlib import Path
from typing import Any

from archive import columns, store
from archive.distributed import tasks
from archive.enrich.minhash import Signature
from archive.indexer import Indexer, IndexReport, Progress
from archive.reading import Examined
from archive.sources import IngestError, SourceFile

#: how segments may reach the client
SHIPPING = ("auto", "files", "bytes")
#: a batch holds files up to about this many bytes (a larger file is a batch of its own)
MAX_BATCH_BYTES = 16 << 20
MIN_BATCH_BYTES = 64 << 10


class DistributedIndexer(Indexer):
    """``Indexer`` with the reading and segment writing on the workers of a Dask ``client``.

    ``segments``: "auto" ships a segment as files where the worker sees the index folder and
    as bytes where not; "files" requires the shared folder; "bytes" always sends bytes.
    """

    def __init__(self, folder: Path, client: Any, *, segments: str = "auto",
                 batch_bytes: int | None = None, **options: Any):
        super().__init__(folder, procs=1, **options)
        if segments not in SHIPPING:
            raise ValueError(f"segments must be one of {', '.join(SHIPPING)}")
        self.client = client
        self.segments = segments
        self.batch_bytes = batch_bytes
        self.batches_total = 0
        self.batches_done = 0
        self.articles_read = 0
        self.started = time.perf_counter()
        self.shipped = {"files": 0, "bytes": 0}
        self.serial_seconds = 0.0  # the client's own work: applying, clustering, committing
        self._to_write: list[str] = []
        self._writing: list[Any] = []  # futures of Shipped segments not yet committed

    # -- the run ------------------------------------------------------------------------------

    def run(self, paths: Any, **kwargs: Any) -> IndexReport:
        self.started = time.perf_counter()
        try:
            report = super().run(paths, **kwargs)
        finally:
            self._writing = []
            shutil.rmtree(self.folder / tasks.INCOMING, ignore_errors=True)
        report.dask = {
            "scheduler": self.client.scheduler.address, "workers": self.worker_count(),
            "batches": self.batches_total, "segments_as_files": self.shipped["files"],
            "segments_as_bytes": self.shipped["bytes"],
            "client_serial_seconds": round(self.serial_seconds, 3),
            "seconds": round(time.perf_counter() - self.started, 3),
        }
        return report

    def worker_count(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def index_sources(self, w, sources: list[SourceFile], manifest: dict[str, store.FileState],  # noqa: ANN001, ANN201
                      pending: Any, report: IndexReport, progress: Progress | None):
        staging, token = self._open_staging()
        planned = self._plan(sources, manifest, report, progress)
        batches = self._batches(planned)
        self.batches_total = len(batches)
        window = max(4, 3 * max(1, self.worker_count()))
        inflight: deque[tuple[int, Any, Any]] = deque()
        run = secrets.token_hex(4)
        submitted = 0
        for _ in range(len(batches)):
            while submitted < len(batches) and len(inflight) < window:
                files = [item for item, _ in batches[submitted]]
                read = self.client.submit(tasks.read_batch, files, self.options,
                                          key=f"archive-read-{run}-{submitted}")
                told = self.client.submit(tasks.summary, read,
                                          key=f"archive-summary-{run}-{submitted}")
                inflight.append((submitted, read, told))
                submitted += 1
            number, read, told = inflight.popleft()
            batch = batches[number]
            try:
                found = told.result()
            except Exception as exc:  # the batch killed its workers (a reader crash)
                found = [Examined(p.relative, p.size, p.mtime_ns, error=IngestError(
                    p.relative, f"a worker failed reading it: {type(exc).__name__}: {exc}"))
                    for p, _ in batch]
            began = time.perf_counter()
            self._to_write = []
            for result in found:
                self.articles_read += len(result.articles)
                self.take(w, result, self.manifest_entry(result.relative, manifest),
                          pending, report)
            if self._to_write:
                clusters = {i: self.finder.cluster_of(i) for i in self._to_write}
                self._writing.append(self.client.submit(
                    tasks.write_segment, read, clusters, staging, token,
                    self.segments == "files", key=f"archive-segment-{run}-{number}",
                    priority=1))
            self.serial_seconds += time.perf_counter() - began
            self.batches_done += 1
            if progress:
                for _, source in batch:
                    progress(source)
            if self.commit_due(pending):
                w = self.commit_and_reopen(w, manifest, pending)
        return w

    def commit_due(self, pending: Any) -> bool:
        """Commit once ``commit_every`` articles wait *and* a segment write per worker is in
        flight. A commit waits for every segment written so far; were it taken at each batch
        that outgrows ``commit_every`` (a large batch always does), the client would wait on one
        segment at a time and the workers would write segments one after another. So a run
        holds up to a batch per worker beyond ``commit_every`` uncommitted. With no write in
        flight (a run of deletions) there is nothing to wait for, so the commit is due."""
        writing = len(self._writing)
        return pending.articles >= self.commit_every and (
            writing == 0 or writing >= max(1, self.worker_count()))

    def _plan(self, sources: list[SourceFile], manifest: dict[str, store.FileState],
              report: IndexReport, progress: Progress | None) -> list[tuple[tasks.Planned,
                                                                              SourceFile]]:
        """Stat every file here; only those whose size or mtime changed go to a worker."""
        planned = []
        for source in sources:
            old = self.manifest_entry(source.relative, manifest)
            info = self.stat_if_changed(source, old, report)
            if info is None:
                if progress:
                    progress(source)
                continue
            planned.append((tasks.Planned(str(source.path.resolve()), source.relative,
                                          info.st_size, info.st_mtime_ns,
                                          old.sha256 if old else None), source))
        return planned

    def _batches(self, planned: list[tuple[tasks.Planned, SourceFile]]) \
            -> list[list[tuple[tasks.Planned, SourceFile]]]:
        """Consecutive files cut into batches of about ``batch_bytes`` (by default enough
        batches for four per worker, within MIN/MAX_BATCH_BYTES)."""
        total = sum(p.size for p, _ in planned)
        size = self.batch_bytes or min(MAX_BATCH_BYTES, max(
            MIN_BATCH_BYTES, total // (4 * max(1, self.worker_count()))))
        batches: list[list[tuple[tasks.Planned, SourceFile]]] = []
        held = size
        for item in planned:
            if held + item[0].size > size and held:
                batches.append([])
                held = 0
            batches[-1].append(item)
            held += item[0].size
        return batches

    # -- the client's side of a batch -------------------------------------------------------

    def add_new(self, w, articles: list) -> None:  # noqa: ANN001
        for keyed in articles:
            self.finder.add(keyed.id, Signature(keyed.hashes))
            self._to_write.append(keyed.id)
        self.restamp.update(self.finder.pop_changes())

    def same_as_committed(self, article, stored: dict) -> bool:  # noqa: ANN001
        return article.docsum == tasks.document_digest(store.from_stored(stored))

    def commit(self, w) -> None:  # noqa: ANN001
        """Wait for the batches' segments, move them into the index folder, commit them with
        the writer's deletions in one new TOC."""
        writing, self._writing = self._writing, []
        shipped = [future.result() for future in writing]
        began = time.perf_counter()
        segments = [self.install(s) for s in shipped]
        if segments:
            w.commit(more_segments=lambda: segments)
        else:
            w.commit()
        self.serial_seconds += time.perf_counter() - began

    def install(self, shipped: tasks.Shipped) -> Any:
        """Put a shipped segment's files in the index folder (not yet in any TOC), and its
        sidecar in the index's columns folder (renamed into place whole, as
        ``columns.write_sidecar`` puts one)."""
        segment_id = shipped.segment.segment_id()
        columns_dir = self.folder / columns.COLUMNS_DIR
        if shipped.folder is not None:
            for name in shipped.names:
                os.replace(Path(shipped.folder) / name, self.folder / name)
            sidecar = Path(shipped.folder) / columns.COLUMNS_DIR / segment_id
            if sidecar.is_dir():
                columns.place_sidecar(sidecar, columns_dir, segment_id)
            shutil.rmtree(shipped.folder, ignore_errors=True)
            self.shipped["files"] += 1
        else:
            for name, data in (shipped.files or {}).items():
                (self.folder / name).write_bytes(data)
            if shipped.sidecar_files:
                with columns.new_sidecar(columns_dir, segment_id) as temp:
                    for name, data in shipped.sidecar_files.items():
                        (temp / name).write_bytes(data)
            self.shipped["bytes"] += 1
        return shipped.segment

    def _open_staging(self) -> tuple[str | None, str]:
        """The shared folder for segments (and its probe file), unless bytes were asked for.
        Whatever a killed run left there goes first."""
        token = secrets.token_hex(16)
        incoming = self.folder / tasks.INCOMING
        shutil.rmtree(incoming, ignore_errors=True)
        if self.segments == "bytes":
            return None, token
        incoming.mkdir(parents=True)
        (incoming / tasks.PROBE).write_text(token, "utf-8")
        return str(incoming.resolve()), token

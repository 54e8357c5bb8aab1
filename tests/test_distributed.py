"""Indexing on a Dask cluster (issue 15) builds the index the in-process run builds.

Compared, by article id (the two builds cut their segments differently, so document numbers
differ): every stored field, every term's live postings (ids, weights, value bytes), field
lengths, the cluster column, the wire-copy clusters, and the run's report. Not compared: the
term statistics Whoosh keeps per segment, which count deleted documents until a merge (an
in-process run deletes and re-adds an article whose cluster a later copy renames; the
distributed run, which names a batch's clusters before writing it, does so less often). The clusters
are real: a ``LocalCluster`` of two worker processes, and for the multi-machine shape a
``dask scheduler`` and two ``dask worker`` processes started here, one of them SIGKILLed while
the run goes on. Slices of BBC and Reuters keep the module within CI's time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import pytest

from archive import store
from archive.columns import sync as column_sync
from archive.columns.sidecar import write_sidecar
from archive.enrich.duplicates import DuplicateFinder
from archive.indexer import DUPLICATES, Indexer

from conftest import CORPORA

distributed = pytest.importorskip("distributed", reason="needs dask[distributed] (the "
                                  "test extra)")

from archive.distributed import DistributedIndexer, connect  # noqa: E402

pytestmark = pytest.mark.needs_corpora
ARCHIVE = Path(sys.executable).with_name("archive")
DASK = Path(sys.executable).with_name("dask")


# --- what an index holds, by article id ----------------------------------------------------------

def by_id(folder: Path) -> dict[str, Any]:
    ix = store.open_index(folder)
    out: dict[str, Any] = {}
    with ix.searcher() as searcher:
        reader = searcher.reader()
        live = list(reader.all_doc_ids())
        ids = {d: reader.stored_fields(d)["id"] for d in live}
        out["docs"] = len(live)
        out["stored"] = {ids[d]: reader.stored_fields(d) for d in live}
        assert len(out["stored"]) == len(live)  # no article twice
        terms: dict[Any, Any] = {}
        for fieldname, text in reader.all_terms():
            if fieldname.startswith("spell_"):  # pseudo-postings on a segment's document 0
                terms[(fieldname, text)] = None
                continue
            matcher = reader.postings(fieldname, text)  # live documents only
            postings = []
            while matcher.is_active():
                postings.append((ids[matcher.id()], matcher.weight(), matcher.value()))
                matcher.next()
            if postings:  # a term only deleted documents held lingers until a merge
                terms[(fieldname, text)] = sorted(postings)
        out["terms"] = terms
        out["lengths"] = {name: {ids[d]: reader.doc_field_length(d, name) for d in live}
                          for name in ix.schema.names()}
        cluster = reader.column_reader("cluster")
        out["cluster_column"] = {ids[d]: cluster[d] for d in live}
    out["clusters"] = DuplicateFinder.load(folder / DUPLICATES).clusters()
    return out


def assert_same_index(a: Path, b: Path) -> None:
    one, two = by_id(a), by_id(b)
    assert one["docs"] == two["docs"] and one["docs"] > 0
    assert one["stored"] == two["stored"]
    assert one["terms"].keys() == two["terms"].keys()
    differ = [k for k in one["terms"] if one["terms"][k] != two["terms"][k]]
    assert not differ, f"{len(differ)} terms differ, e.g. {differ[:5]}"
    assert one["lengths"] == two["lengths"]
    assert one["cluster_column"] == two["cluster_column"]
    assert one["clusters"] == two["clusters"]


def assert_sidecars_as_read_back(folder: Path, scratch: Path) -> None:
    """Every segment has its columnar sidecar, equal array for array to one read back from
    the segment (a worker's tap wrote it, or the client's sync)."""
    import numpy as np

    from archive import columns

    with store.open_index(folder).reader() as reader:
        leaves = [leaf for leaf, _ in reader.leaf_readers()]
        assert columns.column_status(folder, reader).complete
        for leaf in leaves:
            columns.write_sidecar(scratch, leaf)
    ours = folder / columns.COLUMNS_DIR
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in scratch.iterdir())
    for sidecar in scratch.iterdir():
        for file in sidecar.glob("*.npy"):
            mine, back = np.load(ours / sidecar.name / file.name), np.load(file)
            assert mine.dtype == back.dtype and np.array_equal(mine, back), file


def same_report(a: Any, b: Any) -> None:
    one, two = a.to_dict(), b.to_dict()
    one.pop("dask", None)
    two.pop("dask", None)
    assert one == two


# --- the slices ----------------------------------------------------------------------------------

def bbc_slice(folder: Path, per_desk: int = 25) -> Path:
    """Two desks of BBC, a lightly edited wire copy of one story, a broken JSON file and a
    JSON Lines file with one bad record (bad input, reported by name)."""
    for desk in ("business", "tech"):
        (folder / desk).mkdir(parents=True)
        for path in sorted((CORPORA / "bbc" / desk).iterdir())[:per_desk]:
            shutil.copy(path, folder / desk / path.name)
    story = sorted((folder / "business").iterdir())[0].read_text("utf-8", "replace")
    (folder / "tech" / "wire-copy.txt").write_text(story + "\nUpdated.\n", "utf-8")
    (folder / "broken.json").write_text('{"title": "half a record", "body": ', "utf-8")
    (folder / "feed.jsonl").write_text(
        '{"title": "Harbour strike ends", "body": "Dockers went back to work today."}\n'
        '{"title": "torn\n', "utf-8")
    return folder


def reuters_slice(folder: Path, files: int = 3, stories: int = 50) -> Path:
    """The first stories of reut2-000.sgm, cut into ``files`` SGML files."""
    text = (CORPORA / "reuters21578" / "reut2-000.sgm").read_bytes().decode("latin-1")
    docs = re.findall(r"<REUTERS.*?</REUTERS>", text, flags=re.S)
    folder.mkdir(parents=True)
    for n in range(files):
        part = docs[n * stories:(n + 1) * stories]
        (folder / f"reut2-{n:03d}.sgm").write_text(
            '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + "\n".join(part) + "\n", "latin-1")
    return folder


@pytest.fixture(scope="module")
def client() -> Any:
    with connect(workers=2) as dask_client:
        yield dask_client


@pytest.fixture(scope="module", autouse=True)
def no_dask_thread_left() -> Any:
    """After this module, stop the thread a Dask client leaves in this process (its offload
    executor): later tests fork, which the archive only does while one thread runs. And end
    the child processes the clusters leave (multiprocessing's resource tracker): later tests
    check that a helper process was reaped by asking for any child left."""
    yield
    import distributed.utils
    import psutil
    distributed.utils._offload_executor.shutdown(wait=True)
    # a fresh one starts no thread until used, and a later module's client can offload again
    # (Dask reads the module's global at each call; a shut one fails every large message)
    from concurrent.futures import ThreadPoolExecutor
    distributed.utils._offload_executor = ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="Dask-Offload")
    for child in psutil.Process().children():
        child.terminate()
    gone, alive = psutil.wait_procs(psutil.Process().children(), timeout=10)
    for child in alive:
        child.kill()
    psutil.wait_procs(alive, timeout=10)


@pytest.fixture(scope="module")
def bbc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bbc_slice(tmp_path_factory.mktemp("bbc") / "bbc")


@pytest.fixture(scope="module")
def bbc_built(bbc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The in-process build of the BBC slice, and its report."""
    folder = tmp_path_factory.mktemp("bbc-built") / "index"
    return folder, Indexer(folder, procs=1, commit_every=30).run([bbc])


# --- a LocalCluster ------------------------------------------------------------------------------

def test_local_cluster_builds_the_bbc_slice_as_in_process(
        client: Any, bbc: Path, bbc_built: tuple[Path, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "index"
    read_back = []
    monkeypatch.setattr(column_sync, "write_sidecar",
                        lambda *a, **k: read_back.append(a[1]) or write_sidecar(*a, **k))
    report = DistributedIndexer(folder, client, commit_every=30,
                                batch_bytes=24 << 10).run([bbc])
    same_report(report, bbc_built[1])
    # the workers wrote their segments' sidecars; the client read back only the segments its
    # own commits merged
    assert len(read_back) < report.dask["segments_as_files"]
    assert_sidecars_as_read_back(folder, tmp_path / "read-back")
    assert report.added == 52 and report.clusters >= 1
    # bad input on a worker: named as the in-process run names it, and the run went on
    assert [e.path for e in report.skipped] == ["bbc/broken.json"]
    assert [e.path for e in report.warnings] == ["bbc/feed.jsonl"]
    assert report.dask["batches"] > 4 and report.dask["segments_as_files"] > 4
    assert not (folder / ".incoming").exists()
    assert_same_index(folder, bbc_built[0])


def test_local_cluster_incremental_run_matches_in_process(
        client: Any, bbc: Path, tmp_path: Path) -> None:
    """A second run after edits: only changed files go to the workers; the same result."""
    inputs = tmp_path / "bbc"
    shutil.copytree(bbc, inputs)
    ours, theirs = tmp_path / "dask", tmp_path / "inproc"
    DistributedIndexer(ours, client, batch_bytes=24 << 10).run([inputs])
    Indexer(theirs, procs=1).run([inputs])
    first = sorted((inputs / "business").iterdir())
    # a wire copy of another story (a new cluster), an edit, a removal
    shutil.copy(first[0], inputs / "tech" / "copy-of-business.txt")
    first[1].write_text(first[1].read_text("utf-8") + "\nA late paragraph.\n", "utf-8")
    first[2].unlink()
    again = DistributedIndexer(ours, client, batch_bytes=24 << 10).run([inputs])
    reference = Indexer(theirs, procs=1).run([inputs])
    same_report(again, reference)
    assert (again.added, again.updated, again.removed) == (1, 1, 1)
    assert again.dask["batches"] == 1  # the two changed files, nothing else sent
    assert_same_index(ours, theirs)


def test_local_cluster_builds_the_reuters_slice_as_bytes(client: Any, tmp_path: Path) -> None:
    inputs = reuters_slice(tmp_path / "reuters")
    reference = Indexer(tmp_path / "inproc", procs=1, commit_every=100).run([inputs])
    report = DistributedIndexer(tmp_path / "dask", client, segments="bytes", commit_every=100,
                                batch_bytes=1).run([inputs])
    same_report(report, reference)
    assert report.added == 150
    assert report.dask["segments_as_bytes"] == 3 and report.dask["segments_as_files"] == 0
    assert_same_index(tmp_path / "dask", tmp_path / "inproc")
    assert_sidecars_as_read_back(tmp_path / "dask", tmp_path / "read-back")


def test_batches_larger_than_commit_every_have_their_segments_written_side_by_side(
        client: Any, bbc: Path, bbc_built: tuple[Path, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch outgrows ``commit_every`` here (a 100k-article run's batches do): a commit
    waits for the segments written so far, so it waits until each worker has one in flight,
    not after every batch (which wrote one segment at a time)."""
    waited_for: list[int] = []
    commit = DistributedIndexer.commit

    def counting(self: DistributedIndexer, w: Any) -> None:
        waited_for.append(len(self._writing))
        commit(self, w)

    monkeypatch.setattr(DistributedIndexer, "commit", counting)
    folder = tmp_path / "index"
    report = DistributedIndexer(folder, client, commit_every=1,
                                batch_bytes=24 << 10).run([bbc])
    same_report(report, bbc_built[1])
    assert report.dask["batches"] > 4 and len(waited_for) > 2
    # the last commit takes what is left; each one before waited on a segment per worker
    assert min(waited_for[:-1]) >= 2, waited_for
    assert_same_index(folder, bbc_built[0])


def test_without_dask_the_options_say_what_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from click.testing import CliRunner

    from archive.cli import main
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    result = CliRunner().invoke(main, ["index", str(tmp_path), "--index", str(tmp_path / "ix"),
                                       "--workers", "2"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: --cluster and --workers need the dask[distributed] package "
        "(pip install 'newsarchive[dask]')"]
    assert not (tmp_path / "ix").exists()


# --- the multi-machine shape: a scheduler and workers in processes of their own ---------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """``dask scheduler`` and ``dask worker`` processes, as on separate machines."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.scheduler = self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port",
                                      self.address.rsplit(":", 1)[1], "--no-dashboard"])
        self.workers: list[subprocess.Popen] = []

    def _start(self, command: list[str]) -> subprocess.Popen:
        log = open(self.folder / f"log-{len(os.listdir(self.folder))}.txt", "wb")
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                cwd=self.folder, start_new_session=True)

    def keep_workers(self, count: int) -> None:
        """Start workers until ``count`` run, and wait until the scheduler has them."""
        self.workers = [w for w in self.workers if w.poll() is None]
        while len(self.workers) < count:
            self.workers.append(self._start([
                str(DASK), "worker", self.address, "--nthreads", "1", "--no-nanny",
                "--no-dashboard", "--local-directory", str(self.folder / "work")]))
        with distributed.Client(self.address, timeout="60s") as probe:
            probe.wait_for_workers(count, timeout=120)

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                process.kill()
            process.wait()


def kill_mid_run(run: subprocess.Popen, victim: subprocess.Popen,
                 reached: Callable[[], bool], what: str) -> str:
    """SIGKILL ``victim`` (a worker) once ``reached()`` holds while ``run`` still runs; the
    run's output, once it has ended well and is known to have been running at the kill."""
    deadline = time.monotonic() + 300
    while not reached() and run.poll() is None:
        assert time.monotonic() < deadline, f"the run never reached {what}"
        time.sleep(0.01)
    killed_mid_run = run.poll() is None
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert killed_mid_run, "the run ended before the worker was killed: make it longer"
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not DASK.exists():
        pytest.skip("the dask command is not installed beside this Python")
    running = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("segments", ["files", "bytes"])
def test_cluster_with_a_worker_killed_mid_run_builds_the_clean_index(
        segments: str, cluster: Cluster, bbc: Path, bbc_built: tuple[Path, Any],
        tmp_path: Path) -> None:
    cluster.keep_workers(2)
    folder = tmp_path / "index"
    run = subprocess.Popen(
        [str(ARCHIVE), "index", str(bbc), "--index", str(folder), "--cluster", cluster.address,
         "--segments", segments, "--batch-kb", "8", "--commit-every", "30", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    # mid-run: once the first commit is in, a worker (holding read batches) goes
    out = kill_mid_run(run, cluster.workers[0],
                       lambda: (folder / f"_{store.INDEX_NAME}_1.toc").exists(), "a commit")
    report = json.loads(out)
    assert report["added"] == 52 and report["skipped"][0]["path"] == "bbc/broken.json"
    other = "segments_as_bytes" if segments == "files" else "segments_as_files"
    assert report["dask"][f"segments_as_{segments}"] > 4 and report["dask"][other] == 0
    assert_same_index(folder, bbc_built[0])


def test_cluster_client_killed_mid_run_keeps_its_last_commit_and_a_rerun_converges(
        cluster: Cluster, bbc: Path, bbc_built: tuple[Path, Any], tmp_path: Path) -> None:
    cluster.keep_workers(2)
    folder = tmp_path / "index"
    command = [str(ARCHIVE), "index", str(bbc), "--index", str(folder), "--cluster",
               cluster.address, "--batch-kb", "8", "--commit-every", "30", "--json"]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=tmp_path)
    deadline = time.monotonic() + 300
    while not (folder / f"_{store.INDEX_NAME}_1.toc").exists() and run.poll() is None:
        assert time.monotonic() < deadline, "the run made no commit"
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before it could be killed"
    run.kill()
    run.communicate()
    committed = store.open_index(folder).doc_count()
    assert 0 < committed < 52  # the last commit stands
    again = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["added"] + report["unchanged"] == 52
    assert not (folder / ".incoming").exists()
    assert_same_index(folder, bbc_built[0])


def test_amdahl_projection_keeps_the_serial_part() -> None:
    from bench.distributed import PROJECT_ARTICLES, project
    rows = project("x", {"articles": 1000, "seconds": 10.0, "serial_seconds": 1.0})
    hours = {r["workers"]: r["hours"] for r in rows}
    per_article = (1.0 / 1000, 9.0 / 1000)
    assert hours[1] == pytest.approx(PROJECT_ARTICLES * sum(per_article) / 3600)
    assert hours[8] == pytest.approx(PROJECT_ARTICLES * (per_article[0] + per_article[1] / 8)
                                     / 3600)
    assert [round(r["speedup"], 2) for r in rows] == [1.0, round(10 / (1 + 9 / 8), 2),
                                                      round(10 / (1 + 9 / 32), 2)]


def _crashing(real: Any) -> Any:
    """``read_articles`` whose reader raises (a reader bug) on any file named crash-me*."""
    def crashing(source: Any, format_name: Any = None) -> Any:
        if source.path.name.startswith("crash-me"):
            raise RuntimeError("the reader fell over")
        return real(source, format_name)
    return crashing


def _crash_on_crash_me() -> bool:
    """Run on the workers by ``client.run``: their reading crashes on crash-me* only."""
    from archive import reading
    reading.read_articles = _crashing(reading.read_articles)
    return True


def test_a_reader_crash_on_a_worker_is_reported_by_name(client: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = tmp_path / "news"
    inputs.mkdir()
    for n in range(3):
        (inputs / f"story{n}.txt").write_text(f"Harbour story {n}\n\nThe harbour reopened "
                                              f"on day {n} after the storm.\n", "utf-8")
    (inputs / "crash-me.txt").write_text("Crash\n\nThis one breaks its reader.\n", "utf-8")
    assert all(client.run(_crash_on_crash_me).values())
    report = DistributedIndexer(tmp_path / "dask", client, batch_bytes=1).run([inputs])
    from archive import reading
    monkeypatch.setattr(reading, "read_articles", _crashing(reading.read_articles))
    reference = Indexer(tmp_path / "inproc", procs=1).run([inputs])
    same_report(report, reference)
    assert report.added == 3
    assert [(e.path, e.reason) for e in report.skipped] == [
        ("news/crash-me.txt", "reader failed: RuntimeError('the reader fell over')")]
    assert_same_index(tmp_path / "dask", tmp_path / "inproc")

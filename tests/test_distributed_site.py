"""The site's search bundle built on a Dask cluster (issue 15) is the in-process build's.

Every file of the site folder is compared byte for byte with an in-process ``archive site``
of the same index (pages, feeds, the related-articles cache, the bundle). The clusters are
real: a ``LocalCluster`` of two worker processes, and for the multi-machine shape a ``dask
scheduler`` and ``dask worker`` processes started here (test_distributed's ``Cluster``), one
worker SIGKILLed while the build goes on, and one that cannot see the index folder (a mount
namespace of its own hides it). The corpus is the seeds, a slice of BBC and one of Reuters.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from archive.cli import main
from archive.indexer import Indexer
from archive.site.builder import SiteConfig, build_site

from conftest import SEEDS

distributed = pytest.importorskip("distributed", reason="needs dask[distributed] (the "
                                  "test extra)")

from archive.distributed import connect  # noqa: E402
from archive.distributed.site import DistributedBundle, article_ranges  # noqa: E402

# the clusters, the slices, and the end of what a cluster leaves in this process
import test_distributed  # noqa: E402
from test_distributed import (ARCHIVE, DASK, Cluster, bbc_slice, kill_mid_run,  # noqa: E402
                              reuters_slice)

no_dask_thread_left = test_distributed.no_dask_thread_left   # autouse in this module too

pytestmark = pytest.mark.needs_corpora
CONFIG = SiteConfig(base_url="https://news.example/")   # the command's defaults


def site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
            if p.is_file()}


def assert_same_site(ours: Path, theirs: Path) -> None:
    one, two = site_files(ours), site_files(theirs)
    assert sorted(one) == sorted(two)
    assert sum(1 for name in one if name.startswith("search/bundle/a/")) > 200
    differ = [name for name in one if one[name] != two[name]]
    assert not differ, f"{len(differ)} files differ, e.g. {differ[:5]}"


@pytest.fixture(scope="module")
def client() -> Any:
    with connect(workers=2) as dask_client:
        yield dask_client


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds, 2 x 40 BBC stories and 3 x 50 Reuters stories (dated and undated articles,
    several sources, places and topics) in an index built in-process."""
    inputs = tmp_path_factory.mktemp("inputs")
    shutil.copytree(SEEDS, inputs / "seeds")
    bbc_slice(inputs / "bbc", per_desk=40)
    reuters_slice(inputs / "reuters")
    folder = tmp_path_factory.mktemp("shared") / "index"
    Indexer(folder, procs=1).run([inputs])
    return folder


@pytest.fixture(scope="module")
def in_process(index: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The site built in one process, and its report."""
    out = tmp_path_factory.mktemp("in-process") / "site"
    return out, build_site(index, out, CONFIG, procs=1)


# --- a LocalCluster ------------------------------------------------------------------------------

def test_local_cluster_builds_the_site_of_the_in_process_build(
        client: Any, index: Path, in_process: tuple[Path, Any], tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = build_site(index, out, CONFIG, cluster=client)
    assert_same_site(out, in_process[0])
    dask = report.search.pop("dask")
    theirs = dict(in_process[1].search)
    for varies in ("seconds", "peak_rss_mb"):
        report.search.pop(varies), theirs.pop(varies)
    assert report.search == theirs
    assert (report.pages, report.added, report.bytes) == \
        (in_process[1].pages, in_process[1].added, in_process[1].bytes)
    # a task per range of articles and per segment's lists
    assert dask["workers"] == 2 and dask["ranges"] == 8 and \
        dask["tasks"] == 8 + report.search["segments"]


def test_a_cluster_rebuild_over_the_same_site_changes_nothing(
        client: Any, index: Path, in_process: tuple[Path, Any], tmp_path: Path) -> None:
    """The client's OutputFolder decides what changed, wherever a file was made: a forced
    cluster build over the in-process site rewrites no file."""
    out = tmp_path / "site"
    shutil.copytree(in_process[0], out)
    report = build_site(index, out, CONFIG, force=True, cluster=client)
    assert report.pages == in_process[1].pages
    assert (report.written, report.added, report.changed, report.removed) == (0, 0, 0, 0)
    assert report.changes == []
    assert_same_site(out, in_process[0])


def test_more_ranges_than_workers_give_the_same_bundle(
        client: Any, index: Path, in_process: tuple[Path, Any], tmp_path: Path) -> None:
    """The bundle alone, cut into many small ranges: the ranges' seams leave no trace."""
    from archive.search import Archive
    from archive.site.files import OutputFolder
    out = OutputFolder(tmp_path / "bundle")
    with Archive(index) as archive:
        bundle = DistributedBundle(client, archive, index, ranges=37).submit()
        report = bundle.finish(out)
    assert report.articles == in_process[1].search["articles"]
    assert report.files == in_process[1].search["files"] and report.term_shards > 1
    ours, theirs = site_files(tmp_path / "bundle"), site_files(in_process[0])
    assert [name for name, data in ours.items() if theirs.get(name) != data] == []


def _break_article(article_id: str) -> bool:
    """Run on the workers by ``client.run``: the article file of ``article_id`` fails."""
    from archive.site.search import articles, format
    real = format.article_record

    def breaking(stored: dict[str, Any]) -> dict[str, Any]:
        if stored["id"] == article_id:
            raise ValueError("a record the bundle cannot hold")
        return real(stored)
    articles.article_record = breaking
    return True


def _mend() -> bool:
    from archive.site.search import articles, format
    articles.article_record = format.article_record
    return True


def test_a_failing_task_is_one_line_naming_its_articles(
        client: Any, index: Path, tmp_path: Path) -> None:
    from archive.search import Archive
    from archive.site.search.postings import Numbering
    with Archive(index) as archive:
        numbering = Numbering(archive)
        number = len(numbering) // 2
        article_id = archive.searcher.stored_fields(numbering.docnums[number])["id"]
    assert all(client.run(_break_article, article_id).values())
    try:
        result = CliRunner().invoke(main, [
            "site", "--index", str(index), "--out", str(tmp_path / "site"), "--no-progress",
            "--cluster", client.scheduler.address])
    finally:
        client.run(_mend)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    found = re.fullmatch(r"Error: the search bundle's articles numbered (\d+) to (\d+) failed "
                         r"on the Dask cluster: ValueError: a record the bundle cannot hold",
                         lines[0])
    assert found and int(found[1]) <= number <= int(found[2]), lines[0]


def test_article_ranges_cover_every_number_once() -> None:
    for count in (0, 1, 7, 100, 4097):
        for wanted in (1, 3, 8, 200):
            ranges = article_ranges(count, wanted)
            assert [n for a, b in ranges for n in range(a, b)] == list(range(count))
            assert len(ranges) == min(wanted, count)


def test_site_command_with_workers(index: Path, in_process: tuple[Path, Any],
                                   tmp_path: Path) -> None:
    out = tmp_path / "site"
    args = ["site", "--index", str(index), "--out", str(out), "--base-url",
            "https://news.example/", "--no-progress"]
    clash = CliRunner().invoke(main, [*args, "--workers", "2", "--cluster", "tcp://x:1"])
    assert clash.exit_code == 2 and "give --cluster or --workers, not both" in clash.output
    result = CliRunner().invoke(main, [*args, "--workers", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["search"]["dask"]["workers"] == 2
    assert report["articles"] == in_process[1].articles
    assert_same_site(out, in_process[0])


def test_site_command_without_dask_says_what_is_missing(
        index: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    result = CliRunner().invoke(main, ["site", "--index", str(index), "--out",
                                       str(tmp_path / "site"), "--workers", "2"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: --cluster and --workers need the dask[distributed] package "
        "(pip install 'newsarchive[dask]')"]


# --- the multi-machine shape ---------------------------------------------------------------------

cluster = test_distributed.cluster   # a scheduler and two worker processes, this module's own


@pytest.mark.parametrize("moment", ["pages", "bundle"])
def test_cluster_with_a_worker_killed_mid_build_builds_the_clean_site(
        moment: str, cluster: Cluster, index: Path, in_process: tuple[Path, Any],
        tmp_path: Path) -> None:
    """A worker is SIGKILLed while the client writes the pages (its tasks running), or once
    the client writes the bundle's first files (the worker running segments' lists): Dask recomputes what it lost on the other worker, and the site is the clean
    one (nothing lost, nothing twice)."""
    cluster.keep_workers(2)
    out = tmp_path / "site"
    run = subprocess.Popen(
        [str(ARCHIVE), "site", "--index", str(index), "--out", str(out), "--base-url",
         "https://news.example/", "--cluster", cluster.address, "--no-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    victim = cluster.workers[0]

    def reached() -> bool:   # the tasks are submitted before the first page is written
        if moment == "pages":
            return out.is_dir() and any(out.iterdir())
        return (out / "search" / "bundle" / "a").is_dir()
    report = json.loads(kill_mid_run(run, victim, reached, f"its {moment}"))
    assert report["search"]["dask"]["scheduler"] == cluster.address
    if moment == "bundle":   # results the killed worker held were computed again
        prefix = f"archive-site-{report['search']['dask']['run']}-"

        def reruns(dask_scheduler: Any) -> list[str]:
            """On the scheduler (a closure, so it travels by value): the build's tasks that
            went to a worker more than once."""
            counts: dict[str, int] = {}
            for entry in dask_scheduler.transition_log:
                key, finish = str(entry[0]), entry[2]
                if key.startswith(prefix) and finish == "processing":
                    counts[key] = counts.get(key, 0) + 1
            return [key for key, n in counts.items() if n > 1]
        with distributed.Client(cluster.address, timeout="60s") as probe:
            assert probe.run_on_scheduler(reruns), \
                "no task of the build ran twice: the kill came too late"
    assert_same_site(out, in_process[0])


def hidden_worker(cluster: Cluster, hidden: Path) -> subprocess.Popen:
    """A ``dask worker`` in a mount namespace of its own, where ``hidden`` is an empty
    folder: a machine that does not share that file system."""
    script = (f"mount -t tmpfs hidden {hidden} && exec {DASK} worker {cluster.address} "
              f"--nthreads 1 --no-nanny --no-dashboard --local-directory "
              f"{cluster.folder / 'work'}")
    return cluster._start(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           script])


def test_a_worker_that_cannot_see_the_index_fails_the_build_in_one_line(
        cluster: Cluster, index: Path, tmp_path: Path) -> None:
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare --mount (root or user namespaces) to hide a folder")
    for worker in cluster.workers:   # only the worker that cannot see the index is left
        worker.kill()
        worker.wait()
    cluster.workers = []
    hidden = tmp_path / "hidden"
    shutil.copytree(index, hidden / "index")
    worker = hidden_worker(cluster, hidden)
    try:
        with distributed.Client(cluster.address, timeout="60s") as probe:
            probe.wait_for_workers(1, timeout=120)
        out = tmp_path / "site"
        result = subprocess.run(
            [str(ARCHIVE), "site", "--index", str(hidden / "index"), "--out", str(out),
             "--cluster", cluster.address, "--no-progress"],
            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    finally:
        worker.kill()
        worker.wait()
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: the Dask worker at tcp://"), lines
    assert f"cannot open the index folder {hidden / 'index'}" in lines[0]
    assert "must see that folder" in lines[0]
    # failed before the bundle's files, and before any page
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))

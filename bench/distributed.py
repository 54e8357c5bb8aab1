"""``python -m bench distributed``: the build in-process against a LocalCluster of 1 and 2
Dask workers, on one corpus after another, in one run.

Per run: wall time of the build (the cluster is started, and its workers have imported the
archive, before the clock starts: a long-lived cluster pays that once), speed-up over the
in-process build, and the client's serial share (its own time applying batches, clustering,
moving segments and committing, over the wall time). The runs must agree on what they built
(articles, clusters); tests/test_distributed.py compares the indexes field by field.

From the one-worker run it projects a build of ``PROJECT_ARTICLES`` on 1, 8 and 32 workers by
Amdahl's law: the client's serial seconds per article stay, the rest divides by the workers.

The site table (``site_runs``): ``archive site`` of the in-process index, in one process, in
two (the default on two cores), and with the search bundle on a LocalCluster of 1 and 2
workers while the client writes the pages. Client serial seconds there: the wall time less
the client's waits for the cluster (the pages, and writing what the workers made, are its
own). Every build's files must be byte for byte the one-process build's, or the run stops.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

PROJECT_ARTICLES = 10_000_000
PROJECT_WORKERS = (1, 8, 32)

COLUMNS = [("corpus", "corpus", ""), ("mode", "mode", ""), ("articles", "articles", ",d"),
           ("seconds", "wall s", ".1f"), ("speedup", "speed-up", ".2f"),
           ("serial_seconds", "client serial s", ".1f"), ("serial_share", "serial share", ".0%"),
           ("articles_per_second", "articles/s", ",.0f")]
SITE_COLUMNS = [("corpus", "corpus", ""), ("mode", "mode", ""), ("articles", "articles", ",d"),
                ("files", "files", ",d"), ("seconds", "wall s", ".1f"),
                ("speedup", "speed-up", ".2f"), ("serial_seconds", "client serial s", ".1f"),
                ("serial_share", "serial share", ".0%")]
PROJECTION_COLUMNS = [("corpus", "corpus", ""), ("workers", "workers", "d"),
                      ("hours", "projected hours", ".1f"), ("speedup", "speed-up", ".1f"),
                      ("serial_share", "serial share", ".0%")]


def _warm(client: Any) -> None:
    """Import the archive's readers and gazetteer on every worker before timing."""
    def load() -> bool:
        from archive.article import Article
        from archive.enrich import enrich
        from archive.sources import reader_for
        for name in ("text", "reuters", "records"):
            reader_for(name)
        enrich(Article(id="warm", title="Syrian army", body="BEIRUT - The army in Lebanon.",
                        path="warm.txt"))
        return True
    client.run(load)


def build(corpus: Path, folder: Path, workers: int | None) -> dict[str, Any]:
    """One timed build of ``corpus`` into a fresh ``folder``."""
    from archive.indexer import Indexer
    shutil.rmtree(folder, ignore_errors=True)
    if not workers:
        started = time.perf_counter()
        report = Indexer(folder, procs=1).run([corpus])
        seconds = time.perf_counter() - started
        serial = seconds
    else:
        from archive.distributed import DistributedIndexer, connect
        with connect(workers=workers) as client:
            _warm(client)
            started = time.perf_counter()
            indexer = DistributedIndexer(folder, client)
            report = indexer.run([corpus])
            seconds = time.perf_counter() - started
            serial = indexer.serial_seconds
    return {"mode": f"{workers} worker{'s' if workers != 1 else ''}" if workers
            else "in-process", "workers": workers or 0, "articles": report.added,
            "clusters": report.clusters, "seconds": round(seconds, 2),
            "serial_seconds": round(serial, 2), "serial_share": serial / seconds,
            "articles_per_second": report.added / seconds}


def run(corpora: list[tuple[str, Path]], work: Path, index: bool = True,
        site: bool = True, repeat: int = 1) -> tuple[list[dict], list[dict], list[dict]]:
    """The index table and its projection (``index``), the site table (``site``)."""
    rows: list[dict[str, Any]] = []
    projections: list[dict[str, Any]] = []
    sites: list[dict[str, Any]] = []
    for name, corpus in corpora:
        if site:
            sites.extend(site_runs(name, corpus, work / f"{name}-site", repeat))
        if not index:
            continue
        runs = [build(corpus, work / f"{name}-{w}", w) for w in (None, 1, 2)]
        base = runs[0]["seconds"]
        for row in runs:
            row.update(corpus=name, speedup=base / row["seconds"])
            if (row["articles"], row["clusters"]) != (runs[0]["articles"], runs[0]["clusters"]):
                raise SystemExit(f"{name}: {row['mode']} built {row['articles']} articles in "
                                 f"{row['clusters']} clusters, in-process "
                                 f"{runs[0]['articles']} in {runs[0]['clusters']}")
        rows.extend(runs)
        projections.extend(project(name, runs[1]))
        shutil.rmtree(work, ignore_errors=True)
    return rows, projections, sites


def project(name: str, one: dict[str, Any]) -> list[dict[str, Any]]:
    """Amdahl from the one-worker run: serial seconds per article, parallel seconds per
    article (the rest of the wall time), scaled to PROJECT_ARTICLES."""
    serial = one["serial_seconds"] / one["articles"]
    parallel = max(0.0, one["seconds"] - one["serial_seconds"]) / one["articles"]
    single = PROJECT_ARTICLES * (serial + parallel)
    out = []
    for workers in PROJECT_WORKERS:
        seconds = PROJECT_ARTICLES * (serial + parallel / workers)
        out.append({"corpus": name, "workers": workers, "hours": seconds / 3600,
                    "speedup": single / seconds,
                    "serial_share": PROJECT_ARTICLES * serial / seconds})
    return out


def _warm_site(client: Any) -> None:
    """Import the bundle's task code on every worker before timing."""
    def load() -> bool:
        import importlib
        importlib.import_module("archive.distributed.sitetasks")
        return True
    client.run(load)


def site_build(index: Path, out: Path, workers: int | None, procs: int = 1) -> dict[str, Any]:
    """One timed ``archive site`` of ``index`` into a fresh ``out``."""
    from archive.site.builder import build_site
    shutil.rmtree(out, ignore_errors=True)
    if not workers:
        started = time.perf_counter()
        report = build_site(index, out, procs=procs)
        seconds = time.perf_counter() - started
        serial = seconds
        mode = f"in-process, {procs} process{'es' if procs > 1 else ''}"
    else:
        from archive.distributed import connect
        with connect(workers=workers) as client:
            _warm_site(client)
            started = time.perf_counter()
            report = build_site(index, out, cluster=client)
            seconds = time.perf_counter() - started
            serial = seconds - report.search["dask"]["client_wait_seconds"]
        mode = f"{workers} worker{'s' if workers != 1 else ''}"
    return {"mode": mode, "workers": workers or 0, "articles": report.articles,
            "files": report.pages, "seconds": round(seconds, 2),
            "serial_seconds": round(serial, 2), "serial_share": serial / seconds}


def _digests(out: Path) -> dict[str, str]:
    import hashlib
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in out.rglob("*") if p.is_file()}


def site_runs(name: str, corpus: Path, work: Path, repeat: int = 1) -> list[dict[str, Any]]:
    """The corpus indexed in-process (not timed), then its site built four ways, the four
    taken in turn ``repeat`` times; each way's fastest build is its row (on a shared machine
    the load changes from one build to the next)."""
    from archive.indexer import Indexer
    index = work / "index"
    shutil.rmtree(work, ignore_errors=True)
    Indexer(index).run([corpus])
    modes = ((None, 1), (None, 2), (1, 1), (2, 1))
    best: dict[tuple[int | None, int], dict[str, Any]] = {}
    reference = None
    for _ in range(repeat):
        for workers, procs in modes:
            out = work / "site"
            row = site_build(index, out, workers, procs)
            digests = _digests(out)
            if reference is None:
                reference = digests
            elif digests != reference:
                differ = sorted(k for k in reference.keys() | digests.keys()
                                if reference.get(k) != digests.get(k))
                raise SystemExit(f"{name}: the site built {row['mode']} differs from the "
                                 f"one-process build in {len(differ)} files, e.g. {differ[:3]}")
            row["runs"] = best.get((workers, procs), {}).get("runs", []) + [row["seconds"]]
            if (workers, procs) not in best or row["seconds"] < best[(workers, procs)]["seconds"]:
                best[(workers, procs)] = row
            else:
                best[(workers, procs)]["runs"] = row["runs"]
    rows = [best[mode] for mode in modes]
    base = rows[0]["seconds"]
    for row in rows:
        row.update(corpus=name, speedup=base / row["seconds"])
    shutil.rmtree(work, ignore_errors=True)
    return rows

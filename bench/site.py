"""Whole-site build against Pagefind on the same pages, in one run (``python -m bench site``).

For each corpus: index it (not timed against anything), then build the whole static site
with the installed code path (``archive site``, a fresh process: pages, feeds, related
articles, search bundle) and then run Pagefind over the very pages that build wrote. Both are
timed as whole processes by the same measuring wrapper; the figure that matters is the ratio.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from bench.common import archive_command
from bench.static_search_bench import measured, pagefind_binary

COLUMNS = [("corpus", "corpus", ""), ("system", "system", ""), ("pages", "HTML pages", ",d"),
           ("files", "files", ",d"), ("seconds", "wall s", ".1f"), ("cpu", "CPU s", ".1f"),
           ("rss", "peak RSS MB", ",.0f"), ("ratio", "x Pagefind", ".2f")]


def run(corpora: list[tuple[str, Path]], work: Path, timeout: float = 3600) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    binary = pagefind_binary()
    for name, path in corpora:
        base = work / name
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        index, site = base / "index", base / "site"
        subprocess.run(archive_command("index", str(path), "--index", str(index)), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        build = measured(archive_command("site", "--index", str(index), "--out", str(site)), timeout,
                         base / "site.log")
        pages = sum(1 for _ in site.rglob("*.html"))
        files = sum(1 for p in site.rglob("*") if p.is_file())
        row = {"corpus": name, "system": "archive site (whole site)", "pages": pages,
               "files": files, **_figures(build)}
        rows.append(row)
        if binary is None:
            continue
        found = measured([str(binary), "--site", str(site), "--output-path",
                          str(base / "pagefind")], timeout, base / "pagefind.log")
        rows.append({"corpus": name, "system": "pagefind (same pages)", "pages": pages,
                     "files": sum(1 for p in (base / "pagefind").rglob("*") if p.is_file()),
                     **_figures(found), "ratio": 1.0})
        row["ratio"] = round(row["seconds"] / rows[-1]["seconds"], 2)
    return rows


def _figures(measure: dict[str, Any]) -> dict[str, Any]:
    if measure.get("returncode") or measure.get("timed_out"):
        raise RuntimeError(f"a measured build failed: {measure}")
    return {"seconds": measure.get("wall_s"), "cpu": measure.get("cpu_s"),
            "rss": measure.get("peak_rss_mb")}

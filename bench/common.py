"""Shared helpers: where things live, tables, JSON results, measured subprocesses."""

from __future__ import annotations

import json
import os
import platform
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data"
RESULTS = REPO / "bench" / "results"
CORPORA = REPO.parent / "shared" / "corpora"

Column = tuple[str, str, str]  # (key, label, format spec)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[Column]) -> str:
    """A plain-text table; a missing value prints as '-'."""
    def cell(row: dict[str, Any], key: str, spec: str) -> str:
        value = row.get(key)
        if value is None:
            return "-"
        return format(value, spec) if spec else str(value)

    cells = [[cell(r, k, s) for k, _, s in columns] for r in rows]
    widths = [max([len(label)] + [len(c[i]) for c in cells])
              for i, (_, label, _) in enumerate(columns)]
    left = [not spec for _, _, spec in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) if lft else v.rjust(w)
                         for v, w, lft in zip(values, widths, left)).rstrip()

    out = [line([label for _, label, _ in columns]), line(["-" * w for w in widths])]
    out.extend(line(c) for c in cells)
    return "\n".join(out) + "\n"


def environment() -> dict[str, Any]:
    import whoosh
    return {
        "python": platform.python_version(), "whoosh": whoosh.versionstring(),
        "sqlite": sqlite3.sqlite_version, "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def save(name: str, payload: dict[str, Any], results: Path | None = None) -> Path:
    """Write ``payload`` (plus the environment) to results/NAME-TIMESTAMP.json and NAME.json."""
    results = results or RESULTS
    results.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "environment": environment(), **payload}
    text = json.dumps(data, indent=2, default=str)
    stamped = results / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    stamped.write_text(text, "utf-8")
    (results / f"{name}.json").write_text(text, "utf-8")
    return stamped


def archive_command(*args: str) -> list[str]:
    """The ``archive`` command as this Python runs it, for a whole-process measurement."""
    return [sys.executable, "-m", "archive.cli", *args]


def run_worker(task: str, **args: Any) -> dict[str, Any]:
    """Run ``bench.worker`` TASK in a fresh Python process; its JSON result plus its peak RSS.

    A fresh process per measurement keeps one system's caches and memory out of the other's
    figures; the worker reports its own ``ru_maxrss`` (peak resident set, KiB on Linux).
    ``BENCH_INPROCESS=1`` (the tests) runs the task in this process instead: same code, but
    the memory and CPU figures are then this process's, not the step's.
    """
    if os.environ.get("BENCH_INPROCESS"):  # tests: same code, no process per step
        from bench.worker import TASKS, cpu_seconds
        result = TASKS[task](**json.loads(json.dumps(args, default=str)))
        return {**result, "peak_rss_mb": round(peak_rss_mb(), 1),
                "cpu_seconds": round(cpu_seconds(), 3)}
    cmd = [sys.executable, "-m", "bench.worker", task, json.dumps(args, default=str)]
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"bench worker {task} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())

"""Shared helpers: where things live, tables, JSON results, measured subprocesses."""

from __future__ import annotations

import json
import os
import platform
import resource
import signal
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


def worker_command(task: str, args: dict[str, Any]) -> list[str]:
    """``bench.worker`` TASK with its arguments as JSON, as this Python runs it."""
    return [sys.executable, "-m", "bench.worker", task, json.dumps(args, default=str)]


def repo_env() -> dict[str, str]:
    """This environment with the repository first on ``PYTHONPATH``, so a step run in a fresh
    process imports ``bench`` (and this checkout's ``archive``) from here."""
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


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
    done = subprocess.run(worker_command(task, args), capture_output=True, text=True, cwd=REPO,
                          env=repo_env())
    if done.returncode != 0:
        raise RuntimeError(f"bench worker {task} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_parts_mb() -> dict[str, float]:
    """This process's resident memory now, by kind: ``anon`` (its own heap and arrays) and
    ``file`` (pages of mapped files, such as memory-mapped sidecars: the page cache's, shared
    with other processes and dropped under memory pressure). Empty off Linux."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return {}
    parts = {}
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile", "RssShmem"):
            parts[name[3:].lower()] = round(int(value.split()[0]) / 1024, 1)
    return parts


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _tree(root: int) -> list[int]:
    """``root`` and every live descendant, from the kernel's per-thread children lists (a
    forked helper or writer process is counted with the process that started it)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return out


def _memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; PSS shares each shared page among its users, so the
    PSS of a process tree adds up to what the tree holds, counting a shared page once."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


def measured_tree(cmd: Sequence[str], log: Path, interval: float = 0.2) -> dict[str, Any]:
    """Run ``cmd`` and measure it with every process it starts: wall and CPU seconds, and
    memory three ways.

    ``ru_maxrss`` of one process misses what its forked helpers and writer processes hold at
    the same time, so the tree's memory is sampled every ``interval`` seconds from /proc:
    ``tree_rss_mb`` (the sum of the processes' RSS, shared pages counted in each) and
    ``tree_pss_mb`` (shared pages split among their users: the tree's own footprint).
    ``maxrss_mb`` is exact but per process: the largest single process of the tree, from
    ``wait4`` (the command's own rusage with its reaped children's). ``peak_rss_mb`` is the
    larger of the sampled tree sum and that, so a spike between two samples in one process is
    not lost. The one-minute load average before and after is kept with the figures: a wall
    time is only comparable with one measured under the same load. Output goes to ``log``
    (stdout) and ``log.err``.
    """
    err = Path(str(log) + ".err")
    load_before = os.getloadavg()[0]   # other work on a shared machine moves the wall times
    started = time.perf_counter()
    peak_rss = peak_pss = 0
    with open(log, "w") as out, open(err, "w") as errors:
        child = subprocess.Popen(list(cmd), stdout=out, stderr=errors, cwd=REPO, env=repo_env(),
                                 start_new_session=True)   # its own group: killed as one
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid == child.pid:
                    break
                rss = pss = 0
                for member in _tree(child.pid):
                    r, p = _memory_kib(member)
                    rss, pss = rss + r, pss + p
                peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
                time.sleep(interval)
        except BaseException:   # interrupted: leave none of the measured processes running
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    maxrss = usage.ru_maxrss
    return {"returncode": child.returncode, "wall_s": round(time.perf_counter() - started, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "maxrss_mb": round(maxrss / 1024, 1), "tree_rss_mb": round(peak_rss / 1024, 1),
            "tree_pss_mb": round(peak_pss / 1024, 1),
            "peak_rss_mb": round(max(peak_rss, maxrss) / 1024, 1),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}


def measured_worker(task: str, log: Path, **args: Any) -> dict[str, Any]:
    """``bench.worker`` TASK in a fresh process measured by ``measured_tree``: the task's
    JSON result plus the tree's figures under ``measured``. A failed task raises with the
    end of its error output."""
    figures = measured_tree(worker_command(task, args), log)
    if figures["returncode"] != 0:
        tail = Path(str(log) + ".err").read_text("utf-8", "replace")[-4000:]
        raise RuntimeError(f"bench worker {task} failed (exit {figures['returncode']}):\n{tail}")
    lines = log.read_text("utf-8").strip().splitlines()
    return {**json.loads(lines[-1]), "measured": figures}

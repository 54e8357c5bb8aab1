"""Indexing speed: full build, unchanged re-run, re-run after +1% new and ~1% edited articles.

Each corpus is copied to ``bench/data/work/<name>/<name>`` (so it can be changed) and every
step runs in a fresh subprocess (``bench.worker``), which reports its own peak RSS. In the same
run the same input is loaded into SQLite FTS5 (read with the archive's readers, no enrichment).

Rows: FTS5 "full build" (read with the archive's readers + insert) is the reference of every
archive row except "write only", which times Whoosh alone (articles read and enriched before the
clock starts: ``add_document`` + ``commit``) against FTS5's "insert only" (engine vs engine).

The "+1% / ~1%" step adds a new file holding 1% new articles and edits 1% of the articles:
for one-article-per-file corpora (BBC) 1% of the files get a sentence appended; for collections
(Reuters SGML, scale JSONL) the first 1% of the stories in one file are edited, so the archive
reads that whole file again but writes only the edited stories (and the new file's).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import run_worker

EDIT = " An archivist's correction was appended to this story for the benchmark."


def corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in
                  (".txt", ".sgm", ".jsonl") and p.name.split(".")[0].lower() not in
                  ("readme", "provenance") and not p.name.startswith("all-")
                  and p.name not in ("cat-descriptions_120396.txt",
                                     "feldman-cia-worldfactbook-data.txt"))


def working_copy(source: Path, work: Path) -> Path:
    """A fresh copy of the corpus's article files under ``work/<name>``."""
    target = work / source.name
    if target.exists():
        shutil.rmtree(target)
    for path in corpus_files(source):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return target


_STORY = re.compile(r"<REUTERS\b.*?</REUTERS>", re.S)


def mutate(root: Path, total: int) -> dict[str, int]:
    """Add ceil(1%) new articles in a new file (or files) and edit ceil(1%) existing ones."""
    n = max(1, math.ceil(total / 100))
    files = corpus_files(root)
    kind = files[0].suffix.lower()
    if kind == ".txt":
        new_dir = root / "zz-new"
        new_dir.mkdir(exist_ok=True)
        for i in range(n):
            a, b = files[i].read_text("latin-1"), files[-1 - i].read_text("latin-1")
            title, _, body = a.partition("\n")
            other = b.partition("\n")[2]
            new_dir.joinpath(f"{i:03d}.txt").write_text(
                f"Follow-up: {title}\n\n{body.strip()}\n\n{other.strip()}\n", "latin-1")
        for path in files[:n]:
            path.write_text(path.read_text("latin-1").rstrip() + EDIT + "\n", "latin-1")
    elif kind == ".sgm":
        text = files[0].read_text("latin-1")
        stories = _STORY.findall(text)[:n]
        new = "\n".join(s.replace("<TITLE>", "<TITLE>FOLLOW-UP: ", 1) for s in stories)
        (root / "reut2-900.sgm").write_text(new + "\n", "latin-1")
        target = files[1].read_text("latin-1")
        edited = [0]

        def edit(m: re.Match[str]) -> str:
            if edited[0] >= n:
                return m.group(0)
            edited[0] += 1
            return m.group(0).replace("</BODY>", EDIT + "</BODY>", 1)
        files[1].write_text(_STORY.sub(edit, target), "latin-1")
    elif kind == ".jsonl":
        lines = files[0].read_text("utf-8").splitlines()
        new = []
        for i in range(n):
            record = json.loads(lines[i % len(lines)])
            record["id"] = f"{record.get('id', i)}-followup"
            record["title"] = "Follow-up: " + record.get("title", "")
            new.append(json.dumps(record, ensure_ascii=False))
        (root / "zz-new.jsonl").write_text("\n".join(new) + "\n", "utf-8")
        target = files[1].read_text("utf-8").splitlines()
        for i in range(min(n, len(target))):
            record = json.loads(target[i])
            record["body"] = record.get("body", "") + EDIT
            target[i] = json.dumps(record, ensure_ascii=False)
        files[1].write_text("\n".join(target) + "\n", "utf-8")
    else:
        raise ValueError(f"cannot mutate a corpus of {kind} files")
    return {"added": n, "edited": n}


def bench_corpus(name: str, source: Path, work: Path) -> list[dict[str, Any]]:
    base = work / name
    root = working_copy(source, base)
    index = base / "index"
    if index.exists():
        shutil.rmtree(index)
    rows: list[dict[str, Any]] = []
    fts = run_worker("fts5_build", inputs=[str(root)], db=str(base / "fts5.sqlite"))
    docs = fts["docs"]
    fts_row = {"corpus": name, "system": "fts5", "step": "full build", "docs": docs,
               "seconds": fts["seconds"], "read_seconds": fts["read_seconds"],
               "bytes": fts["bytes"], "peak_rss_mb": fts["peak_rss_mb"],
               "cpu_seconds": fts["cpu_seconds"]}
    rows.append(fts_row)
    rows.append({"corpus": name, "system": "fts5", "step": "insert only", "docs": docs,
                 "seconds": fts["insert_seconds"], "cpu_seconds": None, "bytes": None,
                 "peak_rss_mb": None})
    write = run_worker("archive_write", inputs=[str(root)], index=str(base / "write-only"))
    rows.append({"corpus": name, "system": "archive", "step": "write only (whoosh)",
                 "docs": write["docs"], "seconds": write["seconds"],
                 "cpu_seconds": write.get("write_cpu_seconds"),
                 "bytes": write["bytes"], "peak_rss_mb": write["peak_rss_mb"]})
    shutil.rmtree(base / "write-only", ignore_errors=True)
    full = run_worker("archive_build", inputs=[str(root)], index=str(index), rebuild=True)
    rows.append({"corpus": name, "system": "archive", "step": "full build",
                 "docs": full["added"], **_pick(full)})
    again = run_worker("archive_build", inputs=[str(root)], index=str(index), rebuild=False)
    rows.append({"corpus": name, "system": "archive", "step": "unchanged re-run",
                 "docs": again["unchanged"], **_pick(again)})
    changed = mutate(root, docs)
    update = run_worker("archive_build", inputs=[str(root)], index=str(index), rebuild=False)
    rows.append({"corpus": name, "system": "archive",
                 "step": f"+{changed['added']} new, {changed['edited']} edited",
                 "docs": update["added"] + update["updated"], **_pick(update)})
    for r in rows:
        r["docs_per_s"] = r["docs"] / r["seconds"] if r["seconds"] else None
        r["vs_fts5"] = r["seconds"] / fts_row["seconds"]
        r["cpu_vs_fts5"] = r["cpu_seconds"] / fts_row["cpu_seconds"] \
            if r["cpu_seconds"] is not None else None
        r["vs_full"] = r["seconds"] / full["seconds"] if r["system"] == "archive" else None
    insert, write_row = rows[1], rows[2]
    insert["vs_fts5"] = 1.0  # the reference of the engine-only row below
    write_row["vs_fts5"] = write_row["seconds"] / insert["seconds"]
    write_row["cpu_vs_fts5"] = None  # FTS5's insert has no CPU figure of its own
    return rows


def _pick(result: dict[str, Any]) -> dict[str, Any]:
    picked = {k: result[k] for k in ("seconds", "cpu_seconds", "bytes", "peak_rss_mb")}
    picked["procs"] = result.get("procs")  # writer processes the run chose (load-dependent)
    return picked


def run(corpora: Sequence[tuple[str, Path]], work: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, source in corpora:
        rows.extend(bench_corpus(name, source, work))
    return rows


COLUMNS = [("corpus", "corpus", ""), ("system", "system", ""), ("step", "step", ""),
           ("docs", "docs", ",d"), ("seconds", "seconds", ".2f"),
           ("cpu_seconds", "CPU s", ".2f"), ("docs_per_s", "docs/s", ",.0f"),
           ("vs_fts5", "x FTS5", ".1f"), ("cpu_vs_fts5", "CPU x FTS5", ".1f"),
           ("vs_full", "x full", ".3f"), ("peak_rss_mb", "peak RSS MB", ".0f"),
           ("mb", "size MB", ".1f"), ("procs", "procs", "")]


def finish(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:
        r["mb"] = r["bytes"] / 1e6 if r.get("bytes") is not None else None
    return rows

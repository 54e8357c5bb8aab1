"""Publishing daily: what adding a day's articles (and editing a few) costs a built site.

For a corpus: index it once and export it (JSONL, oldest first); hold out its newest 1% of
dated articles (a day's news, as an archive that grows daily receives it); index the rest
from JSONL files and build the site (timed, a fresh process). Then add the held-out
articles, edit another 1% (chosen with a fixed seed, their body gets one more sentence),
index again and bring the site up to date (timed, with ``--changes``). The figures are the
update's time as a share of the full build, and the files and bytes it wrote (added or
changed) as a share of the site's; last, a fresh build of the same index into another
folder is compared with the updated one file by file (where they differ, by area).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import archive_command
from bench.static_search_bench import measured

COLUMNS = [("corpus", "corpus", ""), ("articles", "articles", ",d"), ("added", "added", ",d"),
           ("edited", "edited", ",d"), ("full_s", "full build s", ".1f"),
           ("update_s", "update s", ".1f"), ("time_share", "update / full", ".1%"),
           ("files", "site files", ",d"), ("files_written", "files written", ",d"),
           ("files_share", "files written / site", ".1%"),
           ("bytes_share", "bytes written / site", ".1%"),
           ("bundle_written", "of them search bundle", ",d"),
           ("differ", "files differing from a fresh build", ",d"),
           ("segments", "index segments", ",d"), ("units", "bundle units", ",d")]

SHARE = 0.01          # 1% new, 1% edited
FILES = 20            # the base articles are spread over this many JSONL files
BUNDLE = "search/"    # where the search bundle's files live (client scripts under assets/)


def _quiet(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def split(records: list[dict[str, Any]], seed: int = 5) -> tuple[list[dict[str, Any]],
                                                                   list[dict[str, Any]],
                                                                   set[int]]:
    """(base, day, edited positions in base): the newest ``SHARE`` of the dated records are
    the day; ``SHARE`` of the base records, seeded, are the ones edited."""
    dated = [i for i, r in enumerate(records) if r.get("date")]
    count = max(1, round(len(records) * SHARE))
    newest = set(sorted(dated, key=lambda i: (records[i]["date"], i))[-count:])
    base = [r for i, r in enumerate(records) if i not in newest]
    day = [records[i] for i in sorted(newest)]
    edited = set(random.Random(seed).sample(range(len(base)), min(count, len(base))))
    return base, day, edited


def _record(record: dict[str, Any]) -> dict[str, Any]:
    """A record as an outlet's dump would give it: the exported fields minus derived ones."""
    keep = ("title", "body", "source", "date", "captions", "url", "author", "places",
            "topics", "dateline")
    return {k: record[k] for k in keep if record.get(k)}


def _write(folder: Path, base: list[dict[str, Any]], edited: set[int]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-len(base) // FILES)
    for f in range(FILES):
        lines = []
        for i in range(f * per, min(len(base), (f + 1) * per)):
            record = _record(base[i])
            if i in edited:
                record["body"] = record.get("body", "") + "\n\nThis story was updated."
            lines.append(json.dumps(record, ensure_ascii=False))
        (folder / f"base-{f:02d}.jsonl").write_text("".join(x + "\n" for x in lines), "utf-8")


def _files(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*")
            if p.is_file() and not p.name.startswith(".archive-")}


def _meta(site: Path) -> dict[str, Any]:
    """The site's search ``meta`` (its ``segs``: one row per unit of index segments)."""
    from archive.site.search import parse_script
    return parse_script((site / "search" / "bundle" / "meta.js").read_bytes())[1]


def segment_count(index: Path) -> int:
    from archive.search import Archive
    with Archive(index) as archive:
        return sum(1 for leaf, _ in archive.searcher.reader().leaf_readers()
                   if leaf.segment() is not None)


def run(corpora: list[tuple[str, Path]], work: Path, timeout: float = 3600) -> list[dict[str, Any]]:
    rows = []
    for name, path in corpora:
        base_dir = work / name
        shutil.rmtree(base_dir, ignore_errors=True)
        base_dir.mkdir(parents=True)
        whole, dump = base_dir / "whole-index", base_dir / "all.jsonl"
        _quiet(archive_command("index", str(path), "--index", str(whole)))
        _quiet(archive_command("export", "--index", str(whole), "--output", str(dump)))
        records = [json.loads(line) for line in dump.read_text("utf-8").splitlines() if line]
        base, day, edited = split(records)
        articles, index = base_dir / "articles", base_dir / "index"
        site, fresh = base_dir / "site", base_dir / "fresh"
        _write(articles, base, set())
        _quiet(archive_command("index", str(articles), "--index", str(index)))
        full = measured(archive_command("site", "--index", str(index), "--out", str(site)), timeout,
                        base_dir / "full.log")
        _write(articles, base, edited)
        (articles / "day.jsonl").write_text(
            "".join(json.dumps(_record(r), ensure_ascii=False) + "\n" for r in day), "utf-8")
        _quiet(archive_command("index", str(articles), "--index", str(index)))
        changes = base_dir / "changes.txt"
        update = measured(archive_command("site", "--index", str(index), "--out", str(site),
                                   "--changes", str(changes)), timeout, base_dir / "update.log")
        _quiet(archive_command("site", "--index", str(index), "--out", str(fresh)))
        sizes, fresh_sizes = _files(site), _files(fresh)
        lines = changes.read_text("utf-8").splitlines()
        written = [line[2:] for line in lines if line[0] in "AM"]
        differ = sorted(set(sizes) ^ set(fresh_sizes)) + [
            p for p in sorted(set(sizes) & set(fresh_sizes))
            if (site / p).read_bytes() != (fresh / p).read_bytes()]
        areas = Counter(p.split("/", 1)[0] if "/" in p else p for p in written)
        rows.append({
            "corpus": name, "articles": len(base) + len(day), "added": len(day),
            "edited": len(edited), "full_s": full.get("wall_s"), "update_s": update.get("wall_s"),
            "time_share": update["wall_s"] / full["wall_s"], "files": len(sizes),
            "files_written": len(written), "files_share": len(written) / len(sizes),
            "bytes_share": sum(sizes.get(p, 0) for p in written) / sum(sizes.values()),
            "bundle_written": sum(1 for p in written if p.startswith(BUNDLE)),
            "removed": sum(1 for line in lines if line[0] == "D"),
            "written_by_area": dict(areas.most_common(12)),
            "differ": len(differ), "differ_examples": differ[:12],
            "segments": segment_count(index), "units": len(_meta(site)["segs"]),
        })
    return rows

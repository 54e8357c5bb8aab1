"""What the columnar sidecars cost a build: the same full build three ways, in fresh processes.

``none`` writes no sidecars (``Indexer(columns_from=None)``: every search would use Whoosh);
``writer`` is ``archive index`` as shipped, each segment's sidecar written from the postings
as the writer writes them (``columns.PostingsTap``); ``segments`` writes none while building
and reads every segment's postings back at the end (``columns.sync_columns`` alone). One
writer process each, so the three differ only in the sidecars; ``--repeat`` runs the three in
turn that many times and keeps each one's fastest (a shared machine's other jobs only ever
slow a build down).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import folder_bytes, run_worker

VARIANTS: tuple[tuple[str, str | None], ...] = (("none", None), ("writer", "writer"),
                                                 ("segments", "segments"))


def run(corpora: Sequence[tuple[str, Path]], folder: Path, repeat: int = 1
        ) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, source in corpora:
        best: dict[str, dict[str, Any]] = {}
        for _ in range(max(1, repeat)):
            for variant, columns_from in VARIANTS:
                index = folder / f"{name}-{variant}"
                shutil.rmtree(index, ignore_errors=True)
                result = run_worker("archive_build", inputs=[str(source)], index=str(index),
                                    rebuild=True, columns_from=columns_from, procs=1)
                result["sidecar_mb"] = folder_bytes(index / "columns") / 1e6 \
                    if (index / "columns").exists() else 0.0
                if variant not in best or result["seconds"] < best[variant]["seconds"]:
                    best[variant] = result
                shutil.rmtree(index, ignore_errors=True)
        base = best["none"]["seconds"]
        for variant, _ in VARIANTS:
            result = best[variant]
            rows.append({"corpus": name, "sidecars": variant, "articles": result["added"],
                         "seconds": result["seconds"], "x_none": result["seconds"] / base,
                         "peak_rss_mb": result.get("peak_rss_mb"),
                         "sidecar_mb": result["sidecar_mb"]})
    return rows


COLUMNS = [("corpus", "corpus", ""), ("sidecars", "sidecars", ""), ("articles", "articles", ","),
           ("seconds", "seconds", ".1f"), ("x_none", "x none", ".3f"),
           ("peak_rss_mb", "peak RSS MB", ".0f"), ("sidecar_mb", "sidecar MB", ".1f")]

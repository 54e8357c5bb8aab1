"""Keeping the sidecars in step with the index's segments.

Whoosh adds segments at each commit and merges old ones away; a sidecar belongs to one
segment and is never edited. ``sync_columns`` (run at the end of ``archive index``) writes
the sidecars of segments that have none and deletes those whose segment is gone. Deletions
need nothing here: they live in Whoosh's own deletion set, read at query time. Between a
commit and its sync (another process's run, an index from before sidecars), a search that
finds a segment without its sidecar answers from Whoosh, and ``archive check`` notes it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archive.columns.sidecar import COLUMNS_DIR, Sidecar, write_sidecar

#: ``ARCHIVE_COLUMNS=0`` turns the columnar path off (every query answered by Whoosh)
ENV = "ARCHIVE_COLUMNS"


def enabled() -> bool:
    """Whether searches may use the columns (the environment's say; on by default)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "no", "false", "off")


@dataclass
class ColumnStatus:
    """Which segments have a usable sidecar, which lack one, and leftovers to remove."""

    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # no sidecar, or one that is stale
    orphans: list[str] = field(default_factory=list)   # sidecars of merged-away segments

    @property
    def complete(self) -> bool:
        return not self.missing


def _leaves(reader: Any) -> list[Any]:
    return [leaf for leaf, _offset in reader.leaf_readers()] if reader.doc_count_all() \
        else []


def column_status(folder: Path, reader: Any) -> ColumnStatus:
    """The sidecars of ``reader``'s segments (an open reader over the index at ``folder``)."""
    status = ColumnStatus()
    columns_dir = folder / COLUMNS_DIR
    wanted = set()
    for leaf in _leaves(reader):
        segment_id = leaf.segment().segment_id()
        wanted.add(segment_id)
        if Sidecar.open(columns_dir / segment_id, segment_id, leaf.doc_count_all()):
            status.present.append(segment_id)
        else:
            status.missing.append(segment_id)
    if columns_dir.is_dir():
        status.orphans = sorted(p.name for p in columns_dir.iterdir()
                                if p.is_dir() and p.name not in wanted)
    return status


def sync_columns(folder: Path, index: Any) -> ColumnStatus:
    """Write the missing sidecars of the index's current segments, delete the others'.

    Returns the status found before the sync (what was written and removed)."""
    with index.reader() as reader:
        status = column_status(folder, reader)
        columns_dir = folder / COLUMNS_DIR
        missing = set(status.missing)
        for leaf in _leaves(reader):
            if leaf.segment().segment_id() in missing:
                write_sidecar(columns_dir, leaf)
    for name in status.orphans:  # merged away, or a temporary folder a killed run left
        shutil.rmtree(folder / COLUMNS_DIR / name, ignore_errors=True)
    return status

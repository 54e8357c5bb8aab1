"""The manifest of indexed files: ``manifest.json`` in the index folder.

It records which input files went into the last commit (size, mtime, SHA-256, article count).
It is written only after a commit succeeds, so it can lag the index but never lead it: a crash
costs at most a re-read of the files of the interrupted run, never a lost or duplicated
article.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class FileState:
    """What an input file looked like when its articles were committed."""

    size: int
    mtime_ns: int
    sha256: str
    articles: int


def read_manifest(folder: Path) -> dict[str, FileState]:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text("utf-8"))
        return {name: FileState(**state) for name, state in data["files"].items()}
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError):
        # A damaged manifest only costs re-reading inputs: the index itself is the truth.
        return {}


def write_manifest(folder: Path, files: dict[str, FileState]) -> None:
    """Write atomically (temp file + rename), so a crash leaves the old or the new one."""
    payload = {"version": 1, "files": {k: asdict(v) for k, v in sorted(files.items())}}
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(payload, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, folder / MANIFEST)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""The duplicate finder's files: a whole, and numbered deltas beside it, each with its
generation (``DuplicateFinder.save`` says why), written atomically.

``duplicates.npz`` is the whole; ``duplicates-000007.npz`` the delta of generation 7. A reader
takes the whole and the deltas numbered after its generation in an unbroken run
(``saved_chain``): a delta older than the whole (a crash between writing a new whole and
deleting the old deltas) or after a gap is never applied.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class Pieces:
    """An array written piece by piece (``pieces`` yields its rows in order), so saving a
    large one never holds a second copy of it whole."""

    shape: tuple[int, ...]
    dtype: np.dtype
    pieces: Callable[[], Iterator[np.ndarray]]


def delta_path(path: Path, generation: int) -> Path:
    return path.with_name(f"{path.stem}-{generation:06d}{path.suffix}")


def delta_files(path: Path) -> list[tuple[int, Path]]:
    """The delta files beside the base ``path``, by generation."""
    found = []
    for file in path.parent.glob(f"{path.stem}-*{path.suffix}"):
        number = file.name[len(path.stem) + 1:-len(path.suffix) or None]
        if number.isdigit():
            found.append((int(number), file))
    return sorted(found)


def generation_of(path: Path) -> int:
    """The base's generation (0 for a base from before generations; -1 when unreadable)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return int(data["generation"][0]) if "generation" in data.files else 0
    except (OSError, ValueError, KeyError):
        return -1


def saved_chain(path: Path) -> list[Path]:
    """The base and the deltas that follow its generation without a gap."""
    base = generation_of(path)
    if base < 0:
        raise OSError(f"{path}: no readable duplicate index")
    chain = [path]
    for generation, file in delta_files(path):
        if generation == base + len(chain):
            chain.append(file)
        elif generation > base + len(chain):
            break
    return chain


def write_atomically(path: Path, arrays: dict[str, np.ndarray | Pieces]) -> None:
    """Write next to the target and rename over it, so a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            _savez(handle, arrays)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _savez(handle: object, arrays: dict[str, np.ndarray | Pieces]) -> None:
    """``np.savez`` (an uncompressed zip of ``.npy`` files, read back by ``np.load``), with
    ``Pieces`` written as they come."""
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                if isinstance(value, Pieces):
                    np.lib.format.write_array_header_2_0(member, {
                        "descr": np.lib.format.dtype_to_descr(np.dtype(value.dtype)),
                        "fortran_order": False, "shape": value.shape})
                    written = 0
                    for piece in value.pieces():
                        piece = np.ascontiguousarray(piece, dtype=value.dtype)
                        member.write(piece.tobytes())
                        written += len(piece)
                    if written != value.shape[0]:
                        raise ValueError(f"{name}: {written} rows written, "
                                         f"{value.shape[0]} announced")
                else:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)

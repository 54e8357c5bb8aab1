"""Mapped pages a long pass over the index has read, handed back to the kernel as it goes.

Segment files are memory-mapped (``durable.MappedFile``). A pass that reads every stored
article or every posting (the site's search bundle and pages) touches every page of every
segment file, and a mapped page stays in the process's resident memory until the process
ends: such a pass grew to the size of the index on top of what it holds. The pages are
clean copies of the files, which the kernel keeps in its page cache anyway, so dropping them
from this process's mapping (``MADV_DONTNEED``) loses nothing; a page read again is mapped
again from the cache. The pass stays as fast as with mapped reads (plain reads, the other
way to keep the pages out, are slower), and its resident memory is what it holds.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from typing import Any

from archive.store.fastwriter import segment_mapping

#: mapped pages a pass may hold before it hands them back
LIMIT_MB = 256
#: how many steps of a pass go between two looks at its mapped pages
LOOK_EVERY = 256
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4 / 1024


def file_pages_mb() -> float:
    """This process's resident file-backed (and shared) pages, in MB; 0 where the system does
    not say (``/proc/self/statm`` is Linux's)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[2]) * _PAGE_MB
    except (OSError, ValueError, IndexError):
        return 0.0


def release(leaves: Iterable[Any]) -> int:
    """Drop the pages of the given segment readers' mapped files from this process's memory
    (what it has read stays in the page cache); the mappings released."""
    return release_mappings(segment_mapping(leaf) for leaf in leaves)


def release_mappings(mappings: Iterable[mmap.mmap | None]) -> int:
    """Drop the pages of the given mapped files from this process's memory (the columnar
    sidecars' arrays are such mappings too); the mappings released."""
    released = 0
    if not hasattr(mmap, "MADV_DONTNEED"):
        return 0
    for mapping in mappings:
        if mapping is None:
            continue
        try:
            mapping.madvise(mmap.MADV_DONTNEED)
        except (ValueError, OSError):   # closed since, or the system refuses: nothing held
            continue
        released += 1
    return released


class MappedPages:
    """Keeps the mapped pages a pass over some segments holds under ``limit_mb``: the pass
    calls ``step()`` once per article or term, and every ``every`` steps the process's
    file-backed pages are looked at and, above the limit, handed back."""

    def __init__(self, segments: Iterable[tuple[Any, int]], limit_mb: float | None = None,
                 every: int | None = None):
        """``segments``: (segment reader, offset) pairs, as ``leaf_readers()`` gives them."""
        self.leaves = [leaf for leaf, _ in segments if segment_mapping(leaf) is not None]
        self.limit_mb = LIMIT_MB if limit_mb is None else limit_mb
        self.every = LOOK_EVERY if every is None else every
        self.steps = 0

    @classmethod
    def of_reader(cls, reader: Any, **kwargs: Any) -> MappedPages:
        """For a pass over every segment of ``reader``."""
        return cls(reader.leaf_readers(), **kwargs)

    def step(self) -> None:
        self.steps += 1
        if self.leaves and self.steps % self.every == 0 and file_pages_mb() > self.limit_mb:
            release(self.leaves)

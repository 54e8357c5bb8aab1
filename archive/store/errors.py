"""What can go wrong with an index, as the exceptions the CLI turns into plain messages.

IndexDamaged and IndexOutdated are IndexMissing too: a caller that only wants "no usable
index here" catches the one class.
"""

from __future__ import annotations

from pathlib import Path

from whoosh.writing import IndexingError


class IndexMissing(Exception):
    """There is no archive index at the given location yet."""

    def __init__(self, folder: Path):
        self.folder = folder
        super().__init__(f"no index at {folder}: run `archive index` first")


class IndexDamaged(IndexMissing):
    """No generation of the index at ``folder`` can be opened (see ``archive check``)."""

    def __init__(self, folder: Path, reason: str):
        self.folder = folder
        self.reason = reason
        Exception.__init__(self, f"the index at {folder} is damaged ({reason}): run "
                                 "`archive index --rebuild PATHS` to restore it from the inputs")


class IndexOutdated(IndexMissing):
    """The index was built by an older version whose schema lacks fields this one needs."""

    def __init__(self, folder: Path, missing: list[str]):
        self.folder = folder
        self.missing = missing
        Exception.__init__(self, f"the index at {folder} was built by an older version of "
                                 f"newsarchive (it lacks the fields {', '.join(missing)}): run "
                                 "`archive index --rebuild PATHS` to rebuild it")


class IndexBusy(Exception):
    """Another writer holds the index lock."""

    def __init__(self, folder: Path, waited: float):
        self.folder = folder
        super().__init__(f"the index at {folder} is locked by another `archive index` run "
                         f"(waited {waited:g}s); try again when it has finished")


class WriterProcessFailed(IndexingError):
    """A forked segment writer died or failed; the commit did not happen."""

"""The on-disk Whoosh index: schema, analysis, incremental writing, locking, checking.

The index folder holds the Whoosh segments plus ``manifest.json``, the record of which input
files went into the last commit (size, mtime, SHA-256). The manifest is written only after a
commit succeeds, so it can lag the index but never lead it: a crash costs at most a re-read of
the files of the interrupted run, never a lost or duplicated article.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from whoosh import fields, index
from whoosh.analysis import (LowercaseFilter, PyStemmerFilter, RegexTokenizer, StopFilter,
                             SubstitutionFilter)
from whoosh.analysis.analyzers import Analyzer
from whoosh.index import TOC, FileIndex, LockError
from whoosh.filedb.filestore import FileStorage
from whoosh.util.filelock import try_for
from whoosh.writing import SegmentWriter

from archive.article import Article

DEFAULT_INDEX = Path("index")
INDEX_NAME = "archive"
MANIFEST = "manifest.json"

#: The Snowball English stop list (the one Lucene, Xapian and NLTK also ship), fuller than
#: Whoosh's 37 words. "us" is deliberately absent: after lower-casing it is also the country.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's will with won't would wouldn't you you'd you'll you're
you've your yours yourself yourselves
""".split())

#: Words: runs of letters and digits, keeping in-word apostrophes so the stop list sees
#: "don't" whole and the stemmer can drop a possessive "'s". Deliberately simple: the static
#: site's browser client must tokenise exactly alike.
TOKEN_PATTERN = r"\w+(?:['\u2019]\w+)*"

TEXT_FIELDS = ("title", "body", "captions")


def news_analyzer() -> Analyzer:
    """Tokenise, lower-case, drop stop words, Snowball-stem (the C PyStemmer, cached)."""
    return (RegexTokenizer(TOKEN_PATTERN) | LowercaseFilter()
            | SubstitutionFilter("\u2019", "'")
            | StopFilter(stoplist=STOP_WORDS, minsize=1)
            | PyStemmerFilter("english", cachesize=100_000))


def build_schema() -> fields.Schema:
    analyzer = news_analyzer()
    facet = dict(stored=True, commas=True, lowercase=True, scorable=False)
    return fields.Schema(
        id=fields.ID(stored=True, unique=True),
        title=fields.TEXT(analyzer=analyzer, stored=True, field_boost=2.0, spelling=True),
        body=fields.TEXT(analyzer=analyzer, stored=True, spelling=True),
        captions=fields.TEXT(analyzer=analyzer, stored=True),
        source=fields.KEYWORD(**facet),
        place=fields.KEYWORD(**facet),
        topic=fields.KEYWORD(**facet),
        author=fields.KEYWORD(**facet),
        date=fields.DATETIME(stored=True, sortable=True),
        # 1 when the article has a date: sorting on it first keeps undated articles last
        # both ways (Whoosh gives a missing date the largest value, i.e. "newest").
        dated=fields.NUMERIC(bits=8, sortable=True),
        year=fields.ID(stored=True),
        date_source=fields.ID(stored=True),
        path=fields.ID(stored=True),
        url=fields.ID(stored=True),
        language=fields.ID(stored=True),
        external_id=fields.ID(stored=True),
        cluster=fields.ID(stored=True, sortable=True),  # a column: collapsing reads it per hit
        dateline=fields.STORED(),
        credits=fields.STORED(),
        content_hash=fields.STORED(),
        extra=fields.STORED(),
    )


# --- articles <-> index documents --------------------------------------------------------------

_LIST_SEPARATOR = ", "


def to_document(article: Article) -> dict[str, Any]:
    """The Whoosh document for an article; only non-empty fields are set."""
    doc: dict[str, Any] = {
        "id": article.id, "title": article.title, "body": article.body,
        "captions": "\n\n".join(article.captions), "source": article.source,
        "place": _LIST_SEPARATOR.join(p.replace(",", " ") for p in article.places),
        "topic": _LIST_SEPARATOR.join(t.replace(",", " ") for t in article.topics),
        "author": article.author, "date": article.date,
        "year": str(article.date.year) if article.date else "",
        "dated": 1 if article.date else 0,
        "date_source": article.date_source, "path": article.path, "url": article.url,
        "language": article.language, "external_id": article.external_id,
        "cluster": article.cluster or article.id, "dateline": article.dateline,
        "credits": article.credits, "content_hash": article.content_hash,
        "extra": article.extra or None,
    }
    return {k: v for k, v in doc.items() if v is not None and v != ""}


def _split_list(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def from_stored(stored: dict[str, Any]) -> Article:
    """Rebuild the Article from a document's stored fields."""
    captions = stored.get("captions", "")
    return Article(
        id=stored["id"], title=stored.get("title", ""), body=stored.get("body", ""),
        path=stored.get("path", ""), source=stored.get("source", ""), date=stored.get("date"),
        date_source=stored.get("date_source", "unknown"),
        captions=tuple(c for c in captions.split("\n\n") if c) if captions else (),
        url=stored.get("url", ""), author=stored.get("author", ""),
        credits=stored.get("credits", ""), dateline=stored.get("dateline", ""),
        places=_split_list(stored.get("place")), topics=_split_list(stored.get("topic")),
        language=stored.get("language", ""), external_id=stored.get("external_id", ""),
        cluster=stored.get("cluster", ""), extra=stored.get("extra") or {},
    )


# --- the manifest of indexed files ------------------------------------------------------------

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


# --- opening and writing -----------------------------------------------------------------------

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


# --- durable commits and recovery ---------------------------------------------------------------
#
# Whoosh commits by writing the new segment files, then the new TOC (table of contents) to a
# temporary name renamed into place, then deleting the files no TOC needs any more. Readers
# open the newest TOC, so a killed writer leaves the previous generation in force. Whoosh never
# fsyncs, though: after a power cut the renamed TOC could name segment data that never reached
# the disk. DurableStorage adds the missing fsyncs, and open_index falls back to the newest
# generation whose files are all present.

_TOC_RE = re.compile(r"^_%s_(\d+)\.toc$" % INDEX_NAME)
_TOC_TEMP_RE = re.compile(r"^_%s_\d+\.toc\..+$" % INDEX_NAME)
_SEGMENT_RE = re.compile(r"^(%s_[0-9a-z]+)\.[A-Za-z0-9_.]+$" % INDEX_NAME)


def _fsync(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DurableStorage(FileStorage):
    """A FileStorage whose commits survive a power cut, not only a killed process.

    Just before a new TOC is renamed into place, every segment file and the TOC itself are
    fsynced; just after, the folder is (so the rename is on disk before old files go).
    """

    def rename_file(self, oldname: str, newname: str, safe: bool = False) -> None:
        is_toc = bool(_TOC_RE.match(newname))
        if is_toc:
            for name in os.listdir(self.folder):
                if _SEGMENT_RE.match(name):
                    _fsync(self._fpath(name))
            _fsync(self._fpath(oldname))
        super().rename_file(oldname, newname, safe)
        if is_toc:
            _fsync(self.folder, directory=True)


class _ArchiveIndex(FileIndex):
    """Whoosh's FileIndex, but re-reading the TOC (``ix.schema`` and every new reader read
    it afresh) survives a writer replacing it mid-read: Whoosh retries opening the segments,
    not this, so a reader could fail with FileNotFoundError on ``_archive_N.toc``."""

    def _read_toc(self) -> TOC:
        for attempt in range(50):
            try:
                return super()._read_toc()
            except FileNotFoundError:
                if attempt == 49:
                    raise
                time.sleep(0.01)
        raise AssertionError("unreachable")


class _PinnedIndex(_ArchiveIndex):
    """An index opened at an older generation because the newest one is unusable."""

    def __init__(self, storage: FileStorage, generation: int, broken: list[int]):
        # FileIndex.__init__ would read the newest TOC, the broken one: set up by hand.
        self.storage = storage
        self._schema = None
        self.indexname = INDEX_NAME
        self.generation = generation
        self.broken = broken  # the newer generations passed over

    def latest_generation(self) -> int:
        return self.generation

    def _read_toc(self) -> TOC:
        return TOC.read(self.storage, self.indexname, gen=self.generation, schema=self._schema)


def toc_generations(folder: Path) -> list[int]:
    """The generations of the index's TOC files, newest first."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((int(m.group(1)) for m in map(_TOC_RE.match, names) if m), reverse=True)


def missing_segment_files(folder: Path, toc: TOC) -> list[str]:
    """Files the segments of ``toc`` need that are absent or too short to be whole."""
    missing = []
    for segment in toc.segments:
        if segment.is_compound():
            name = segment.make_filename(segment.COMPOUND_EXT)
            try:
                size = (folder / name).stat().st_size
            except OSError:
                missing.append(name)
                continue
            if size < 12 or not _compound_whole(folder / name, size):
                missing.append(name)
        elif not any(n.startswith(segment.segment_id() + ".") for n in os.listdir(folder)):
            missing.append(segment.segment_id() + ".*")
    return missing


def _compound_whole(path: Path, size: int) -> bool:
    """Whether a compound segment file is as long as its own directory says (its header
    points at the directory, written last, which lists every part's offset and length)."""
    from whoosh.filedb.compound import CompoundStorage

    try:
        compound = CompoundStorage(FileStorage(str(path.parent)).open_file(path.name),
                                   use_mmap=False)
    except Exception:  # the header points past the end, or the directory is garbled
        return False
    try:
        parts = compound._dir.values()
        return all(part["offset"] + part["length"] <= size for part in parts)
    except Exception:
        return False
    finally:
        compound.close()


def exists(folder: Path) -> bool:
    return bool(toc_generations(folder))


def open_index(folder: Path) -> index.Index:
    """The index at ``folder``, at its newest usable generation, checked to be current."""
    ix = _open_newest_usable(folder)
    missing = sorted(set(build_schema().names()) - set(ix.schema.names()))
    if missing:
        ix.close()
        raise IndexOutdated(folder, missing)
    return ix


def _open_newest_usable(folder: Path) -> index.Index:
    """Open the newest generation whose TOC reads and whose segment files are all there.

    An older generation is used only when the newest is unusable (a power cut before the
    data reached the disk, or damage); the next writer deletes the broken newer TOCs.
    """
    generations = toc_generations(folder)
    if not generations:
        raise IndexMissing(folder)
    storage = DurableStorage(str(folder))
    for _attempt in range(20):
        first_problem = ""
        for gen in generations:
            try:
                toc = TOC.read(storage, INDEX_NAME, gen=gen)
                missing = missing_segment_files(folder, toc)
            except Exception as exc:  # a truncated or garbled TOC: Whoosh raises assorted types
                problem = f"_{INDEX_NAME}_{gen}.toc unreadable: {exc!r}"
            else:
                problem = f"missing or truncated: {', '.join(missing)}" if missing else ""
            if not problem and gen != generations[0]:
                return _PinnedIndex(storage, gen, [g for g in generations if g > gen])
            if not problem:
                try:
                    return _ArchiveIndex(storage, indexname=INDEX_NAME)
                except OSError as exc:  # its TOC replaced by a newer one just now
                    problem = f"_{INDEX_NAME}_{gen}.toc vanished: {exc!r}"
            first_problem = first_problem or problem
        # A writer committing meanwhile deletes the files of the generation we were reading
        # (after its new TOC is in place): look again rather than report damage.
        now = toc_generations(folder)
        if now == generations:
            break
        generations = now or generations
    raise IndexDamaged(folder, first_problem)


def create_index(folder: Path) -> index.Index:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)
    return DurableStorage(str(folder)).create_index(build_schema(), indexname=INDEX_NAME)


def recreate_index(folder: Path, lock_timeout: float = 10.0) -> index.Index:
    """An empty index in place of the one at ``folder`` (``--rebuild``).

    The old index is wiped only while holding its writer lock, so a rebuild started during
    another run waits for it (then gives up with IndexBusy) instead of destroying its index.
    """
    if not folder.is_dir():
        return create_index(folder)
    lock = FileStorage(str(folder)).lock(f"{INDEX_NAME}_WRITELOCK")  # the writer's lock
    if not try_for(lock.acquire, timeout=lock_timeout, delay=0.25):
        raise IndexBusy(folder, lock_timeout)
    try:
        return create_index(folder)
    finally:
        lock.release()


def open_or_create(folder: Path) -> index.Index:
    return open_index(folder) if exists(folder) else create_index(folder)


def open_writer(ix: index.Index, folder: Path, lock_timeout: float = 10.0,
                limitmb: int = 256) -> SegmentWriter:
    """A Whoosh writer that waits up to ``lock_timeout`` seconds for the lock.

    The lock is an ``fcntl`` lock on a file in the index folder: the kernel drops it when the
    holding process dies, so a killed writer never leaves a stale lock behind.
    """
    try:
        writer = ix.writer(timeout=lock_timeout, delay=0.25, limitmb=limitmb)
    except LockError:
        raise IndexBusy(folder, lock_timeout) from None
    _tidy(ix, folder)  # safe now: we hold the lock
    return writer


def _tidy(ix: index.Index, folder: Path) -> None:
    """Remove what an interrupted writer left: temporary TOCs and TOCs newer than the
    generation in force (a pinned index's broken ones). Orphaned segment files go at the
    next commit (Whoosh deletes every file the new TOC does not name)."""
    for gen in getattr(ix, "broken", ()):
        (folder / f"_{INDEX_NAME}_{gen}.toc").unlink(missing_ok=True)
    for name in os.listdir(folder):
        if _TOC_TEMP_RE.match(name):
            (folder / name).unlink(missing_ok=True)


def abandon_writer(w: SegmentWriter) -> None:
    """Cancel a writer after a failure, releasing its lock even if cancelling fails too
    (e.g. the disk is full): the previous commit stays in force."""
    if w.is_closed:
        return
    try:
        w.cancel()
    except Exception:
        try:
            w._finish()
        except Exception:
            pass


def indexed_paths(searcher: Any) -> set[str]:
    """The input paths with documents in the index (those of deleted documents may linger
    until their segment is merged: a superset, fine for deciding what to delete)."""
    return set(searcher.reader().field_terms("path"))


def iter_articles(ix: index.Index) -> Iterator[Article]:
    """Every live article in the index, in document order."""
    with ix.searcher() as searcher:
        for stored in searcher.reader().all_stored_fields():
            yield from_stored(stored)


def index_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def resolve_index(option: str | None) -> Path:
    """``--index`` wins, then ``$ARCHIVE_INDEX``, then ``./index``."""
    return Path(option or os.environ.get("ARCHIVE_INDEX") or DEFAULT_INDEX)


def add_articles(w: SegmentWriter, articles: Iterable[Article]) -> int:
    count = 0
    for article in articles:
        w.add_document(**to_document(article))
        count += 1
    return count


def parse_stored_date(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None

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
from pathlib import Path
from typing import Any

from whoosh import fields, index
from whoosh.codec.base import OutOfOrderError
from whoosh.codec.whoosh3 import (LENGTHS_COLUMN, W3Codec, W3FieldWriter, W3PerDocReader,
                                  _lenfield)
from whoosh.index import TOC, FileIndex, LockError
from whoosh.filedb import compound
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import BufferFile
from whoosh.util.numeric import byte_to_length
from whoosh.writing import IndexingError, PostingPool, SegmentWriter

from archive import processes
from archive.analysis import FastText, news_analyzer
from archive.article import Article

DEFAULT_INDEX = Path("index")
INDEX_NAME = "archive"
MANIFEST = "manifest.json"

TEXT_FIELDS = ("title", "body", "captions")


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


def split_list(value: str | None) -> tuple[str, ...]:
    """A stored list field (places, topics: ", "-joined) back as its items."""
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
        places=split_list(stored.get("place")), topics=split_list(stored.get("topic")),
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


#: the writer lock's file in the index folder; the name Whoosh's own writers lock, so a plain
#: Whoosh writer, ``archive check`` and an indexing run all exclude one another
WRITE_LOCK = f"{INDEX_NAME}_WRITELOCK"


class IndexLock:
    """The writer lock of one index folder, held by an indexing run from before it looks at
    the folder until after its last commit.

    Whoosh's writers lock only while one writer is open, and only once an index exists: two
    runs on a new folder both created the index (one deleting the other's first TOC, or both
    adding every article), and a run waiting between another's commits had already read the
    manifest and the index it was about to change. This lock is taken first, on a file of
    the archive's own made with ``O_CREAT`` in a folder made with ``mkdir(exist_ok=True)``,
    both harmless to repeat at once, so whoever gets it sees what the previous holder
    committed. The writers opened under it (``open_writer(..., lock=...)``) skip Whoosh's
    lock. An ``flock``: the kernel drops it when the holding process dies.
    """

    def __init__(self, folder: Path, timeout: float = 10.0):
        self.folder = folder
        self.timeout = timeout
        self.fd: int | None = None  # open while held

    def acquire(self) -> IndexLock:
        """Wait up to ``timeout`` seconds for the lock; IndexBusy if it stays taken."""
        import fcntl

        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / WRITE_LOCK, os.O_CREAT | os.O_WRONLY, 0o666)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise IndexBusy(self.folder, self.timeout) from None
                time.sleep(0.1)
            except BaseException:
                os.close(fd)
                raise
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            import fcntl

            fd, self.fd = self.fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> IndexLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# --- durable commits and recovery ---------------------------------------------------------------
#
# Whoosh commits by writing the new segment files, then the new TOC (table of contents) to a
# temporary name renamed into place, then deleting the files no TOC needs any more. Readers
# open the newest TOC, so a killed writer leaves the previous generation in force. Whoosh never
# fsyncs, though: after a power cut the renamed TOC could name segment data that never reached
# the disk. DurableStorage adds the missing fsyncs, and open_index falls back to the newest
# generation whose files are all present.

_TOC_RE = re.compile(r"^_%s_(\d+)\.toc$" % INDEX_NAME)
#: a table of contents Whoosh was writing when its run stopped (check.py reports them)
TOC_TEMP_RE = re.compile(r"^_%s_\d+\.toc\..+$" % INDEX_NAME)
_SEGMENT_RE = re.compile(r"^(%s_[0-9a-z]+)\.[A-Za-z0-9_.]+$" % INDEX_NAME)


def _fsync(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _ViewReader:
    """A read-only file over a memoryview that never copies more than a ``read`` asks for."""

    __slots__ = ("_view", "_pos", "_end")

    def __init__(self, view: memoryview):
        self._view, self._pos, self._end = view, 0, len(view)

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        if start >= self._end:
            return b""
        self._pos = self._end if size is None or size < 0 else min(start + size, self._end)
        return self._view[start:self._pos].tobytes()

    def readline(self, size: int | None = -1) -> bytes:
        end = self._end if size is None or size < 0 else min(self._pos + size, self._end)
        rest = self._view[self._pos:end].tobytes() if self._pos < end else b""
        line = rest[:rest.find(b"\n") + 1] or rest
        self._pos += len(line)
        return line

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos + (self._pos if whence == 1 else self._end if whence == 2 else 0)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self._view = memoryview(b"")


class _MappedFile(BufferFile):
    """Whoosh's BufferFile without its copy.

    Whoosh opens each part of a memory-mapped segment as a BufferFile, which copies the part
    into a ``BytesIO`` at once: opening a 100,000-article index took 0.2 s and 1 GB of memory
    (twice the index: the mapped pages plus the copies), in every process that searches.
    Reading through the mapping instead opens it in 18 ms and 42 MB, at the same query speed.
    """

    def __init__(self, buf: Any, name: str | None = None, onclose: Any = None):
        self._buf = buf
        self._name = name
        self.file = _ViewReader(memoryview(buf))
        self.onclose = onclose
        self.is_real = False
        self.is_closed = False


compound.BufferFile = _MappedFile  # what CompoundStorage.open_file builds over a mapping


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


def open_index(folder: Path, *, mmap: bool = True) -> index.Index:
    """The index at ``folder``, at its newest usable generation, checked to be current.

    ``mmap=False`` reads segment files with plain reads instead of mapping them: a pass over
    every posting then holds only what it keeps (a bundle build at 100,000 articles: ~200 MB
    peak instead of ~420 MB, the touched pages of the mapping) but runs slower (176 s
    instead of 150 s); searches slow down more (p95 320 ms instead of 210 ms).
    """
    ix = _open_newest_usable(folder, mmap)
    missing = sorted(set(build_schema().names()) - set(ix.schema.names()))
    if missing:
        ix.close()
        raise IndexOutdated(folder, missing)
    return ix


def _open_newest_usable(folder: Path, mmap: bool = True) -> index.Index:
    """Open the newest generation whose TOC reads and whose segment files are all there.

    An older generation is used only when the newest is unusable (a power cut before the
    data reached the disk, or damage); the next writer deletes the broken newer TOCs.
    """
    generations = toc_generations(folder)
    if not generations:
        raise IndexMissing(folder)
    storage = DurableStorage(str(folder), supports_mmap=mmap)
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


def open_or_create(folder: Path) -> index.Index:
    """The index at ``folder``, created empty if there is none. Only under an IndexLock:
    two unlocked callers could both create it."""
    return open_index(folder) if exists(folder) else create_index(folder)


def repeated_ids(reader: Any) -> dict[str, list[int]]:
    """Article ids held by more than one live document: their document numbers, in order.

    Only an id whose term counts more than one document (live or deleted: a replaced article
    counts twice until its segment is merged) has its postings read, so a sound index costs
    one pass over the id terms' statistics. A sound index holds none; two runs that created
    one index at once (before IndexLock) left every article twice.
    """
    repeated: dict[str, list[int]] = {}
    id_field = reader.schema["id"]
    for text, info in reader.iter_field("id"):
        if info.doc_frequency() > 1:
            docnums = list(reader.postings("id", text).all_ids())  # deleted ones left out
            if len(docnums) > 1:
                repeated[id_field.from_bytes(text)] = docnums
    return repeated


# --- the writer's fast path ----------------------------------------------------------------------
#
# Whoosh analyses a text field through a chain of generators that re-set one Token object per
# word (tokenizer -> lower-case -> substitution -> stop list -> stemmer), then analyses it a
# second time, unstemmed, for the spelling words; at commit it looks up every posting's field
# length, which costs an os.stat per posting for fields that keep no lengths. For indexing
# only, ArchiveWriter computes exactly the same postings in one pass over the words, with the
# analysis of each distinct word cached, and caches the absence of length columns. The schema,
# and so every query-time analysis, is untouched; tests/test_indexer_speed.py compares every
# posting, stored field and search result with Whoosh's own path.

class _LengthsReader(W3PerDocReader):
    """The per-document reader the writer's flush uses: a field without a length column
    (ID, KEYWORD, the spelling fields) is looked up once, not with an os.stat per posting."""

    def __init__(self, storage: FileStorage, segment: Any):
        super().__init__(storage, segment)
        self._lengths: dict[str, Any] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
        if docnum > self._doccount:
            raise IndexError("Asked for docnum %r of %d" % (docnum, self._doccount))
        try:
            reader = self._lengths[fieldname]
        except KeyError:
            reader = self._lengths[fieldname] = self._cached_reader(_lenfield(fieldname),
                                                                    LENGTHS_COLUMN)
        if reader is None:
            return default
        lbyte = reader[docnum]
        if lbyte:
            return byte_to_length(lbyte)
        return None  # as Whoosh's: a zero byte falls through

    def lengths_list(self, fieldname: str) -> list[int | None] | None:
        """Every document's length in ``fieldname`` as doc_field_length gives it (None for
        a zero byte), or None when the field keeps no lengths (every lookup gives 0)."""
        reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if reader is None:
            return None
        table = [byte_to_length(b) if b else None for b in range(256)]
        return [table[reader[docnum]] for docnum in range(self._doccount)]


def _write_postings(fw: W3FieldWriter, schema: fields.Schema, lengths: _LengthsReader,
                    items: Iterable[tuple[str, bytes, int, Any, bytes | None]]) -> None:
    """Whoosh's FieldWriter.add_postings for W3FieldWriter, a term at a time.

    Whoosh hands every posting to W3PostingsWriter.add_posting (four isinstance asserts, a
    length lookup through the column reader, block statistics updated per posting). Here a
    term's postings are gathered first and each block of ``blocklimit`` is set up whole,
    with the same statistics, before Whoosh's own ``_write_block``/``finish_term`` write it:
    the bytes written are the same.
    """
    from array import array

    lastfn: str | None = None
    lasttext: bytes | None = None
    docs: list[int] = []
    weights: list[Any] = []
    values: list[bytes | None] = []
    field_lengths: list[int | None] | None = None
    pw: Any = None

    def flush_term() -> None:
        fw.start_term(lasttext)
        limit = pw._blocklimit
        count = len(docs)
        for start in range(0, count, limit):
            end = min(start + limit, count)
            chunk = docs[start:end]
            pw._ids = array("I", chunk)
            block_weights = weights[start:end]
            pw._weights = array("f", block_weights)
            pw._values = [v for v in values[start:end] if v]
            pw._maxweight = max(0, max(block_weights))
            if field_lengths is not None:
                present = [n for n in (field_lengths[d] for d in chunk) if n]
            else:
                present = []
            pw._minlength = min(present) if present else None
            pw._maxlength = max(present) if present else 0
            if end < count:  # Whoosh writes a full block when the next posting arrives
                pw._write_block()
        fw.finish_term()
        docs.clear()
        weights.clear()
        values.clear()

    for fieldname, btext, docnum, weight, value in items:
        if fieldname != lastfn:
            if lastfn is not None and fieldname < lastfn:
                raise OutOfOrderError("Field %r .. %r" % (lastfn, fieldname))
            if lasttext is not None:
                flush_term()
            if lastfn is not None:
                fw.finish_field()
            fw.start_field(fieldname, schema[fieldname])
            pw = fw._postwriter
            field_lengths = lengths.lengths_list(fieldname) if lengths is not None else None
            lastfn, lasttext = fieldname, None
        elif lasttext and btext < lasttext:
            raise OutOfOrderError("Term %s:%r .. %s:%r" % (lastfn, lasttext, fieldname, btext))
        if docnum == -1:  # Whoosh's marker for spelling-only words: no posting
            continue
        if btext != lasttext:
            if lasttext is not None:
                flush_term()
            lasttext = btext
        if lengths is not None and docnum > lengths._doccount:  # as doc_field_length checks
            raise IndexError("Asked for docnum %r of %d" % (docnum, lengths._doccount))
        docs.append(docnum)
        weights.append(weight)
        values.append(value)
    if lasttext is not None:
        flush_term()
    if lastfn is not None:
        fw.finish_field()


class ArchiveWriter(SegmentWriter):
    """Whoosh's SegmentWriter with the fast path above; everything else is Whoosh's own."""

    def __init__(self, ix: index.Index, **kwargs: Any):
        super().__init__(ix, **kwargs)
        self._fast: dict[str, FastText | None] = {}
        for name in self.schema.names():
            self._fast[name] = FastText.for_field(self.schema[name])

    def per_document_reader(self) -> Any:
        if not self.perdocwriter.is_closed:
            raise IndexingError("Per-doc writer is still open")
        if type(self.codec) is not W3Codec:
            return super().per_document_reader()
        return _LengthsReader(self.storage, self.get_segment())

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        pdr = self.per_document_reader() if self.codec.length_stats else None
        postings = self.pool.iter_postings()
        if type(self.fieldwriter) is W3FieldWriter and \
                (pdr is None or type(pdr) is _LengthsReader):
            _write_postings(self.fieldwriter, self.schema, pdr, postings)
        else:
            self.fieldwriter.add_postings(self.schema, pdr, postings)
        self.fieldwriter.close()
        if pdr:
            pdr.close()

    def add_document(self, **fields_: Any) -> None:
        """SegmentWriter.add_document, with FastText for the text fields."""
        self._check_state()
        perdocwriter = self.perdocwriter
        schema = self.schema
        docnum = self.docnum
        posts: list[tuple[str, bytes, int, Any, bytes | None]] = []
        add_post = posts.append  # into the pool in one go, below
        names: set[str] = set()
        fast = self._fast

        docboost = self._doc_boost(fields_)
        fieldnames = sorted(name for name in fields_ if not name.startswith("_"))
        self._check_fields(schema, fieldnames)

        perdocwriter.start_doc(docnum)
        try:
            for fieldname in fieldnames:
                value = fields_.get(fieldname)
                if value is None:
                    continue
                field = schema[fieldname]
                plan = fast.get(fieldname) if isinstance(value, str) else None
                length = 0
                spellwords = None
                vbytes = None
                if field.indexed:
                    fieldboost = self._field_boost(fields_, fieldname, docboost)
                    before = len(posts)
                    if plan is not None:
                        items, spellwords = plan.postings(value)
                    else:
                        items = field.index(value)
                    scorable = field.scorable
                    for tbytes, freq, weight, vbytes in items:
                        weight *= fieldboost
                        if scorable:
                            length += freq
                        add_post((fieldname, tbytes, docnum, weight, vbytes))
                    if len(posts) > before:
                        names.add(fieldname)

                if field.separate_spelling():
                    spellfield = field.spelling_fieldname(fieldname)
                    if spellwords is None:
                        spellwords = field.spellable_words(value)
                    for word in spellwords:
                        # Whoosh passes on the last posting's value bytes here: so do we
                        add_post((spellfield, word.encode("utf-8"), 0, 1, vbytes))
                    if spellwords:
                        names.add(spellfield)

                vformat = field.vector
                if vformat:
                    vitems = vformat.word_values(value, field.analyzer, mode="index")
                    vitems = sorted((text, weight, vb) for text, _, weight, vb in vitems)
                    perdocwriter.add_vector_items(fieldname, field, vitems)

                customval = fields_.get("_stored_%s" % fieldname, value)
                sv = customval if field.stored else None
                perdocwriter.add_field(fieldname, field, sv, length)

                column = field.column_type
                if column and customval is not None:
                    cv = field.to_column_value(customval)
                    perdocwriter.add_column_value(fieldname, column, cv)
        except Exception:
            perdocwriter.cancel_doc()
            raise

        pool = self.pool
        if type(pool) is PostingPool:
            # PostingPool.add, for the whole document: the same items and memory accounting
            # (the size estimate only decides when a sorted run goes to disk)
            pool.fieldnames.update(names)
            pool.currentsize += 160 * len(posts) + sum(
                [2 * len(item[1]) + len(item[4] or b"") for item in posts])
            pool.current.extend(posts)
            if pool.currentsize > pool.limit:
                pool.save()
        else:
            for item in posts:
                pool.add(item)
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def commit(self, mergetype: Any = None, optimize: Any = None, merge: Any = None,
               more_segments: Any = None) -> None:
        """SegmentWriter.commit; ``more_segments``, if given, is called once this writer's own
        segment is written and returns segments to list after it in the new TOC."""
        self._check_state()
        finalsegments = self._merge_segments(mergetype, optimize, merge)
        if self._added:
            finalsegments.append(self._finalize_segment())
        else:
            self._close_segment()
        if more_segments is not None:
            finalsegments.extend(more_segments())
        self._commit_toc(finalsegments)
        self._finish()


#: a commit with fewer additions than this is written in one process (a fork costs ~20 ms)
SPLIT_MIN_DOCS = 500


class WriterProcessFailed(IndexingError):
    """A forked segment writer died or failed; the commit did not happen."""


class SplitWriter:
    """A writer that builds each commit's additions as ``procs`` segments at once.

    Additions are buffered until ``commit``, then cut into ``procs`` contiguous runs: the
    first is written by this process, each other one by a forked child into a segment of its
    own, listed after this process's segment in the new TOC, so documents keep the order
    they were added in. The TOC is written only once every segment is whole, by this process,
    which holds the lock throughout: the commit protocol (fsyncs, TOC rename, manifest after
    it) is unchanged, and a failed or killed child fails the commit, leaving the previous one
    in force. Deletions go straight to this process's writer, as with a SegmentWriter.

    Memory: each process's posting pool gets ``limitmb / procs``; the buffer holds at most
    one commit's documents (``commit_every``).
    """

    def __init__(self, ix: index.Index, *, timeout: float, limitmb: int, procs: int,
                 split_min: int = SPLIT_MIN_DOCS, lock: IndexLock | None = None):
        self.procs = max(1, procs)
        self.limitmb = max(8, limitmb // self.procs)
        self.split_min = split_min
        self.ix = ix
        self.lock = lock  # the caller's, held for longer than this writer; else Whoosh's own
        self.main = ArchiveWriter(ix, timeout=timeout, delay=0.25, limitmb=self.limitmb,
                                  _lk=lock is None)
        self._docs: list[dict[str, Any]] = []

    @property
    def is_closed(self) -> bool:
        return self.main.is_closed

    def add_document(self, **doc: Any) -> None:
        self._docs.append(doc)

    def delete_by_term(self, fieldname: str, text: str, searcher: Any = None) -> int:
        return self.main.delete_by_term(fieldname, text, searcher=searcher)

    def delete_document(self, docnum: int) -> None:
        self.main.delete_document(docnum)

    def cancel(self) -> None:
        self._docs = []
        self.main.cancel()

    def _finish(self) -> None:
        self._docs = []
        self.main._finish()

    def commit(self) -> None:
        docs, self._docs = self._docs, []
        procs = self.procs if len(docs) >= self.split_min else 1
        if procs < 2:
            for doc in docs:
                self.main.add_document(**doc)
            self.main.commit()
            return
        cuts = [len(docs) * k // procs for k in range(procs + 1)]
        children: list[tuple[int, int]] = []
        try:
            for k in range(1, procs):
                children.append(self._fork(docs[cuts[k]:cuts[k + 1]]))
            for doc in docs[:cuts[1]]:
                self.main.add_document(**doc)
            del docs
            self.main.commit(more_segments=lambda: [self._collect(c) for c in children])
            children = []
        finally:
            for pid, fd in children:  # only after a failure: stop and reap what is left
                _stop_child(pid, fd)

    def _fork(self, docs: list[dict[str, Any]]) -> tuple[int, int]:
        import pickle

        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid:  # the parent
            os.close(write_fd)
            return pid, read_fd
        code = 1  # pragma: no cover - the child, which never returns
        try:
            os.close(read_fd)
            processes.die_with_parent()
            lock = self.lock if self.lock is not None else getattr(self.main, "writelock", None)
            if getattr(lock, "fd", None) is not None:
                # Drop this process's share of the lock (closing, not unlocking, which would
                # free the parent's too): were the parent killed, the lock must go with it (a
                # flock lives while any process holds its file open)
                os.close(lock.fd)
            try:
                w = ArchiveWriter(self.ix, _lk=False, limitmb=self.limitmb)
                for doc in docs:
                    w.add_document(**doc)
                payload = pickle.dumps(("segment", w._finalize_segment()))
            except BaseException as exc:
                payload = pickle.dumps(("error", type(exc).__name__, str(exc),
                                        getattr(exc, "errno", None),
                                        getattr(exc, "strerror", None),
                                        getattr(exc, "filename", None)))
            with os.fdopen(write_fd, "wb") as out:
                out.write(payload)
            code = 0
        finally:
            os._exit(code)

    @staticmethod
    def _collect(child: tuple[int, int]) -> Any:
        import pickle

        pid, fd = child
        with os.fdopen(fd, "rb") as stream:
            payload = stream.read()
        _, status = os.waitpid(pid, 0)
        try:
            message = pickle.loads(payload) if payload else ("died", status)
        except Exception:
            message = ("died", status)
        if message[0] == "segment":
            return message[1]
        if message[0] == "error":
            _, kind, text, err, strerror, filename = message
            if err is not None:  # e.g. a full disk: report it as the OSError it was
                raise OSError(err, strerror or text, filename)
            raise WriterProcessFailed(f"a segment writer process failed: {kind}: {text}")
        raise WriterProcessFailed(f"a segment writer process died (wait status {status})")


def _stop_child(pid: int, fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
    processes.kill_and_reap(pid)


def default_procs() -> int:
    """Writer processes for a run: two when a second core is there and idle, else one.

    Splitting a commit costs ~7% more CPU (two term dictionaries instead of one), so it only
    pays when the second process gets a core of its own; on a machine already busy (load
    average at or above cores - 1) one process is faster. ``Indexer(procs=N)`` decides
    explicitly; the index holds the same articles either way.
    """
    cores = processes.usable_cores()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return 2 if cores >= 2 and load < cores - 1 else 1


def open_writer(ix: index.Index, folder: Path, lock_timeout: float = 10.0,
                limitmb: int = 256, fast: bool = True, procs: int = 1,
                split_min: int = SPLIT_MIN_DOCS, lock: IndexLock | None = None) -> Any:
    """A Whoosh writer that waits up to ``lock_timeout`` seconds for the lock.

    The lock is an ``fcntl`` lock on a file in the index folder: the kernel drops it when the
    holding process dies, so a killed writer never leaves a stale lock behind. Given ``lock``
    (an IndexLock the caller holds for a whole run), the writer takes no lock of its own.
    ``fast=False`` gives Whoosh's own SegmentWriter (the reference the tests compare
    ArchiveWriter with); ``procs`` > 1 a SplitWriter, which writes large commits in that
    many processes.
    """
    if lock is not None and lock.fd is None:
        raise ValueError(f"open_writer: the lock on {folder} is not held")
    take = lock is None  # Whoosh's own lock, for this writer only
    try:
        if fast and procs > 1:
            writer = SplitWriter(ix, timeout=lock_timeout, limitmb=limitmb, procs=procs,
                                 split_min=split_min, lock=lock)
        elif fast:
            writer = ArchiveWriter(ix, timeout=lock_timeout, delay=0.25, limitmb=limitmb,
                                   _lk=take)
        else:
            writer = ix.writer(timeout=lock_timeout, delay=0.25, limitmb=limitmb, _lk=take)
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
        if TOC_TEMP_RE.match(name):
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


def discard_writer(w: Any, folder: Path) -> None:
    """Cancel a writer that wrote nothing and remove the empty segment files it opened (a
    cancelled Whoosh writer leaves them for the next commit to sweep)."""
    main = getattr(w, "main", w)
    segment = getattr(main, "newsegment", None)
    w.cancel()
    if segment is None:
        return
    prefix = segment.segment_id() + "."
    for name in os.listdir(folder):
        if name.startswith(prefix):
            (folder / name).unlink(missing_ok=True)


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


def field_postings(leaf: Any, fieldname: str) -> Iterator[tuple[bytes, Any, Any, Any]]:
    """Every term of a field in one segment, in word order, with its postings as numpy
    arrays: (word, term info, document numbers, weights). Deleted documents are included;
    callers mask them with the reader's live set.

    Whoosh's matcher hands postings out one at a time, and looking a term up again for its
    matcher costs a hash-table probe; a whole-field pass (related articles for every article)
    instead walks the term list once and reads each on-disk posting list a block at a time,
    the same arrays the matcher's ``id()`` and ``weight()`` index into. Any other segment or
    matcher type takes Whoosh's public one-at-a-time path.
    """
    import numpy as np
    from whoosh.codec.whoosh3 import W3LeafMatcher

    codec, terms = getattr(leaf, "_codec", None), getattr(leaf, "_terms", None)
    postfile = getattr(terms, "_postfile", None)
    field_format = leaf.schema[fieldname].format
    for word, info in leaf.iter_field(fieldname):
        if codec is not None and postfile is not None:
            matcher = codec.postings_reader(postfile, info, field_format,
                                            term=(fieldname, word))
        else:
            matcher = leaf.postings(fieldname, word)
        ids: list[int] = []
        weights: list[float] = []
        if type(matcher) is W3LeafMatcher:
            while matcher.is_active():
                matcher._read_ids()
                matcher._read_weights()
                ids.extend(matcher._ids)
                weights.extend(matcher._weights)
                matcher._next_block()
        else:
            while matcher.is_active():
                ids.append(matcher.id())
                weights.append(matcher.weight())
                matcher.next()
        yield (word, info, np.asarray(ids, dtype=np.int64),
               np.asarray(weights, dtype=np.float64))

"""Readers: one module per input format, each turning a file into Articles.
One idea: which files hold articles, and which reader reads each.

``discover`` walks the paths a user names and yields ``SourceFile``s; ``reader_for`` picks the
reader by extension, then by sniffing the first bytes; ``.gz`` files are read transparently.
A reader is a generator ``read(source: SourceFile) -> Iterator[Article]``: it raises
``IngestError`` when the whole file is unusable and calls ``source.warn`` for a problem that
loses only one record, so one bad record never costs the rest of the file.
"""

from __future__ import annotations

import codecs
import gzip
import importlib
import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from archive.article import Article, make_id
from archive.sources.codepages import unlike_western
from archive.sources.licences import is_licence_name, is_licence_text

Reader = Callable[["SourceFile"], Iterator[Article]]


class IngestError(Exception):
    """A problem with one input file (and optionally one line or record of it)."""

    def __init__(self, path: str | os.PathLike[str], reason: str, line: int | None = None):
        self.path = str(path)
        self.reason = reason
        self.line = line
        # the constructor's arguments, so it pickles (a Dask worker's problem reaches the client)
        super().__init__(self.path, reason, line)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


class NotAnArticleFile(IngestError):
    """A file a reader recognises as something beside the articles (a manifest, a data
    table): passed over and named in the summary under ``rule``, never skipped as broken."""

    def __init__(self, path: str | os.PathLike[str], reason: str, rule: str):
        super().__init__(path, reason)
        self.rule = rule


@dataclass(frozen=True)
class PassedOver:
    """A file the run did not read as articles, and the rule that decided it."""

    path: str
    rule: str


#: the rules that pass a file over, as the summary names them
DOCUMENTATION = "documentation"
CHECKSUMS = "checksum list"
NOT_REGULAR = "not a regular file"
COLLECTION_NOTES = "notes beside a collection"
NOT_ARTICLE_FORMAT = "not an article format"
MANIFEST = "manifest or data file"


@dataclass(frozen=True)
class ReaderOptions:
    """Per-run settings that readers may consult (e.g. ``--map title=headline``)."""

    field_map: dict[str, str] = field(default_factory=dict)
    #: outlets besides ``outlets.KNOWN_OUTLETS`` whose name may close an article
    source_names: tuple[str, ...] = ()


@dataclass
class SourceFile:
    """One input file: where it is on disk, and the stable relative name ids derive from."""

    path: Path
    relative: str
    options: ReaderOptions = field(default_factory=ReaderOptions)
    warnings: list[IngestError] = field(default_factory=list)

    @property
    def is_gzip(self) -> bool:
        return self.path.name.lower().endswith(".gz")

    @property
    def inner_name(self) -> str:
        """The file name without a trailing ``.gz``: what decides the format."""
        name = self.path.name
        return name[:-3] if name.lower().endswith(".gz") else name

    def warn(self, reason: str, line: int | None = None) -> None:
        self.warnings.append(IngestError(self.relative, reason, line))

    def article_id(self, record: str | int | None = None) -> str:
        return make_id(self.relative, record)

    def open_binary(self) -> BinaryIO:
        """The file's (decompressed) bytes as a stream; readers that stream use this."""
        raw = open(self.path, "rb")
        if self.is_gzip:
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
        return raw

    def read_bytes(self) -> bytes:
        try:
            with self.open_binary() as stream:
                return stream.read()
        except (EOFError, gzip.BadGzipFile, OSError) as exc:
            raise IngestError(self.relative, f"cannot read: {exc}") from exc

    def read_text(self) -> str:
        """Decode as UTF-8 (BOM or not); fall back to Windows-1252/Latin-1 with a warning."""
        return decode_text(self.read_bytes(), self)

    def open_text(self) -> io.TextIOWrapper:
        """A streaming text view (UTF-8 with BOM handling; undecodable bytes replaced)."""
        return io.TextIOWrapper(self.open_binary(), encoding="utf-8-sig", errors="replace",
                                newline="")


#: byte-order marks, longest first (UTF-32 LE's starts with UTF-16 LE's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))

#: below this share of bytes >= 0x80 a file that is not UTF-8 is read as Windows-1252: text
#: in a Latin script has a few accented letters or a currency sign, too little for a detector
#: to tell one legacy code page from another (it takes the BBC's one Latin-1 file for
#: Japanese); a file written mostly in high bytes is in another script, and there it can
_DETECT_ABOVE = 0.2
_HIGH_BYTES = bytes(range(0x80, 0x100))


def bom_encoding(data: bytes) -> str | None:
    """The Unicode encoding a byte-order mark at the start of ``data`` names, if any."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def decode_text(data: bytes, source: SourceFile) -> str:
    """Text by byte-order mark, then UTF-8, then a detector for a mostly non-ASCII file or one
    whose high bytes are no Western text, then Windows-1252; a warning names what decided when
    it was not UTF-8."""
    bom = bom_encoding(data)
    if bom and bom != "utf-8-sig":
        try:
            return data.decode(bom)
        except UnicodeDecodeError as exc:
            raise IngestError(source.relative, f"starts with a {bom.upper()} byte-order mark "
                              f"but is not {bom.upper()} (offset {exc.start})") from None
    if b"\x00" in data[:8192]:
        raise IngestError(source.relative, "binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    high = (len(data) - len(data.translate(None, _HIGH_BYTES))) / max(len(data), 1)
    if high >= _DETECT_ABOVE or high and unlike_western(data):
        detected = _detect(data)
        if detected:
            source.warn(f"{bad}; decoded as {detected[0]} (detected by charset-normalizer)")
            return detected[1]
    source.warn(f"{bad}; decoded as Windows-1252")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _detect(data: bytes) -> tuple[str, str] | None:
    """(encoding, text) from charset-normalizer (a trafilatura dependency), if it finds one."""
    from charset_normalizer import from_bytes  # imported here: it loads its tables

    best = from_bytes(data).best()
    if best is None or best.encoding in ("utf_8", "ascii"):
        return None
    return best.encoding, str(best)


# --- choosing a reader -------------------------------------------------------------------------

#: extension (lower case, without .gz) -> reader module in this package
_BY_EXTENSION: dict[str, str] = {
    ".txt": "text", ".text": "text",
    ".md": "markdown", ".markdown": "markdown",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".rss": "feeds", ".atom": "feeds", ".rdf": "feeds",
    ".warc": "warc", ".arc": "warc",
    ".jsonl": "records", ".ndjson": "records", ".json": "records", ".csv": "records",
    ".tsv": "records",
    ".sgm": "reuters", ".sgml": "reuters",
}

#: formats a research collection or a crawl ships many articles per file in: a folder mostly
#: of these is a collection whose loose ``.txt`` files are its notes and word lists. Record
#: files (JSON, CSV) are left out: beside ``.txt`` articles they are manifests, not the news.
COLLECTION_FORMATS = {"reuters", "trec", "warc", "feeds"}

#: names of documentation files that are never articles
_DOC_NAMES = {"readme", "license", "licence", "copying", "provenance", "changelog", "authors",
              "notice", "contributing"}

#: checksum lists, by name (``SHA256SUMS``, ``files.md5``) and by content (``<hex>  <name>``)
_CHECKSUM_NAMES = {"md5sums", "sha1sums", "sha224sums", "sha256sums", "sha384sums",
                   "sha512sums", "b2sums", "checksums", "checksum"}
_CHECKSUM_EXTENSIONS = {".md5", ".sha1", ".sha224", ".sha256", ".sha384", ".sha512", ".b2"}
_CHECKSUM_LINE = re.compile(rb"^(?:[0-9a-fA-F]{32,128}[ \t]+\*?\S.*"
                            rb"|(?:MD5|SHA\d+|BLAKE2b?) ?\(.+\) ?= ?[0-9a-fA-F]{32,128})$")

_BINARY_EXTENSIONS = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico", ".bmp", ".tif", ".tiff", ".pdf",
    ".zip", ".tar", ".tgz", ".bz2", ".xz", ".7z", ".mp3", ".mp4", ".wav", ".ogg", ".mov",
    ".avi", ".woff", ".woff2", ".ttf", ".otf", ".exe", ".so", ".dll", ".pyc", ".db", ".sqlite",
    ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".dtd", ".css", ".js",
}


def sniff(head: bytes) -> str | None:
    """Guess a format from a file's first bytes (after decompression)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:2048]
    lower = text.lower()
    if b"\x00" in head:
        return None
    if text.startswith(b"WARC/"):
        return "warc"
    if re.match(rb"\.I[ \t]+\S+[ \t]*\r?\n\.[A-Z][ \t]*\r?\n", text):
        return "smart"
    if lower.startswith(b"<!doctype lewis") or lower.startswith(b"<reuters"):
        return "reuters"
    if re.match(rb"<doc[\s>]", lower):
        return "trec"
    if lower.startswith(b"<?xml") or lower.startswith(b"<rss") or lower.startswith(b"<feed") \
            or lower.startswith(b"<rdf"):
        if b"<rss" in lower or b"<feed" in lower or b"<rdf:rdf" in lower:
            return "feeds"
        return None
    if lower.startswith(b"<!doctype html") or lower.startswith(b"<html"):
        return "html"
    if text[:1] in (b"{", b"["):
        return "records"
    if text.startswith(b"---"):
        return "markdown"
    return None


#: how much of a file's start ``classify`` reads to decide what it is
HEAD_BYTES = 4096


def _whole_lines(head: bytes) -> list[bytes]:
    """The non-blank lines of a file's start, stripped; a last line the read may have cut
    short is left out."""
    lines = [line.strip() for line in head.splitlines()]
    if len(head) == HEAD_BYTES and lines:
        lines.pop()
    return [line for line in lines if line]


def is_checksum_list(head: bytes) -> bool:
    """True when every line of ``head`` (a file's start) is a checksum line."""
    lines = _whole_lines(head)
    return bool(lines) and all(_CHECKSUM_LINE.match(line) for line in lines)


_NUMBER_LINE = re.compile(rb"^[ \t]*[-+]?\d+(?:\.\d+)?(?:[ \t]+[-+]?\d+(?:\.\d+)?)*[ \t]*$")


def is_number_table(head: bytes) -> bool:
    """True when ``head`` (a file's start) is lines of numbers only: a data table (a test
    collection's relevance judgments, a list of counts), never an article."""
    lines = _whole_lines(head)
    return len(lines) >= 2 and all(_NUMBER_LINE.match(line) for line in lines)


def format_of(source: SourceFile) -> str | None:
    """The reader module name for a file, or None when it is not an article file."""
    return classify(source)[0]


def classify(source: SourceFile) -> tuple[str | None, str]:
    """``(reader module name, "")`` for an article file, else ``(None, the rule)``."""
    suffix = Path(source.inner_name).suffix.lower()
    if suffix in _BINARY_EXTENSIONS:
        return None, NOT_ARTICLE_FORMAT
    if _is_checksum_name(Path(source.inner_name)):
        return None, CHECKSUMS
    try:
        with source.open_binary() as stream:
            head = stream.read(HEAD_BYTES)
    except (OSError, EOFError):
        head = b""
    if is_checksum_list(head):
        return None, CHECKSUMS
    if is_licence_text(head):
        return None, DOCUMENTATION
    if is_number_table(head):
        return None, MANIFEST
    name = _format_from(suffix, head)
    return name, "" if name else NOT_ARTICLE_FORMAT


def _format_from(suffix: str, head: bytes) -> str | None:
    if suffix in _BY_EXTENSION:
        chosen = _BY_EXTENSION[suffix]
        sniffed = sniff(head)
        if chosen == "text" and sniffed in ("markdown", "trec", "smart") \
                or chosen == "reuters" and sniffed == "trec":
            return sniffed
        if suffix == ".xml" or chosen == "feeds":
            return sniff(head) or chosen
        return chosen
    if suffix == ".xml":
        return sniff(head)
    guessed = sniff(head)
    if guessed:
        return guessed
    if suffix == "" and head and (b"\x00" not in head or bom_encoding(head)):
        return "text"
    return None


def reader_for(format_name: str) -> Reader:
    module = importlib.import_module(f"archive.sources.{format_name}")
    return module.read  # type: ignore[no-any-return]


def read_articles(source: SourceFile, format_name: str | None = None) -> Iterator[Article]:
    """All articles in one file; raises IngestError if it holds none that can be read."""
    name = format_name or format_of(source)
    if name is None:
        raise IngestError(source.relative, "not an article file")
    yield from reader_for(name)(source)


# --- walking the input -------------------------------------------------------------------------

@dataclass
class Discovery:
    """What a walk found besides the files: problems to report and files passed over."""

    problems: list[IngestError] = field(default_factory=list)
    passed_over: list[PassedOver] = field(default_factory=list)


def _is_doc_file(path: Path) -> bool:
    """A project's notes by name; a licence under any name it ships with (``LICENSE-MIT``,
    ``COPYING.LESSER``, ``LICENSE_1_0.txt``): the licence word leads and a variant follows."""
    stem = path.name.split(".", 1)[0].lower()
    return stem in _DOC_NAMES or is_licence_name(stem)


def _is_checksum_name(path: Path) -> bool:
    return path.name.split(".", 1)[0].lower() in _CHECKSUM_NAMES \
        or path.suffix.lower() in _CHECKSUM_EXTENSIONS


def discover(paths: Iterable[str | os.PathLike[str]], report: Discovery | None = None,
             options: ReaderOptions | None = None) -> Iterator[SourceFile]:
    """Yield every candidate input file under ``paths`` (files or folders), sorted.

    Relative names start with the named folder's own name (``bbc/business/001.txt``) so ids
    stay stable wherever the folder lives. Hidden files and folders, symlinked folders (no
    loops) and documentation files are skipped; unreadable folders are reported.
    """
    report = report if report is not None else Discovery()
    options = options or ReaderOptions()
    for given in paths:
        root = Path(given)
        if not root.exists():
            report.problems.append(IngestError(str(given), "no such file or folder"))
            continue
        if root.is_file():
            yield SourceFile(root.resolve(), root.name, options)
            continue
        base = root.resolve()
        yield from _walk_folder(base, base.name, report, options)


def _walk_folder(base: Path, root_name: str, report: Discovery,
                 options: ReaderOptions) -> Iterator[SourceFile]:
    def on_error(exc: OSError) -> None:
        name = exc.filename or base
        report.problems.append(IngestError(str(name), f"cannot read folder: {exc.strerror}"))

    for folder, dirnames, filenames in os.walk(base, onerror=on_error, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        folder_path = Path(folder)
        files = [folder_path / n for n in sorted(filenames) if not n.startswith(".")]
        regular = []
        for path in files:
            try:
                mode = path.stat().st_mode  # follows a file symlink; a dangling one fails
            except OSError as exc:
                report.problems.append(IngestError(str(path), f"cannot read: {exc.strerror}"))
                continue
            relative = f"{root_name}/{path.relative_to(base).as_posix()}"
            if not stat.S_ISREG(mode):
                report.passed_over.append(PassedOver(relative, NOT_REGULAR))
            elif _is_doc_file(path):
                report.passed_over.append(PassedOver(relative, DOCUMENTATION))
            else:
                regular.append(path)
        # A folder of collection files (Reuters' .sgm) keeps its notes and word lists in loose
        # .txt files; a folder of .txt articles beside one manifest or feed is not such a folder
        collections = sum(_BY_EXTENSION.get(Path(p.name.removesuffix(".gz")).suffix.lower())
                          in COLLECTION_FORMATS for p in regular)
        texts = sum(p.suffix.lower() == ".txt" for p in regular)
        for path in regular:
            relative = f"{root_name}/{path.relative_to(base).as_posix()}"
            if collections > texts and path.suffix.lower() == ".txt":
                report.passed_over.append(PassedOver(relative, COLLECTION_NOTES))
                continue
            yield SourceFile(path, relative, options)

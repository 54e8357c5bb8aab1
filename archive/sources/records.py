"""Record files: JSON Lines, JSON arrays and CSV/TSV, one article per record. One idea:
records to articles, the three syntaxes sharing one field mapping.

Field names are matched case-insensitively against the common spellings (``headline``,
``pubDate``, ``link`` ...) and ``ReaderOptions.field_map`` overrides them. The exact keys of
``Article.to_dict`` are accepted too, so an export read back gives the same articles.

A body that opens with an agency's dateline (``NEW YORK (Reuters) -``, ``AP -``) or closes with
its credits loses them to ``dateline``, ``source`` and ``credits`` (``archive.sources.wire``),
unless the record states its dateline.

Multi-record files are streamed: JSON Lines and CSV row by row, a top-level JSON array element
by element. One bad record is a warning (with its line number); the rest of the file still goes
in.
"""

from __future__ import annotations

import csv
import html
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TextIO

from archive.article import Article, DateSource
from archive.sources import MANIFEST, IngestError, NotAnArticleFile, SourceFile
from archive.sources.fields import (FIELD_NAMES, Cursor, as_list, as_text, blank, describe_error,
                                    guarded, parse_date, record_fields, surrogates_replaced,
                                    title_from, topic_slugs, unique, without_surrogates)
from archive.sources.wire import WireTags, strip_wire_tags

#: keys an export writes that are not read back (derived, or our own ids)
_EXPORT_ONLY = {"path", "cluster", "word_count", "content_hash"}
_KNOWN_KEYS = {name for names in FIELD_NAMES.values() for name in names} | _EXPORT_ONLY
_LIST_KEYS = ("articles", "items", "data")
_DATE_SOURCES = ("explicit", "inferred")
_CHUNK = 1 << 16
_CSV_FIELD_LIMIT = 1 << 26


# --- records -> articles -----------------------------------------------------------------------

class NoTextFields(IngestError):
    """A record with no title or body field at all (not merely empty ones): a manifest's or
    a data table's row, unless ``--map`` names its text field."""


def _has_text_key(raw: Mapping[Any, Any], field_map: Mapping[str, str]) -> bool:
    names = {*FIELD_NAMES["title"], *FIELD_NAMES["body"]}
    names |= {field_map[n].strip().lower() for n in ("title", "body") if n in field_map}
    return any(str(key).strip().lower() in names for key in raw)


def build_article(source: SourceFile, record: str | int, fields: Mapping[str, Any],
                  line: int | None, raw: Mapping[Any, Any] | None = None) -> Article | None:
    """An Article from one record's raw field values; None (with a warning) if it has no text."""
    title, body = as_text(fields.get("title")), as_text(fields.get("body"))
    if not title.strip() and not body.strip():
        if raw is not None and not _has_text_key(raw, source.options.field_map):
            source.warnings.append(NoTextFields(
                source.relative, f"record {record} has neither title nor body; skipped", line))
        else:
            source.warn(f"record {record} has neither title nor body; skipped", line)
        return None
    when = parse_date(fields.get("date"))
    if when is None and not blank(fields.get("date")):
        source.warn(f"record {record}: unreadable date {as_text(fields['date'])[:40]!r}", line)
    stated = as_text(fields.get("date_source"))
    date_source: DateSource = "unknown" if when is None \
        else stated if stated in _DATE_SOURCES else "explicit"  # type: ignore[assignment]
    extra = fields.get("extra")
    tags = strip_wire_tags(body, source.options.source_names) \
        if blank(fields.get("dateline")) else WireTags(body)
    return Article(
        id=source.article_id(record), title=title if title.strip() else title_from(tags.body),
        body=tags.body, path=source.relative, date=when, date_source=date_source,
        source=_line(fields.get("source")) or tags.source, url=_line(fields.get("url")),
        author=", ".join(as_list(fields.get("author"), split=False)),
        captions=tuple(as_list(fields.get("captions"), split=False)),
        credits=as_text(fields.get("credits")) or tags.credits,
        dateline=as_text(fields.get("dateline")) or tags.dateline,
        places=unique(as_list(fields.get("places"))), topics=topic_slugs(fields.get("topics")),
        language=_line(fields.get("language")), external_id=_line(fields.get("external_id")),
        extra=dict(extra) if isinstance(extra, dict) else {},
    )


def _line(value: Any) -> str:
    return as_text(value).strip()


def _from_value(source: SourceFile, value: Any, record: int, line: int | None) -> Article | None:
    if not isinstance(value, dict):
        source.warn(f"record {record} is not an object ({type(value).__name__}); skipped", line)
        return None
    value, replaced = without_surrogates(value)
    if replaced:
        source.warn(f"record {record}: {surrogates_replaced(replaced)}", line)
    return build_article(source, record, record_fields(value, source.options.field_map), line,
                         value)


# --- the reader --------------------------------------------------------------------------------

def read(source: SourceFile) -> Iterator[Article]:
    """Articles from a JSON Lines, JSON or CSV/TSV file, chosen by extension (else content)."""
    cursor = Cursor()
    name = source.inner_name.lower()
    if name.endswith((".csv", ".tsv")):
        records = _delimited(source, cursor, tab=name.endswith(".tsv"))
    elif name.endswith((".jsonl", ".ndjson")):
        records = _json_lines_file(source, cursor)
    else:
        records = _json_document(source, cursor)
    warned_before = len(source.warnings)
    try:
        yield from guarded(source, records, cursor, "no articles found")
    except IngestError as exc:
        rows = source.warnings[warned_before:]
        if rows and all(isinstance(w, NoTextFields) for w in rows):
            del source.warnings[warned_before:]  # one line says it for every record
            raise NotAnArticleFile(source.relative, "no record has a title or body field "
                                   "(--map title=KEY,body=KEY reads one)", MANIFEST) from exc
        raise


def _json_lines_file(source: SourceFile, cursor: Cursor) -> Iterator[Article]:
    with source.open_text() as stream:
        yield from _json_lines(source, stream, cursor)


def _json_lines(source: SourceFile, lines: Iterable[str], cursor: Cursor,
                first_line: int = 1) -> Iterator[Article]:
    record = 0
    for number, line in enumerate(lines, first_line):
        cursor.line = number
        if not line.strip():
            continue
        record += 1
        try:
            value = json.loads(line, strict=False)
        except (ValueError, RecursionError) as exc:
            source.warn(f"bad JSON: {_json_reason(exc)}; line skipped", number)
            continue
        article = _from_value(source, value, record, number)
        if article is not None:
            yield article


def _json_reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return describe_error(exc)


def _json_document(source: SourceFile, cursor: Cursor) -> Iterator[Article]:
    """A .json file: a streamed top-level array, an object holding a list, or JSON Lines."""
    with source.open_text() as stream:
        head = stream.read(_CHUNK)
        stripped = head.lstrip()
        if stripped.startswith("["):
            yield from _json_array(source, stream, head, cursor)
            return
        text = head + stream.read()
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and stripped.startswith("{"):
            yield from _json_lines(source, text.splitlines(), cursor)
            return
        raise IngestError(source.relative, f"bad JSON: {exc.msg} (column {exc.colno})",
                          exc.lineno) from exc
    yield from _json_object(source, value)


def _json_object(source: SourceFile, value: Any) -> Iterator[Article]:
    if not isinstance(value, dict):
        raise IngestError(source.relative, "JSON holds neither a list nor an object of articles")
    lowered = {str(k).lower(): v for k, v in value.items()}
    for key in _LIST_KEYS:
        if isinstance(lowered.get(key), list):
            for number, item in enumerate(lowered[key], 1):
                article = _from_value(source, item, number, None)
                if article is not None:
                    yield article
            return
    if _KNOWN_KEYS & set(lowered):
        article = _from_value(source, value, 1, None)
        if article is not None:
            yield article
        return
    raise IngestError(source.relative, "JSON object has no list under "
                      + "/".join(repr(k) for k in _LIST_KEYS))


def _json_array(source: SourceFile, stream: TextIO, head: str,
                cursor: Cursor) -> Iterator[Article]:
    for number, (line, value) in enumerate(_array_elements(source, stream, head, cursor), 1):
        article = _from_value(source, value, number, line)
        if article is not None:
            yield article


class _Buffer:
    """A growing window on a text stream that remembers the line number of its start.

    Decoding one element at a time keeps memory to the largest element, not the whole array.
    """

    def __init__(self, stream: TextIO, head: str):
        self.stream, self.text, self.pos, self.line, self.eof = stream, head, 0, 1, False

    def more(self) -> None:
        chunk = self.stream.read(max(_CHUNK, len(self.text)))  # doubling: no quadratic re-parse
        self.line += self.text.count("\n", 0, self.pos)
        self.text, self.pos = self.text[self.pos:] + chunk, 0
        self.eof = not chunk

    def skip_space(self) -> str:
        """The next non-blank character ("" at the end of the stream)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos].isspace():
                self.pos += 1
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos:self.pos + 1]
            self.more()

    def line_at(self, pos: int) -> int:
        return self.line + self.text.count("\n", 0, pos)


def _array_elements(source: SourceFile, stream: TextIO, head: str,
                    cursor: Cursor) -> Iterator[tuple[int, Any]]:
    decoder = json.JSONDecoder(strict=False)
    buf = _Buffer(stream, head)
    buf.skip_space()
    buf.pos += 1  # the opening "["
    while True:
        char = buf.skip_space()
        if char in ("]", ""):
            if not char:
                source.warn("JSON array is not closed", buf.line_at(buf.pos))
            return
        cursor.line = buf.line_at(buf.pos)
        value, end = _decode_element(source, decoder, buf)
        yield cursor.line, value
        buf.pos = end
        char = buf.skip_space()
        if char == ",":
            buf.pos += 1
        elif char != "]":
            raise IngestError(source.relative, "bad JSON: expected ',' or ']'",
                              buf.line_at(buf.pos))


def _decode_element(source: SourceFile, decoder: json.JSONDecoder,
                    buf: _Buffer) -> tuple[Any, int]:
    while True:
        try:
            value, end = decoder.raw_decode(buf.text, buf.pos)
        except json.JSONDecodeError as exc:
            if buf.eof:
                raise IngestError(source.relative, f"bad JSON: {exc.msg}",
                                  buf.line_at(exc.pos)) from exc
            buf.more()
            continue
        if end >= len(buf.text) and not buf.eof:  # a number may continue in the next chunk
            buf.more()
            continue
        return value, end


# --- CSV / TSV ---------------------------------------------------------------------------------

def _delimited(source: SourceFile, cursor: Cursor, tab: bool) -> Iterator[Article]:
    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    with source.open_text() as stream:
        first = stream.readline()
        lines = itertools.chain([first], stream)
        if tab:
            reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        else:
            reader = csv.reader(lines, delimiter=_delimiter(first))
        clean = _clean_tsv_cell if tab else _clean_csv_cell
        yield from _rows_to_articles(source, _rows(source, reader, cursor), clean)


def _delimiter(first_line: str) -> str:
    """``;`` only when commas do not split the first row but semicolons do (European CSV);
    counting characters would be fooled by text full of ``&#39;``-style entities."""
    def width(delimiter: str) -> int:
        try:
            return len(next(csv.reader([first_line], delimiter=delimiter), []))
        except csv.Error:
            return 0
    return ";" if width(",") == 1 and width(";") > 1 else ","


def _rows(source: SourceFile, reader: Any, cursor: Cursor) -> Iterator[tuple[int, list[str]]]:
    """(first line, cells) of each non-blank row; a row the csv module rejects is a warning."""
    start = 1
    while True:
        cursor.line = start
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            source.warn(f"bad row: {exc}; skipped", start)
            if reader.line_num < start:
                return
            start = reader.line_num + 1
            continue
        if any(cell.strip() for cell in row):
            yield start, row
        start = reader.line_num + 1


def _rows_to_articles(source: SourceFile, rows: Iterator[tuple[int, list[str]]],
                      clean: Callable[[str], str]) -> Iterator[Article]:
    first = next(rows, None)
    if first is None:
        return
    if _is_header(first[1], source.options.field_map):
        header = [cell.strip().lower() for cell in first[1]]
        to_record: Callable[[list[str]], dict[str, Any]] = \
            lambda cells: dict(zip(header, cells))  # noqa: E731
        data: Iterable[tuple[int, list[str]]] = rows
    else:
        to_record = _positional(first[1], _sibling_classes(source), clean)
        data = itertools.chain([first], rows)
    field_map = source.options.field_map
    for number, (line, row) in enumerate(data, 1):
        record = to_record([clean(cell) for cell in row])
        article = build_article(source, number, record_fields(record, field_map), line)
        if article is not None:
            yield article


def _is_header(cells: list[str], field_map: Mapping[str, str]) -> bool:
    names = _KNOWN_KEYS | {v.lower() for v in field_map.values()}
    return any(cell.strip().lower() in names for cell in cells)


def _positional(first: list[str], classes: list[str],
                clean: Callable[[str], str]) -> Callable[[list[str]], dict[str, Any]]:
    """Roles for the columns of a headerless file, decided from its first row.

    ``class, title, body`` when three columns open with a small integer (AG News and its
    kind), ``title, body`` for two, else the longest column is the body and the first other
    non-numeric one the title.
    """
    cells = [clean(c) for c in first]
    if len(cells) == 3 and _small_int(cells[0]):
        roles = {0: "class", 1: "title", 2: "body"}
    elif len(cells) == 2:
        roles = {0: "title", 1: "body"}
    else:
        body = max(range(len(cells)), key=lambda i: len(cells[i]))
        roles = {body: "body"}
        title = next((i for i, c in enumerate(cells) if i != body and c and not _number(c)),
                     None)
        if title is not None:
            roles[title] = "title"

    def to_record(row: list[str]) -> dict[str, Any]:
        record: dict[str, Any] = {role: row[i] for i, role in roles.items() if i < len(row)}
        label = record.pop("class", "")
        if _small_int(label) and 1 <= int(label) <= len(classes):
            record["topics"] = [classes[int(label) - 1]]
        elif label:
            record["extra"] = {"class": label}
        return record

    return to_record


def _small_int(text: str) -> bool:
    return text.strip().isdigit() and len(text.strip()) <= 3


def _number(text: str) -> bool:
    return re.fullmatch(r"[-+]?\d[\d.,]*", text.strip()) is not None


def _sibling_classes(source: SourceFile) -> list[str]:
    """Class names from a ``classes.txt`` next to the file (one per line), as AG News ships."""
    path = source.path.parent / "classes.txt"
    try:
        return [line.strip() for line in path.read_text("utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return []


#: CSV dumps of crawled news (AG News) write a line break as a lone backslash, a paragraph
#: break as two, ``\n`` before a non-lowercase letter, and escape ``$``; "&#39;" lost its "&"
_CSV_BACKSLASH = re.compile(r"\\\\|\\n(?![a-z])|\\([$\"'#%&*])|\\")
_BROKEN_ENTITY = re.compile(r" #(\d{2,5});")
_TSV_ESCAPE = re.compile(r"\\([tnr\\])")


def _clean_csv_cell(cell: str) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "\\\\":
            return "\n\n"
        if token == "\\n":
            return "\n"
        return match.group(1) or " "

    cell = _CSV_BACKSLASH.sub(replace, cell) if "\\" in cell else cell
    return _unescape_entities(cell).strip()


def _clean_tsv_cell(cell: str) -> str:
    if len(cell) >= 2 and cell[0] == cell[-1] == '"':
        cell = cell[1:-1].replace('""', '"')
    if "\\" in cell:
        cell = _TSV_ESCAPE.sub(lambda m: {"t": "\t", "n": "\n", "r": "\r"}.get(m.group(1), "\\"),
                               cell)
    return _unescape_entities(cell).strip()


def _unescape_entities(cell: str) -> str:
    if "#" in cell:
        cell = _BROKEN_ENTITY.sub(lambda m: _char(int(m.group(1))), cell)
    return html.unescape(cell) if "&" in cell else cell


def _char(code: int) -> str:
    text = html.unescape(f"&#{code};")
    return text if text.isprintable() else ""

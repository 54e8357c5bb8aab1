"""The one pass over the stored articles, in number order, and what it gathers.

- **One file per article** (metadata, page path and text), fetched only for shown results;
  the ids in blocks (``i/BLOCK``), which the browser never needs.
- **Facets**: posting files per facet value in hash buckets (for ``source:``/``place:``/
  ``topic:`` filters: no value listing needed), and per-block columns of facet values with
  the value listing in ``facets`` (for the filter counts, fetched only when a visitor opens
  the filter panel).
- **Dates**: ``meta`` holds each year's first article number; one small file per year holds
  its day table, fetched only when a date filter starts or ends inside that year.
"""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from archive import __version__, store
from archive.search import Archive
from archive.site.files import OutputFolder, Writes
from archive.site.search.format import COLUMN_BLOCK, FACETS, FORMAT_VERSION, article_record, \
    b64, facet_file, number_deltas, script, varints
from archive.site.search.postings import Numbering


#: what the last build's article pass remembers, in the site folder
ARTICLE_CACHE = ".archive-bundle-articles.json"
#: a remembered article: its stored document, id, day (``day_of``), the values of each of
#: ``FACETS`` as stored, and the size of its file
ROW = ("document", "id", "day", *FACETS, "size")


class Facets:
    """Facet values per article (for columns and filter posting lists), gathered in one pass."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, int]] = {f: {} for f in FACETS}   # key -> value id
        self.display: dict[str, list[str]] = {f: [] for f in FACETS}
        self.postings: dict[str, list[array]] = {f: [] for f in FACETS}
        # per facet, every article's value ids one after another, and where each article's
        # run ends: flat arrays, since a list per article and facet would outweigh the rest
        # of the pass at a million articles
        self.values_of: dict[str, array] = {f: array("I") for f in FACETS}
        self.ends: dict[str, array] = {f: array("I") for f in FACETS}

    def add(self, number: int, stored: dict[str, Any]) -> None:
        for name in FACETS:
            ids = []
            for display in store.split_list(stored.get(name)):
                key = display.strip().lower()
                vid = self.values[name].get(key)
                if vid is None:
                    vid = self.values[name][key] = len(self.display[name])
                    self.display[name].append(display)
                    self.postings[name].append(array("I"))
                if vid not in ids:
                    ids.append(vid)
                    self.postings[name][vid].append(number)
            self.values_of[name].extend(ids)
            self.ends[name].append(len(self.values_of[name]))

    def article_values(self, name: str, number: int) -> array:
        """The value ids of facet ``name`` that article ``number`` holds, in the order added."""
        ends = self.ends[name]
        return self.values_of[name][ends[number - 1] if number else 0:ends[number]]

def build_articles(archive: Archive, numbering: Numbering, out: OutputFolder, prefix: str,
                   facets: Facets) -> list[list[int]]:
    """One pass over the articles in number order: article files, ids, facets; returns the
    days ([YYYYMMDD, first article number] per day with articles).

    An article whose number holds the same stored document as in the last build into
    ``out`` (segments are immutable: the same segment and document number in it), its file
    still there with its size, is taken from that build's ``ARTICLE_CACHE`` (id, day, facet
    values) without reading it: a day's update reads only the new and changed articles."""
    days: list[list[int]] = []
    ids = IdBlocks(out, prefix, len(numbering))
    documents = document_keys(archive, numbering)
    reader = archive.searcher.reader()
    pages = store.MappedPages.of_reader(reader)

    def rows() -> Iterator[list[Any]]:
        earlier = _remembered(out, prefix)
        try:
            for number, document in enumerate(documents):
                pages.step()
                row = next(earlier, None)
                if not (isinstance(row, list) and len(row) == len(ROW) and row[0] == document
                        and out.keep(f"{prefix}/a/{number}.js", row[-1])):
                    stored, size = write_article(reader, numbering, out, prefix, number)
                    row = cache_row(document, stored["id"],
                                    day_of(stored, number, numbering.dated), stored, size)
                ids.add(number, row[1])
                facets.add(number, dict(zip(FACETS, row[3:3 + len(FACETS)])))
                add_day(days, number, row[2])
                yield row
        finally:
            earlier.close()

    remember(out, prefix, rows())
    return days


def cache_row(document: str, article_id: str, day: int | None, facet_values: dict[str, Any],
              size: int) -> list[Any]:
    """An article as ``ARTICLE_CACHE`` remembers it (``ROW``); ``facet_values`` holds (at
    least) the stored value of each of ``FACETS``."""
    return [document, article_id, day, *(facet_values.get(f) for f in FACETS), size]


def _header(prefix: str) -> list[Any]:
    return [__version__, FORMAT_VERSION, len(ROW), prefix]


def _remembered(out: OutputFolder, prefix: str) -> Iterator[Any]:
    """The rows the last build's article pass left, in number order, read as they are
    asked for (nothing when it ran other code or another prefix, or its file is damaged)."""
    try:
        stream = open(out.root / ARTICLE_CACHE, encoding="utf-8")
    except OSError:
        return
    with stream:
        try:
            if json.loads(stream.readline()) != _header(prefix):
                return
            for line in stream:
                yield json.loads(line)
        except (OSError, ValueError):   # a damaged file: what follows is read afresh
            return


def remember(out: OutputFolder, prefix: str, rows: Iterable[list[Any]]) -> None:
    """Write the ``ARTICLE_CACHE`` a later build's article pass reads: a ``ROW`` per article
    number (a build whose article pass ran elsewhere writes it too, so the next one on
    this machine reads only what changed). A line per row, written as ``rows`` gives them
    (they may be made as they are asked for): the file is never held in memory whole; it
    replaces the last build's once every row is written."""
    temp = out.root / (ARTICLE_CACHE + ".tmp")
    out.root.mkdir(parents=True, exist_ok=True)
    try:
        with open(temp, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(_header(prefix)) + "\n")
            for row in rows:
                stream.write(json.dumps(row) + "\n")
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    temp.replace(out.root / ARTICLE_CACHE)


def document_keys(archive: Archive, numbering: Numbering) -> list[str]:
    """Per article number, the stored document it holds (``Archive.document_keys``: its
    segment's id and its number in that segment)."""
    keys = archive.document_keys()
    return [keys[docnum] for docnum in numbering.docnums]


def article_pass(archive: Archive, numbering: Numbering, out: Writes, prefix: str,
                 first: int, end: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """Articles ``first`` to ``end`` (exclusive) in number order: each one's file written,
    then (number, stored fields). A range needs nothing from any other, so a cluster's
    tasks can each take one."""
    reader = archive.searcher.reader()
    pages = store.MappedPages.of_reader(reader)
    for number in range(first, end):
        pages.step()
        yield number, write_article(reader, numbering, out, prefix, number)[0]


def write_article(reader: Any, numbering: Numbering, out: Writes, prefix: str,
                  number: int) -> tuple[dict[str, Any], int]:
    """Write article ``number``'s file: (its stored fields, the file's size)."""
    stored = reader.stored_fields(numbering.docnums[number])
    name = f"a/{number}"
    content = script(name, article_record(stored))
    out.write(f"{prefix}/{name}.js", content)
    return stored, len(content)


class IdBlocks:
    """The articles' ids in blocks of ``COLUMN_BLOCK`` (``i/BLOCK``), given in number order."""

    def __init__(self, out: Writes, prefix: str, articles: int):
        self.out, self.prefix, self.articles = out, prefix, articles
        self.ids: list[str] = []

    def add(self, number: int, article_id: str) -> None:
        self.ids.append(article_id)
        if len(self.ids) == COLUMN_BLOCK or number == self.articles - 1:
            iname = f"i/{number // COLUMN_BLOCK}"
            self.out.write(f"{self.prefix}/{iname}.js", script(iname, self.ids))
            self.ids = []


def day_of(stored: dict[str, Any], number: int, dated: int) -> int | None:
    """An article's day as YYYYMMDD (None for the undated, numbered from ``dated`` on)."""
    date = stored.get("date") if number < dated else None
    return None if date is None else date.year * 10000 + date.month * 100 + date.day


def add_day(days: list[list[int]], number: int, day: int | None) -> None:
    """Extend the days table ([YYYYMMDD, first article number]) by article ``number``."""
    if day is not None and (not days or days[-1][0] != day):
        days.append([day, number])


def write_facets(facets: Facets, out: OutputFolder, prefix: str,
                 articles: int) -> tuple[dict[str, list[list[Any]]], dict[str, int], int]:
    """Filter posting files (hash buckets, every one written so a lookup never misses a
    file) and count columns: (listing, buckets, files).

    A column holds value ids in the order the pass first met them (the listing's order, the
    browser sorting what it counts): a day's new articles come last, so the columns of the
    blocks before theirs stay as they were (ids by count would move with every count, and
    every block with them)."""
    listing: dict[str, list[list[Any]]] = {}
    buckets: dict[str, int] = {}
    files = 0
    for name in FACETS:
        keys = list(facets.values[name])
        order = range(len(keys))
        listing[name] = [[keys[v], facets.display[name][v], len(facets.postings[name][v])]
                         for v in order]
        buckets[name] = max(1, len(keys))
        by_file: dict[str, list[list[Any]]] = {
            f"f/{name}/{b}": [] for b in range(buckets[name])}
        for vid in order:
            numbers = list(facets.postings[name][vid])
            by_file[facet_file(name, keys[vid], buckets[name])].append(
                [keys[vid], len(numbers), b64(varints(number_deltas(numbers)))])
        for fname, rows in by_file.items():
            out.write(f"{prefix}/{fname}.js", script(fname, rows))
            files += 1
        for block in range(math.ceil(articles / COLUMN_BLOCK)):
            values: list[int] = []
            for number in range(block * COLUMN_BLOCK, min(articles, (block + 1) * COLUMN_BLOCK)):
                ids = facets.article_values(name, number)
                values.append(len(ids))
                values.extend(sorted(ids))
            cname = f"c/{name}/{block}"
            out.write(f"{prefix}/{cname}.js", script(cname, b64(varints(values))))
            files += 1
    return listing, buckets, files


def years(days: list[list[int]]) -> list[list[int]]:
    """[year, first article number] per year with dated articles, oldest first."""
    out: list[list[int]] = []
    for day, first in days:
        if not out or out[-1][0] != day // 10000:
            out.append([day // 10000, first])
    return out


def write_days(days: list[list[int]], dated: int, out: OutputFolder, prefix: str) -> int:
    """One file per year: ``[mmdd, articles that day, ...]`` (the year's first number is in
    ``meta``), so a date filter fetches at most the two years its ends fall in."""
    by_year: dict[int, list[int]] = defaultdict(list)
    for i, (day, first) in enumerate(days):
        end = days[i + 1][1] if i + 1 < len(days) else dated
        by_year[day // 10000] += [day % 10000, end - first]
    for year, flat in by_year.items():
        out.write(f"{prefix}/d/{year}.js", script(f"d/{year}", flat))
    return len(by_year)


def year_listing(days: list[list[int]], dated: int) -> list[list[Any]]:
    """The ``year`` facet's listing: [year, year, articles], most articles first."""
    counts: Counter[int] = Counter()
    for i, (day, first) in enumerate(days):
        end = days[i + 1][1] if i + 1 < len(days) else dated
        counts[day // 10000] += end - first
    return [[str(y), str(y), c] for y, c in sorted(counts.items(), key=lambda yc: (-yc[1], yc[0]))]

"""Lookup tables over one open searcher, each read on first use and kept while it is open.

Not API: ``archive.search.Archive`` owns one. Whoosh rebuilds such tables for each query (its
grouping and sorting facets) or probes the postings once per lookup; a site build or a
preview server asks the same open archive thousands of times, so each table is read in one
pass and kept.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, time
from typing import Any

from whoosh import query as wq, sorting

from archive import store
from archive.query import Filters

#: single id lookups before the whole id table is read instead
ID_LOOKUPS_BEFORE_TABLE = 256
#: the date keys of equal scores are read one document at a time while they are fewer than
#: the archive's documents over this; more, and the whole table is read once and kept
NEWEST_TABLE_SHARE = 8


class Tables:
    """Per-document tables of one searcher: facet terms and their spellings, wire-copy
    clusters, the id table, record keys and the date orders of the site's lists."""

    def __init__(self, searcher: Any):
        self.searcher = searcher
        self._facet_tables: dict[str, dict[int, list[str]]] = {}
        self._clusters: list[str] | None = None
        self._copy_members: dict[str, list[int]] | None = None  # stories held twice or more
        self._displays: dict[tuple[str, str], str] = {}
        self._sorted: dict[str, tuple[Any, list[int], dict[int, int]]] = {}  # browse's orders
        self._id_table: dict[str, int] | None = None
        self._id_lookups = 0
        self._doc_keys: dict[int, str] = {}  # docnum -> external_id or id, for rank()
        self._days: list[date | None] | None = None
        self._newest: list[tuple[int, int]] | None = None
        self._matched: tuple[Filters, list[int]] | None = None

    def docnum_of(self, article_id: str) -> int | None:
        """The live document holding ``article_id``.

        One lookup probes each segment's term table; a caller that looks up many articles
        (a site build: every page and its related articles) gets the whole id table read in
        one pass instead, once it has asked for more than a few.
        """
        if self._id_table is None:
            self._id_lookups += 1
            if self._id_lookups <= ID_LOOKUPS_BEFORE_TABLE:
                return self.searcher.document_number(id=article_id)
            table: dict[str, int] = {}
            for leaf, offset in self.searcher.reader().leaf_readers():
                if "id" not in leaf.schema:
                    continue
                for word, numbers in store.key_postings(leaf, "id"):
                    live = [int(n) for n in numbers if not leaf.is_deleted(int(n))]
                    if live:
                        table.setdefault(word.decode("utf-8"), offset + live[0])
            self._id_table = table
        return self._id_table.get(article_id)

    def doc_key(self, docnum: int) -> str:
        """The id relevance judgments use: the record's ``external_id``, else the article id."""
        key = self._doc_keys.get(docnum)
        if key is None:
            stored = self.searcher.stored_fields(docnum)
            key = self._doc_keys[docnum] = stored.get("external_id") or stored["id"]
        return key

    def sorted_all(self, sort: str) -> tuple[Any, list[int], dict[int, int]]:
        """Every live article sorted by date (undated last): the results, their document
        numbers in order, and each one's place in it."""
        if sort not in self._sorted:
            sortedby = sorting.MultiFacet([sorting.FieldFacet("dated", reverse=True),
                                           sorting.FieldFacet("date", reverse=sort == "newest")])
            results = self.searcher.search(wq.Every(), limit=None, sortedby=sortedby)
            order = [docnum for _, docnum in results.top_n]
            self._sorted[sort] = (results, order, {d: p for p, d in enumerate(order)})
        return self._sorted[sort]

    def matching(self, filters: Filters) -> list[int]:
        """The live documents ``filters`` keeps, in document number order.

        The last answer is kept: a site asks for a list and then its feed. A filter of whole
        days and nothing else (a month's list) is answered from the day table: a date range
        search walks every date term in the range, one per distinct instant."""
        if self._matched is not None and self._matched[0] == filters:
            return self._matched[1]
        days = _whole_days(filters)
        if days is not None:
            first, last = days
            found = [docnum for docnum, day in enumerate(self.days())
                     if day is not None and first <= day <= last]
        else:
            query = filters.query()
            found = sorted(self.searcher.docs_for_query(query)) if query is not None else \
                list(self.searcher.reader().all_doc_ids())
        self._matched = (filters, found)
        return found

    # -- wire-copy clusters ------------------------------------------------------------------

    def cluster_size(self, cluster: str) -> int:
        """How many live articles hold this wire story (1 for a story held once)."""
        return len(self.copy_members().get(cluster, ())) or 1

    def copy_members(self) -> dict[str, list[int]]:
        """Every wire story held more than once: its live articles' document numbers, in
        order."""
        if self._copy_members is None:
            reader = self.searcher.reader()
            deletions = reader.has_deletions()
            members: dict[str, list[int]] = {}
            for docnum, cluster in enumerate(self.clusters()):
                if cluster and (not deletions or not reader.is_deleted(docnum)):
                    members.setdefault(cluster, []).append(docnum)
            self._copy_members = {c: found for c, found in members.items() if len(found) > 1}
        return self._copy_members

    def clusters(self) -> list[str]:
        """docnum -> the article's cluster id."""
        if self._clusters is None:
            reader = self.searcher.reader()
            if reader.doc_count_all() == 0:
                self._clusters = []
            elif reader.has_column("cluster"):
                column = reader.column_reader("cluster")
                self._clusters = [column[d] for d in range(reader.doc_count_all())]
            else:  # an index written before cluster was a column
                self._clusters = [reader.stored_fields(d).get("cluster") or str(d)
                                  for d in range(reader.doc_count_all())]
        return self._clusters

    def newest_keys(self, count: int) -> Callable[[int], tuple[int, int]]:
        """docnum -> its key in the "newest" sort but for the document number, the last tie
        breaker: (0, minus the date) when dated, (1, 0) when not; for ``count`` lookups. The
        whole table is read once and kept when ``count`` is a large part of the archive (or
        it is read already); fewer lookups read each document's two column values, so a
        search with a few equal scores does not pay for reading every document's date."""
        if self._newest is not None:
            return self._newest.__getitem__
        reader = self.searcher.reader()
        total = reader.doc_count_all()
        if not total:  # an empty index's reader has no columns at all
            return lambda docnum: (1, 0)
        dated = reader.column_reader("dated", translate=True)
        when = reader.column_reader("date", translate=False)

        def read(docnum: int) -> tuple[int, int]:
            return (0, -when[docnum]) if dated[docnum] else (1, 0)
        if count * NEWEST_TABLE_SHARE < total:
            return read
        self._newest = [read(d) for d in range(total)]
        return self._newest.__getitem__

    # -- facets ------------------------------------------------------------------------------

    def days(self) -> list[date | None]:
        """Each document number's day, None when undated or deleted (the sortable column)."""
        if self._days is None:
            reader = self.searcher.reader()
            days: list[date | None] = [None] * reader.doc_count_all()
            if days:  # an empty index's reader has no columns at all
                raw = reader.column_reader("date", translate=False)
                dated = reader.column_reader("dated", translate=True)
                to_datetime = self.searcher.schema["date"].from_column_value
                for docnum in reader.all_doc_ids():
                    if dated[docnum]:
                        days[docnum] = to_datetime(raw[docnum]).date()
            self._days = days
        return self._days

    def facet_table(self, name: str) -> dict[int, list[str]]:
        """docnum -> the facet terms of that document, read once from the postings."""
        if name not in self._facet_tables:
            reader = self.searcher.reader()
            table: dict[int, list[str]] = {}
            for term in reader.lexicon(name):
                key = term.decode("utf-8")
                for docnum in reader.postings(name, term).all_ids():
                    table.setdefault(docnum, []).append(key)
            self._facet_tables[name] = table
        return self._facet_tables[name]

    def display(self, name: str, key: str) -> str:
        """The stored spelling of a facet term ("Lebanon" for the term "lebanon")."""
        if (name, key) not in self._displays:
            self._displays[(name, key)] = key
            docnum = next(iter(self.searcher.docs_for_query(wq.Term(name, key))), None)
            stored = self.searcher.stored_fields(docnum).get(name, "") if docnum is not None \
                else ""
            for value in store.split_list(stored) if name != "year" else [stored]:
                if value.lower() == key:
                    self._displays[(name, key)] = value
                    break
        return self._displays[(name, key)]


#: the last instant of a day, as a range ending on that day's end holds it (microseconds)
_DAY_END = time(23, 59, 59, 999999)


def _whole_days(filters: Filters) -> tuple[date, date] | None:
    """(first, last day) when ``filters`` is a date range from one day's start to another's
    end and nothing else, else None."""
    since, until = filters.since, filters.until
    if since is None or until is None or filters != Filters(since=since, until=until) or \
            since.tzinfo is not None or until.tzinfo is not None or \
            since.time() != time(0) or until.time() != _DAY_END:
        return None
    return since.date(), until.date()

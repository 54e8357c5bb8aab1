"""The index's schema and the mapping between an Article and its Whoosh document.

Everything that knows which field holds what lives here: the schema itself, how an Article
becomes a document (``to_document``) and comes back from its stored fields (``from_stored``),
and the few reads that answer questions about those fields across the whole index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from whoosh import fields, index

from archive.analysis import news_analyzer
from archive.article import Article, title_to_index

INDEX_NAME = "archive"

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
    """The Whoosh document for an article; only non-empty fields are set. A title that only
    repeats the body's lead is stored, not searched (``article.title_to_index``)."""
    searched_title = title_to_index(article.title, article.body)
    doc: dict[str, Any] = {
        "id": article.id, "title": searched_title, "body": article.body,
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
    doc = {k: v for k, v in doc.items() if v is not None and v != ""}
    if searched_title != article.title:
        doc["title"], doc["_stored_title"] = "", article.title
    return doc


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


def add_articles(w: Any, articles: Iterable[Article]) -> int:
    count = 0
    for article in articles:
        w.add_document(**to_document(article))
        count += 1
    return count


# --- what the fields say about the whole index ---------------------------------------------------

def iter_articles(ix: index.Index) -> Iterator[Article]:
    """Every live article in the index, in document order."""
    with ix.searcher() as searcher:
        for stored in searcher.reader().all_stored_fields():
            yield from_stored(stored)


def indexed_paths(searcher: Any) -> set[str]:
    """The input paths with documents in the index (those of deleted documents may linger
    until their segment is merged: a superset, fine for deciding what to delete)."""
    return set(searcher.reader().field_terms("path"))


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

"""The SQLite FTS5 peer: the same articles in an FTS5 table (porter tokenizer, bm25())."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from archive.article import Article

SCHEMA = ("CREATE VIRTUAL TABLE docs USING fts5(title, body, captions, "
          "id UNINDEXED, date UNINDEXED, source UNINDEXED, place UNINDEXED, topic UNINDEXED, "
          "url UNINDEXED, tokenize='porter unicode61')")


def row(a: Article) -> tuple[str, ...]:
    return (a.title, a.body, "\n\n".join(a.captions), a.id,
            a.date.isoformat(sep=" ") if a.date else "", a.source, ", ".join(a.places),
            ", ".join(a.topics), a.url)


def build(db_path: Path, articles: Iterable[Article], batch: int = 2000) -> int:
    """A fresh FTS5 database at ``db_path`` holding ``articles``; returns the count."""
    db_path.unlink(missing_ok=True)
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute(SCHEMA)
    count, rows = 0, []
    for article in articles:
        rows.append(row(article))
        if len(rows) >= batch:
            db.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?)", rows)
            count += len(rows)
            rows.clear()
    db.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?)", rows)
    count += len(rows)
    db.commit()
    db.close()
    return count

"""Writing articles out as JSON Lines or CSV: the user's backup and their way to other tools.

A JSONL export is the exact input of the JSONL reader: indexing it again yields the same
articles (titles, bodies, dates and how they were obtained, facets, external ids).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import TextIO

from archive.article import Article

FORMATS = ("jsonl", "csv")
CSV_FIELDS = ("id", "title", "date", "date_source", "source", "url", "author", "dateline",
              "places", "topics", "captions", "credits", "language", "external_id", "cluster",
              "path", "word_count", "content_hash", "body")
LIST_SEPARATOR = "; "


def write_jsonl(articles: Iterable[Article], out: TextIO) -> int:
    count = 0
    for article in articles:
        out.write(json.dumps(article.to_dict(), ensure_ascii=False, default=str))
        out.write("\n")
        count += 1
    return count


def write_csv(articles: Iterable[Article], out: TextIO) -> int:
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    count = 0
    for article in articles:
        row = article.to_dict()
        for name in ("places", "topics", "captions"):
            row[name] = LIST_SEPARATOR.join(row[name])
        writer.writerow(row)
        count += 1
    return count


WRITERS = {"jsonl": write_jsonl, "csv": write_csv}

"""Enrichment: functions Article -> Article that add what the text implies.

``enrich`` runs them in order; each step only fills what the reader left empty, so explicit
metadata always wins over inference.
"""

from __future__ import annotations

from archive.article import Article
from archive.enrich.dates import infer_date


def enrich(article: Article) -> Article:
    return infer_date(article)

"""Publication dates inferred from dates written in the text.

News copy mentions the day it was written ("Beirut, Lebanon August 27, 2017") and earlier
events; the latest complete date (day, month and year) mentioned is the best guess for the
publication date. Only complete dates count: "in 2014" says nothing about the day.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from archive.article import Article

_MONTHS = {name: i for i, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
     ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
     ("oct", "october"), ("nov", "november"), ("dec", "december")], start=1) for name in names}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_PATTERNS = [
    re.compile(_MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH +
               r",?\s+(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>\d\d)-(?P<day>\d\d)\b"),
]


def dates_in(text: str) -> list[datetime]:
    found = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            month = m.group("month")
            month_no = int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]
            try:
                found.append(datetime(int(m.group("year")), month_no, int(m.group("day"))))
            except ValueError:
                continue
    return found


def infer_date(article: Article) -> Article:
    if article.date is not None:
        return article
    text = "\n".join([article.title, article.dateline, article.body, *article.captions])
    found = dates_in(text)
    if not found:
        return article
    return replace(article, date=max(found), date_source="inferred")

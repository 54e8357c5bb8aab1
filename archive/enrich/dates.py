"""Publication dates inferred from dates written in the text, only where they date the article.

A story mentions many days: the one it reports, and birthdays, anniversaries, deadlines and the
ends of accounting periods. Only a date placed where news copy dates itself counts as evidence:
in the headline or the dateline, in a photo caption (a picture's caption carries the day it was
taken: "Beirut, Lebanon August 27, 2017"), or in the lead paragraph, unless the words just
before it say it is some other day ("born on", "ten years ago, on", "until", "the three months
to"). The latest such date is the guess; with no evidence the date stays unknown, which is
better than a wrong one heading the site. Only complete dates count (day, month and year), and
a date never runs across a line break.
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
    re.compile(_MONTH + r"[^\S\n]+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?[^\S\n]+"
               r"(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?[^\S\n]+(?:of[^\S\n]+)?" + _MONTH +
               r",?[^\S\n]+(?P<year>(?:19|20)\d\d)\b", re.I),
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>\d\d)-(?P<day>\d\d)\b"),
]


#: words just before a date that make it the edge of a period, not a day of news
_PERIOD_EDGE = re.compile(r"\b(?:to|from|between|and|until|till|since|before|after|ending|ended|"
                          r"due|by|expires?|expired)[^\S\n]+(?:on[^\S\n]+|the[^\S\n]+)?$", re.I)
#: words shortly before a date that make it a day of someone's life or an anniversary
_OTHER_DAY = re.compile(r"\b(?:born|died|death|ago|anniversary)\b[^.!?\n]{0,40}$", re.I)
_CUE_WINDOW = 45
_LEAD_CHARS = 400


def dates_in(text: str) -> list[datetime]:
    return [when for when, _ in _dates_with_positions(text)]


def _dates_with_positions(text: str) -> list[tuple[datetime, int]]:
    found = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            month = m.group("month")
            month_no = int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]
            try:
                found.append((datetime(int(m.group("year")), month_no, int(m.group("day"))),
                              m.start()))
            except ValueError:
                continue
    return found


def dating_evidence(article: Article) -> list[datetime]:
    """The dates in ``article`` that date it (see the module's docstring)."""
    found = [when for part in (article.title, article.dateline, *article.captions)
             for when in dates_in(part)]
    lead = article.body.lstrip().split("\n\n", 1)[0][:_LEAD_CHARS]
    for when, start in _dates_with_positions(lead):
        before = lead[max(0, start - _CUE_WINDOW):start]
        if not _PERIOD_EDGE.search(before) and not _OTHER_DAY.search(before):
            found.append(when)
    return found


def infer_date(article: Article) -> Article:
    if article.date is not None:
        return article
    found = dating_evidence(article)
    if not found:
        return article
    return replace(article, date=max(found), date_source="inferred")

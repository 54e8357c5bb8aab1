"""The data of the home page's articles-per-month chart; chart.js draws it in the browser.

One drawing code path: the search page's chart has to be drawn in the browser (its data is a
query's match set), so the home page's is drawn by the same script from counts embedded as
JSON, and a one-line text summary stands in for it without JavaScript.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def monthly_rows(months: Counter[tuple[int, int]]) -> list[list[Any]]:
    """``[["YYYY-MM", count], ...]`` for every month from the first to the last, empty ones
    too (a gap in the archive shows as a gap in the chart)."""
    if not months:
        return []
    (year, month), last = min(months), max(months)
    rows = []
    while (year, month) <= last:
        rows.append([f"{year}-{month:02d}", months.get((year, month), 0)])
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return rows


def summary(rows: list[list[Any]]) -> str:
    """The chart in words, for the noscript fallback: its span and its busiest month."""
    if not rows:
        return ""
    label, count = max(rows, key=lambda r: r[1])
    return (f"{rows[0][0]} to {rows[-1][0]}; the busiest month, {label}, has "
            f"{count:,} article{'' if count == 1 else 's'}.")

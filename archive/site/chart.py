"""The data of the home page's articles-per-month chart; chart.js draws it in the browser.

One drawing code path: the search page's chart has to be drawn in the browser (its data is a
query's match set), so the home page's is drawn by the same script from counts embedded as
JSON, and a one-line text summary stands in for it without JavaScript.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from archive import timeline


def monthly_rows(days: Iterable[date]) -> list[list[Any]]:
    """``[["YYYY-MM", count], ...]`` for every month from the first to the last, empty ones
    too, counted as ``archive timeline --by month`` counts."""
    return timeline.counted_rows(days, "month")


def summary(rows: list[list[Any]]) -> str:
    """The chart in words, for the noscript fallback: its span and its busiest month."""
    if not rows:
        return ""
    label, count = max(rows, key=lambda r: r[1])
    return (f"{rows[0][0]} to {rows[-1][0]}; the busiest month, {label}, has "
            f"{count:,} article{'' if count == 1 else 's'}.")

"""Coverage over time: how many stories match a query per year, month, week or day.

A timeline counts what ``archive search`` lists (``Archive.matching``): the same query
language, filters, any-word relaxation and wire-copy collapse, so its counts add up to the
search's total (undated stories are counted apart). The share of coverage divides a period's
count by the stories published in it (under the same filters), which is what makes two
periods of unequal output comparable.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Iterable

from archive.search import Archive, Filters

PERIODS = ("year", "month", "week", "day")


@dataclass(frozen=True)
class Period:
    """One bar: the period's first day, its matching stories and their share of its stories."""

    start: date
    count: int
    share: float | None = None   # None unless the timeline was normalised


@dataclass(frozen=True)
class Timeline:
    query: str
    by: str
    periods: tuple[Period, ...]
    total: int                   # every story the search lists, dated or not
    undated: int                 # of which have no date (in no period)
    suggestion: str | None = None
    relaxed: bool = False

    def peaks(self, count: int = 3) -> list[Period]:
        """The busiest periods, most stories first (then earliest), for naming in a summary."""
        busy = [p for p in self.periods if p.count]
        key = (lambda p: (-(p.share or 0.0), p.start)) if self.normalized else \
            (lambda p: (-p.count, p.start))
        return sorted(busy, key=key)[:count]

    @property
    def normalized(self) -> bool:
        return any(p.share is not None for p in self.periods)


def period_start(day: date, by: str) -> date:
    """The first day of the period ``day`` falls in (weeks start on Monday, as ISO's do)."""
    if by == "year":
        return date(day.year, 1, 1)
    if by == "month":
        return date(day.year, day.month, 1)
    if by == "week":
        return day - timedelta(days=day.weekday())
    if by == "day":
        return day
    raise ValueError(f"unknown period {by!r}: use one of {', '.join(PERIODS)}")


def next_period(start: date, by: str) -> date:
    if by == "year":
        return date(start.year + 1, 1, 1)
    if by == "month":
        return date(start.year + (start.month == 12), start.month % 12 + 1, 1)
    return start + timedelta(days=7 if by == "week" else 1)


def period_label(start: date, by: str) -> str:
    """How a period is written: 2005, 2005-03, 2005-W09 (ISO week) or 2005-03-01."""
    if by == "year":
        return f"{start.year}"
    if by == "month":
        return f"{start.year}-{start.month:02d}"
    if by == "week":
        year, week, _ = start.isocalendar()
        return f"{year}-W{week:02d}"
    return start.isoformat()


#: The chart's period, chosen from the span of the matches (chart.js applies the same rule):
#: a bar a year past this many years, a bar a day when the first and last match are in the
#: same or adjacent months, else a bar a month. So a chart has tens of bars, not thousands.
AUTO_YEARS = 20
AUTO_DAY_MONTHS = 2


def auto_period(first: date, last: date) -> str:
    """The period a chart of matches from ``first`` to ``last`` counts by."""
    if last.year - first.year > AUTO_YEARS:
        return "year"
    months = (last.year - first.year) * 12 + last.month - first.month
    return "day" if months < AUTO_DAY_MONTHS else "month"


def chart_rows(timeline: Timeline) -> list[list[Any]]:
    """``[[label, count], ...]``: what the site's chart.js draws."""
    return [[period_label(p.start, timeline.by), p.count] for p in timeline.periods]


def counted_rows(days: Iterable[date], by: str) -> list[list[Any]]:
    """``[[label, count], ...]`` of ``days`` per period, every period from the first to the
    last, empty ones too (a gap in the archive shows as a gap in the chart)."""
    per = Counter(period_start(day, by) for day in days)
    return [[period_label(start, by), per.get(start, 0)] for start in _span([per], None, by)]


def auto_timeline(archive: Archive, query: str, *, filters: Filters | None = None,
                  all_copies: bool = False) -> Timeline:
    """The query's timeline by the period ``auto_period`` picks from its matches' span, as the
    site's search page picks it (the day timeline, regrouped when a longer period wins)."""
    [daily] = timelines(archive, [query], by="day", filters=filters, all_copies=all_copies)
    busy = [p.start for p in daily.periods if p.count]
    if not busy:
        return daily
    by = auto_period(busy[0], busy[-1])
    if by == "day":
        return daily
    per: Counter[date] = Counter()
    for p in daily.periods:
        per[period_start(p.start, by)] += p.count
    starts = _span([per], None, by)
    return Timeline(query=daily.query, by=by,
                    periods=tuple(Period(s, per.get(s, 0)) for s in starts),
                    total=daily.total, undated=daily.undated, suggestion=daily.suggestion,
                    relaxed=daily.relaxed)


def timelines(archive: Archive, queries: Iterable[str], *, by: str = "month",
              filters: Filters | None = None, normalize: bool = False,
              all_copies: bool = False) -> list[Timeline]:
    """One timeline per query, all over the same run of periods (so they compare on a chart):
    from the filters' bounds when given, else from the first to the last period any query
    matches, with the empty periods between them. ``all_copies`` counts every copy of a wire
    story (as ``search --all-copies`` lists them; the site's own search does too)."""
    if by not in PERIODS:
        raise ValueError(f"unknown period {by!r}: use one of {', '.join(PERIODS)}")
    days = archive.day_table()
    counted = []
    for text in queries:
        matches = archive.matching(text, filters=filters, all_copies=all_copies)
        per_period: Counter[date] = Counter()
        undated = 0
        for docnum in matches.docnums:
            day = days[docnum]
            if day is None:
                undated += 1
            else:
                per_period[period_start(day, by)] += 1
        counted.append((matches, per_period, undated))
    starts = _span([c for _, c, _ in counted], filters, by)
    coverage = _stories_per_period(archive, filters, by) if normalize else None
    out = []
    for matches, per_period, undated in counted:
        periods = tuple(
            Period(start, per_period.get(start, 0),
                   None if coverage is None else
                   (per_period.get(start, 0) / coverage[start] if coverage.get(start) else 0.0))
            for start in starts)
        out.append(Timeline(query=matches.query, by=by, periods=periods,
                            total=len(matches.docnums), undated=undated,
                            suggestion=matches.suggestion, relaxed=matches.relaxed))
    return out


def _span(counts: list[Counter[date]], filters: Filters | None, by: str) -> list[date]:
    firsts = [min(c) for c in counts if c]
    lasts = [max(c) for c in counts if c]
    since = filters.since.date() if filters and filters.since else None
    until = filters.until.date() if filters and filters.until else None
    first = period_start(since, by) if since else (min(firsts) if firsts else None)
    last = period_start(until, by) if until else (max(lasts) if lasts else None)
    if first is None or last is None or first > last:
        return []
    starts = [first]
    while first < last:  # never a step past the last: after 9999-12 there is no date
        first = next_period(first, by)
        starts.append(first)
    return starts


def _stories_per_period(archive: Archive, filters: Filters | None, by: str) -> Counter[date]:
    """Stories published in each period: a wire story counts in every period one of its
    copies appeared in, so a query's count (one copy per story) never exceeds it."""
    days = archive.day_table()
    seen: set[tuple[date, str]] = set()
    for docnum in archive.matching("", filters=filters, all_copies=True).docnums:
        day = days[docnum]
        if day is not None:
            seen.add((period_start(day, by), archive.cluster_of(docnum)))
    return Counter(start for start, _ in seen)


def timeline_to_dict(timeline: Timeline) -> dict[str, Any]:
    """The JSON form: ``{"query", "by", "periods": [{"start", "count", "share"}], "total"}``
    plus how many stories are undated and whether the words were relaxed to any word."""
    return {
        "query": timeline.query, "by": timeline.by,
        "periods": [{"start": period_label(p.start, timeline.by), "count": p.count,
                     "share": None if p.share is None else round(p.share, 6)}
                    for p in timeline.periods],
        "total": timeline.total, "undated": timeline.undated,
        "relaxed": timeline.relaxed, "suggestion": timeline.suggestion,
    }


# --- the terminal chart --------------------------------------------------------------------

EIGHTHS = " ▏▎▍▌▋▊▉█"
FILLS = ("█", "▓", "▒", "░")       # one per query, so several compare on one chart
ASCII_FILLS = ("#", "=", "+", "-")


def chart_lines(timelines_: list[Timeline], width: int, *, unicode: bool = True) -> list[str]:
    """One row per period (one per query and period when several), bars scaled to the
    busiest so the widest line is ``width`` characters: ``2005-03 ████▌ 123``."""
    if not timelines_ or not timelines_[0].periods:
        return []
    by = timelines_[0].by
    normalized = timelines_[0].normalized
    several = len(timelines_) > 1

    def value(p: Period) -> float:
        return (p.share or 0.0) if normalized else p.count

    def shown(p: Period) -> str:
        return f"{(p.share or 0.0) * 100:.1f}%" if normalized else f"{p.count:,}"

    top = max((value(p) for t in timelines_ for p in t.periods), default=0) or 1
    label_width = max(len(period_label(p.start, by)) for p in timelines_[0].periods)
    number_width = max(len(shown(p)) for t in timelines_ for p in t.periods)
    room = max(width - label_width - number_width - 2, 1)
    fills = FILLS if unicode else ASCII_FILLS
    lines = []
    for row, start in enumerate(p.start for p in timelines_[0].periods):
        for n, t in enumerate(timelines_):
            p = t.periods[row]
            label = period_label(start, by) if n == 0 else ""
            bar = _bar(value(p) / top * room, fills[n % len(fills)], unicode and not several)
            lines.append(f"{label:<{label_width}} {shown(p):>{number_width}} {bar}".rstrip())
    return lines


def _bar(cells: float, fill: str, eighths: bool) -> str:
    whole = int(cells)
    bar = fill * whole
    if eighths:
        part = int((cells - whole) * 8)
        if part:
            bar += EIGHTHS[part]
    if cells > 0 and not bar:  # a period with any story shows at least a sliver
        bar = EIGHTHS[1] if eighths else fill
    return bar


def legend(timelines_: list[Timeline], *, unicode: bool = True) -> list[str]:
    """Which fill is which query, when several share the chart."""
    if len(timelines_) < 2:
        return []
    fills = FILLS if unicode else ASCII_FILLS
    return [f"{fills[n % len(fills)]} {t.query}" for n, t in enumerate(timelines_)]

"""The home page's articles-per-month chart, drawn at build time as inline SVG.

Inline SVG needs no script and no image request, so it reads with JavaScript off and offline;
a <title> per bar gives exact counts to screen readers and on hover.
"""

from __future__ import annotations

from collections import Counter

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 720, 160, 24


def monthly_svg(months: Counter[tuple[int, int]]) -> Markup:
    if not months:
        return Markup("")
    first, last = min(months), max(months)
    series = _every_month(first, last)
    peak = max(months.values())
    bar = (WIDTH - 2 * PAD) / len(series)
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">',
             f'<title id="chart-title">Articles per month, {first[0]}-{first[1]:02d} to '
             f'{last[0]}-{last[1]:02d} (most: {peak:,})</title>']
    for n, (year, month) in enumerate(series):
        count = months.get((year, month), 0)
        height = (HEIGHT - 2 * PAD) * count / peak
        x, y = PAD + n * bar, HEIGHT - PAD - height
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bar - 1, 0.5):.1f}" '
                     f'height="{height:.1f}"><title>{year}-{month:02d}: {count:,}</title></rect>')
    parts.append(f'<text x="{PAD}" y="{HEIGHT - 6}">{first[0]}-{first[1]:02d}</text>')
    parts.append(f'<text x="{WIDTH - PAD}" y="{HEIGHT - 6}" text-anchor="end">'
                 f'{last[0]}-{last[1]:02d}</text>')
    parts.append(f'<text x="{PAD}" y="{PAD - 8}">{escape(f"{peak:,}")} per month at most</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _every_month(first: tuple[int, int], last: tuple[int, int]) -> list[tuple[int, int]]:
    year, month = first
    out = []
    while (year, month) <= last:
        out.append((year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out

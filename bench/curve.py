"""The scale curve (``python -m bench curve``): how each cost of the archive grows with the
number of articles, and whether any grows worse than linearly.

For each size the scale generator (``bench.scale``) writes the set with the same seed into
``bench/data/curve/<n>/articles/``; a set already there with the same size, seed and file size
is reused (generating is not what is measured). Then every step runs in a fresh process,
measured with every process it starts (``common.measured_tree``: a forked bundle helper or a
second writer process holds memory at the same time as its parent, which one process's
``ru_maxrss`` does not see):

1. a fresh in-process ``archive index`` build (``Indexer.run(rebuild=True)``, writer processes
   fixed by ``--procs`` so that every size is built the same way): wall time, the tree's peak
   memory, the index folder on disk with its columnar sidecars;
2. SQLite FTS5 loaded with the same articles by the same readers: the peer;
3. the queries bench's query set (``queries.make_queries``, same seed and kinds) through the
   columnar path, the columnar path with facet counts, and FTS5, each system in its own process
   (a warm-up pass, then a timed one): p50/p95, and the process's peak memory, which is the
   query-time memory;
4. the static site's search bundle alone (``build_bundle``, no article pages): wall time and the
   tree's peak memory;
5. the bytes a first query fetches from that bundle, the static-search bench's method (the real
   engine under node, client code included, gzip level 6), over headline queries.

The growth exponent of a measure is the slope of the least-squares line through
(log articles, log value): 1 is linear, 2 quadratic. A fixed cost (the interpreter, the
libraries, the client code in every first query) flattens the slope between small sizes, so
an exponent well under 1 there says little about larger ones; an exponent above
``LINEAR_LIMIT`` (a little over 1, for run-to-run noise) is flagged as growing worse than
linearly. The table, the JSON (``bench/results/curve.json``) and a log-log chart of every
measure (``bench/curve.svg``, hand-written SVG: no plotting dependency) are the output.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from bench.common import folder_bytes, measured_worker

SIZES = (10_000, 100_000, 1_000_000)
#: a measure whose exponent is above this grows worse than linearly (the margin is for noise)
LINEAR_LIMIT = 1.05
SYSTEMS = ("archive", "archive+facets", "fts5")


@dataclass(frozen=True)
class Measure:
    """One quantity drawn against size; a ``peer`` measure (FTS5's) is there for comparison
    and is not held to the linear limit."""
    key: str
    label: str
    unit: str
    peer: bool = False


MEASURES = (
    Measure("build_s", "index build", "s"),
    Measure("build_cpu_s", "index build CPU", "s"),
    Measure("build_rss_mb", "index build peak RSS", "MB"),
    Measure("index_mb", "index on disk (with sidecars)", "MB"),
    Measure("query_p50_ms", "query p50 (columns)", "ms"),
    Measure("query_p95_ms", "query p95 (columns)", "ms"),
    Measure("facets_p95_ms", "query p95 with facet counts", "ms"),
    Measure("query_rss_mb", "query-time peak RSS", "MB"),
    Measure("bundle_s", "search bundle build", "s"),
    Measure("bundle_cpu_s", "search bundle build CPU", "s"),
    Measure("bundle_rss_mb", "bundle build peak RSS", "MB"),
    Measure("first_query_p50_kb", "first query p50 (static)", "KB"),
    Measure("first_query_p95_kb", "first query p95 (static)", "KB"),
    Measure("fts5_build_s", "FTS5 build (peer)", "s", peer=True),
    Measure("fts5_p50_ms", "FTS5 query p50 (peer)", "ms", peer=True),
    Measure("fts5_p95_ms", "FTS5 query p95 (peer)", "ms", peer=True),
)


def parse_sizes(text: str) -> list[int]:
    """``10000,100000`` (or ``10k,1M``) as a sorted list of distinct positive sizes."""
    out = set()
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        scale = 1
        if part.endswith("k"):
            part, scale = part[:-1], 1_000
        elif part.endswith("m"):
            part, scale = part[:-1], 1_000_000
        try:
            n = int(float(part) * scale)
        except ValueError:
            raise ValueError(f"{part!r} is not a number of articles") from None
        if n <= 0:
            raise ValueError(f"{n} is not a positive number of articles")
        out.add(n)
    return sorted(out)


def articles_for(corpora: Path, data: Path, n: int, seed: int, per_file: int
                 ) -> tuple[Path, bool]:
    """The scale set of ``n`` articles under ``data/curve/<n>/articles`` and whether it was
    generated now. A set is reused only when its stamp (written after the last file, so an
    interrupted run is never taken for a whole set) names the same size, seed and file size."""
    from bench import scale

    folder = data / "curve" / str(n) / "articles"
    stamp = folder.parent / "articles.json"
    want = {"articles": n, "seed": seed, "per_file": per_file}
    try:
        have = json.loads(stamp.read_text("utf-8"))
    except (OSError, ValueError):
        have = None
    if isinstance(have, dict) and {k: have.get(k) for k in want} == want and folder.is_dir():
        return folder, False
    stamp.unlink(missing_ok=True)
    summary = scale.generate(corpora, folder, n, seed, per_file)
    stamp.write_text(json.dumps({**summary, **want}), "utf-8")
    return folder, True


def _latency(times: dict[str, list[float]]) -> tuple[float, float]:
    from bench.queries import percentile
    every = [t for ts in times.values() for t in ts]
    return statistics.median(every), percentile(every, 95)


def first_query_bytes(index: Path, site: Path, count: int, qfile: Path
                      ) -> tuple[dict[str, Any], str | None]:
    """Median and p95 KB of a first query over ``count`` headline queries, by the static-search
    bench's node method; ``({}, reason)`` where node is not installed."""
    from archive.search import Archive
    from bench import static_search_bench as ssb
    from tests.support import static_search_reference as ref

    if shutil.which("node") is None:
        return {}, "node is not installed: bytes per first query not measured"
    with Archive(index) as archive:
        titles = [s.get("title", "") for s in archive.searcher.reader().all_stored_fields()]
    chosen = ref.headline_queries(titles, count)
    transfers = ssb.node_transfers(site, chosen, qfile)
    kb = ssb.med_p95_kb([r["first"] for r in transfers["queries"]])
    if kb is None:
        return {}, "no headline query could be drawn"
    return {"first_query_p50_kb": kb[0], "first_query_p95_kb": kb[1],
            "first_queries": len(chosen),
            "client_kb": round(transfers["clientBytes"] / 1024, 1)}, None


def measure_size(n: int, articles: Path, work: Path, *, per_kind: int, seed: int,
                 first_queries: int, procs: int | None,
                 log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every measure at one size; the index and bundle are built fresh into ``work``."""
    from bench.queries import make_queries

    index, db, site, logs = work / "index", work / "fts5.sqlite", work / "bundle-site", \
        work / "logs"
    for old in (index, site):
        shutil.rmtree(old, ignore_errors=True)
    logs.mkdir(parents=True, exist_ok=True)
    point: dict[str, Any] = {"articles": n}

    build = measured_worker("archive_build", logs / "index.log", inputs=[str(articles)],
                            index=str(index), rebuild=True, procs=procs)
    m = build["measured"]
    steps = point.setdefault("steps", {})   # every step's own figures (memory three ways)
    steps["index"] = m
    point.update(build_s=build["seconds"], build_cpu_s=m["cpu_s"], build_procs=build["procs"],
                 build_rss_mb=m["peak_rss_mb"], build_pss_mb=m["tree_pss_mb"],
                 build_maxrss_mb=m["maxrss_mb"], indexed=build["added"],
                 index_mb=round(folder_bytes(index) / 1e6, 2),
                 sidecar_mb=round(folder_bytes(index / "columns") / 1e6, 2)
                 if (index / "columns").exists() else 0.0)
    log(f"[{n:,}] index: {point['build_s']:.1f} s, {point['build_rss_mb']:.0f} MB peak, "
        f"{point['index_mb']:.1f} MB on disk")

    fts = measured_worker("fts5_build", logs / "fts5.log", inputs=[str(articles)], db=str(db))
    steps["fts5"] = fts["measured"]
    point.update(fts5_build_s=fts["seconds"], fts5_build_rss_mb=fts["measured"]["peak_rss_mb"],
                 fts5_mb=round(fts["bytes"] / 1e6, 2))

    chosen = make_queries(db, per_kind, seed)
    qfile = work / "queries.json"
    qfile.write_text(json.dumps(chosen), "utf-8")
    point["queries"] = len(chosen)
    for system in SYSTEMS:
        slug = system.replace("+", "-")
        done = measured_worker("query_times", logs / f"queries-{slug}.log", system=system,
                               queries=str(qfile), index=str(index), db=str(db))
        steps[f"queries {system}"] = done["measured"]
        p50, p95 = _latency(done["times"])
        prefix = {"archive": "query", "archive+facets": "facets", "fts5": "fts5"}[system]
        point.update({f"{prefix}_p50_ms": round(p50, 2), f"{prefix}_p95_ms": round(p95, 2),
                      f"{prefix}_rss_mb": done["measured"]["peak_rss_mb"],
                      f"{prefix}_open_s": round(done["open_seconds"], 3)})
    # query-time memory: the columnar path's process, facet counts included or not
    point["query_rss_mb"] = max(point["query_rss_mb"], point["facets_rss_mb"])
    log(f"[{n:,}] queries: p50/p95 {point['query_p50_ms']:.1f}/{point['query_p95_ms']:.1f} ms "
        f"(FTS5 {point['fts5_p50_ms']:.1f}/{point['fts5_p95_ms']:.1f}), "
        f"{point['query_rss_mb']:.0f} MB")

    bundle = measured_worker("bundle_build", logs / "bundle.log", index=str(index),
                             site=str(site), procs=procs)
    point.update(bundle_s=bundle["seconds"], bundle_cpu_s=bundle["measured"]["cpu_s"],
                 bundle_rss_mb=bundle["measured"]["peak_rss_mb"],
                 bundle_pss_mb=bundle["measured"]["tree_pss_mb"],
                 bundle_mb=round(folder_bytes(site) / 1e6, 2), bundle_files=bundle["files"])
    steps["bundle"] = bundle["measured"]
    firsts, why = first_query_bytes(index, site, first_queries, work / "headlines.json")
    point.update(firsts)
    if why:
        point["note"] = why
    log(f"[{n:,}] bundle: {point['bundle_s']:.1f} s, {point['bundle_rss_mb']:.0f} MB peak; "
        + (f"first query p50/p95 {firsts['first_query_p50_kb']}/"
           f"{firsts['first_query_p95_kb']} KB" if firsts else why or ""))
    return point


def growth_exponent(sizes: Sequence[float], values: Sequence[float | None]) -> float | None:
    """The slope of the least-squares line through (log size, log value): how a measure grows
    with size (value ~ size ** slope). None with fewer than two distinct sizes that have a
    positive value."""
    pairs = [(math.log(n), math.log(v)) for n, v in zip(sizes, values)
             if v is not None and v > 0 and n > 0]
    xs = {x for x, _ in pairs}
    if len(xs) < 2:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    return (sum((x - mx) * (y - my) for x, y in pairs)
            / sum((x - mx) ** 2 for x, _ in pairs))


def fits(points: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per measure: its value at each size, its growth exponent, and whether it grows
    worse than linearly (peers are shown, never flagged)."""
    sizes = [p["articles"] for p in points]
    rows = []
    for m in MEASURES:
        values = [p.get(m.key) for p in points]
        e = growth_exponent(sizes, values)
        worse = e is not None and e > LINEAR_LIMIT and not m.peer
        rows.append({"key": m.key, "measure": m.label, "unit": m.unit, "peer": m.peer,
                     "values": values, **{f"n{n}": v for n, v in zip(sizes, values)},
                     "exponent": None if e is None else round(e, 3),
                     "worse_than_linear": worse, "flag": "WORSE THAN LINEAR" if worse else ""})
    return rows


def columns(sizes: Sequence[int]) -> list[tuple[str, str, str]]:
    return ([("measure", "measure", ""), ("unit", "unit", "")]
            + [(f"n{n}", f"{n:,}", ",.1f") for n in sizes]
            + [("exponent", "exponent", ".2f"), ("flag", "", "")])


# --- the chart -----------------------------------------------------------------------------------

PANEL_W, PANEL_H, COLS = 300, 210, 3
PLOT = (52, 34, 282, 178)   # left, top, right, bottom of the plot area inside a panel


def _short(n: float) -> str:
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.3g}"


def _ticks(lo: float, hi: float, fallback: Sequence[float]) -> list[float]:
    """Powers of ten inside [lo, hi]; ``fallback`` (the measured values) when fewer than two
    fall inside, so an axis always carries two readable marks."""
    k0, k1 = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    ticks = [10.0 ** k for k in range(k0, k1 + 1)]
    return ticks if len(ticks) >= 2 else sorted(set(fallback))


def svg_chart(points: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> str:
    """Each measure against size on log-log axes, a panel each, with a dashed line of slope 1
    through the smallest size's value: a measure growing linearly runs along it, worse than
    linearly above it. One ``<g class="series" data-measure=KEY>`` per measure."""
    sizes = [p["articles"] for p in points]
    xlo, xhi = min(sizes), max(sizes)
    if xlo == xhi:
        xlo, xhi = xlo / 2, xhi * 2
    nrows = -(-len(rows) // COLS)
    width, height = PANEL_W * COLS, PANEL_H * nrows + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(_title(sizes))}'
           '</text>']
    left, top, right, bottom = PLOT
    for i, row in enumerate(rows):
        ox, oy = (i % COLS) * PANEL_W, 40 + (i // COLS) * PANEL_H
        have = [(n, v) for n, v in zip(sizes, row["values"]) if v is not None and v > 0]
        reference = [(xlo, have[0][1] * xlo / have[0][0]), (xhi, have[0][1] * xhi / have[0][0])] \
            if have else []
        ys = [v for _, v in have] + [v for _, v in reference]
        ylo, yhi = (min(ys), max(ys)) if ys else (1.0, 10.0)
        if ylo == yhi:
            ylo, yhi = ylo / 2, yhi * 2
        span = math.log(yhi / ylo)
        ylo, yhi = ylo * math.exp(-0.08 * span), yhi * math.exp(0.08 * span)

        def px(n: float, x0: int = ox) -> float:
            return x0 + left + (right - left) * math.log(n / xlo) / math.log(xhi / xlo)

        def py(v: float, y0: int = oy, lo: float = ylo, hi: float = yhi) -> float:
            return y0 + bottom - (bottom - top) * math.log(v / lo) / math.log(hi / lo)

        e = row["exponent"]
        colour = "#c0392b" if row["worse_than_linear"] else "#7f8c8d" if row["peer"] \
            else "#1f4e8c"
        title = f"{row['measure']} ({row['unit']})"
        out.append(f'<text x="{ox + 8}" y="{oy + 14}" font-weight="bold">{escape(title)}</text>')
        out.append(f'<text x="{ox + 8}" y="{oy + 27}" fill="{colour}">'
                   + escape("exponent " + ("-" if e is None else f"{e:.2f}")
                            + (": worse than linear" if row["worse_than_linear"] else "")
                            + (" (peer)" if row["peer"] else "")) + "</text>")
        out.append(f'<rect x="{ox + left}" y="{oy + top}" width="{right - left}" '
                   f'height="{bottom - top}" fill="none" stroke="#999"/>')
        for t in _ticks(xlo, xhi, sizes):
            x = px(t)
            out.append(f'<line x1="{x:.1f}" y1="{oy + bottom}" x2="{x:.1f}" y2="{oy + bottom + 4}"'
                       ' stroke="#999"/>')
            out.append(f'<text x="{x:.1f}" y="{oy + bottom + 16}" text-anchor="middle">'
                       f'{escape(_short(t))}</text>')
        marks: list[float] = []
        for t in _ticks(ylo, yhi, [v for _, v in have]):
            if any(abs(py(t) - py(u)) < 12 for u in marks):
                continue   # two values too close to label both: the lower one stands
            marks.append(t)
            y = py(t)
            out.append(f'<line x1="{ox + left - 4}" y1="{y:.1f}" x2="{ox + right}" y2="{y:.1f}" '
                       'stroke="#eee"/>')
            out.append(f'<text x="{ox + left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                       f'{escape(_short(t))}</text>')
        if reference:
            line = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in reference)
            out.append(f'<polyline class="linear" data-measure="{escape(row["key"])}" '
                       f'points="{line}" fill="none" stroke="#aaa" stroke-dasharray="4 3"/>')
        line = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in have)
        out.append(f'<g class="series" data-measure="{escape(row["key"])}">')
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for n, v in have:
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}">'
                       f'<title>{n:,} articles: {v:,.1f} {escape(row["unit"])}</title></circle>')
            anchor = "start" if n == have[0][0] else "end"
            out.append(f'<text x="{px(n) + (6 if anchor == "start" else -6):.1f}" '
                       f'y="{py(v) - 6:.1f}" text-anchor="{anchor}" fill="{colour}">'
                       f'{escape(_short(v))}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _title(sizes: Sequence[int]) -> str:
    return ("The scale curve: each measure against articles, log-log ("
            + ", ".join(f"{n:,}" for n in sizes)
            + "); dashed: linear growth from the smallest size")


# --- the whole run -------------------------------------------------------------------------------

def run(corpora: Path, data: Path, sizes: Sequence[int], *, seed: int = 5,
        per_file: int = 1000, per_kind: int = 60, first_queries: int = 200,
        procs: int | None = 2, on_point: Callable[[list[dict[str, Any]]], None] | None = None,
        log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Every size in turn, smallest first; ``on_point`` gets the points so far after each size
    (a long run keeps what it measured if a later size fails or is stopped)."""
    corpora, data = corpora.resolve(), data.resolve()   # the steps run from the repo folder
    points: list[dict[str, Any]] = []
    for n in sorted(sizes):
        articles, made = articles_for(corpora, data, n, seed, per_file)
        log(f"[{n:,}] articles in {articles} ({'generated' if made else 'reused'})")
        point = measure_size(n, articles, data / "curve" / str(n) / "work", per_kind=per_kind,
                             seed=seed, first_queries=first_queries, procs=procs, log=log)
        points.append(point)
        if on_point:
            on_point(points)
    return points


def payload(points: Sequence[dict[str, Any]], settings: dict[str, Any]) -> dict[str, Any]:
    rows = fits(points)
    return {"settings": settings, "linear_limit": LINEAR_LIMIT,
            "measures": [asdict(m) for m in MEASURES], "points": list(points), "rows": rows,
            "worse_than_linear": [r["measure"] for r in rows if r["worse_than_linear"]]}

// The site's one bar chart (home page, search page, /live): inline SVG drawn from
// [[label, count], ...]. A classic script (works from file://) defining `ArchiveChart`; a page
// hands it data as JSON in a data-chart attribute, or ui.js calls it after a search's first
// results are shown (it then counts the query's matches per period from the bundle). Labels
// and counts go in as text nodes only.
(function (root) {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  // svg height, room above (the peak's line) and below (first and last labels)
  const HEIGHT = 150, TOP = 24, BOTTOM = 22, SIDE = 4;
  // more years than this: one bar a year; first to last match within a month or the next:
  // one bar a day; else one a month (archive/timeline.py auto_period is the same rule)
  const YEARS = 20, DAY_MONTHS = 2;

  function node(tag, attrs, text) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    if (text != null) el.textContent = text;
    return el;
  }

  const plural = (n) => `${n.toLocaleString()} article${n === 1 ? "" : "s"}`;

  /**
   * Draws `rows` ([[label, count], ...], in order, empty periods included) into `box` as one
   * <svg class="chart">: a bar per row with a <title> giving its exact count, the first and
   * last labels below, the peak named above. `opts.href(label)` makes each bar a link and
   * `opts.pick(label)` handles its click. The viewBox is the box's width when drawn, so the
   * text stays the size it was drawn at; a resize redraws.
   */
  function draw(box, rows, opts = {}) {
    box.replaceChildren();
    if (!rows.length) return null;
    const width = Math.max(240, Math.round(box.clientWidth || 720));
    const peakAt = rows.reduce((best, r, i) => (r[1] > rows[best][1] ? i : best), 0);
    const peak = rows[peakAt][1] || 1;
    const what = opts.what || "Articles";
    const svg = node("svg", { class: "chart", viewBox: `0 0 ${width} ${HEIGHT}`, role: "img",
      "aria-label": `${what} per ${opts.by || "period"}, ${rows[0][0]} to ${rows[rows.length - 1][0]}; most in ${rows[peakAt][0]}: ${plural(rows[peakAt][1])}`,
      "data-by": opts.by || "" });
    const step = (width - 2 * SIDE) / rows.length;
    const gap = step > 4 ? 1 : 0;
    const room = HEIGHT - TOP - BOTTOM;
    rows.forEach(([label, count], i) => {
      const h = count ? Math.max(2, room * count / peak) : 0;
      const bar = node("rect", { class: i === peakAt ? "bar peak" : "bar", x: (SIDE + i * step).toFixed(2),
        y: (HEIGHT - BOTTOM - h).toFixed(2), width: Math.max(step - gap, 0.5).toFixed(2),
        height: h.toFixed(2), "data-label": label, "data-count": count });
      bar.append(node("title", null, `${label}: ${plural(count)}`));
      if (opts.href && count) {
        const link = node("a", { href: opts.href(label), "aria-label": `${label}: ${plural(count)}` });
        link.append(bar);
        if (opts.pick) link.addEventListener("click", (e) => { e.preventDefault(); opts.pick(label); });
        svg.append(link);
      } else svg.append(bar);
    });
    // the baseline, so empty periods read as empty
    svg.append(node("line", { class: "chart-axis", x1: SIDE, x2: width - SIDE, y1: HEIGHT - BOTTOM + 0.5, y2: HEIGHT - BOTTOM + 0.5 }));
    const first = rows[0][0], last = rows[rows.length - 1][0];
    svg.append(node("text", { x: SIDE, y: HEIGHT - 6 }, first));
    if (rows.length > 1) svg.append(node("text", { x: width - SIDE, y: HEIGHT - 6, "text-anchor": "end" }, last));
    const peakX = SIDE + (peakAt + 0.5) * step;
    const anchor = peakX < width / 3 ? "start" : peakX > width * 2 / 3 ? "end" : "middle";
    svg.append(node("text", { class: "chart-peak", x: Math.min(Math.max(peakX, SIDE), width - SIDE).toFixed(2), y: TOP - 8, "text-anchor": anchor },
      `Most: ${rows[peakAt][0]}, ${plural(rows[peakAt][1])}`));
    box.append(svg);
    watch(box, () => draw(box, rows, opts), width);
    return svg;
  }

  /** Redraw when the box's width changes (text keeps its size in narrow and wide windows). */
  function watch(box, redraw, width) {
    if (box.chartWatch) box.chartWatch.disconnect();
    if (typeof ResizeObserver === "undefined") return;
    let timer = 0;
    box.chartWatch = new ResizeObserver(() => {
      if (Math.abs(Math.round(box.clientWidth) - width) < 8) return;
      clearTimeout(timer);
      timer = setTimeout(redraw, 100);
    });
    box.chartWatch.observe(box);
  }

  // --- periods ---------------------------------------------------------------------------

  const pad = (n) => String(n).padStart(2, "0");
  const dayLabel = (d) => `${Math.floor(d / 10000)}-${pad(Math.floor(d / 100) % 100)}-${pad(d % 100)}`;
  const monthLabel = (d) => dayLabel(d).slice(0, 7);

  /** Which period a chart counts by, from its first and last days (YYYYMMDD). */
  function autoPeriod(first, last) {
    const [fy, ly] = [Math.floor(first / 10000), Math.floor(last / 10000)];
    if (ly - fy > YEARS) return "year";
    const months = (ly - fy) * 12 + Math.floor(last / 100) % 100 - Math.floor(first / 100) % 100;
    return months < DAY_MONTHS ? "day" : "month";
  }

  /** Every period's label from the first day's to the last day's, in order. */
  function labels(first, last, by) {
    const out = [];
    if (by === "year") {
      for (let y = Math.floor(first / 10000); y <= Math.floor(last / 10000); y++) out.push(String(y));
      return out;
    }
    const at = new Date(Date.UTC(Math.floor(first / 10000), Math.floor(first / 100) % 100 - 1, by === "day" ? first % 100 : 1));
    const end = by === "day" ? dayLabel(last) : monthLabel(last);
    for (;;) {
      const label = at.toISOString().slice(0, by === "day" ? 10 : 7);
      out.push(label);
      if (label >= end) return out;
      if (by === "day") at.setUTCDate(at.getUTCDate() + 1); else at.setUTCMonth(at.getUTCMonth() + 1);
    }
  }

  /**
   * Matches per period from sorted article numbers: articles are numbered in date order, meta
   * has each year's first number and d/YEAR each day's count, so a number's day is a walk.
   * Returns {by, rows, undated}.
   */
  async function timeline(engine, numbers) {
    const meta = await engine.init();
    const dated = numbers.filter((n) => n < meta.dated);
    const undated = numbers.length - dated.length;
    if (!dated.length) return { by: null, rows: [], undated };
    // the index of a number's year in meta.years
    const yearAt = (n) => root.ArchiveSearch.upperBound(engine.yearFirsts, n) - 1;
    const wide = engine.years[yearAt(dated[dated.length - 1])] - engine.years[yearAt(dated[0])] > YEARS;
    const days = [];
    if (wide) {
      for (const n of dated) days.push(engine.years[yearAt(n)] * 10000 + 101);
    } else {
      const flats = new Map();
      await Promise.all([...new Set(dated.map(yearAt))].map(async (i) => flats.set(i, await engine.load(`d/${engine.years[i]}`))));
      let i = -1, k = 0, next = 0, year = 0, flat = null;
      for (const n of dated) {
        if (yearAt(n) !== i) { i = yearAt(n); year = engine.years[i]; flat = flats.get(i); k = -2; next = engine.yearFirsts[i]; }
        while (next <= n) { k += 2; next += flat[k + 1]; }
        days.push(year * 10000 + flat[k]);
      }
    }
    const by = wide ? "year" : autoPeriod(days[0], days[days.length - 1]);
    const key = by === "year" ? (d) => String(Math.floor(d / 10000)) : by === "month" ? monthLabel : dayLabel;
    const counts = new Map();
    for (const d of days) counts.set(key(d), (counts.get(key(d)) || 0) + 1);
    const rows = labels(days[0], days[days.length - 1], by).map((l) => [l, counts.get(l) || 0]);
    return { by, rows, undated };
  }

  /**
   * The search page's chart: the query's complete match set (every posting list read whole),
   * counted per period and drawn into `box`; a bar's link narrows the query with date:.
   * Returns the complete result (exact total), or null when `live()` says a newer search won.
   */
  async function forSearch(engine, state, box, { href, pick, live }) {
    const full = await engine.search(state.q, { ...state, complete: true, numbers: true });
    if (!live()) return null;
    const t = await timeline(engine, full.numbers);
    if (!live()) return null;
    const narrowed = (label) => `${state.q.trim()} date:${label}`.trim();
    draw(box, t.rows, { by: t.by, what: "Matches", href: (l) => href(narrowed(l)), pick: (l) => pick(narrowed(l)) });
    return full;
  }

  root.ArchiveChart = { draw, timeline, autoPeriod, forSearch };

  // pages that carry their data: <figure class="chart-box" data-chart='[[label, count], ...]'>
  if (typeof document !== "undefined") {
    const drawAll = () => document.querySelectorAll("[data-chart]").forEach((box) =>
      draw(box, JSON.parse(box.dataset.chart), { by: box.dataset.by, what: box.dataset.what }));
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll);
    else drawAll();
  }
})(typeof globalThis !== "undefined" ? globalThis : this);

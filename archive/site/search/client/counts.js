// Filter counts: loaded only when a visitor opens the filter panel (ui.js), since counting
// needs whole result sets and the facet columns of every block of articles they touch. Adds
// Engine.facetCounts (engine.search calls it when `complete`) and ArchiveSearch.filterControls.
// tests/support/static_search_reference.py facet_counts is the specification.
(function (S) {
  "use strict";
  const FILTERS = ["source", "year", "place", "topic"];
  const NAMES = { source: "sources", year: "years", place: "places", topic: "topics" };

  /** A facet column: per article of the block, its value ids (display order). */
  function decodeColumn(b64) {
    const data = S.bytesOf(b64);
    const rows = [];
    let pos = 0, count, ids;
    while (pos < data.length) {
      [[count], pos] = S.varints(data, 1, pos);
      [ids, pos] = S.varints(data, count, pos);
      rows.push(ids);
    }
    return rows;
  }

  /** [key, display, count] rows, biggest count first, then by key. */
  function listing(values, counts) {
    const rows = [...counts].map(([v, c]) => [values[v][0], values[v][1], c]);
    return rows.sort((a, b) => b[2] - a[2] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  const add = (counts, v) => counts.set(v, (counts.get(v) || 0) + 1);

  /** Counts over a complete result set: columns for source/place/topic, meta's years for years. */
  S.Engine.prototype.facetCounts = async function (sure) {
    const out = {};
    const block = this.meta.block;
    const values = await this.load("facets");
    const blocks = [...new Set(sure.map(([n]) => Math.floor(n / block)))];
    for (const name of ["source", "place", "topic"]) {
      const cols = new Map();
      await Promise.all(blocks.map(async (b) => cols.set(b, decodeColumn(await this.load(`c/${name}/${b}`)))));
      const counts = new Map();
      for (const [n] of sure) for (const v of cols.get(Math.floor(n / block))[n % block]) add(counts, v);
      out[name] = listing(values[name], counts);
    }
    const years = new Map(values.year.map((y, i) => [y[0], i]));
    const counts = new Map();
    for (const [n] of sure) {
      if (n < this.meta.dated) add(counts, years.get(String(this.years[S.upperBound(this.yearFirsts, n) - 1])));
    }
    out.year = listing(values.year, counts);
    return out;
  };

  /** The filter controls: one select per facet, values with counts; `go(filters)` applies. */
  S.filterControls = (state, facets, el, go) => FILTERS.map((f) => {
    const rows = (facets && facets[f]) || [];
    const chosen = state.filters[f];
    if (!rows.length && !chosen) return null;
    const select = el("select", { id: `search-${f}`, name: f });
    select.append(el("option", { value: "" }, `All ${NAMES[f]}`));
    for (const [key, label, count] of rows.slice(0, 100)) {
      const o = el("option", { value: key }, `${label} (${count.toLocaleString()})`);
      if (key === chosen) o.selected = true;
      select.append(o);
    }
    if (chosen && !rows.some((r) => r[0] === chosen)) select.append(el("option", { value: chosen, selected: "" }, chosen));
    select.addEventListener("change", () => {
      const filters = { ...state.filters, [f]: select.value };
      if (!select.value) delete filters[f];
      go(filters);
    });
    return el("p", null, el("label", { for: `search-${f}` }, f[0].toUpperCase() + f.slice(1)), " ", select);
  }).filter(Boolean);
})((typeof globalThis !== "undefined" ? globalThis : this).ArchiveSearch);

// The search page: form, results with highlighted excerpts, filters with counts, sort and
// pages, all state in the URL (search/index.html?q=...&source=...&sort=...&page=...), so a
// search can be shared and the back button works. A classic script (works from file://);
// needs engine.js. Everything from articles goes in as text nodes, never as HTML.
// The first page of results needs only the heads of the posting lists; exact totals and
// filter counts need whole lists, so they are fetched only when the filter panel is open; the
// chart of matches per period (chart.js) is drawn after the results when the lists were read
// to their end anyway, and otherwise on a button, so a first query never pays for it.
(function () {
  "use strict";
  // under node (tests, bench): the engine only
  if (typeof document === "undefined") return;
  const S = window.ArchiveSearch;
  const box = document.getElementById("archive-search");
  if (!S || !box) return;
  const FILTERS = ["source", "year", "place", "topic"];
  const $ = (sel) => box.querySelector(sel);
  const form = $("form"), input = $("#search-q"), sortBox = $("#search-sort");
  const status = $(".search-status"), list = $(".search-results");
  const pages = $(".search-pages"), panel = $(".search-filters"), filterBox = $(".search-filters div");
  // the chart's place (a theme's older form may lack it: then above the results)
  let graph = $(".search-chart");
  if (!graph) { graph = el("div", { class: "search-chart" }); list.before(graph); }
  const engine = new S.Engine(S.scriptLoader(box.dataset.bundle));
  const rootPath = box.dataset.root || "";
  // the latest search; older ones stop rendering
  let run = 0;
  // the state, the run on screen, the run counted
  let current = null, shown = 0, counted = 0;

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const kid of kids) if (kid != null) node.append(kid);
    return node;
  }

  /** [text, isMatch] segments as text and <mark> nodes. */
  const marked = (segs) => segs.map(([t, m]) => (m ? el("mark", null, t) : document.createTextNode(t)));

  function readState() {
    const p = new URLSearchParams(location.search);
    const state = { q: p.get("q") || "", sort: p.get("sort") || "relevance", page: Math.max(1, parseInt(p.get("page"), 10) || 1), filters: {} };
    if (!["relevance", "newest", "oldest"].includes(state.sort)) state.sort = "relevance";
    for (const f of FILTERS) if (p.get(f)) state.filters[f] = p.get(f);
    return state;
  }

  function urlOf(state) {
    const p = new URLSearchParams();
    if (state.q) p.set("q", state.q);
    for (const f of FILTERS) if (state.filters[f]) p.set(f, state.filters[f]);
    if (state.sort !== "relevance") p.set("sort", state.sort);
    if (state.page > 1) p.set("page", state.page);
    const qs = p.toString();
    return location.pathname + (qs ? "?" + qs : "");
  }

  function go(state) {
    try { history.pushState(null, "", urlOf(state)); } catch (e) { /* some file:// setups refuse */ }
    show(state);
  }

  const say = (text) => { status.textContent = text; };

  async function show(state) {
    const mine = ++run;
    current = state;
    input.value = state.q;
    sortBox.value = state.sort;
    filterBox.replaceChildren();
    graph.replaceChildren();
    if (!state.q.trim() && !Object.keys(state.filters).length) {
      list.replaceChildren(); pages.replaceChildren(); say("");
      return;
    }
    // show the filters in use
    if (Object.keys(state.filters).length) panel.open = true;
    say("Searching\u2026");
    let result;
    try {
      // the state's sort, page and filters are the search's options
      result = await engine.search(state.q, state);
    } catch (e) {
      if (mine !== run) return;
      list.replaceChildren(); pages.replaceChildren();
      say(e instanceof S.QueryError ? e.message : "The search could not load its index files: " + e.message);
      return;
    }
    if (mine !== run) return;
    if (result.stopWordsOnly) { say("Only common words and single letters, which no search looks for: add a more specific word."); list.replaceChildren(); return; }
    await renderHits(state, result, mine);
    if (mine !== run) return;
    announce(state, result);
    renderPages(state, result);
    shown = mine;
    // After the results, the chart: drawn at once when the lists were read to their end;
    // otherwise its walk would fetch whole posting lists, so it waits to be asked for.
    if (result.whole) chart(mine);
    else graph.replaceChildren(chartButton(mine));
    if (panel.open) await counts(mine);
  }

  function chartButton(mine) {
    const button = el("button", { type: "button", class: "search-chart-show" }, "Show when these ran");
    button.addEventListener("click", () => { if (mine === run) { button.disabled = true; chart(mine); } });
    return button;
  }

  /** The matches per period (chart.js, fetched now); a bar narrows the query with date:. */
  async function chart(mine) {
    const state = current;
    const narrow = (q) => ({ ...state, q, page: 1 });
    let full;
    try {
      await load("chart.js");
      full = await window.ArchiveChart.forSearch(engine, state, graph, {
        href: (q) => urlOf(narrow(q)), pick: (q) => go(narrow(q)), live: () => mine === run });
    } catch (e) {
      // the results shown already report the error
      return;
    }
    if (!full || mine !== run) return;
    announce(state, full);
    renderPages(state, full);
  }

  /** Exact total and filter counts: these may need whole posting lists. */
  async function counts(mine) {
    if (counted === mine || !current) return;
    counted = mine;
    const state = current;
    let full;
    try {
      await load("counts.js");
      full = await engine.search(state.q, { ...state, complete: true });
    } catch (e) {
      counted = 0;
      // the results shown already report the error
      return;
    }
    if (mine !== run) return;
    announce(state, full);
    renderPages(state, full);
    renderFilters(state, full.facets);
  }

  function announce(state, r) {
    const n = r.total.toLocaleString();
    const what = r.exact ? `${n} result${r.total === 1 ? "" : "s"}` : `More than ${n} results`;
    say(r.total ? `${what}, page ${state.page}${r.exact ? ` of ${r.pages}` : ""}.` : "No results.");
  }

  async function renderHits(state, result, mine) {
    const stems = S.highlightStems(state.q);
    const articles = await Promise.all(result.hits.map((h) => engine.article(h.n)));
    if (mine !== run) return;
    list.setAttribute("start", (state.page - 1) * result.pageSize + 1);
    list.replaceChildren(...articles.map((a) => {
      const meta = [a.d ? el("time", { datetime: a.d }, a.d) : "undated", a.s, ...(a.pl || [])].filter(Boolean);
      const metaLine = el("p", { class: "search-meta" });
      meta.forEach((m, i) => metaLine.append(i ? " \u00b7 " : "", m));
      return el("li", null,
        el("h2", null, el("a", { href: rootPath + S.pagePath(a) }, ...marked(S.titleSegments(a.t || "(untitled)", stems)))),
        metaLine,
        el("p", { class: "search-excerpt" }, ...marked(S.excerpt(a.b || a.c || "", stems))));
    }));
  }

  function renderPages(state, r) {
    const link = (page, text, rel) => {
      const a = el("a", { href: urlOf({ ...state, page }), rel }, text);
      a.addEventListener("click", (e) => { e.preventDefault(); go({ ...state, page }); list.focus(); });
      return a;
    };
    pages.replaceChildren(...[
      state.page > 1 ? link(state.page - 1, "\u2190 Previous", "prev") : null,
      r.pages > 1 ? el("span", null, ` Page ${state.page}${r.exact ? ` of ${r.pages}` : ""} `) : null,
      state.page < r.pages || !r.exact ? link(state.page + 1, "Next \u2192", "next") : null,
    ].filter(Boolean));
  }

  function renderFilters(state, facets) {
    filterBox.replaceChildren(...S.filterControls(state, facets, el, (filters) => go({ ...state, filters, page: 1 })));
  }

  /** Code fetched when first needed: counts.js when the filter panel opens, chart.js after
   * the first results. */
  const code = new Map();
  function load(name) {
    if (!code.has(name)) code.set(name, new Promise((resolve, reject) => {
      const s = el("script", { src: rootPath + "assets/search/" + name });
      s.onload = resolve;
      s.onerror = () => { code.delete(name); reject(new Error("cannot load " + name)); };
      document.head.append(s);
    }));
    return code.get(name);
  }

  // pagination moves focus to the new results
  list.setAttribute("tabindex", "-1");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    go({ ...readState(), q: input.value, sort: sortBox.value, page: 1 });
  });
  sortBox.addEventListener("change", () => go({ ...readState(), q: input.value, sort: sortBox.value, page: 1 }));
  window.addEventListener("popstate", () => show(readState()));
  panel.addEventListener("toggle", () => { if (panel.open && shown === run) counts(run); });
  show(readState());
})();

// The browser engine (engine.js) against the Python reference reader, on a fixture bundle.
// tests/test_static_search.py builds the site and the expected answers, then runs
//   ARCHIVE_SITE=<site folder> ARCHIVE_CASES=<cases.json> node --test tests/js/engine.test.mjs
// Same hits in the same order for every case; exact totals and facet counts when complete.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import vm from "node:vm";

const SITE = process.env.ARCHIVE_SITE;
const CASES = process.env.ARCHIVE_CASES;
const PATHS = process.env.ARCHIVE_PATHS;

/** Runs the site's classic scripts in this process, as the browser would. */
function loadClient() {
  for (const name of ["search.js", "counts.js"]) {
    vm.runInThisContext(readFileSync(join(SITE, "assets", "search", name), "utf-8"), { filename: name });
  }
  return globalThis.ArchiveSearch;
}

/** The bundle loader for node: evaluate the file with a local __archiveBundle. */
function fileLoader(base) {
  return async (name) => {
    let got;
    const code = readFileSync(join(base, `${name}.js`), "utf-8");
    new Function("__archiveBundle", code)((n, data) => { assert.equal(n, name); got = data; });
    return got;
  };
}

test("engine answers every case like the reference", { skip: !SITE && "no fixture" }, async () => {
  const { Engine, QueryError } = loadClient();
  const cases = JSON.parse(readFileSync(CASES, "utf-8"));
  const base = join(SITE, "search", "bundle");
  for (const c of cases) {
    const label = JSON.stringify([c.q, c.sort, c.page, c.filters]);
    if (c.error) {
      await assert.rejects(new Engine(fileLoader(base)).search(c.q), QueryError, label);
      continue;
    }
    const opts = { sort: c.sort, page: c.page, filters: c.filters };
    // A fresh engine per case: its early termination starts from heads only.
    const quick = await new Engine(fileLoader(base)).search(c.q, opts);
    assert.deepEqual(quick.hits.map((h) => h.n), c.hits, label);
    if (quick.exact) assert.equal(quick.total, c.total, label);
    else assert.ok(quick.total <= c.total, label);
    // a page of two settles few articles at a time, so long lists' number blocks are read
    if (c.page === 1) {
      const two = await new Engine(fileLoader(base)).search(c.q, { ...opts, pageSize: 2 });
      assert.deepEqual(two.hits.map((h) => h.n), c.hits.slice(0, 2), label);
    }
    const full = await new Engine(fileLoader(base)).search(c.q, { ...opts, complete: true });
    assert.deepEqual(full.hits.map((h) => h.n), c.hits, label);
    assert.equal(full.total, c.total, label);
    if (c.total) assert.deepEqual(full.facets, c.facets, label);
  }
});

test("every result links to its article's page", { skip: !PATHS && "no fixture" }, async () => {
  const { pagePath } = loadClient();
  const load = fileLoader(join(SITE, "search", "bundle"));
  const expected = JSON.parse(readFileSync(PATHS, "utf-8"));
  for (const [name, path] of Object.entries(expected)) {
    assert.equal(pagePath(await load(name)), path, name);
  }
});

test("early termination skips tails a rare term makes irrelevant", { skip: !SITE && "no fixture" }, async () => {
  const { Engine } = loadClient();
  const engine = new Engine(fileLoader(join(SITE, "search", "bundle")));
  await engine.search("oil");
  const tails = engine.load.requests.filter((n) => /^s\/[^/]+\/t\/\d+-\d+-\d+$/.test(n));
  const meta = await engine.load("meta");
  assert.ok(tails.length < 3, `fetched ${tails.length} tail files for one term (n=${meta.n})`);
});

test("a rare word's articles are settled from a common word's number blocks", { skip: !SITE && "no fixture" }, async () => {
  const { Engine } = loadClient();
  for (const q of ["oil supercalifragilisticexpialidocioussupercalifragilisticexpialidocioussupercalifragilisticexpialidocious", "coach -oil"]) {
    const engine = new Engine(fileLoader(join(SITE, "search", "bundle")));
    // a short page settles few articles at a time: fewer blocks than a tier
    await engine.search(q, { pageSize: 2 });
    const blocks = engine.load.requests.filter((n) => /^s\/[^/]+\/t\/\d+-\d+-b\d+$/.test(n));
    const oil = await engine.list("t", "oil");
    const tiers = oil.parts.reduce((a, p) => a + p.tiers.length, 0);
    const read = oil.parts.reduce((a, p) => a + p.next, 0);
    assert.ok(blocks.length > 0 && read < tiers, `${q}: ${blocks.length} blocks, ${read} of ${tiers} tiers`);
  }
});

test("excerpts mark the query's words, not negated ones", { skip: !SITE && "no fixture" }, () => {
  const { excerpt, highlightStems, titleSegments } = loadClient();
  const stems = highlightStems('Markets "prime minister" -oil');
  assert.deepEqual([...stems].sort(), ["market", "minist", "prime"]);
  const segs = excerpt("Nothing here. The Prime Minister spoke to the market about oil.", stems);
  assert.deepEqual(segs.filter((s) => s[1]).map((s) => s[0]), ["Prime", "Minister", "market"]);
  assert.deepEqual(titleSegments("Oil markets", stems), [["Oil ", false], ["markets", true]]);
});

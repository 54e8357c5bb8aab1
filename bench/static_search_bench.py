"""Bench the static site search on real indexes: build cost, bundle size, bytes per query, and
agreement with the CLI.

    python bench/static_search_bench.py NAME=INDEX [NAME=INDEX ...] [--queries 200]

e.g. ``bbc=/tmp/bbc-index reuters=/tmp/reuters-index`` (build them with ``archive index``).
Each bundle is built in a child process, so its peak RSS is the build's own. Transfers are
measured by running the real client (engine.js) under node against the bundle, gzip-sizing
every file it asks for: a *first* query starts cold (client code + meta + posting files + the
ten shown articles), *+counts* adds what exact totals and filter counts fetch, a *later* query
reuses the files earlier queries cached. Overlap@10 compares the bundle's answers (the Python
reference, which the node tests tie to the client) with ``archive search``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NODE_SCRIPT = r"""
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const vm = require("node:vm");
const zlib = require("node:zlib");
const [site, queriesFile] = process.argv.slice(1); // node -e: no script path
for (const f of ["analysis-classic.js", "engine.js"]) {  // ui.js needs a DOM: sized only
  vm.runInThisContext(readFileSync(join(site, "assets/search", f), "utf-8"));
}
const { Engine } = globalThis.ArchiveSearch;
const base = join(site, "search/bundle");
const sizes = new Map();
const gz = (name) => {
  if (!sizes.has(name)) sizes.set(name, zlib.gzipSync(readFileSync(join(base, name + ".js")), { level: 6 }).length);
  return sizes.get(name);
};
const clientBytes = ["analysis-classic.js", "engine.js", "ui.js"]
  .reduce((a, f) => a + zlib.gzipSync(readFileSync(join(site, "assets/search", f)), { level: 6 }).length, 0);
const loader = async (name) => {
  let got;
  new Function("__archiveBundle", readFileSync(join(base, name + ".js"), "utf-8"))((n, d) => { got = d; });
  return got;
};
const bytesOf = (names) => names.reduce((a, n) => a + gz(n), 0);
async function page(engine, q, complete) {
  const r = await engine.search(q, { complete });
  await Promise.all(r.hits.map((h) => engine.article(h.n)));
  return r;
}
(async () => {
  const out = [];
  const warm = new Engine(loader);
  for (const q of JSON.parse(readFileSync(queriesFile, "utf-8"))) {
    const cold = new Engine(loader);
    const r = await page(cold, q, false);
    const firstNames = [...cold.load.requests];
    await page(cold, q, true);
    const before = warm.load.requests.length;
    await page(warm, q, false);
    out.push({
      q, exact: r.exact,
      first: clientBytes + bytesOf(firstNames), firstRequests: firstNames.length + 3,
      counts: clientBytes + bytesOf(cold.load.requests),
      later: bytesOf(warm.load.requests.slice(before)), laterRequests: warm.load.requests.length - before,
    });
  }
  console.log(JSON.stringify({ clientBytes, queries: out }));
})();
"""


def build(index: Path, site: Path) -> dict:
    """Build in this (child) process and return the report."""
    from archive.search import Archive
    from archive.site.files import OutputFolder
    from archive.site.static_search import build_bundle
    with Archive(index) as archive:
        return build_bundle(archive, OutputFolder(site)).to_dict()


def bundle_size(site: Path) -> tuple[int, int]:
    files = [p for p in (site / "search" / "bundle").rglob("*.js")]
    return len(files), sum(p.stat().st_size for p in files)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def bench(name: str, index: Path, count: int, work: Path) -> dict:
    from archive.search import Archive
    from archive.site import static_search_reference as ref
    site = work / name
    started = time.perf_counter()
    child = subprocess.run([sys.executable, __file__, "--build", str(index), str(site)],
                           capture_output=True, text=True, check=True)
    report = json.loads(child.stdout.strip().splitlines()[-1])
    wall = time.perf_counter() - started
    files, size = bundle_size(site)
    reader = ref.BundleReader(site / "search" / "bundle")
    with Archive(index) as archive:
        titles = [s.get("title", "") for s in archive.searcher.reader().all_stored_fields()]
        queries = ref.headline_queries(titles, count)
        overlaps = []
        for q in queries:
            page = archive.search(q, page_size=10, facets=False)
            if not page.total:
                continue
            got = ref.search(reader, q, facets=False)
            overlaps.append(ref.overlap_at(10, [h.id for h in page.hits],
                                           [h["id"] for h in got.hits]))
    qfile = work / f"{name}-queries.json"
    qfile.write_text(json.dumps(queries), "utf-8")
    node = subprocess.run(["node", "-e", NODE_SCRIPT, str(site), str(qfile)],
                          capture_output=True, text=True, check=True)
    transfers = json.loads(node.stdout)
    rows = transfers["queries"]
    kb = lambda key, p: percentile([r[key] for r in rows], p) / 1024  # noqa: E731
    return {
        "corpus": name, "articles": report["articles"], "build_s": report["seconds"],
        "build_wall_s": round(wall, 1), "peak_rss_mb": report["peak_rss_mb"],
        "bundle_mb": round(size / 2 ** 20, 1), "files": files, "queries": len(rows),
        "client_kb": round(transfers["clientBytes"] / 1024, 1),
        "first_kb": (round(kb("first", 50), 1), round(kb("first", 95), 1)),
        "first_requests": statistics.median(r["firstRequests"] for r in rows),
        "counts_kb": (round(kb("counts", 50), 1), round(kb("counts", 95), 1)),
        "later_kb": (round(kb("later", 50), 1), round(kb("later", 95), 1)),
        "early_stop": round(sum(not r["exact"] for r in rows) / len(rows), 2),
        "overlap10": round(sum(overlaps) / len(overlaps), 3), "compared": len(overlaps),
    }


def table(results: list[dict]) -> str:
    head = ("corpus", "articles", "build s", "peak RSS MB", "bundle MB", "files",
            "first query KB (med/p95)", "+counts KB", "later query KB", "req first",
            "overlap@10")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        lines.append("| " + " | ".join(str(v) for v in (
            r["corpus"], f"{r['articles']:,}", r["build_s"], r["peak_rss_mb"], r["bundle_mb"],
            f"{r['files']:,}", "%.1f / %.1f" % r["first_kb"], "%.1f / %.1f" % r["counts_kb"],
            "%.1f / %.1f" % r["later_kb"], r["first_requests"],
            f"{r['overlap10']} ({r['compared']} q)")) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--build":
        print(json.dumps(build(Path(sys.argv[2]), Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("indexes", nargs="+", help="NAME=INDEX_FOLDER")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="build the sites here and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="static-search-bench-"))
    try:
        results = []
        for spec in args.indexes:
            name, _, folder = spec.partition("=")
            results.append(bench(name, Path(folder), args.queries, work))
            print(json.dumps(results[-1]), file=sys.stderr)
        print(table(results))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

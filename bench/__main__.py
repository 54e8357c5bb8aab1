"""``python -m bench COMMAND``: see bench/README.md.

convert    test collections -> bench/data/<name>/{docs.jsonl,queries.tsv,qrels.txt}
fetch-collections  ADI, CACM, LISA, NPL raw files from local copies of their repositories
relevance  archive eval vs bm25s, FTS5 and plain Whoosh BM25F on every available collection,
           then the ranking levers chosen by leave-one-collection-out (bench/levers.py)
levers     the leave-one-collection-out selection alone, against the last relevance run's peers
lead-titles  titles made from the lead searched as titles or not, on the titled collections with
           their titles taken away (bench/lead_titles.py)
analyzers  the analyzer's levers (dotted abbreviations, single letters) by
           leave-one-collection-out, each collection indexed four ways (bench/analyzers.py)
index      indexing: full build, unchanged re-run, +1%/~1% re-run; vs FTS5
queries    p50/p95 latency of top-10 searches with highlights; vs FTS5
sidecars   a full build with no columnar sidecars, sidecars from the writer, sidecars read back
merges     a full build with Whoosh's merge policy and with the archive's; their queries
duplicates the duplicate finder's memory and time an article vs datasketch's MinHashLSH
site       the whole static site's build time vs Pagefind on the same pages; a day's update (+1% new, ~1% edited)
distributed  the build in-process vs a LocalCluster of 1 and 2 Dask workers; Amdahl to 10M;
             archive site with its search bundle on those clusters
scale      generate the 100k+ article scale set (JSONL) from BBC + Reuters paragraphs
curve      the scale curve: build, memory, size, queries and the static bundle at 10k/100k/1M
           articles, each measure's growth exponent, a log-log chart (bench/curve.svg)
ingest     per-layout reader accuracy on real third-party files (tests/data/ingest)
examples   ten news queries' top 5 on BBC and Reuters, through archive search
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import testcollections
from bench.common import CORPORA, DATA, REPO, RESULTS, save, table


def corpus_list(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """NAME=PATH pairs from --corpus (default: bbc and reuters), plus the scale set with
    --with-scale."""
    out = []
    for spec in args.corpus or ():
        name, sep, path = spec.partition("=")
        if not sep:
            raise SystemExit(f"--corpus expects NAME=PATH, got {spec!r}")
        out.append((name, Path(path)))
    if not out:
        out = [("bbc", args.corpora / "bbc"), ("reuters", args.corpora / "reuters21578")]
    if args.with_scale:
        scale = args.data / "scale" / "articles"
        if not scale.is_dir():
            raise SystemExit(f"no scale set in {scale}: run `python -m bench scale` first")
        out.append(("scale", scale))
    return out


def cmd_convert(args: argparse.Namespace) -> dict:
    for name in testcollections.COLLECTIONS + testcollections.CHECKS:
        reason = testcollections.missing(args.corpora, args.data, name)
        if reason:
            print(f"skipped {name}: {reason}")
    summary = testcollections.convert(args.corpora, args.data)
    rows = [{"collection": k, **v} for k, v in summary.items()]
    print(table(rows, [("collection", "collection", ""), ("docs", "docs", "d"),
                       ("queries", "queries", "d"), ("judged_queries", "judged", "d"),
                       ("qrels", "qrels lines", "d")]))
    print(f"written to {args.data}/<collection>/")
    return {"collections": summary}


def cmd_fetch_collections(args: argparse.Namespace) -> dict:
    done = testcollections.fetch_collections(args.mirror, args.data,
                                             tuple(args.collection or testcollections.SOURCES))
    rows = [{"collection": k, **v} for k, v in done.items()]
    print(table(rows, [("collection", "collection", ""), ("repository", "repository", ""),
                       ("commit", "commit", ""), ("files", "files", "d"),
                       ("bytes", "bytes", "d")]))
    print(f"written to {args.data}/raw/<collection>/")
    return {"collections": done}


def cmd_relevance(args: argparse.Namespace) -> dict:
    from bench import relevance
    names, skipped = [], {}
    for name in args.collection or testcollections.COLLECTIONS + testcollections.CHECKS:
        reason = testcollections.missing(args.corpora, args.data, name)
        if reason and not testcollections.paths(args.data, name)[0].is_file():
            skipped[name] = reason
            print(f"skipped {name}: {reason}")
            continue
        if not reason and not testcollections.paths(args.data, name)[0].is_file():
            testcollections.convert(args.corpora, args.data, (name,))
        empty = testcollections.empty(args.data, name)
        if empty:
            skipped[name] = empty
            print(f"skipped {name}: {empty}")
            continue
        names.append(name)
    rows = relevance.run(args.data, names)
    print(table(rows, relevance.COLUMNS))
    print()
    print(table(relevance.summary(rows), relevance.SUMMARY_COLUMNS))
    payload = {"rows": rows, "summary": relevance.summary(rows), "skipped": skipped}
    if not args.no_levers and set(names) - set(testcollections.CHECKS):
        print()
        payload["levers"] = print_levers(args.data, names, relevance.best_peers(rows),
                                         relevance.best_peers(rows, relevance.NAMED_PEERS))
    return payload


def print_levers(data: Path, names: list[str], best_peer: dict[str, float],
                 named_peer: dict[str, float] | None = None) -> dict:
    from bench import levers, relevance
    result = levers.run(data, names, best_peer, named_peer=named_peer)
    computable = result["computable"]
    for head, part in (
            ("Leave-one-collection-out over {settings} settings (a setting's ratio on a "
             "collection: its MAP / the best peer's MAP; picked by the worst collection's "
             "ratio, then the mean, over the collections picked on):", result),
            ("\nThe same over the {settings} settings every scorer computes (no df=any: "
             "Whoosh, the columns and the site's lists keep no count of articles holding a "
             "word in any field):", computable)):
        print(head.format(settings=part["settings"]))
        print(table(part["loo"], levers.LOO_COLUMNS))
        print(f"held-out MAP / best peer: worst {part['loo_worst_ratio']:.3f}, mean "
              f"{part['loo_mean_ratio']:.3f}"
              + (f"; / best of {', '.join(relevance.NAMED_PEERS)}: worst "
                 f"{part['loo_worst_named_ratio']:.3f}, mean "
                 f"{part['loo_mean_named_ratio']:.3f}" if part.get("loo_mean_named_ratio")
                 else ""))
        print(f"picked on all {len(part['loo'])}: {part['chosen_label']} "
              f"(worst {part['chosen_worst']:.3f}, mean {part['chosen_criterion']:.3f})")
    if result["checks"]:
        print("\nOn the collections only measured on (never picked with), the setting in use "
              "and the pick among the settings every scorer computes:")
        print(table(result["checks"], levers.CHECK_COLUMNS))
    if result["current_criterion"] is not None:
        print(f"archive/ranking.py now: {result['current_label']} "
              f"(worst {result['current_worst']:.3f}, mean {result['current_criterion']:.3f}): "
              f"{levers.verdict(result)}")
    return result


def last_relevance_rows(args: argparse.Namespace) -> list[dict]:
    """The last relevance run's rows: the peers' MAP a lever selection is measured against."""
    last = args.results / "relevance.json"
    if not last.is_file():
        raise SystemExit(f"{last} missing: run `python -m bench relevance` first (it gives the "
                         "peers' MAP the selection is measured against)")
    return json.loads(last.read_text("utf-8"))["rows"]


def cmd_levers(args: argparse.Namespace) -> dict:
    from bench import relevance
    rows = last_relevance_rows(args)
    best = relevance.best_peers(rows)
    named = relevance.best_peers(rows, relevance.NAMED_PEERS)
    names = [n for n in args.collection or testcollections.COLLECTIONS + testcollections.CHECKS
             if n in best and (args.data / n / "index").is_dir()]
    if not names:
        raise SystemExit("no collection has both a relevance row and an index")
    return {"levers": print_levers(args.data, names, best, named)}


def cmd_lead_titles(args: argparse.Namespace) -> dict:
    from bench import lead_titles
    result = lead_titles.run(args.data, args.data / "untitled", args.collection)
    print(f"at the archive's setting ({result['setting']}) and each variant's best of "
          f"{result['settings']} settings:")
    print(table(result["rows"], lead_titles.COLUMNS))
    if result["mean"]:
        print(f"mean ratio (not searched / searched): at the archive's setting "
              f"{result['mean']['ratio_now']:.3f}, each at its best "
              f"{result['mean']['ratio_best']:.3f}")
    return result


def cmd_analyzers(args: argparse.Namespace) -> dict:
    from bench import analyzers, relevance
    best = relevance.best_peers(last_relevance_rows(args))
    names = [n for n in args.collection or testcollections.COLLECTIONS
             if n in best and testcollections.paths(args.data, n)[0].is_file()]
    if len(names) < 2:
        raise SystemExit("leave-one-out needs two collections with a relevance row and records")
    result = analyzers.run(args.data, args.data / "analyzers", best, names,
                           progress=lambda step: print(f"  {step}", file=sys.stderr))
    print(f"MAP at the ranking setting in use ({result['setting']}), each analyzer; criterion: "
          f"mean MAP / best peer; held out: the mean of its own grid selection over "
          f"{result['settings']} settings")
    columns = [("analyzer", "analyzer", ""), *((n, n, ".4f") for n in result["collections"]),
               ("criterion", "criterion", ".3f"), ("grid_loo", "grid held out", ".3f")]
    print(table(result["variants"], columns))
    print(f"\nAmong all four: the analyzer alone, picked on the others, held-out mean "
          f"{result['alone_mean']:.3f}, picked on all: {result['alone_pick']}; with the grid, "
          f"held-out mean {result['joint_mean']:.3f}, picked on all: {result['joint_pick']}")
    finding = result["finding_abbreviations"]
    print('\nAmong the analyzers that find "U.S.": the analyzer alone, at the setting in use, '
          "picked on the others:")
    print(table(finding["alone"], analyzers.ROW_COLUMNS))
    print(f"held-out mean {finding['alone_mean']:.3f}; picked on all: {finding['alone_pick']} "
          f"({'the archive' if finding['alone_pick_is_archive'] else 'NOT the archive'}'s)")
    print("\nThe same, analyzer and ranking setting picked together:")
    print(table(finding["joint"], analyzers.ROW_COLUMNS))
    print(f"held-out mean {finding['joint_mean']:.3f}; picked on all: {finding['joint_pick']}")
    return result


def cmd_index(args: argparse.Namespace) -> dict:
    from bench import indexing
    rows = indexing.finish(indexing.run(corpus_list(args), args.data / "work"))
    print(table(rows, indexing.COLUMNS))
    return {"rows": rows}


def cmd_queries(args: argparse.Namespace) -> dict:
    from bench import queries
    rows = queries.run(corpus_list(args), args.data / "query-index", args.per_kind,
                       args.seed, args.repeat)
    print(table(rows, queries.COLUMNS))
    return {"rows": rows}


def cmd_sidecars(args: argparse.Namespace) -> dict:
    from bench import sidecars
    corpora = corpus_list(args) if args.corpus else [("reuters", args.corpora / "reuters21578")]
    rows = sidecars.run(corpora, args.data / "sidecars", args.repeat)
    print(table(rows, sidecars.COLUMNS))
    return {"rows": rows}


def cmd_merges(args: argparse.Namespace) -> dict:
    from bench import merges
    corpora = corpus_list(args)
    rows = merges.run(corpora, args.data / "merges", args.procs, args.per_kind, args.seed)
    print(table(rows, merges.COLUMNS))
    return {"rows": rows}


def cmd_duplicates(args: argparse.Namespace) -> dict:
    from bench import curve, duplicates
    articles, _ = curve.articles_for(args.corpora, args.data, args.n, args.seed, 1000)
    sets = [(f"scale {args.n:,}", duplicates.scale_texts(articles, args.n))]
    real = [args.corpora / "bbc", args.corpora / "reuters21578"]
    if all(folder.is_dir() for folder in real):
        sets.append(("bbc+reuters", duplicates.corpus_texts(real)))
    rows = duplicates.run(sets, args.data / "duplicates")
    print(table(rows, duplicates.COLUMNS))
    if not all(row["same_clusters"] for row in rows):
        raise SystemExit("the two systems' clusters differ")
    return {"rows": rows}


def cmd_site(args: argparse.Namespace) -> dict:
    from bench import site
    corpora = corpus_list(args) if args.corpus else [("reuters", args.corpora / "reuters21578")]
    if args.update_only:
        rows = []
    else:
        rows = site.run(corpora, args.data / "site")
        print(table(rows, site.COLUMNS))
    from bench import site_update
    updates = site_update.run(corpora, args.data / "site-update")
    print(table(updates, site_update.COLUMNS))
    return {"rows": rows, "updates": updates}


def cmd_distributed(args: argparse.Namespace) -> dict:
    from bench import distributed
    corpora = corpus_list(args) if args.corpus or args.with_scale else []
    if not args.corpus:   # the default is Reuters alone (corpus_list's default adds BBC too)
        corpora = [("reuters", args.corpora / "reuters21578")] + \
            [c for c in corpora if c[0] not in ("bbc", "reuters")]
    rows, projections, sites = distributed.run(corpora, args.data / "distributed",
                                               index=args.part != "site",
                                               site=args.part != "index",
                                               repeat=args.repeat)
    if rows:
        print(table(rows, distributed.COLUMNS))
        print(f"Projected build of {distributed.PROJECT_ARTICLES:,} articles (Amdahl, from "
              "the one-worker run's serial and parallel seconds per article):")
        print(table(projections, distributed.PROJECTION_COLUMNS))
    if sites:
        print("archive site (the search bundle on the workers, the pages on the client):")
        print(table(sites, distributed.SITE_COLUMNS))
    return {"rows": rows, "projections": projections, "site": sites}


def cmd_scale(args: argparse.Namespace) -> dict:
    from bench import scale
    summary = scale.generate(args.corpora, args.data / "scale" / "articles", args.n, args.seed,
                             args.per_file)
    print(table([summary], scale.COLUMNS))
    return {"scale": summary}


def cmd_curve(args: argparse.Namespace) -> dict:
    from bench import curve
    settings = {"sizes": args.sizes, "seed": args.seed, "per_file": args.per_file,
                "per_kind": args.per_kind, "first_queries": args.first_queries,
                "procs": args.procs}

    def keep(points: list[dict]) -> None:   # a long run keeps each size as it is measured
        save("curve-partial", curve.payload(points, settings), args.results)

    if args.redraw:   # the table and chart again from the last run's points, nothing measured
        last = args.results / "curve.json"
        try:
            earlier = json.loads(last.read_text("utf-8"))
            points, settings = earlier["points"], earlier["settings"]
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"{last}: no curve to redraw ({e})") from None
    else:
        points = curve.run(args.corpora, args.data, args.sizes, seed=args.seed,
                           per_file=args.per_file, per_kind=args.per_kind,
                           first_queries=args.first_queries, procs=args.procs, on_point=keep)
    result = curve.payload(points, settings)
    print(table(result["rows"], curve.columns([p["articles"] for p in points])))
    if result["worse_than_linear"]:
        print(f"growing worse than linearly (exponent above {curve.LINEAR_LIMIT}): "
              + ", ".join(result["worse_than_linear"]))
    else:
        print(f"no measure grows worse than linearly (every exponent at most "
              f"{curve.LINEAR_LIMIT}, peers aside)")
    args.svg.parent.mkdir(parents=True, exist_ok=True)
    args.svg.write_text(curve.svg_chart(points, result["rows"]), "utf-8")
    print(f"chart: {args.svg}")
    if args.redraw:   # the machine and time of the measuring run, not of the redraw
        return {**result, "svg": str(args.svg), "environment": earlier.get("environment"),
                "redrawn": True}
    return {**result, "svg": str(args.svg)}


def cmd_examples(args: argparse.Namespace) -> dict:
    from bench import examples
    rows = examples.run(args.corpora, args.data / "query-index")
    print(examples.markdown(rows))
    return {"rows": rows}


def cmd_ingest(args: argparse.Namespace) -> dict:
    from bench import ingest
    result = ingest.run(args.set)
    if args.json:
        print(json.dumps(result["table"], indent=2, ensure_ascii=False))
        return result
    print(table(result["table"], ingest.COLUMNS))
    if result["problems"]:
        print("rows without an article (every field counted wrong):")
        for problem in result["problems"]:
            print(f"  {problem['file']}: {problem['reason']}")
    return result


def _sizes(text: str) -> list[int]:
    """--sizes for argparse: its own message on a bad size, not a traceback."""
    from bench.curve import parse_sizes
    try:
        return parse_sizes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", type=Path, default=CORPORA,
                        help=f"the shared corpora folder (default {CORPORA})")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="where converted and generated data go (git-ignored)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="where JSON results go (git-ignored)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("convert", help="convert the test collections whose inputs are present")
    p = sub.add_parser("fetch-collections",
                       help="write bench/data/raw/<name>/ from local git copies (git show)")
    p.add_argument("--from", dest="mirror", type=Path, required=True,
                   help="folder holding the repositories (OWNER+NAME/repo or NAME)")
    p.add_argument("--collection", action="append",
                   choices=tuple(testcollections.SOURCES))
    p = sub.add_parser("relevance",
                       help="MAP/nDCG@10/P@10/R@100 vs bm25s, FTS5 and Whoosh BM25F")
    p.add_argument("--collection", action="append",
                   choices=testcollections.COLLECTIONS + testcollections.CHECKS)
    p.add_argument("--no-levers", action="store_true",
                   help="skip the leave-one-collection-out lever selection")
    p = sub.add_parser("levers", help="leave-one-collection-out lever selection alone")
    p.add_argument("--collection", action="append",
                   choices=testcollections.COLLECTIONS + testcollections.CHECKS)
    p = sub.add_parser("lead-titles",
                       help="titles made from the lead, searched or not (titles taken away)")
    p.add_argument("--collection", action="append",
                   choices=tuple(n for n in testcollections.COLLECTIONS if n != "npl"))
    p = sub.add_parser("analyzers",
                       help="the analyzer's levers by leave-one-collection-out (four indexes each)")
    p.add_argument("--collection", action="append",
                   choices=testcollections.COLLECTIONS)
    for name, text in (("index", "indexing speed vs FTS5"), ("queries", "query latency vs FTS5")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--corpus", action="append", metavar="NAME=PATH",
                       help="a corpus folder (repeatable; default: bbc and reuters)")
        p.add_argument("--with-scale", action="store_true",
                       help="also the generated scale set (python -m bench scale)")
        if name == "queries":
            p.add_argument("--per-kind", type=int, default=60,
                           help="queries of each kind (5 kinds; default 60)")
            p.add_argument("--seed", type=int, default=5)
            p.add_argument("--repeat", type=int, default=1,
                           help="timed passes, each query's fastest kept (default 1)")
    p = sub.add_parser("sidecars", help="what the columnar sidecars cost a full build")
    p.add_argument("--corpus", action="append", metavar="NAME=PATH",
                   help="a corpus folder (repeatable; default: reuters)")
    p.add_argument("--repeat", type=int, default=1,
                   help="builds of each kind, the fastest kept (default 1)")
    p.set_defaults(with_scale=False)
    p = sub.add_parser("merges", help="a build with Whoosh's merge policy and with the "
                       "archive's; their query times")
    p.add_argument("--corpus", action="append", metavar="NAME=PATH",
                   help="a corpus folder (repeatable; default: bbc and reuters)")
    p.add_argument("--with-scale", action="store_true",
                   help="also the generated scale set (python -m bench scale)")
    p.add_argument("--procs", type=int, default=2, help="writer processes (default 2)")
    p.add_argument("--per-kind", type=int, default=60,
                   help="queries of each of the queries bench's 5 kinds (default 60)")
    p.add_argument("--seed", type=int, default=5)
    p = sub.add_parser("duplicates", help="the duplicate finder against datasketch's "
                       "MinHashLSH: memory and time an article, same clusters")
    p.add_argument("--n", type=int, default=100_000,
                   help="articles of the scale set (the curve's set of that size; default 100000)")
    p.add_argument("--seed", type=int, default=5, help="the scale generator's seed")
    p = sub.add_parser("site", help="whole-site build time vs Pagefind on the same pages")
    p.add_argument("--corpus", action="append", metavar="NAME=PATH",
                   help="a corpus folder (repeatable; default: reuters)")
    p.add_argument("--update-only", action="store_true",
                   help="only the daily update (no whole-site build against Pagefind)")
    p.set_defaults(with_scale=False)
    p = sub.add_parser("distributed",
                       help="the build in-process vs a LocalCluster of 1 and 2 Dask workers")
    p.add_argument("--corpus", action="append", metavar="NAME=PATH",
                   help="a corpus folder (repeatable; default: reuters)")
    p.add_argument("--with-scale", action="store_true",
                   help="also the generated scale set (python -m bench scale)")
    p.add_argument("--part", choices=["index", "site", "both"], default="both",
                   help="the index builds, the site builds, or both (default)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="site builds: each way N times in turn, the fastest reported")
    p = sub.add_parser("scale", help="generate the scale set")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--per-file", type=int, default=1000, help="articles per JSONL file")
    p = sub.add_parser("curve", help="the scale curve: every cost against size, exponents, chart")
    p.add_argument("--sizes", type=_sizes, default=[10_000, 100_000, 1_000_000],
                   help="article counts, comma-separated (default 10000,100000,1000000)")
    p.add_argument("--seed", type=int, default=5, help="the scale generator's seed")
    p.add_argument("--per-file", type=int, default=1000, help="articles per JSONL file")
    p.add_argument("--per-kind", type=int, default=60,
                   help="queries of each of the queries bench's 5 kinds (default 60)")
    p.add_argument("--first-queries", type=int, default=200,
                   help="headline queries for the static bundle's bytes per first query")
    p.add_argument("--procs", type=int, default=2,
                   help="writer and bundle processes, the same at every size (default 2)")
    p.add_argument("--svg", type=Path, default=REPO / "bench" / "curve.svg",
                   help="where the chart goes (default bench/curve.svg)")
    p.add_argument("--redraw", action="store_true",
                   help="measure nothing: the table and chart again from the last curve.json")
    sub.add_parser("examples", help="ten news queries' top 5 on BBC and Reuters")
    p = sub.add_parser("ingest", help="per-layout reader accuracy on tests/data/ingest")
    p.add_argument("--set", type=Path, default=None,
                   help="the evaluation set folder (default tests/data/ingest)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    args = parser.parse_args(argv)
    if args.command == "ingest" and args.set is None:
        from bench.ingest import SET
        args.set = SET
    payload = globals()[f"cmd_{args.command.replace('-', '_')}"](args)
    path = save(args.command, payload, args.results)
    # with --json, stdout is the table alone
    print(f"JSON: {path}", file=sys.stderr if getattr(args, "json", False) else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

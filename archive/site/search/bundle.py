"""The search bundle's build: one pass over the articles, the term and pair lists, facets and
dates, ``meta`` last, in one process or two.

What the browser fetches is kept small: a first query loads ``meta`` (a few hundred bytes
and a row per segment), a shard per word and segment, and one file per shown result; filter counts and
exact totals are fetched only when a visitor opens the filter panel.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from archive import processes
from archive.search import Archive
from archive.site.files import OutputFolder
from archive.site.search import articles, client, postings, segments
from archive.site.search.format import BUNDLE_PREFIX, COLUMN_BLOCK, FORMAT_VERSION, b64, \
    number_deltas, script, varints
from archive.site.search.helper import Helper, claims, peak_rss_mb


@dataclass
class BundleReport:
    """What a bundle build produced (the site builder folds it into its own report)."""

    files: int = 0
    written: int = 0
    bytes: int = 0
    articles: int = 0
    terms: int = 0
    pairs: int = 0
    term_shards: int = 0
    pair_shards: int = 0
    segments: int = 0
    seconds: float = 0.0
    peak_rss_mb: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_bundle(archive: Archive, out: OutputFolder, *, prefix: str = BUNDLE_PREFIX,
                 shard_bytes: int = 768, head_size: int = 64,
                 procs: int | None = None) -> BundleReport:
    """Write the search bundle for ``archive`` under ``prefix`` (plus the client scripts).

    The article files, facets and days come from one pass over the articles in number
    order; the term and pair lists are cut per Whoosh segment (``segments``), so a day's
    update writes the lists of its new segment and leaves the others' files as they were.

    ``shard_bytes`` is the target size of a shard file: a query fetches about that much per
    word and segment (gzip makes it less), so small shards keep first queries small, and
    larger ones make fewer files (for hosts that limit file counts). ``head_size`` postings
    of a segment's list sit in its shard.

    With two processes (``procs``; by default when a second process pays, see
    ``processes.second_process_pays``), a forked helper takes units' tasks (a unit's pair
    lists, its term lists) while this process reads the articles, then both take the tasks
    left: the same files, byte for byte.
    """
    started = time.perf_counter()
    before = (out.written, len(out.produced), out.bytes_total)
    numbering = postings.Numbering(archive)
    facets = articles.Facets()
    work = Path(tempfile.mkdtemp(prefix="archive-bundle-"))
    prints = segments.fingerprints(archive, numbering, prefix, shard_bytes, head_size)
    lists = segments.kept(out, prefix, prints)
    held = {found.segid for found in lists}
    todo = [i for i, (segid, _) in enumerate(prints) if segid not in held]
    helper: Helper | None = None
    try:
        if (procs or (2 if processes.second_process_pays() else 1)) > 1 and \
                hasattr(os, "fork") and todo:
            helper = Helper.start(archive, numbering, out.root, prefix, shard_bytes, head_size,
                                  work, todo)
        days = articles.build_articles(archive, numbering, out, prefix, facets)
        tasks = segments.tasks(archive, todo)
        parts = [segments.build_part(archive, numbering, tasks[t][0], tasks[t][1], out,
                                     prefix, shard_bytes, head_size, work)
                 for t in claims(work, "task", range(len(tasks)))]
        if helper is not None:
            parts += helper.finish(out)
        lists += segments.combine(parts)
    finally:
        if helper is not None:
            helper.stop()   # reaped already after success; killed after a failure
        shutil.rmtree(work, ignore_errors=True)
    order = {segid: i for i, segid in enumerate(segments.segment_ids(archive))}
    lists.sort(key=lambda found: order[found.segid])
    finish_bundle(out, prefix, facets, days, numbering, lists,
                  collection_stats(archive, numbering))
    segments.remember(out, prefix, prints, lists)
    return BundleReport(
        files=len(out.produced) - before[1], written=out.written - before[0],
        bytes=out.bytes_total - before[2], articles=len(numbering),
        terms=sum(found.terms for found in lists), pairs=sum(found.pairs for found in lists),
        term_shards=sum(found.term_shards for found in lists),
        pair_shards=sum(found.pair_shards for found in lists), segments=len(lists),
        seconds=round(time.perf_counter() - started, 3),
        # the helper's own peak, sent with its report (see helper.peak_rss_mb)
        peak_rss_mb=max(peak_rss_mb(), helper.peak_rss_mb if helper else 0.0))


def collection_stats(archive: Archive, numbering: postings.Numbering) -> dict[str, Any]:
    """What the browser needs to score: the weighting's parameters, the article count and
    average field lengths as Whoosh counts them (deleted copies included, as its idf and
    averages do), each segment's deletion list, and each unit's ``rho`` (what its word
    tiers' bounds are multiplied by at these averages, ``segments.units_rho``)."""
    searcher = archive.searcher
    weighting = searcher.weighting
    if weighting.idf_form != "lucene":  # a lever of the relevance bench, never the product's
        raise ValueError(f"the search bundle's client computes Lucene's idf only, not "
                         f"{weighting.idf_form!r}")
    deleted = segments.deletions(archive, numbering)
    return {
        "N": searcher.doc_count_all(),
        "avg": [searcher.avg_field_length(f) or 1 for f in segments.FIELDS],
        "w": {"k1": weighting.K1, "b": [weighting.field_B(f) for f in segments.FIELDS],
              "fw": [weighting.field_weight(f) for f in segments.FIELDS],
              "idf": weighting.idf_form},
        "x": {segid: b64(varints(number_deltas(numbers))) for segid, numbers in deleted.items()},
        # per unit: how far the collection's averages can raise its tiers' word bounds
        "rho": segments.units_rho(archive),
    }


def finish_bundle(out: OutputFolder, prefix: str, facets: articles.Facets,
                  days: list[list[int]], numbering: postings.Numbering,
                  lists: list[segments.SegmentLists], stats: dict[str, Any]) -> None:
    """What follows the article pass and the lists, wherever those were built: facets,
    days, ``meta`` last, and the client scripts."""
    count, dated = len(numbering), numbering.dated
    listing, buckets, _ = articles.write_facets(facets, out, prefix, count)
    listing["year"] = articles.year_listing(days, dated)
    out.write(f"{prefix}/facets.js", script("facets", listing))
    articles.write_days(days, dated, out, prefix)
    # Everything a first query needs before its postings: small at any size, one row per
    # live segment (the index's merges keep their count logarithmic).
    meta = {
        "v": FORMAT_VERSION, "n": count, "dated": dated, **stats,
        "segs": [found.meta_row() for found in lists], "block": COLUMN_BLOCK,
        "fb": buckets, "years": articles.years(days),
    }
    out.write(f"{prefix}/meta.js", script("meta", meta))
    for relative, data in client.asset_files().items():
        out.write(relative, data)

"""The search bundle's build: one pass over the articles, the term and pair lists, facets and
dates, ``meta`` last, in one process or two.

What the browser fetches is kept small: a first query loads ``meta`` (the same few hundred
bytes at any size), a shard per word, and one file per shown result; filter counts and
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
from archive.site.search import articles, client, pairs, postings
from archive.site.search.format import BUNDLE_PREFIX, COLUMN_BLOCK, FORMAT_VERSION, script
from archive.site.search.helper import Helper, peak_rss_mb


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
    seconds: float = 0.0
    peak_rss_mb: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_bundle(archive: Archive, out: OutputFolder, *, prefix: str = BUNDLE_PREFIX,
                 shard_bytes: int = 768, head_size: int = 128,
                 procs: int | None = None) -> BundleReport:
    """Write the search bundle for ``archive`` under ``prefix`` (plus the client scripts).

    Streams: article texts are read one at a time; term lists are kept as their compact
    encodings until shards are cut; pair lists are spooled to temporary partitions.

    ``shard_bytes`` is the target size of a shard file: a query fetches about that much per
    word (gzip makes it less), so small shards keep first queries small, and larger ones
    make fewer files (for hosts that limit file counts) at a few KB more per query.
    ``head_size`` postings of a list sit in its shard.

    With two processes (``procs``; by default when a second process pays, see
    ``processes.second_process_pays``), a forked helper builds the term lists while this
    process reads the articles, then both encode and write the pair partitions: the same
    files, byte for byte, in less wall time.
    """
    started = time.perf_counter()
    before = (out.written, len(out.produced), out.bytes_total)
    numbering = postings.Numbering(archive)
    facets = articles.Facets()
    scorer = postings.FieldScorer(archive)   # the weighting's scorers, shared by pairs and terms
    work = Path(tempfile.mkdtemp(prefix="archive-bundle-"))
    helper: Helper | None = None
    try:
        if (procs or (2 if processes.second_process_pays() else 1)) > 1 and \
                hasattr(os, "fork"):
            helper = Helper.start(archive, numbering, out.root, prefix, shard_bytes, head_size,
                                  work)
        spool = pairs.PairSpool(work)
        days = articles.build_articles(archive, numbering, out, prefix, spool, facets, scorer)
        spool.close()
        if helper is None:
            npairs, pair_shards, _ = pairs.build_pairs(spool, out, prefix, shard_bytes,
                                                       head_size)
        else:
            npairs, pair_shards = helper.share_pairs(spool, out, prefix, shard_bytes,
                                                     head_size)
    finally:
        if helper is not None:
            helper.stop()   # reaped already after success; killed after a failure
        shutil.rmtree(work, ignore_errors=True)
    if helper is None:
        terms, term_shards, _ = postings.build_terms(archive, numbering, out, prefix,
                                                     shard_bytes, head_size, scorer)
    else:
        terms, term_shards = helper.terms, helper.term_shards
    finish_bundle(out, prefix, facets, days, len(numbering), numbering.dated, term_shards,
                  pair_shards)
    return BundleReport(
        files=len(out.produced) - before[1], written=out.written - before[0],
        bytes=out.bytes_total - before[2], articles=len(numbering), terms=terms,
        pairs=npairs, term_shards=term_shards, pair_shards=pair_shards,
        seconds=round(time.perf_counter() - started, 3),
        # the helper's own peak, sent with its report (see helper.peak_rss_mb)
        peak_rss_mb=max(peak_rss_mb(), helper.peak_rss_mb if helper else 0.0))


def finish_bundle(out: OutputFolder, prefix: str, facets: articles.Facets,
                  days: list[list[int]], count: int, dated: int, term_shards: int,
                  pair_shards: int) -> None:
    """What follows the article pass and the lists, wherever those were built: facets,
    days, ``meta`` last, and the client scripts."""
    listing, buckets, _ = articles.write_facets(facets, out, prefix, count)
    listing["year"] = articles.year_listing(days, dated)
    out.write(f"{prefix}/facets.js", script("facets", listing))
    articles.write_days(days, dated, out, prefix)
    # Everything a first query needs before its postings: a few hundred bytes at any size.
    meta = {
        "v": FORMAT_VERSION, "n": count, "dated": dated,
        "shards": {"t": term_shards, "p": pair_shards}, "block": COLUMN_BLOCK,
        "fb": buckets, "years": articles.years(days),
    }
    out.write(f"{prefix}/meta.js", script("meta", meta))
    for relative, data in client.asset_files().items():
        out.write(relative, data)

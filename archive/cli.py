"""The ``archive`` command: thin click commands over the modules that do the work. One idea:
the command line, one short function per command (its options, its errors, its output); it is
read as a table of contents of what the archive does, so it stays one file.

Exit codes: 0 success; 1 the run failed (or a search found nothing, like grep); 2 a usage or
query error.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from archive import processes, render, store, timeline
from archive.indexer import Indexer, IndexReport
from archive.query import Filters, QueryError, parse_date_option
from archive.search import Archive, SORTS, page_to_dict
from archive.sources import ReaderOptions

F = TypeVar("F", bound=Callable[..., Any])


def index_option(command: F) -> F:
    return click.option(
        "--index", "index_dir", envvar="ARCHIVE_INDEX", default="index", show_default=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Index folder (or set ARCHIVE_INDEX).")(command)


def json_option(command: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON for scripts instead of text.")(command)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


class BadQuery(click.ClickException):
    """A query or option value the archive cannot use: one line on stderr, exit status 2."""

    exit_code = 2


def open_archive(index_dir: Path) -> Archive:
    try:
        return Archive(index_dir)
    except store.IndexMissing as exc:
        raise click.ClickException(f"{exc}") from None


def cli_environment() -> Any:
    """The text templates' environment: colour on a terminal, lines as wide as the output."""
    env = render.environment("cli", color=sys.stdout.isatty())
    env.globals["width"] = render.output_width(sys.stdout)
    return env


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="newsarchive")
def main() -> None:
    """A searchable news archive: index article files, then search them.

    \b
    archive index seeds/           build or update the index
    archive search 'hezbollah'     search it
    archive show ID                read one article
    """
    # Extraction libraries log every discarded fragment; the indexer reports what matters.
    for noisy in ("trafilatura", "htmldate", "courlan", "charset_normalizer"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


# --- archive index -------------------------------------------------------------------------

@main.command("index")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@index_option
@click.option("--rebuild", is_flag=True, help="Delete the index and build it afresh.")
@click.option("--map", "field_map", metavar="FIELD=KEY,...", default="",
              help="For JSON/CSV: which record key fills which field, e.g. title=headline,body=story.")
@click.option("--source-name", "source_names", metavar="NAME", multiple=True,
              help="An outlet whose name may close an article as its sign-off, besides the "
                   "known agencies and papers (repeatable; files already indexed are re-read "
                   "with --rebuild).")
@click.option("--lock-timeout", type=float, default=10.0, show_default=True,
              help="Seconds to wait for another indexing run to finish.")
@click.option("--commit-every", type=click.IntRange(1), default=5000, hidden=True,
              help="Advanced: commit after every N articles (what a crash can cost).")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar (default: only on a terminal).")
@click.option("--cluster", "address", metavar="ADDRESS",
              help="Read and write segments on the Dask cluster whose scheduler is at "
                   "ADDRESS (e.g. tcp://10.0.0.5:8786).")
@click.option("--workers", type=click.IntRange(1), metavar="N",
              help="Read and write segments on N Dask worker processes started here.")
@click.option("--segments", type=click.Choice(["auto", "files", "bytes"]), default="auto",
              show_default=True,
              help="With --cluster/--workers: how workers hand segments over (files in the "
                   "index folder, which they must see; bytes through Dask; auto: files "
                   "where a worker sees the folder).")
@click.option("--batch-kb", type=click.IntRange(1), hidden=True,
              help="Advanced: with --cluster/--workers, about this many KB of input a task.")
@json_option
def index_command(paths: tuple[Path, ...], index_dir: Path, rebuild: bool, field_map: str,
                  source_names: tuple[str, ...], lock_timeout: float, commit_every: int,
                  progress: bool | None, address: str | None, workers: int | None,
                  segments: str, batch_kb: int | None, as_json: bool) -> None:
    """Add PATHS (files or folders, default seeds/) to the index, incrementally.

    Unchanged files are not read again, changed ones are re-read, and articles of files that
    disappeared from an indexed folder are removed. Bad files are reported and skipped.
    With --cluster or --workers the files are read on a Dask cluster; the index is the same.
    """
    inputs = list(paths) or [Path("seeds")]
    options = ReaderOptions(field_map=parse_field_map(field_map), source_names=source_names)
    settings = dict(lock_timeout=lock_timeout, commit_every=commit_every, options=options)
    show_bar = sys.stderr.isatty() if progress is None else progress
    if address and workers:
        raise BadQuery("give --cluster or --workers, not both")
    started = time.perf_counter()
    try:
        if address or workers:
            report = _run_on_dask(index_dir, inputs, rebuild, show_bar, address, workers,
                                  segments, batch_kb, settings)
        else:
            report = _run_indexer(Indexer(index_dir, **settings), inputs, rebuild, show_bar)
    except (store.IndexBusy, store.IndexMissing) as exc:  # IndexMissing: IndexDamaged
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # e.g. disk full: the last completed commit stays in force
        raise click.ClickException(
            f"indexing stopped: {exc.strerror or exc}"
            f"{f' ({exc.filename})' if exc.filename else ''}; the index keeps its last "
            "completed commit, run `archive index` again when fixed") from None
    seconds = time.perf_counter() - started
    if as_json:
        emit_json({**report.to_dict(), "index": str(index_dir), "seconds": round(seconds, 3)})
    else:
        env = cli_environment()
        click.echo(render.render(env, "index_summary.txt", report=report, seconds=seconds,
                                 index=index_dir), nl=False)
    if not any((report.added, report.updated, report.unchanged, report.removed)) \
            and report.skipped:
        sys.exit(1)


def _run_on_dask(index_dir: Path, inputs: list[Path], rebuild: bool, show_bar: bool,
                 address: str | None, workers: int | None, segments: str,
                 batch_kb: int | None, settings: dict[str, Any]) -> IndexReport:
    """The run on a Dask cluster: its dashboard named, its batches shown on the bar."""
    from archive import distributed  # noqa: PLC0415 - only a Dask run pays for importing it

    with dask_client(address, workers) as client:
        indexer = distributed.DistributedIndexer(
                index_dir, client, segments=segments,
                batch_bytes=batch_kb * 1024 if batch_kb else None, **settings)

        def status(source: Any) -> str | None:
            seconds = max(1e-9, time.perf_counter() - indexer.started)
            return (f"tasks {indexer.batches_done}/{indexer.batches_total}, "
                    f"{indexer.articles_read / seconds:,.0f} articles/s")
        return _run_indexer(indexer, inputs, rebuild, show_bar, status)


@contextmanager
def dask_client(address: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client for a command's --cluster/--workers, its dashboard named on stderr."""
    from archive import distributed  # noqa: PLC0415 - only a Dask run pays for importing it

    try:
        with distributed.connect(address, workers) as client:
            link = distributed.dashboard(client)
            if link:
                click.echo(f"Dask dashboard: {link}", err=True)
            yield client
    except distributed.DaskUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def _run_indexer(indexer: Indexer, inputs: list[Path], rebuild: bool,
                 show_bar: bool, status: Callable[[Any], str | None] | None = None) \
        -> IndexReport:
    if not show_bar:
        return indexer.run(inputs, rebuild=rebuild)
    bar = click.progressbar(length=0, label="Indexing", file=sys.stderr, show_pos=True,
                            item_show_func=status or (lambda s: s.relative if s else None))
    with bar:
        def advance(source: Any) -> None:
            bar.current_item = source
            bar.update(1)
        return indexer.run(inputs, rebuild=rebuild, progress=advance, on_total=_set_length(bar))


def _set_length(bar: Any) -> Callable[[int], None]:
    def set_length(total: int) -> None:
        bar.length = total
    return set_length


def parse_field_map(text: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        field, sep, key = pair.partition("=")
        if not sep or not field.strip() or not key.strip():
            raise click.BadParameter(f"expected FIELD=KEY, got {pair!r}", param_hint="--map")
        mapping[field.strip()] = key.strip()
    return mapping


# --- archive search ------------------------------------------------------------------------

@main.command("search")
@click.argument("query", nargs=-1)
@index_option
@click.option("--sort", type=click.Choice(SORTS), default="relevance", show_default=True,
              help="Order of results.")
@click.option("--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Results per page.")
@click.option("--page", type=click.IntRange(1), default=1, show_default=True,
              help="Which page of results.")
@click.option("--source", help="Only articles from this source (e.g. Reuters).")
@click.option("--place", help="Only articles about this place (e.g. Lebanon).")
@click.option("--topic", help="Only articles with this topic (e.g. cocoa).")
@click.option("--since", metavar="DATE", help="Only articles on or after DATE (YYYY[-MM[-DD]]).")
@click.option("--until", metavar="DATE", help="Only articles on or before DATE (YYYY[-MM[-DD]]).")
@click.option("--all-copies", is_flag=True,
              help="Show every copy of a wire story (by default each story shows once).")
@json_option
def search_command(query: tuple[str, ...], index_dir: Path, sort: str, limit: int, page: int,
                   source: str | None, place: str | None, topic: str | None, since: str | None,
                   until: str | None, all_copies: bool, as_json: bool) -> None:
    """Search the archive for QUERY.

    \b
    Words must all match (AND is the default); also:
      OR, NOT, ( ),  "exact phrase",  "words near"~5,  hezbol*,  hezbolah~ (fuzzy)
      title:syria  source:reuters  place:lebanon  topic:cocoa  author:smith
      date:2017  date:2017-08  date:[2017-08-01 to 2017-08-31]  date:>2017-01-01

    Exit status: 0 when something matched, 1 when nothing did, 2 for a bad query.
    """
    text = " ".join(query)
    with open_archive(index_dir) as archive:
        try:
            filters = Filters(source=source, place=place, topic=topic,
                              since=parse_date_option(since),
                              until=parse_date_option(until, end=True))
            results = archive.search(text, sort=sort, page=page, page_size=limit,
                                     filters=filters, all_copies=all_copies,
                                     facets=as_json)  # text output shows no facets
        except QueryError as exc:
            raise BadQuery(str(exc)) from None
    if as_json:
        emit_json(page_to_dict(results))
    else:
        click.echo(render.render(cli_environment(), "results.txt", page=results), nl=False)
    if results.total == 0:
        sys.exit(1)


# --- archive timeline ----------------------------------------------------------------------

@main.command("timeline")
@click.argument("queries", nargs=-1)
@index_option
@click.option("--by", type=click.Choice(timeline.PERIODS), default="month", show_default=True,
              help="Length of a period.")
@click.option("--since", metavar="DATE", help="Only articles on or after DATE (YYYY[-MM[-DD]]).")
@click.option("--until", metavar="DATE", help="Only articles on or before DATE (YYYY[-MM[-DD]]).")
@click.option("--source", help="Only articles from this source (e.g. Reuters).")
@click.option("--place", help="Only articles about this place (e.g. Lebanon).")
@click.option("--topic", help="Only articles with this topic (e.g. cocoa).")
@click.option("--normalize", is_flag=True,
              help="Show each period's share of all its articles, not a count.")
@click.option("--all-copies", is_flag=True,
              help="Count every copy of a wire story (by default each story counts once).")
@json_option
def timeline_command(queries: tuple[str, ...], index_dir: Path, by: str, since: str | None,
                     until: str | None, source: str | None, place: str | None,
                     topic: str | None, normalize: bool, all_copies: bool,
                     as_json: bool) -> None:
    """When was QUERY in the news: matching articles per period, as a chart.

    \b
    archive timeline 'oil'               one query, by month
    archive timeline oil gold --by year  several queries on one chart
    archive timeline 'blair' --normalize  share of each month's articles

    Each argument is one query in the language of `archive search` (quote one of several
    words). Wire copies count once, so the counts add up to the search's total.
    Exit status: 0 when something matched, 1 when nothing did, 2 for a bad query.
    """
    with open_archive(index_dir) as archive:
        try:
            filters = Filters(source=source, place=place, topic=topic,
                              since=parse_date_option(since),
                              until=parse_date_option(until, end=True))
            found = timeline.timelines(archive, queries or ("",), by=by, filters=filters,
                                       normalize=normalize, all_copies=all_copies)
        except QueryError as exc:
            raise BadQuery(str(exc)) from None
    if as_json:
        data = [timeline.timeline_to_dict(t) for t in found]
        emit_json(data[0] if len(data) == 1 else data)
    else:
        env = cli_environment()
        env.filters["period"] = timeline.period_label
        unicode = (sys.stdout.encoding or "").lower().replace("-", "").startswith("utf")
        click.echo(render.render(
            env, "timeline.txt", timelines=found,
            lines=timeline.chart_lines(found, env.globals["width"], unicode=unicode),
            legend=timeline.legend(found, unicode=unicode)), nl=False)
    if not any(t.total for t in found):
        sys.exit(1)


# --- archive show / stats ------------------------------------------------------------------

@main.command("show")
@click.argument("article_id")
@index_option
@json_option
def show_command(article_id: str, index_dir: Path, as_json: bool) -> None:
    """Print the article with id ARTICLE_ID (ids are shown in search results)."""
    with open_archive(index_dir) as archive:
        article = archive.article(article_id)
    if article is None:
        raise click.ClickException(f"no article with id {article_id!r} in {index_dir}")
    if as_json:
        emit_json(article.to_dict())
    else:
        click.echo(render.render(cli_environment(), "article.txt", article=article), nl=False)


@main.command("stats")
@index_option
@json_option
def stats_command(index_dir: Path, as_json: bool) -> None:
    """Count the articles in the index, by source and by year."""
    with open_archive(index_dir) as archive:
        stats = archive.stats()
    if as_json:
        emit_json(stats)
    else:
        click.echo(render.render(cli_environment(), "stats.txt", stats=stats), nl=False)


# --- archive export -------------------------------------------------------------------------

@main.command("export")
@click.argument("query", nargs=-1)
@index_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl",
              show_default=True, help="JSON Lines (re-indexable as is) or CSV.")
@click.option("--output", "-o", type=click.File("w", encoding="utf-8"), default="-",
              help="File to write (default: standard output).")
@click.option("--sort", type=click.Choice(SORTS), default="oldest", show_default=True,
              help="Order of the articles.")
def export_command(query: tuple[str, ...], index_dir: Path, fmt: str, output: Any,
                   sort: str) -> None:
    """Write every article (or every match of QUERY) with all its fields, streamed.

    A JSONL export indexed again with `archive index FILE.jsonl` gives the same articles.
    """
    from archive.export import WRITERS

    with open_archive(index_dir) as archive:
        try:
            count = WRITERS[fmt](archive.iter_articles(" ".join(query), sort), output)
        except QueryError as exc:
            raise BadQuery(str(exc)) from None
    click.echo(f"{count:,} article{'s' if count != 1 else ''} exported", err=True)


# --- archive check -------------------------------------------------------------------------

@main.command("check")
@index_option
@click.option("--full", is_flag=True,
              help="Decode the postings of every term, not an even sample (slower).")
@json_option
def check_command(index_dir: Path, full: bool, as_json: bool) -> None:
    """Verify the index: files, stored articles, postings, manifest, lock.

    Exit status: 0 when the index is sound, 1 when it is damaged (or missing).
    """
    from archive.store.check import REPAIR_HINT, check_index

    try:
        report = check_index(index_dir, full=full)
    except store.IndexMissing as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(report.to_dict())
    else:
        sampled = "" if report.terms_walked >= report.terms else \
            f" (postings of {report.terms_walked:,} of {report.terms:,} terms sampled)"
        click.echo(f"{index_dir}: generation {report.generation}, {report.segments} "
                   f"segment(s), {report.articles:,} articles ({report.deleted:,} deleted), "
                   f"{report.postings:,} postings{sampled}, {report.manifest_files:,} files "
                   f"in the manifest; checked in {report.seconds:.2f}s")
        for note in report.notes:
            click.echo(f"note: {note}")
        for problem in report.problems:
            click.echo(f"DAMAGED: {problem}")
        click.echo("OK: no damage found" if report.ok else f"The index is damaged: {REPAIR_HINT}.")
    if not report.ok:
        sys.exit(1)


# --- archive site / serve ------------------------------------------------------------------

@main.command("site")
@index_option
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default="site",
              show_default=True, help="Folder to write the site into.")
@click.option("--templates", "templates_dir", type=click.Path(exists=True, file_okay=False,
              path_type=Path), help="Theme folder: its templates override the built-in ones.")
@click.option("--base-url", metavar="URL", default="",
              help="The address the site will be published at, e.g. "
                   "https://example.org/news/; needed for the sitemap, canonical links and "
                   "absolute feed links. Without it those are left out, every link is "
                   "relative and feed ids are urn:uuid: names.")
@click.option("--title", default="News archive", show_default=True, help="The site's name.")
@click.option("--force", is_flag=True, help="Render every page even if nothing changed.")
@click.option("--changes", "changes_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the files this build added, modified or deleted to this file, one "
                   "per line as 'A path', 'M path' or 'D path' (relative to --out), for a "
                   "publish step that uploads only those.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar (default: only on a terminal).")
@click.option("--cluster", "address", metavar="ADDRESS",
              help="Build the search bundle on the Dask cluster whose scheduler is at ADDRESS "
                   "(its workers must see the index folder at the same path).")
@click.option("--workers", type=click.IntRange(1), metavar="N",
              help="Build the search bundle on N Dask worker processes started here.")
@json_option
def site_command(index_dir: Path, out: Path, templates_dir: Path | None, base_url: str,
                 title: str, force: bool, changes_file: Path | None, progress: bool | None,
                 address: str | None, workers: int | None, as_json: bool) -> None:
    """Build a static website of the archive: article pages, browse pages, feeds, search.

    Only files whose content changed are rewritten; over an unchanged index nothing is.
    With --cluster or --workers the search bundle is built on a Dask cluster while this
    machine writes the pages; the files are the same.
    """
    from archive.site.builder import SiteConfig, build_site

    try:
        config = SiteConfig(base_url=base_url, title=title)
    except ValueError as exc:
        raise BadQuery(str(exc)) from None
    if address and workers:
        raise BadQuery("give --cluster or --workers, not both")
    show_bar = sys.stderr.isatty() if progress is None else progress

    def build(cluster: Any) -> Any:
        if not show_bar:
            return build_site(index_dir, out, config, templates_dir, None, force,
                              cluster=cluster)
        with click.progressbar(length=1, label="Building site", file=sys.stderr) as bar:
            def advance(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)
            return build_site(index_dir, out, config, templates_dir, advance, force,
                              cluster=cluster)
    try:
        if address or workers:
            from archive.distributed.site import SITE_ERRORS  # noqa: PLC0415
            try:
                with dask_client(address, workers) as client:
                    report = build(client)
            except SITE_ERRORS as exc:
                raise click.ClickException(str(exc)) from None
        else:
            report = build(None)
    except (store.IndexMissing, processes.ChildFailed) as exc:
        raise click.ClickException(str(exc)) from None
    if changes_file is not None:
        try:
            changes_file.write_text("".join(line + "\n" for line in report.changes), "utf-8")
        except OSError as exc:
            raise click.ClickException(f"cannot write the changes list {changes_file}: "
                                       f"{exc.strerror or exc}") from None
    if report.older_analysis and not as_json:
        click.echo(f"Warning: {index_dir} was indexed by an older version, which splits words "
                   "like \"U.S.\" differently: the site's search may miss them; "
                   "`archive index --rebuild` brings it up to date.", err=True)
    if as_json:
        emit_json({**report.to_dict(), "out": str(out)})
    elif report.skipped:
        click.echo(f"Nothing changed since the last build: {report.pages:,} files in {out} "
                   f"left as they are ({report.seconds:.2f}s).")
    else:
        click.echo(f"{report.articles:,} article{'s' if report.articles != 1 else ''}: "
                   f"{report.pages:,} files, {report.added:,} new, {report.changed:,} "
                   f"changed, {report.removed:,} removed, {report.unchanged:,} unchanged "
                   f"({report.bytes_written / 1e6:.1f} of {report.bytes / 1e6:.1f} MB "
                   f"written) -> {out} ({report.seconds:.1f}s)")


@main.command("serve")
@index_option
@click.option("--dir", "site_dir", type=click.Path(file_okay=False, path_type=Path),
              default="site", show_default=True, help="The built site folder to serve.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (loopback by default: only this machine can connect).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on.")
@click.option("--templates", "templates_dir", type=click.Path(exists=True, file_okay=False,
              path_type=Path), help="Theme folder used to render /live results.")
def serve_command(index_dir: Path, site_dir: Path, host: str, port: int,
                  templates_dir: Path | None) -> None:
    """Preview the built site, with full-syntax live search at /live?q=..."""
    from archive.serve import make_server

    if not (site_dir / "index.html").is_file():
        raise click.ClickException(f"no site in {site_dir}: run `archive site` first")
    try:
        server = make_server(site_dir, index_dir, host, port, templates_dir)
    except store.IndexMissing as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    address = f"http://{server.server_address[0]}:{server.server_address[1]}/"
    click.echo(f"Serving {site_dir} at {address} (live search: {address}live?q=...); "
               "Ctrl-C to stop.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("Stopped.")
    finally:
        server.server_close()


# --- archive eval --------------------------------------------------------------------------

@main.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@index_option
@click.option("--per-query", is_flag=True, help="A row for every query, not just the mean.")
@json_option
def eval_command(queries: Path, qrels: Path, index_dir: Path, per_query: bool,
                 as_json: bool) -> None:
    """Score search quality on judged queries: MAP, nDCG@10, P@10, Recall@100.

    \b
    QUERIES: one query per line, 'qid<TAB>query text'.
    QRELS:   TREC judgments, 'qid 0 docid grade' (grade > 0 is relevant).
    Each query is ranked as free text (its words ORed, not parsed as query syntax), top 1000.
    Doc ids are the articles' record ids (the 'id' of a JSONL/CSV record), else their ids.
    """
    from archive.evaluate import EvalInputError, evaluate_index, format_table

    try:
        report = evaluate_index(index_dir, queries, qrels)
    except store.IndexMissing as exc:
        raise click.ClickException(str(exc)) from None
    except EvalInputError as exc:
        raise BadQuery(str(exc)) from None
    if as_json:
        emit_json({**report.to_dict(per_query=True), "index": str(index_dir)})
    else:
        click.echo(format_table(report, per_query=per_query), nl=False)


if __name__ == "__main__":
    main()

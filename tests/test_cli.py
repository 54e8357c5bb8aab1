"""The ``archive`` command end to end: index, search, show, stats, on real indexes in tmp_path."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from archive import render, store
from archive.article import make_id
from archive.cli import main
from archive.search import Segment

SEED_ID = make_id("seeds/000_ded2ed7496c25a53.txt")
VOLCANO, ELECTION, LIBRARY = (make_id(f"news/{n}.txt") for n in ("volcano", "election", "library"))
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"
LATIN1 = "Caf\u00e9 prices rise\n\nA coffee in the caf\u00e9 now costs \u00a33.\n".encode("cp1252")


def unwrapped(text: str) -> str:
    """Text output with its line breaks (wrapping to the width) read as single spaces."""
    return " ".join(text.split())


def index_ok(cli, *paths, **kw):  # noqa: ANN001, ANN201
    """Run ``archive index PATHS --json --no-progress``; return its report."""
    return cli.json("index", *paths, "--no-progress", **kw)


# --- the "done when" -------------------------------------------------------------------------

def test_index_seeds_then_search_finds_the_seed_with_a_highlighted_snippet(cli, seeds_dir) -> None:  # noqa: ANN001
    result = cli("index", seeds_dir)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 added, 0 updated, 0 removed, 0 unchanged, 0 skipped "
                                    "(1 file read in ")

    page = cli.json("search", 'Hezbollah AND "Islamic State"')
    assert page["total"] == 1
    (hit,) = page["hits"]
    assert hit["id"] == SEED_ID
    assert hit["title"] == ("The Syrian army and Hezbollah have prepared to transport Islamic "
                            "State fighters from their\u2026")
    assert (hit["source"], hit["date"], hit["date_source"]) == ("Reuters", "2017-08-27",
                                                                 "inferred")
    assert "[Hezbollah]" in hit["snippet"]
    assert "[Islamic] [State]" in hit["snippet"]
    assert {"Hezbollah", "Islamic", "State"} <= set(hit["highlights"])


def test_index_without_paths_reads_seeds(cli, seeds_dir, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(seeds_dir.parent)
    report = index_ok(cli)
    assert (report["added"], report["skipped"], report["warnings"]) == (1, [], [])
    assert cli.search("hezbollah") == [SEED_ID]


def test_the_index_folder_can_come_from_the_environment(tmp_path, seeds_dir) -> None:  # noqa: ANN001
    env = {"ARCHIVE_INDEX": str(tmp_path / "from-env")}
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(seeds_dir), "--no-progress"], env=env).exit_code == 0
    assert store.exists(tmp_path / "from-env")
    result = runner.invoke(main, ["stats", "--json"], env=env)
    assert json.loads(result.stdout)["articles"] == 1


# --- show and stats --------------------------------------------------------------------------------------

def test_show_prints_the_whole_article(cli, seeds_dir) -> None:  # noqa: ANN001
    index_ok(cli, seeds_dir)
    result = cli("show", SEED_ID)
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("The Syrian army and Hezbollah have prepared")
    assert "27 August 2017 (date inferred from the text) \u00b7 Reuters" in out
    assert f"Id:       {SEED_ID}" in out
    assert "File:     seeds/000_ded2ed7496c25a53.txt" in out
    assert "Ikhbariya news channel" in out                      # the body, wrapped
    assert "Captions:\n  A relative of Lebanese soldiers" in out
    assert all(len(line) <= 88 for line in out.splitlines()[2:])


def test_show_json_has_every_field_and_the_body(cli, seeds_dir) -> None:  # noqa: ANN001
    index_ok(cli, seeds_dir)
    article = cli.json("show", SEED_ID)
    assert article["id"] == SEED_ID
    assert article["body"].startswith("The Syrian army and Hezbollah have prepared")
    assert article["body"].endswith("similar evacuation deals.")
    assert (article["source"], article["date"], article["date_source"]) == \
        ("Reuters", "2017-08-27T00:00:00", "inferred")
    assert len(article["captions"]) == 2
    assert article["path"] == "seeds/000_ded2ed7496c25a53.txt"
    assert article["word_count"] > 300 and len(article["content_hash"]) == 64


def test_show_an_unknown_id_fails_with_a_message(cli, seeds_dir) -> None:  # noqa: ANN001
    index_ok(cli, seeds_dir)
    result = cli("show", "no-such-article")
    assert result.exit_code == 1
    assert "no article with id 'no-such-article'" in result.stderr


def test_stats_json_shape(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    stats = cli.json("stats")
    assert set(stats) == {"articles", "by_source", "by_year", "index", "bytes"}
    assert stats["articles"] == 5
    assert stats["by_source"] == {"Reuters": 2, "AP": 1, "BBC News": 1}
    assert stats["by_year"] == {"2015": 1, "2016": 1, "2017": 2}
    assert stats["index"] == str(cli.index.resolve())
    assert stats["bytes"] == sum(p.stat().st_size for p in cli.index.rglob("*")
                                 if p.is_file()) > 0


def test_stats_text(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    out = cli("stats").stdout
    assert out.startswith(f"5 articles in {cli.index.resolve()} (")
    assert "By source:\n  Reuters " in out
    lines = [line.split() for line in out.splitlines()]
    assert ["2017", "2"] in lines and ["AP", "1"] in lines and ["BBC", "News", "1"] in lines


# --- incremental runs ---------------------------------------------------------------------------------------

def test_a_second_run_over_unchanged_files_reads_nothing(cli, news_dir) -> None:  # noqa: ANN001
    first = index_ok(cli, news_dir)
    assert (first["added"], first["files_read"]) == (5, 5)
    second = index_ok(cli, news_dir)
    assert {k: second[k] for k in ("added", "updated", "removed", "unchanged", "files_read")} == \
        {"added": 0, "updated": 0, "removed": 0, "unchanged": 5, "files_read": 0}
    text = cli("index", news_dir).stdout
    assert "0 added, 0 updated, 0 removed, 5 unchanged, 0 skipped (0 files read in" in text
    assert cli.json("stats")["articles"] == 5


def test_a_changed_file_is_updated_and_search_sees_the_new_text(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    assert cli.search("tsunami") == []
    volcano = news_dir / "volcano.txt"
    volcano.write_text(volcano.read_text().replace("plume of ash", "tsunami warning"))
    report = index_ok(cli, news_dir)
    assert (report["updated"], report["added"], report["unchanged"], report["files_read"]) == \
        (1, 0, 4, 1)
    assert cli.search("tsunami") == [VOLCANO]
    assert cli.search("ash") == []                 # the old text is gone, not kept alongside
    assert cli.json("stats")["articles"] == 5


def test_a_deleted_file_is_removed_from_the_index(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    assert cli.search("volcano") == [VOLCANO]
    (news_dir / "volcano.txt").unlink()
    report = index_ok(cli, news_dir)
    assert (report["removed"], report["unchanged"], report["files_read"]) == (1, 4, 0)
    assert cli.search("volcano") == []
    assert cli("show", VOLCANO).exit_code == 1
    assert cli.json("stats")["articles"] == 4
    assert "news/volcano.txt" not in store.read_manifest(cli.index)


def test_indexing_another_folder_keeps_the_first(cli, news_dir, seeds_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    report = index_ok(cli, seeds_dir)
    assert (report["added"], report["removed"]) == (1, 0)
    assert cli.json("stats")["articles"] == 6


def test_rebuild_starts_afresh(cli, news_dir, seeds_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    index_ok(cli, seeds_dir)
    report = index_ok(cli, news_dir, "--rebuild")
    assert (report["added"], report["unchanged"], report["files_read"]) == (5, 0, 5)
    assert cli.search("hezbollah") == []            # only what this run named is left
    assert cli.json("stats")["articles"] == 5
    assert index_ok(cli, news_dir)["unchanged"] == 5  # and the manifest is fresh too


# --- bad input files ----------------------------------------------------------------------------------------

def test_empty_and_binary_files_are_skipped_with_reasons_and_the_rest_go_in(cli, news_dir) -> None:  # noqa: ANN001
    (news_dir / "empty.txt").write_bytes(b"")
    (news_dir / "binary.txt").write_bytes(BINARY)
    (news_dir / "photo.png").write_bytes(BINARY)   # not an article file: passed over, named
    result = cli("index", news_dir, "--no-progress")
    assert result.exit_code == 0
    assert "skipped: news/binary.txt: binary file (contains NUL bytes)\n" in result.stdout
    assert "skipped: news/empty.txt: empty file (no text)\n" in result.stdout
    assert ("5 added, 0 updated, 0 removed, 0 unchanged, 2 skipped, "
            "1 non-article file passed over (7 files read") in unwrapped(result.stdout)
    assert cli.json("stats")["articles"] == 5
    assert [line for line in result.stdout.splitlines() if "photo" in line] == [
        "passed over (not an article format): news/photo.png"]


def test_skipped_files_in_json(cli, news_dir) -> None:  # noqa: ANN001
    (news_dir / "empty.txt").write_bytes(b"")
    report = index_ok(cli, news_dir)
    assert report["skipped"] == [{"path": "news/empty.txt", "line": None,
                                  "reason": "empty file (no text)"}]
    assert report["added"] == 5


def test_a_skipped_file_is_tried_again_on_the_next_run(cli, news_dir) -> None:  # noqa: ANN001
    (news_dir / "late.txt").write_bytes(b"")
    assert len(index_ok(cli, news_dir)["skipped"]) == 1
    (news_dir / "late.txt").write_text("Late news\n\nThe late edition arrived on time.\n")
    report = index_ok(cli, news_dir)
    assert (report["added"], report["skipped"], report["unchanged"]) == (1, [], 5)
    assert cli.search("late edition") == [make_id("news/late.txt")]


def test_a_file_that_turns_bad_loses_its_old_article(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    (news_dir / "volcano.txt").write_bytes(b"")
    report = index_ok(cli, news_dir)
    assert report["removed"] == 1 and len(report["skipped"]) == 1
    assert cli.search("volcano") == []


def test_a_latin1_file_is_indexed_with_one_warning(cli, news_dir) -> None:  # noqa: ANN001
    (news_dir / "cafe.txt").write_bytes(LATIN1)
    result = cli("index", news_dir, "--no-progress")
    assert result.exit_code == 0
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: news/cafe.txt: not valid UTF-8 (byte 0xe9 at offset 3); "
                        "decoded as Windows-1252"]
    assert "6 added" in result.stdout and "0 skipped" in result.stdout
    (hit,) = cli.json("search", "coffee")["hits"]
    assert hit["title"] == "Caf\u00e9 prices rise"


def test_only_bad_input_exits_non_zero(cli, tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.txt").write_bytes(b"")
    result = cli("index", bad, tmp_path / "missing", "--no-progress")
    assert result.exit_code == 1
    assert "skipped: bad/empty.txt: empty file (no text)" in result.stdout
    assert f"skipped: {tmp_path / 'missing'}: no such file or folder" in result.stdout


# --- errors -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("query,message", [
    ("<volcano", "cannot parse query"),
    ("colour:red", "unknown field 'colour'"),
    ("date:2017-13", "bad month"),
    ("date:2017-02-30", "bad day"),
    ("date:yesterdayish", "as a date"),
    ("date:[2017-01-01 to whenever]", "as a date"),
])
def test_a_bad_query_is_one_line_on_stderr_and_exit_2(news_index, query, message) -> None:  # noqa: ANN001
    for extra in ((), ("--json",)):
        result = news_index("search", query, *extra)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.startswith("Error: ") and message in result.stderr
        assert result.stderr.count("\n") == 1
        assert "Traceback" not in result.output


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_a_bad_date_option_is_exit_2(news_index, option) -> None:  # noqa: ANN001
    result = news_index("search", "volcano", option, "last-tuesday")
    assert result.exit_code == 2
    assert "bad date 'last-tuesday'" in result.stderr and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_an_unknown_sort_is_a_usage_error(news_index) -> None:  # noqa: ANN001
    result = news_index("search", "volcano", "--sort", "random")
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize("command", [("search", "volcano"), ("show", "x"), ("stats",)])
def test_without_an_index_every_reader_says_run_archive_index_first(cli, command) -> None:  # noqa: ANN001
    result = cli(*command)
    assert result.exit_code != 0
    assert "run `archive index` first" in result.stderr
    assert "Traceback" not in result.output
    assert not cli.index.exists()  # looking never creates an index


def test_no_hits_is_exit_1(news_index) -> None:  # noqa: ANN001
    result = news_index("search", "xylophonist")
    assert result.exit_code == 1
    assert result.stdout == "No articles match xylophonist.\n"


def test_a_second_writer_gives_up_with_a_clear_message(cli, news_dir) -> None:  # noqa: ANN001
    index_ok(cli, news_dir)
    (news_dir / "volcano.txt").unlink()            # work the blocked run would have done
    holder = store.open_index(cli.index).writer()  # another run is writing
    try:
        for extra in ((), ("--rebuild",)):
            result = cli("index", news_dir, "--lock-timeout", "0.5", "--no-progress", *extra)
            assert result.exit_code != 0
            assert "locked" in result.stderr and "waited 0.5s" in result.stderr
            assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    finally:
        holder.cancel()
    assert cli.json("stats")["articles"] == 5      # intact, nothing half-done
    assert cli.search("volcano") == [VOLCANO]
    assert index_ok(cli, news_dir)["removed"] == 1  # and the next run does the work


# --- progress bar, help, templates ---------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [(), ("--no-progress",)], ids=["not-a-tty", "no-progress"])
def test_no_progress_bar_when_not_on_a_terminal_or_turned_off(cli, news_dir, flags) -> None:  # noqa: ANN001
    result = cli("index", news_dir, *flags)
    assert result.exit_code == 0
    assert "Indexing" not in result.output
    assert result.stderr == ""


def test_progress_flag_forces_the_bar(cli, news_dir) -> None:  # noqa: ANN001
    result = cli("index", news_dir, "--progress")
    assert result.exit_code == 0
    assert "Indexing" in result.stderr              # the bar goes to stderr, never stdout
    assert "Indexing" not in result.stdout


def test_search_help_says_and_is_the_default(cli) -> None:  # noqa: ANN001
    out = CliRunner().invoke(main, ["search", "--help"]).stdout
    assert "AND is the default" in out
    for form in ('"exact phrase"', "~5", "hezbol*", "date:2017-08", "date:>2017-01-01"):
        assert form in out


def test_builtin_templates_are_installed_with_the_package() -> None:
    folder = render.builtin_templates()
    assert {"results.txt", "article.txt", "stats.txt", "index_summary.txt"} <= \
        {p.name for p in (folder / "cli").iterdir()}
    assert (folder / "cli" / "results.txt").is_file()


def test_user_templates_override_builtin_ones(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "results.txt").write_text("{{ page.total }} hits\n")
    env = render.environment("cli", tmp_path)
    assert env.get_template("results.txt").render(page=type("P", (), {"total": 3})) == "3 hits\n"
    assert "stats.txt" in env.list_templates()   # the rest still come from the package


def test_index_json_report_shape(cli, news_dir) -> None:  # noqa: ANN001
    report = index_ok(cli, news_dir)
    assert {"added", "updated", "removed", "unchanged", "files_read", "passed_over", "skipped",
            "warnings", "index", "seconds"} <= set(report)
    assert report["index"] == str(cli.index) and report["seconds"] >= 0
    assert os.path.isfile(cli.index / store.MANIFEST)


# --- text output fits the terminal ------------------------------------------------------------------------

#: Like a BBC corpus file: the headline on the first line, then the story; no date, no source.
#: Long enough that a search for "turbines" gets a snippet of two long fragments.
BBC_LIKE = """\
Wind farm plan for the northern coast gets the go-ahead after a long inquiry into its effects

Plans for one of the largest offshore wind farms in the country have been approved by the
planning inspectorate after an inquiry that heard from fishermen, bird watchers and the owners
of holiday cottages along the coast, who said the turbines would spoil the view from the cliffs.

The developer said the farm would power half a million homes once all of its turbines were
turning, and that construction would bring several hundred jobs to the harbour towns nearby.

Opponents said they would consider a legal challenge. A spokeswoman for the coastal villages
said residents had never been against renewable energy, only against turbines so close to shore
that they would dominate every photograph of the bay for the next thirty years.
"""
BBC_ID = make_id("bbc/tech/001.txt")


@pytest.fixture
def bbc_cli(cli, tmp_path):  # noqa: ANN001, ANN201
    """The CLI over an index of one BBC-like article (no date, no source)."""
    folder = tmp_path / "bbc" / "tech"
    folder.mkdir(parents=True)
    (folder / "001.txt").write_text(BBC_LIKE, encoding="utf-8")
    index_ok(cli, tmp_path / "bbc")
    return cli


def run_text(cli, *args: str, columns: str | None) -> str:  # noqa: ANN001
    """A command's text output (piped, as under CliRunner) with COLUMNS set or unset."""
    result = CliRunner().invoke(main, [*args, "--index", str(cli.index)],
                                env={"COLUMNS": columns}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def hits_of(out: str) -> list[list[str]]:
    """The lines of each hit of ``archive search`` text output (the header block dropped)."""
    return [block.splitlines() for block in out.split("\n\n")[1:]]


def split_hit(lines: list[str]) -> tuple[str, str, list[str]]:
    """A hit's title (unwrapped), meta line and snippet lines; its meta line holds the id."""
    meta_at = next(n for n, line in enumerate(lines) if BBC_ID in line)
    return unwrapped("\n".join(lines[:meta_at])), lines[meta_at], lines[meta_at + 1:]


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_search_results_wrap_to_columns_under_a_hanging_indent(bbc_cli, columns) -> None:  # noqa: ANN001
    out = run_text(bbc_cli, "search", "turbines", columns=str(columns))
    assert all(len(line) <= columns for line in out.splitlines()), out
    (lines,) = hits_of(out)
    assert lines[0].startswith("1. Wind farm plan")
    assert all(line.startswith("   ") and line[3] != " " for line in lines[1:]), out
    title, _, snippet = split_hit(lines)
    assert title == "1. " + BBC_LIKE.splitlines()[0]
    assert 1 <= len(snippet) <= 3 and "[turbines]" in " ".join(snippet)
    shown, whole = unwrapped("\n".join(snippet)), bbc_cli.json("search", "turbines")["hits"][0]
    whole = unwrapped(whole["snippet"])
    if shown != whole:  # cut after a whole word, and says so
        assert shown.endswith(" \u2026") and whole.startswith(shown[:-2])
        assert whole[len(shown) - 2] == " "


def test_a_hit_without_date_or_source_says_only_what_it_knows(bbc_cli) -> None:  # noqa: ANN001
    out = run_text(bbc_cli, "search", "turbines", columns="80")
    assert "undated" not in out.lower() and "unknown" not in out
    (lines,) = hits_of(out)
    assert split_hit(lines)[1] == f"   {BBC_ID}"


def test_piped_output_without_columns_keeps_to_80(bbc_cli) -> None:  # noqa: ANN001
    out = run_text(bbc_cli, "search", "turbines", columns=None)
    ((_, _, *snippet),) = hits_of(out)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert max(len(line) for line in snippet) > 70   # the lines use the width, not less


def test_show_wraps_the_article_to_the_width_and_leaves_out_what_is_unknown(bbc_cli) -> None:  # noqa: ANN001
    out = run_text(bbc_cli, "show", BBC_ID, columns="50")
    assert all(len(line) <= 50 for line in out.splitlines()), out
    assert "Undated" not in out and "undated" not in out
    assert out.splitlines()[:4] == ["Wind farm plan for the northern coast gets the",
                                    "go-ahead after a long inquiry into its effects", "=" * 50,
                                    ""]  # no date, no source: no line for them
    assert "said the turbines would spoil the view from the cliffs." in unwrapped(out)


def test_the_index_summary_wraps_to_the_width_but_a_problem_stays_on_its_line(cli, news_dir) -> None:  # noqa: ANN001
    (news_dir / "empty.txt").write_bytes(b"")
    out = run_text(cli, "index", str(news_dir), "--no-progress", columns="40")
    summary = out.splitlines()[1:]
    assert out.splitlines()[0] == "skipped: news/empty.txt: empty file (no text)"  # 45 columns
    assert len(summary) > 1
    assert all(len(line) <= 40 or " " not in line for line in summary), out  # a path stays whole
    assert unwrapped(out).endswith(f"-> {cli.index}")


def test_a_highlighted_word_is_never_split_from_its_colour_codes() -> None:
    words = "the [turbines] would spoil, the [turbines]; view over [coast] road " * 6
    segments = [Segment(part.strip("[]"), match=part.startswith("["))
                for part in re.split(r"(\[\w+\])", words) if part]
    for width in range(20, 90):
        text = render.wrap_marked(segments, width, "   ", mark=render._ansi_mark)
        lines = text.splitlines()
        assert 1 <= len(lines) <= render.SNIPPET_LINES
        for line in lines:
            assert render.visible_width(line) <= width, (width, line)
            assert re.fullmatch(r"(?:[^\x1b]|\x1b\[1;33m[^\x1b ]+\x1b\[0m)*", line), line
        assert lines[-1].endswith(" \u2026")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal (POSIX)")
def test_on_a_terminal_highlights_are_bold_and_lines_fit_its_width(bbc_cli) -> None:  # noqa: ANN001
    import fcntl
    import struct
    import subprocess
    import sys
    import termios

    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = subprocess.run([sys.executable, "-m", "archive.cli", "search", "turbines", "--index",
                          str(bbc_cli.index)], stdout=follower, stderr=subprocess.PIPE, env=env,
                         timeout=60, check=False)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is closed once everything is read
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert run.returncode == 0, run.stderr
    lines = out.decode("utf-8").replace("\r\n", "\n").splitlines()
    assert any(render.BOLD_ON in line for line in lines)
    assert not any("[turbines]" in line for line in lines)
    for line in lines:
        assert render.visible_width(line) <= 50, line
        assert line.count(render.BOLD_ON) == line.count(render.BOLD_OFF), line

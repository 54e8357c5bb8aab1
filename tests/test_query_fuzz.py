"""Guarantee 4 for queries: any string either searches or is refused with a one-line error.

Through the library (``Archive.search`` returns a page or raises ``QueryError``) and through
the CLI (exit 0 or 1 with results, or 2 with one ``Error:`` line; never a traceback).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings, strategies as st

from archive.cli import main
from archive.query import MAX_QUERY_CHARS, QueryError
from archive.search import Archive, ResultsPage

#: pieces of the query language, glued at random: operators, fields, ranges, wildcards...
TOKENS = ["AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "(", ")", "[", "]", "{", "}", '"', "'",
          "*", "?", "~", "~2", "~9", "^", "^3", ":", "-", "+", "\\", "/", "TO", "to",
          "title:", "body:", "date:", "date:>", "date:<=", "place:", "source:", "topic:",
          "id:", "year:", "nosuchfield:", "date:[", "date:[2017-08-01 to 2017-08-31]",
          "date:2017-13", "date:0000", "date:99999999", "date:[0001 to 99999999999]",
          "year:[0 to 99999999999999999999]", "volcano", "fishing", "village", "symphny~",
          "sympho*", "*ony", "\x00", "\x07", "\x1b[31m", "\n", "\t", "\u202e", "\ud800",
          "\U0001f4f0", "é", "中文", ",", ";", "&&", "||", "!"]

soup = st.lists(st.sampled_from(TOKENS) | st.text(max_size=6), max_size=40).flatmap(
    lambda parts: st.sampled_from([" ".join(parts), "".join(parts)]))
anything = st.text(max_size=400) | soup | st.text(
    st.characters(codec=None, exclude_categories=()), max_size=60)

NASTY = ["", " ", "*", "**", "?", '"', '"unbalanced', "(((", ")))", "[", "]", "{", "}",
         "(" * 500, ")" * 500, "(" * 499 + "volcano" + ")" * 499, "NOT NOT NOT",
         "(a OR " * 300 + "b", "date:[0001 to 99999999]", "date:[ to ]", "date:>99999",
         "volcano~99999", "\x00\x01\x02", "a\x00b", "x" * MAX_QUERY_CHARS,
         "x" * (MAX_QUERY_CHARS + 1), "x" * 100_000, "volcano " * 12_500, "title:",
         "a:b:c", "^2", "volcano^99999999999999999", "*a*", "body:*", "id:*"]


def _one_line(message: str) -> bool:
    return "\n" not in message and "\r" not in message and 0 < len(message) < 500


@pytest.fixture(scope="module")
def archive(news_index) -> Archive:  # noqa: ANN001 - the conftest's CLI fixture
    with Archive(Path(news_index.index)) as opened:
        yield opened


@pytest.mark.parametrize("text", NASTY, ids=lambda t: repr(t[:20]) + f"/{len(t)}")
def test_nasty_queries(archive: Archive, text: str) -> None:
    _search_or_refuse(archive, text)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=anything)
@example(text="(" * 2000)
def test_any_string_searches_or_is_refused(archive: Archive, text: str) -> None:
    _search_or_refuse(archive, text)


def _search_or_refuse(archive: Archive, text: str) -> None:
    started = time.perf_counter()
    try:
        page = archive.search(text)
    except QueryError as exc:
        assert _one_line(str(exc)), repr(str(exc))
    else:
        assert isinstance(page, ResultsPage) and page.total >= 0
    assert time.perf_counter() - started < 10, f"query took too long: {text[:60]!r}"


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=anything, sort=st.sampled_from(["relevance", "newest", "oldest"]),
       as_json=st.booleans())
@example(text="x" * 100_000, sort="relevance", as_json=False)
@example(text="(" * 500 + "volcano" + ")" * 500, sort="newest", as_json=True)
@example(text='"unbalanced [range to', sort="oldest", as_json=False)
def test_cli_search_exit_codes(news_index, text: str, sort: str,  # noqa: ANN001
                               as_json: bool) -> None:
    args = ["search", "--index", str(news_index.index), "--sort", sort] \
        + (["--json"] if as_json else []) + ["--", text]
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback for {text[:60]!r}: {result.exception!r}"
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[:300])
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.output[:500]

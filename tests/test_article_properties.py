"""Any article a third party can write goes through every command, or is refused in one line.

Hypothesis writes a handful of article records, each field empty, missing, huge, full of
control characters, markup, template syntax, odd URLs, impossible or far-off dates or odd ids,
as a JSON Lines file and as Markdown files with front matter, then runs ``archive index``,
``search`` (a headline word and a hostile query), ``show``, ``export`` and ``site`` on them
through the CLI. Each command must succeed or stop with exit status 1 or 2 and at most one
line on stderr, never a traceback; every record with some text must be indexed and exported;
no markup from an article may reach a built page unescaped, and no control character a
terminal. Smaller tests pin down each bug these found.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings, strategies as st

from archive import render
from archive.search import Archive

from cli_checks import assert_clean, invoke

#: A record always present, so search/show/site have something to find: its headline word
#: is searched for, its script tag must never reach a page unescaped.
MARKER = {"id": "marker", "title": "Zanzibarquilt <script>alert(1)</script> report",
          "body": "The zanzibarquilt body <script>alert('body')</script> ends here."}
MARKER_WORD = "zanzibarquilt"

HUGE = "word " * 40_000  # 200 KB
#: stands for HUGE in generated records (expanded when written), so that a failing example
#: prints, and shrinks, as a short value
HUGE_MARK = "<200 KB of words>"
MARKUP = ["<script>alert(1)</script>", "</title><script>alert(2)</script>", "]]>", "<![CDATA[",
          "{{ 7*7 }}", "{% raw %}", "{# x", "<!--", "&amp;&lt;", "\"'><img src=x onerror=alert(3)>",
          "</textarea>", "${x}", "%s%n"]
CONTROL = "".join(chr(c) for c in range(0x20)) + "\x7f\x85\u2028\u2029\u202e\ufeff"
#: lone surrogates cannot be in a UTF-8 file, but ``json.dumps`` writes them as escapes
#: (``"\\ud800"``) that a JSON reader decodes into a string no UTF-8 codec accepts
SURROGATES = ["\ud800", "a\udfffb", "\udc80\ud800"]
URLS = ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "/relative/path",
        "../../etc/passwd", "//evil.example/x", "http://" + "a" * 5000 + ".com",
        "https://exämple.com/ünïcode?q=<b>", "mailto:x@example.com", " ", "http://"]
DATES = ["0001-01-01", "0001-01-01T00:00:00+05:00", "9999-12-31", "9999-12-31T23:59:59-12:00",
         "0000-00-00", "yesterday", "2017-02-30", "2017-13-01", "1969-12-31T23:59:59Z",
         "Tue, 31 Dec 9999 23:59:59 +1400", "12/31/1899", "1e400", "NaN", -62135596800,
         -99999999999, 253402300800, 10**30, -1.5, 0, True, [], {"year": 2017}]
IDS = ["", "../../../etc/passwd", "<script>", "a" * 3000, "ünï/cödé", "0", 0, -1, None,
       "id with spaces", "CON", ".", "..", "%2e%2e"]

#: what an article's text must never send to a terminal (it would move the cursor, clear the
#: screen, retitle the window...): C0 controls but tab and newline, DEL, C1
TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

text = st.text(max_size=40)
hostile_text = st.one_of(text, st.sampled_from(MARKUP), st.sampled_from(SURROGATES),
                         st.text(alphabet=CONTROL, max_size=12), st.just(HUGE_MARK),
                         st.lists(st.sampled_from(MARKUP) | text, max_size=4).map(" ".join))
MISSING = object()


def field(values: st.SearchStrategy) -> st.SearchStrategy:
    """A field's value, or the field missing, or present as null or empty."""
    return st.one_of(st.just(MISSING), st.just(None), st.just(""), values)


records = st.fixed_dictionaries({
    "id": field(st.sampled_from(IDS) | text),
    "title": field(hostile_text),
    "body": field(hostile_text),
    "date": field(st.sampled_from(DATES) | st.integers(-10**12, 10**12)
                  | st.datetimes().map(lambda d: d.isoformat())),
    "url": field(st.sampled_from(URLS) | text),
    "source": field(hostile_text),
    "author": field(hostile_text),
    "topics": field(st.lists(hostile_text, max_size=3)),
    "places": field(st.lists(st.sampled_from(MARKUP + ["Lebanon", "Paris"]), max_size=3)),
}).map(lambda r: {k: v for k, v in r.items() if v is not MISSING})


def expand(value: object) -> object:
    """The value as written to disk: HUGE_MARK (also inside lists) becomes HUGE."""
    if isinstance(value, list):
        return [expand(item) for item in value]
    return HUGE if value == HUGE_MARK else value


def has_text(record: dict) -> bool:
    return any(isinstance(record.get(k), str) and record[k].strip() for k in ("title", "body"))


def front_matter_file(record: dict, quoted: bool) -> str:
    """A Markdown article with the record's fields in its front matter: written as raw
    ``key: value`` lines the way a careless script would (often not valid YAML), or
    ``quoted`` as JSON strings, which YAML reads as double-quoted scalars, escapes and all
    (``"\\ud800"`` gives a lone surrogate, as in JSON)."""
    lines = ["---"]
    for key in ("title", "date", "url", "source", "author"):
        if key in record:
            value = record[key]
            written = value if isinstance(value, str) and not quoted else json.dumps(value)
            lines.append(f"{key}: {written}")
    lines.append("---")
    body = record.get("body")
    lines.append(body if isinstance(body, str) else "")
    return "\n".join(lines) + "\n"


def write_inputs(folder: Path, batch: list[dict]) -> int:
    """``records.jsonl`` (marker + batch) and two ``.md`` per record; the number of records
    (in the JSONL file) that have some text to index."""
    folder.mkdir(parents=True)
    with open(folder / "records.jsonl", "w", encoding="utf-8") as out:
        for record in [MARKER, *batch]:
            out.write(json.dumps(record) + "\n")  # ensure_ascii: surrogates become escapes
    for number, record in enumerate(batch):
        for quoted in (False, True):
            text = front_matter_file(record, quoted)
            name = f"story-{number}{'-quoted' * quoted}.md"
            (folder / name).write_bytes(text.encode("utf-8", "surrogatepass"))  # bytes on disk
    return 1 + sum(has_text(r) for r in batch)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(batch=st.lists(records, max_size=4), hostile_query=st.sampled_from(MARKUP) | text)
@example(batch=[{"title": "a\ud800b", "body": "lone \udfff surrogate", "date": "0001-01-01",
                 "author": "\udc80"}],
         hostile_query="<script>alert(1)</script>")
@example(batch=[{"title": "", "body": ""},
                {"id": None, "body": HUGE_MARK, "date": "9999-12-31", "url": "javascript:x"}],
         hostile_query="{{ 7*7 }}")
def test_hostile_articles_go_through_every_command(tmp_path_factory, batch: list[dict],
                                                   hostile_query: str) -> None:
    base = tmp_path_factory.mktemp("hostile")
    index, inputs, site = base / "index", base / "inputs", base / "site"
    batch = [{key: expand(value) for key, value in record.items()} for record in batch]
    with_text = write_inputs(inputs, batch)

    assert_clean(invoke("index", inputs, "--index", index, "--no-progress"))

    found = invoke("search", MARKER_WORD, "--index", index, "--json")
    assert_clean(found)
    hits = json.loads(found.stdout)["hits"]
    assert any(hit["title"] == MARKER["title"] for hit in hits)
    for query in (hostile_query, *[r["title"] for r in batch if isinstance(r.get("title"), str)]):
        # "--": a headline starting with "-" is a query, not an option
        assert_clean(invoke("search", "--index", index, "--", query), 1, 2)

    listed = invoke("search", MARKER_WORD, "--index", index)
    assert_clean(listed)
    assert not TERMINAL_CONTROLS.search(listed.output)

    exported = invoke("export", "--index", index, "-o", base / "all.jsonl")
    assert_clean(exported)
    # split at "\n" only: str.splitlines would also cut at U+2028, U+0085... inside a value
    exported_articles = [json.loads(line) for line in
                         (base / "all.jsonl").read_text("utf-8").split("\n") if line]
    stats = invoke("stats", "--index", index, "--json")
    assert_clean(stats)
    assert len(exported_articles) == json.loads(stats.stdout)["articles"]
    from_records = [a for a in exported_articles if a["path"] == "inputs/records.jsonl"]
    assert len(from_records) == with_text  # nothing with text is lost
    for article in exported_articles:
        shown = invoke("show", article["id"], "--index", index)
        assert_clean(shown)
        assert not TERMINAL_CONTROLS.search(shown.output)
    assert_clean(invoke("export", "--index", index, "--format", "csv", "-o", base / "all.csv"))

    built = invoke("site", "--index", index, "--out", site, "--no-progress")
    assert_clean(built)
    for page in list(site.rglob("*.html")) + list(site.rglob("*.xml")):
        assert "<script>alert" not in page.read_text("utf-8"), page.relative_to(site)


def test_an_index_with_no_articles_goes_through_every_command(tmp_path: Path) -> None:
    """A first run whose only record has no text leaves an empty index behind; the other
    commands must treat it as an archive of nothing (``site`` used to crash on it)."""
    records = tmp_path / "empty.jsonl"
    records.write_text('{"title": "", "body": "  "}\n', encoding="utf-8")
    index = tmp_path / "index"
    indexed = invoke("index", records, "--index", index, "--no-progress")
    assert_clean(indexed, 1)
    assert "neither title nor body" in indexed.output
    assert_clean(invoke("search", "anything", "--index", index), 1)
    assert json.loads(invoke("stats", "--index", index, "--json").stdout)["articles"] == 0
    assert_clean(invoke("export", "--index", index, "-o", tmp_path / "all.jsonl"))
    assert_clean(invoke("check", "--index", index))
    built = invoke("site", "--index", index, "--out", tmp_path / "site", "--no-progress")
    assert_clean(built)
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "search" / "index.html").is_file()


def test_pasted_markup_is_searched_or_refused_in_one_line(tmp_path: Path) -> None:
    """Markup typed as a query: searched, or, where it opens with a range symbol Whoosh's
    parser cannot place (``<script>``), refused with "cannot parse query" on one line, as
    tests/test_cli.py requires of ``<volcano``."""
    records = tmp_path / "marker.jsonl"
    records.write_text(json.dumps(MARKER) + "\n", encoding="utf-8")
    index = tmp_path / "index"
    assert_clean(invoke("index", records, "--index", index, "--no-progress"))
    for query in MARKUP:
        assert_clean(invoke("search", query, "--index", index), 1, 2)
    refused = invoke("search", "<script>alert(1)</script>", "--index", index)
    assert_clean(refused, 2)
    assert refused.exit_code == 2 and "cannot parse query" in refused.stderr


def test_the_first_and_last_representable_days_bound_a_search(tmp_path: Path) -> None:
    """``--until 9999-12-31`` used to overflow (its end was computed as the next day's start
    minus a tick) and ``--until 9999`` / ``9999-12`` were refused as bad dates."""
    records = tmp_path / "ends.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in (
        {"title": "First day story", "body": "Ends of time.", "date": "0001-01-01"},
        {"title": "Last day story", "body": "Ends of time.", "date": "9999-12-31T12:00:00"},
    )), encoding="utf-8")
    index = tmp_path / "index"
    assert_clean(invoke("index", records, "--index", index, "--no-progress"))

    def titles(*options: str) -> list[str]:
        result = invoke("search", "ends", *options, "--sort", "oldest", "--index", index,
                        "--json")
        assert_clean(result, 1)
        return [hit["title"] for hit in json.loads(result.stdout)["hits"]]

    both = ["First day story", "Last day story"]
    for until in ("9999", "9999-12", "9999-12-31"):
        assert titles("--until", until) == both, until
        assert titles("--since", until) == ["Last day story"], until
    assert titles("--until", "0001") == ["First day story"]
    assert titles("--since", "0001-01-01", "--until", "9999-12-30") == ["First day story"]


def test_pages_of_early_dates_are_where_the_search_client_looks(tmp_path: Path) -> None:
    """The search client builds a hit's link from its ISO date (``0001/01/01/...``); the
    page used to be written under ``1/01/01/`` (strftime does not pad the year), a 404."""
    records = tmp_path / "early.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in (
        {"title": "Year one story", "body": "Early days.", "date": "0001-01-01"},
        {"title": "Year 999 story", "body": "Early days.", "date": "0999-06-15"},
    )), encoding="utf-8")
    index, site = tmp_path / "index", tmp_path / "site"
    assert_clean(invoke("index", records, "--index", index, "--no-progress"))
    assert_clean(invoke("site", "--index", index, "--out", site, "--no-progress"))
    pages = sorted(p.relative_to(site).as_posix() for p in site.glob("0*/*/*/*/index.html"))
    assert [p[:11] for p in pages] == ["0001/01/01/", "0999/06/15/"]
    home = (site / "index.html").read_text("utf-8")
    assert all(page.removesuffix("index.html") in home for page in pages)


def test_control_characters_in_an_article_never_reach_the_terminal(tmp_path: Path) -> None:
    """``show``, ``search`` and ``index`` (naming a file) used to print escape sequences as
    they were: an OSC sequence retitled the window, ``ESC[2J`` cleared the screen (click
    strips only CSI sequences, and only when the output is not a terminal)."""
    hostile = "Hostile \x1b]0;pwned\x07 \x1b[2J \x9b31m \r\x00\x08\x7f headline"
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "terminal.jsonl").write_text(json.dumps({
        "title": hostile, "body": "Hostile body \x1b[31m red",
        "source": "\x1b]8;;http://x\x07link", "author": "a\rb"}) + "\n", encoding="utf-8")
    (inputs / "named \x1b]0;pwned\x07.json").write_text("not JSON", encoding="utf-8")
    index = tmp_path / "index"
    indexed = invoke("index", inputs, "--index", index, "--no-progress")
    assert_clean(indexed)
    assert "pwned" in indexed.output and not TERMINAL_CONTROLS.search(indexed.output)
    found = invoke("search", "hostile", "--index", index)
    assert_clean(found)
    assert not TERMINAL_CONTROLS.search(found.output)
    hit = json.loads(invoke("search", "hostile", "--index", index, "--json").stdout)["hits"][0]
    shown = invoke("show", hit["id"], "--index", index)
    assert_clean(shown)
    assert "headline" in shown.output and not TERMINAL_CONTROLS.search(shown.output)
    # on a terminal the matches are bold: that styling stays, the article's own does not
    with Archive(index) as archive:
        page = archive.search("hostile body")
        printed = render.render(render.environment("cli", color=True), "results.txt",
                                page=page, width=80)
    assert render.BOLD_ON in printed
    leftover = printed.replace(render.BOLD_ON, "").replace(render.BOLD_OFF, "")
    assert not TERMINAL_CONTROLS.search(leftover)


def test_a_feed_with_a_surrogate_character_reference_is_read(tmp_path: Path) -> None:
    """``&#55296;`` in a feed made feedparser fail (UnicodeEncodeError) and cost the whole
    file; it now costs the one character."""
    feed = tmp_path / "news.rss"
    feed.write_text("""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Wire</title>
<item><title>Harbour &#55296; reopens</title><link>https://example.com/a</link>
<description>The harbour &#xDFFF; reopened on Monday.</description></item>
<item><title>Second story</title><link>https://example.com/b</link>
<description>Nothing odd here.</description></item>
</channel></rss>
""", encoding="utf-8")
    index = tmp_path / "index"
    indexed = invoke("index", feed, "--index", index, "--no-progress", "--json")
    assert_clean(indexed)
    report = json.loads(indexed.stdout)
    assert report["added"] == 2 and report["skipped"] == []
    assert any("surrogate" in warning["reason"] for warning in report["warnings"])
    page = json.loads(invoke("search", "harbour", "--index", index, "--json").stdout)
    assert [hit["title"] for hit in page["hits"]] == ["Harbour \ufffd reopens"]

"""The static-search bench runs end to end on a tiny made-up corpus (timings are not checked).

Pagefind and the browser parts run where the Pagefind binary, Playwright and Chromium are
present, and are switched off (not failed) where they are not.
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from archive import store
from archive.article import Article
from bench import static_search_bench as ssb

WORDS = ("oil price market bank rate growth export wheat crop minister talks election vote "
         "party strike union court ruling trade deficit profit shares").split()


def _index(folder: Path, count: int = 40) -> Path:
    rng = random.Random(11)
    articles = []
    for i in range(count):
        date = datetime(2017, 1, 1) + timedelta(days=rng.randrange(700))
        articles.append(Article(
            id=f"tiny-{i:03d}", title=" ".join(rng.choices(WORDS, k=5)).title(),
            body="\n\n".join(" ".join(rng.choices(WORDS, k=25)) for _ in range(2)),
            path=f"tiny/{i}.txt", source=rng.choice(("Reuters", "BBC")), date=date,
            date_source="explicit", places=(rng.choice(("Japan", "Brazil")),), topics=()))
    ix = store.create_index(folder)
    writer = store.open_writer(ix, folder)
    store.add_articles(writer, articles)
    writer.commit()
    return folder


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_bench_runs_on_a_tiny_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = _index(tmp_path / "index")
    out = tmp_path / "result.json"
    args = [f"tiny={index}", "--queries", "4", "--browser-queries", "1",
            "--keep", str(tmp_path / "work"), "--json", str(out), "--pagefind-timeout", "120"]
    have_pagefind = ssb.pagefind_binary() is not None
    if not have_pagefind:
        args.append("--no-pagefind")
    if not ssb.browser_available():
        args.append("--no-browser")
    results = ssb.main(args)

    (row,) = results
    assert row["articles"] == 40
    archive = row["archive"]
    assert archive["build"]["returncode"] == 0 and archive["build"]["peak_rss_mb"] > 0
    assert archive["files"] > 40 and archive["overlap10"] is not None
    assert archive["node"]["first_kb"][0] > archive["node"]["client_kb"]
    pages = list((tmp_path / "work" / "tiny" / "site").rglob("index.html"))
    assert len(pages) == 41   # the articles and the search page
    if have_pagefind:
        assert row["pagefind"]["finished"] and row["pagefind"]["files"] > 0
        page = next(p for p in (tmp_path / "work" / "tiny" / "pagefind-site").rglob("index.html"))
        assert ssb.PAGEFIND_MARKER in page.read_text("utf-8")
    if ssb.browser_available():
        assert archive["browser"]["first_kb"][0] > 0
        if have_pagefind:
            assert row["pagefind"]["browser"]["first_kb"][0] > 0
    saved = json.loads(out.read_text())
    assert saved["corpora"][0]["corpus"] == "tiny" and "| tiny (40) |" in saved["table"]
    assert "archive bundle" in capsys.readouterr().out


def test_pagefind_query_drops_operators_and_keeps_phrases() -> None:
    assert ssb.pagefind_query('oil OR wheat') == "oil wheat"
    assert ssb.pagefind_query('"prime minister" NOT japan') == '"prime minister" japan'


def test_sample_spreads_over_the_query_list() -> None:
    assert ssb.sample(list("abcdefghij"), 5) == list("acegi")
    assert ssb.sample(list("abc"), 5) == list("abc")

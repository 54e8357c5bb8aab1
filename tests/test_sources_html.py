"""The HTML reader: main text without page furniture, and the page's own metadata."""

from __future__ import annotations

import gzip
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.html import article_from_html, read
from fuzzing import EDITS, mutate

PAGE = """<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<title>Harbour Bridge Reopens | The Coastal Herald</title>
<meta property="og:title" content="Harbour bridge reopens after two years of repairs">
<meta property="og:site_name" content="The Coastal Herald">
<meta property="article:published_time" content="2023-05-14T09:30:00+02:00">
<meta name="author" content="Maria Lopez">
<meta property="article:tag" content="Transport">
<meta property="article:tag" content="Local Government">
<link rel="canonical" href="https://herald.example.com/news/2023/05/harbour-bridge-reopens">
</head>
<body>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
 Accept all cookies.</div>
<header><nav class="main-nav"><ul>
<li><a href="/">Home</a></li><li><a href="/news">News</a></li>
<li><a href="/sport">Sport</a></li><li><a href="/weather">Weather</a></li>
</ul></nav></header>
<main>
<article>
<h1>Harbour bridge reopens after two years of repairs</h1>
<p class="byline">By Maria Lopez</p>
<p>The harbour bridge reopened to traffic on Sunday morning after a two-year repair programme
that cost the city more than forty million euros, officials said.</p>
<figure><img src="/img/bridge.jpg" alt="bridge">
<figcaption>Cars cross the reopened harbour bridge on Sunday.</figcaption></figure>
<p>Engineers replaced the corroded steel cables and resurfaced the deck, which had been closed
since a routine inspection found cracks in two of the main supports in the spring of 2021.</p>
<p>"This is a great day for everyone who lives on the eastern side of the bay," the mayor told
reporters at the opening ceremony, adding that bus services would resume within a week.</p>
<p>Commuters had faced detours of up to forty minutes while the bridge was closed, and local
businesses said their trade had fallen sharply during the works.</p>
</article>
<aside class="related"><h2>Related stories</h2><ul>
<li><a href="/a">Council approves new ferry timetable</a></li>
<li><a href="/b">Port traffic hits record high</a></li>
</ul></aside>
</main>
<footer class="site-footer"><p>Copyright 2023 The Coastal Herald. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer>
</body>
</html>
"""

#: no canonical link, no date, no site name: the caller's url and fallback date apply
BARE_PAGE = """<html><head><title>Storm closes schools across the north</title></head>
<body><div class="story">
<p>Schools across the north were closed on Tuesday as a storm brought winds of more than
a hundred kilometres an hour and heavy snow to the region, the education office said.</p>
<p>Parents were told to keep children at home until the roads had been cleared and power
restored to the affected towns, which could take until the end of the week.</p>
</div></body></html>
"""

BOILERPLATE = ("cookies", "Home", "Weather", "Related stories", "Council approves",
               "Port traffic", "Copyright", "Privacy policy", "By Maria Lopez")


def source_for(tmp_path: Path, name: str, data: bytes | str) -> SourceFile:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return SourceFile(path, f"site/{name}")


def test_page_fields(tmp_path: Path) -> None:
    source = source_for(tmp_path, "bridge.html", PAGE)
    [article] = read(source)
    assert article.id == source.article_id()
    assert article.path == "site/bridge.html"
    assert article.title == "Harbour bridge reopens after two years of repairs"
    assert article.source == "The Coastal Herald"
    assert article.author == "Maria Lopez"
    assert article.url == "https://herald.example.com/news/2023/05/harbour-bridge-reopens"
    assert article.date == datetime(2023, 5, 14, 7, 30)  # +02:00 normalised to UTC
    assert article.date_source == "explicit"
    assert article.topics == ("transport", "local-government")
    assert article.language == "en"
    assert article.captions == ("Cars cross the reopened harbour bridge on Sunday.",)
    assert source.warnings == []


def test_body_keeps_paragraphs_and_drops_boilerplate(tmp_path: Path) -> None:
    [article] = read(source_for(tmp_path, "bridge.html", PAGE))
    paragraphs = article.body.split("\n\n")
    assert len(paragraphs) == 4
    assert paragraphs[0].startswith("The harbour bridge reopened to traffic on Sunday")
    assert "programme that cost" in paragraphs[0]  # hard-wrapped source line joined
    assert paragraphs[-1].endswith("during the works.")
    for furniture in BOILERPLATE:
        assert furniture not in article.body
    assert not article.body.startswith(article.title)


def test_dates_before_the_web_are_kept(tmp_path: Path) -> None:
    page = PAGE.replace("2023-05-14T09:30:00+02:00", "1987-03-02T09:30:00+00:00")
    [article] = read(source_for(tmp_path, "old.html", page))
    assert article.date == datetime(1987, 3, 2, 9, 30)


def test_caller_url_and_fallback_date_fill_gaps(tmp_path: Path) -> None:
    source = source_for(tmp_path, "storm.html", BARE_PAGE)
    captured = datetime(2024, 1, 9, 6, 15)
    article = article_from_html(BARE_PAGE, source, url="https://news.example.org/storm",
                                fallback_date=captured, record=7)
    assert article is not None
    assert article.url == "https://news.example.org/storm"
    assert article.date == captured
    assert article.date_source == "explicit"
    assert article.id == source.article_id(7)
    assert article.title == "Storm closes schools across the north"


def test_no_date_is_unknown(tmp_path: Path) -> None:
    [article] = read(source_for(tmp_path, "storm.html", BARE_PAGE))
    assert article.date is None
    assert article.date_source == "unknown"
    assert article.url == ""


def test_json_ld_metadata(tmp_path: Path) -> None:
    page = BARE_PAGE.replace("</head>", """<script type="application/ld+json">
    {"@context": "https://schema.org", "@type": "NewsArticle",
     "headline": "Storm shuts northern schools", "datePublished": "2024-01-09T05:00:00Z",
     "author": {"@type": "Person", "name": "Ann Writer"},
     "publisher": {"@type": "Organization", "name": "Northern Daily"},
     "articleSection": "Weather"}</script></head>""")
    [article] = read(source_for(tmp_path, "storm.html", page))
    assert article.title == "Storm shuts northern schools"
    assert article.author == "Ann Writer"
    assert article.source == "Northern Daily"
    assert article.date == datetime(2024, 1, 9, 5, 0)
    assert article.topics == ("weather",)


def test_gzipped_and_legacy_encoded_pages(tmp_path: Path) -> None:
    page = BARE_PAGE.replace("<head>", '<head><meta charset="windows-1252">') \
        .replace("the region", "the r\u00e9gion")
    [article] = read(source_for(tmp_path, "storm.html.gz", gzip.compress(page.encode("cp1252"))))
    assert "the r\u00e9gion" in article.body


def test_short_article_is_kept_but_menus_alone_are_not(tmp_path: Path) -> None:
    page = """<html><body><nav><a href="/">Home</a> <a href="/n">News</a></nav>
    <article><h1>Markets close higher</h1><p>Shares closed higher on Friday as investors
    welcomed the latest inflation figures.</p></article><footer>Copyright 2024</footer>
    </body></html>"""
    [article] = read(source_for(tmp_path, "brief.html", page))
    assert article.title == "Markets close higher"
    assert article.body == ("Shares closed higher on Friday as investors welcomed the latest "
                            "inflation figures.")


@pytest.mark.parametrize("page", [
    "",
    "<html><body><nav><a href='/'>Home</a><a href='/news'>News</a></nav></body></html>",
    "\x00\x01\x02 binary junk",
])
def test_page_without_text_is_an_ingest_error(tmp_path: Path, page: str) -> None:
    with pytest.raises(IngestError, match="no article text found"):
        list(read(source_for(tmp_path, "empty.html", page)))


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(EDITS.map(lambda edits: mutate(PAGE.encode(), edits)),
                      st.binary(max_size=512)))
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, data: bytes) -> None:
    source = source_for(tmp_path, "fuzz.html", data)
    try:
        articles = list(read(source))
    except IngestError:
        return
    assert all(isinstance(a, Article) and a.body and a.path == source.relative
               for a in articles)


@pytest.mark.parametrize("title, page_heading, site, url, expected", [
    ("Five Social Media Lessons for Business - BusinessWeek", "", "BusinessWeek",
     "https://www.businessweek.com/x", "Five Social Media Lessons for Business"),
    ("TechCrunch | 2005 Zuckerberg Didn\u2019t Want To Take Over The World", "", "",
     "https://techcrunch.com/2010/01/x", "2005 Zuckerberg Didn\u2019t Want To Take Over The World"),
    ("2012 map takes unfamiliar shape - Maggie Haberman and Shira Toeplitz",
     "2012 map takes unfamiliar shape", "", "", "2012 map takes unfamiliar shape"),
    ("How to Save Money - Your Money Today - MSN Lifestyle", "", "MSN", "",
     "How to Save Money"),
    ("Hezbollah - Islamic State deal holds", "", "", "", "Hezbollah - Islamic State deal holds"),
])
def test_a_page_title_loses_the_sites_name(title: str, page_heading: str, site: str, url: str,
                                           expected: str) -> None:
    from lxml.html import fromstring

    from archive.sources.html import headline
    tree = fromstring(f"<html><body><h1>{page_heading}</h1><p>x</p></body></html>")
    assert headline(title, tree, site, url) == expected

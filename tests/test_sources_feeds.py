"""The feed reader: RSS 2.0, RSS 1.0 (RDF) and Atom entries as articles."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive.article import Article
from archive.sources import IngestError, SourceFile
from archive.sources.feeds import html_to_text, read
from fuzzing import EDITS, mutate

RSS2 = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Coastal Herald &amp; Gazette</title>
  <link>https://herald.example.com/</link>
  <language>en-gb</language>
  <item>
    <title>Harbour bridge reopens</title>
    <link>https://herald.example.com/news/bridge</link>
    <guid isPermaLink="false">herald-2023-0514-bridge</guid>
    <pubDate>Sun, 14 May 2023 09:30:00 +0200</pubDate>
    <dc:creator>Maria Lopez</dc:creator>
    <category>Transport</category>
    <category>Local Government</category>
    <description>Short teaser that must lose to the full content.</description>
    <content:encoded><![CDATA[<p>The harbour bridge reopened on Sunday &ndash; after
      two years.</p><p>Engineers replaced the <b>cables</b>.<br/>Traffic is flowing.</p>
      <script>track()</script>]]></content:encoded>
  </item>
  <item>
    <title>Ferry timetable approved</title>
    <link>https://herald.example.com/news/ferry</link>
    <pubDate>Mon, 15 May 2023 18:00:00 GMT</pubDate>
    <description>&lt;p&gt;The council approved the &lt;em&gt;new&lt;/em&gt; timetable.&lt;/p&gt;
      &lt;p&gt;Fares rise by 5%.&lt;/p&gt;</description>
  </item>
</channel>
</rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Northern Daily</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2024-01-09T07:00:00Z</updated>
  <entry>
    <title type="html">Storm closes &lt;i&gt;schools&lt;/i&gt;</title>
    <link rel="alternate" href="https://daily.example.org/storm"/>
    <id>tag:daily.example.org,2024:storm</id>
    <published>2024-01-09T06:15:00+01:00</published>
    <updated>2024-01-09T08:00:00Z</updated>
    <author><name>Ann Writer</name><email>ann@example.org</email></author>
    <category term="Weather"/>
    <category term="Education" label="Schools &amp; colleges"/>
    <summary>Teaser text.</summary>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Schools were
      closed on Tuesday.</p><p>Roads are being cleared.</p></div></content>
  </entry>
  <entry>
    <title>Power restored</title>
    <link href="https://daily.example.org/power"/>
    <id>tag:daily.example.org,2024:power</id>
    <updated>2024-01-10T12:00:00Z</updated>
    <summary type="text">Power is back in all towns &lt;mostly&gt;.</summary>
  </entry>
</feed>
"""

RDF = """<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://wire.example.net/">
    <title>Example Wire</title>
    <link>https://wire.example.net/</link>
    <description>Wire stories</description>
    <items><rdf:Seq><rdf:li rdf:resource="https://wire.example.net/1"/></rdf:Seq></items>
  </channel>
  <item rdf:about="https://wire.example.net/1">
    <title>Grain prices fall</title>
    <link>https://wire.example.net/1</link>
    <description>Grain prices fell for a third week.</description>
    <dc:date>2022-11-03T14:00:00Z</dc:date>
    <dc:creator>Wire Staff</dc:creator>
    <dc:subject>Commodities</dc:subject>
  </item>
</rdf:RDF>
"""


def source_for(tmp_path: Path, name: str, data: bytes | str) -> SourceFile:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return SourceFile(path, f"feeds/{name}")


def test_rss2_entries(tmp_path: Path) -> None:
    source = source_for(tmp_path, "herald.rss", RSS2)
    first, second = read(source)
    assert first.id == source.article_id(1) and second.id == source.article_id(2)
    assert first.path == second.path == "feeds/herald.rss"
    assert first.title == "Harbour bridge reopens"
    assert first.body == ("The harbour bridge reopened on Sunday \u2013 after two years.\n\n"
                          "Engineers replaced the cables.\nTraffic is flowing.")
    assert first.source == "Coastal Herald & Gazette"
    assert first.url == "https://herald.example.com/news/bridge"
    assert first.date == datetime(2023, 5, 14, 7, 30)
    assert first.date_source == "explicit"
    assert first.author == "Maria Lopez"
    assert first.topics == ("transport", "local-government")
    assert first.external_id == "herald-2023-0514-bridge"
    assert first.language == "en"
    assert second.body == "The council approved the new timetable.\n\nFares rise by 5%."
    assert second.date == datetime(2023, 5, 15, 18, 0)
    assert second.topics == () and second.author == ""
    assert source.warnings == []


def test_atom_entries(tmp_path: Path) -> None:
    source = source_for(tmp_path, "daily.atom", ATOM)
    storm, power = read(source)
    assert storm.title == "Storm closes schools"
    assert storm.body == "Schools were closed on Tuesday.\n\nRoads are being cleared."
    assert storm.source == "Northern Daily"
    assert storm.url == "https://daily.example.org/storm"
    assert storm.date == datetime(2024, 1, 9, 5, 15)  # published wins over updated
    assert storm.author == "Ann Writer"
    assert storm.topics == ("weather", "education")
    assert storm.external_id == "tag:daily.example.org,2024:storm"
    assert power.body == "Power is back in all towns <mostly>."  # plain text kept as text
    assert power.date == datetime(2024, 1, 10, 12, 0)
    assert power.id == source.article_id(2)


def test_rdf_entries(tmp_path: Path) -> None:
    [item] = read(source_for(tmp_path, "wire.rdf", RDF))
    assert item.title == "Grain prices fall"
    assert item.body == "Grain prices fell for a third week."
    assert item.source == "Example Wire"
    assert item.url == "https://wire.example.net/1"
    assert item.date == datetime(2022, 11, 3, 14, 0)
    assert item.author == "Wire Staff"
    assert item.topics == ("commodities",)


def test_broken_xml_keeps_entries_and_warns(tmp_path: Path) -> None:
    broken = RSS2.replace("<title>Ferry timetable approved</title>",
                          "<title>Ferry &bogus; timetable</title>")
    source = source_for(tmp_path, "broken.rss", broken)
    articles = list(read(source))
    assert [a.title for a in articles][0] == "Harbour bridge reopens"
    assert len(articles) == 2
    [warning] = source.warnings
    assert "not well-formed" in warning.reason and "undefined entity" in warning.reason


def test_truncated_feed_keeps_complete_entries(tmp_path: Path) -> None:
    source = source_for(tmp_path, "cut.rss", RSS2[:RSS2.index("<pubDate>Mon")])
    articles = list(read(source))
    assert articles[0].title == "Harbour bridge reopens"
    assert source.warnings and "not well-formed" in source.warnings[0].reason


def test_entry_without_title_or_text_is_skipped_with_warning(tmp_path: Path) -> None:
    feed = RSS2.replace("<channel>", "<channel><item><link>https://x.example/</link></item>", 1)
    source = source_for(tmp_path, "gap.rss", feed)
    articles = list(read(source))
    assert [a.id for a in articles] == [source.article_id(2), source.article_id(3)]
    [warning] = source.warnings
    assert warning.line == 1 and "neither title nor text" in warning.reason


@pytest.mark.parametrize("data", [
    b"",
    b"plain words, not a feed at all",
    b"<?xml version='1.0'?><rss version='2.0'><channel><title>Empty</title></channel></rss>",
    b"\x00\x9f\x92\x96 binary",
])
def test_unusable_feed_is_an_ingest_error(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(IngestError):
        list(read(source_for(tmp_path, "bad.rss", data)))


def test_file_content_is_never_opened_as_a_path(tmp_path: Path) -> None:
    """feedparser opens a str/bytes argument as a file name or URL; the reader must not."""
    target = source_for(tmp_path, "real.rss", RSS2)
    with pytest.raises(IngestError):
        list(read(source_for(tmp_path, "pointer.rss", str(target.path))))


def test_html_to_text() -> None:
    assert html_to_text("<div><h2>Head</h2>Lead &amp; <a href='#'>link</a></div>") \
        == "Head\n\nLead & link"
    assert html_to_text("a < b and c") == "a < b and c"
    assert html_to_text("<ul><li>one</li><li>two</li></ul>") == "one\n\ntwo"
    assert html_to_text("") == ""


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.sampled_from([RSS2, ATOM, RDF]).flatmap(
    lambda feed: EDITS.map(lambda edits: mutate(feed.encode(), edits))),
    st.binary(max_size=512)))
def test_fuzz_only_articles_or_ingest_error(tmp_path: Path, data: bytes) -> None:
    source = source_for(tmp_path, "fuzz.rss", data)
    try:
        articles = list(read(source))
    except IngestError:
        return
    assert all(isinstance(a, Article) and a.path == source.relative for a in articles)

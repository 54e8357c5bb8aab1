"""The plain-text reader: the seed article, headline layouts, wire copy, encodings, bad files."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from archive.article import Article, make_id
from archive.enrich import enrich
from archive.enrich.dates import dates_in
from archive.sources import IngestError, SourceFile, format_of
from archive.article import TITLE_LENGTH
from archive.sources.text import read
from cli_checks import invoke

SEED_FILE = "000_ded2ed7496c25a53.txt"


def read_one(tmp_path: Path, name: str, data: bytes | str) -> tuple[Article, SourceFile]:
    """Write ``data`` to ``tmp_path/news/name`` and read it as the indexer would."""
    path = tmp_path / "news" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    source = SourceFile(path, f"news/{name}")
    articles = [enrich(a) for a in read(source)]
    assert len(articles) == 1
    return articles[0], source


def read_seed(seeds_dir: Path) -> Article:
    source = SourceFile(seeds_dir / SEED_FILE, f"seeds/{SEED_FILE}")
    assert format_of(source) == "text"
    (article,) = [enrich(a) for a in read(source)]
    assert source.warnings == []
    return article


# --- the seed -----------------------------------------------------------------------------------

def test_seed_title_is_cut_from_its_lead_at_a_word_boundary(seeds_dir: Path) -> None:
    article = read_seed(seeds_dir)
    lead = ("The Syrian army and Hezbollah have prepared to transport Islamic State fighters "
            "from their enclave on the border with Lebanon to eastern Syria")
    assert article.title == ("The Syrian army and Hezbollah have prepared to transport Islamic "
                             "State fighters from their\u2026")
    kept = article.title.removesuffix("\u2026")
    assert article.body.startswith(kept + " ")      # cut between two words of the lead
    assert lead.startswith(kept)
    assert len(kept) <= TITLE_LENGTH


def test_seed_source_is_reuters_and_the_signoff_leaves_the_body(seeds_dir: Path) -> None:
    article = read_seed(seeds_dir)
    assert article.source == "Reuters"
    assert article.body.endswith("after other militant groups accepted similar evacuation deals.")
    assert not article.body.rstrip().endswith("Reuters")


def test_seed_photo_captions_go_to_captions_not_the_body(seeds_dir: Path) -> None:
    article = read_seed(seeds_dir)
    assert article.captions == (
        "A relative of Lebanese soldiers, who were captured by Islamist militants reacts in "
        "Beirut, Lebanon August 27, 2017. (Photo: Reuters)",
        "Lebanese army soldiers are seen flashing victory signs in the town of Ras Baalbek, "
        "Lebanon August 21, 2017. (Photo: Reuters)",
    )
    assert "(Photo:" not in article.body
    assert "victory signs" not in article.body
    assert "Ikhbariya news channel" in article.body  # the paragraphs around them stay


def test_seed_date_is_inferred_from_the_latest_full_date_in_the_text(seeds_dir: Path) -> None:
    article = read_seed(seeds_dir)
    assert article.date == datetime(2017, 8, 27)
    assert article.date_source == "inferred"


def test_seed_id_is_stable_and_safe_in_urls_and_file_names(seeds_dir: Path) -> None:
    first, second = read_seed(seeds_dir), read_seed(seeds_dir)
    assert first.id == second.id == make_id(f"seeds/{SEED_FILE}")
    assert re.fullmatch(r"[a-z0-9-]+", first.id)
    assert first.content_hash == second.content_hash
    assert first.word_count == len(first.body.split()) > 300


# --- layouts -------------------------------------------------------------------------------------

def test_headline_on_the_first_line_becomes_the_title(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "bridge.txt", (
        "Harbour bridge reopens after two years\n"
        "\n"
        "The harbour bridge reopened to traffic on Sunday morning, officials said.\n"
        "\n"
        "Commuters had faced long detours.\n"))
    assert article.title == "Harbour bridge reopens after two years"
    assert article.body == ("The harbour bridge reopened to traffic on Sunday morning, officials "
                            "said.\n\nCommuters had faced long detours.")


def test_a_question_on_the_first_line_is_a_headline(tmp_path: Path) -> None:
    """As the BBC's "Could Yukos be a blessing in disguise?": a lead copied into the title
    would not be searched as one (``archive.article.title_to_index``)."""
    article, _ = read_one(tmp_path, "yukos.txt", (
        "Could Yukos be a blessing in disguise?\n"
        "\n"
        "Other things being equal, jailed entrepreneurs ought to be bad for business.\n"))
    assert article.title == "Could Yukos be a blessing in disguise?"
    assert article.body.startswith("Other things being equal")


def test_without_a_headline_the_title_is_the_lead_sentence(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "short.txt", (
        "The council approved the budget on Tuesday. It takes effect in April.\n"
        "\n"
        "Opposition members voted against it.\n"))
    assert article.title == "The council approved the budget on Tuesday"
    assert article.body.startswith("The council approved the budget on Tuesday. It takes")


def test_a_long_lead_is_cut_at_a_word_boundary_with_an_ellipsis(tmp_path: Path) -> None:
    lead = ("Thousands of commuters were stranded across the northern region on Wednesday after "
            "an overnight storm brought down power lines and flooded several railway tunnels.")
    article, _ = read_one(tmp_path, "storm.txt", lead + "\n\nRepairs may take days.\n")
    assert article.title.endswith("\u2026")
    kept = article.title[:-1]
    assert len(kept) <= TITLE_LENGTH
    assert lead.startswith(kept + " ")
    assert not kept.endswith((",", " "))


def test_a_first_line_that_is_a_sentence_is_not_a_headline(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "sentence.txt", (
        "Prices rose sharply.\n\nAnalysts had expected a smaller rise.\n"))
    assert article.title == "Prices rose sharply"
    assert article.body.startswith("Prices rose sharply.")  # the line stays in the body


def test_hard_wrapped_lines_and_crlf_endings_are_joined_into_paragraphs(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "wrapped.txt", (
        b"Storm hits coast\r\n\r\nA storm hit the coast\r\non Monday night.\r\n\r\n"
        b"Roads were closed.\r\n"))
    assert article.title == "Storm hits coast"
    assert article.body == "A storm hit the coast on Monday night.\n\nRoads were closed."


# --- wire copy -----------------------------------------------------------------------------------

WIRE = """\
Hezbollah says border offensive is over

By Laila Bassam and Tom Perry

BEIRUT (Reuters) - Hezbollah said on Monday its offensive on the Syrian border was over,
on August 28, 2017, after the last militants left.

The group said its fighters would stay in position.

(Reporting by Laila Bassam; Editing by Alison Williams)
"""


def test_wire_dateline_gives_the_place_and_source_and_leaves_the_body(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "wire.txt", WIRE)
    assert article.dateline == "Beirut"
    assert article.source == "Reuters"
    assert article.body.startswith("Hezbollah said on Monday its offensive")
    assert "(Reuters)" not in article.body


def test_byline_becomes_the_author(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "wire.txt", WIRE)
    assert article.author == "Laila Bassam and Tom Perry"
    assert "By Laila" not in article.body


def test_reporting_and_editing_credits_leave_the_body(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "wire.txt", WIRE)
    assert article.credits == "Reporting by Laila Bassam; Editing by Alison Williams"
    assert "Editing by" not in article.body
    assert article.body.endswith("would stay in position.")
    assert article.title == "Hezbollah says border offensive is over"
    assert article.date == datetime(2017, 8, 28)


# --- encodings and bad files ----------------------------------------------------------------------

def test_a_utf8_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    article, source = read_one(tmp_path, "bom.txt",
                               "\ufeffHarbour bridge reopens\n\nThe bridge reopened on Sunday.\n"
                               .encode("utf-8"))
    assert article.title == "Harbour bridge reopens"
    assert "\ufeff" not in article.title + article.body
    assert source.warnings == []


def test_cp1252_text_is_decoded_with_one_warning_naming_the_file(tmp_path: Path) -> None:
    text = ("Caf\u00e9 owners protest \u2013 new rules\n\n"
            "Owners of caf\u00e9s in S\u00e3o Paulo said the \u201crules\u201d cost \u00a3100.\n")
    article, source = read_one(tmp_path, "latin.txt", text.encode("cp1252"))
    assert article.title == "Caf\u00e9 owners protest \u2013 new rules"
    assert "S\u00e3o Paulo" in article.body and "\u00a3100" in article.body
    assert len(source.warnings) == 1
    warning = str(source.warnings[0])
    assert warning.startswith("news/latin.txt:")
    assert "UTF-8" in warning and "Windows-1252" in warning


def test_latin1_pound_sign_like_the_bbc_file_is_decoded(tmp_path: Path) -> None:
    article, source = read_one(tmp_path, "pound.txt",
                               b"Ticket prices rise\n\nSeats now cost \xa340 each.\n")
    assert article.body == "Seats now cost \u00a340 each."
    assert [w.path for w in source.warnings] == ["news/pound.txt"]


@pytest.mark.parametrize("data", [b"", b"   \n\n\t\n"], ids=["empty", "whitespace"])
def test_an_empty_file_is_refused_with_a_reason(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(IngestError) as caught:
        read_one(tmp_path, "empty.txt", data)
    assert caught.value.path == "news/empty.txt"
    assert "empty" in caught.value.reason


def test_a_binary_file_is_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        read_one(tmp_path, "image.txt", b"GIF89a\x00\x01\x02\x00binary junk")
    assert caught.value.path == "news/image.txt"
    assert "binary" in caught.value.reason and "NUL" in caught.value.reason


# --- dates ----------------------------------------------------------------------------------------

def test_only_complete_dates_count_and_the_latest_wins() -> None:
    assert dates_in("Fighting began in 2014 and in March 2015.") == []
    found = dates_in("On 3 March 2015 and again on August 27, 2017, and 2016-01-05.")
    assert max(found) == datetime(2017, 8, 27)
    assert datetime(2015, 3, 3) in found and datetime(2016, 1, 5) in found


def test_an_impossible_date_is_ignored() -> None:
    assert dates_in("It happened on February 30, 2017.") == []


def test_an_article_without_a_date_stays_unknown(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "undated.txt", "Library opens\n\nIt opens on Sundays.\n")
    assert article.date is None
    assert article.date_source == "unknown"


def test_an_explicit_date_is_not_overridden_by_dates_in_the_text() -> None:
    explicit = Article(id="x", title="t", body="Written on August 27, 2017.", path="x.txt",
                       date=datetime(2020, 1, 2), date_source="explicit")
    assert enrich(explicit) == explicit


# --- encodings: byte-order mark, UTF-8, a detector for other scripts, then Windows-1252 ------

@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_read(tmp_path: Path, codec: str) -> None:
    text = "Caf\u00e9 owners protest\n\nOwners in S\u00e3o Paulo said the rules cost \u00a3100.\n"
    bom = {"utf-16": b"", "utf-32": b"", "utf-16-be": b"\xfe\xff",
           "utf-32-be": b"\x00\x00\xfe\xff"}[codec]
    article, source = read_one(tmp_path, "wide.txt", bom + text.encode(codec))
    assert article.title == "Caf\u00e9 owners protest"
    assert "S\u00e3o Paulo" in article.body and "\u00a3100" in article.body
    assert source.warnings == []


def test_a_byte_order_mark_on_bytes_that_do_not_follow_it_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        read_one(tmp_path, "torn.txt", b"\xff\xfeH\x00i\x00\x00\xd8")  # a lone surrogate
    assert caught.value.path == "news/torn.txt" and "UTF-16" in caught.value.reason


def test_text_in_another_script_is_decoded_by_the_detector_and_the_warning_says_so(
        tmp_path: Path) -> None:
    headline = "\u0627\u0644\u062d\u0643\u0648\u0645\u0629 \u062a\u0631\u0641\u0639 \u0627\u0644\u0623\u0633\u0639\u0627\u0631"
    sentence = ("\u0642\u0627\u0644\u062a \u0627\u0644\u062d\u0643\u0648\u0645\u0629 "
                "\u0627\u0644\u064a\u0648\u0645 \u0625\u0646 \u0627\u0644\u0627\u0642\u062a\u0635\u0627\u062f "
                "\u064a\u0646\u0645\u0648 \u0628\u0633\u0631\u0639\u0629 \u0643\u0628\u064a\u0631\u0629. ")
    text = f"{headline}\n\n{sentence * 12}\n"
    article, source = read_one(tmp_path, "arabic.txt", text.encode("cp1256"))
    assert article.title == headline
    assert article.body.startswith(sentence.strip()[:20])
    assert len(source.warnings) == 1
    assert "cp1256" in str(source.warnings[0]) and "charset-normalizer" in str(source.warnings[0])


def test_an_extensionless_utf16_file_is_text_not_binary(tmp_path: Path) -> None:
    (tmp_path / "news").mkdir()
    path = tmp_path / "news" / "STORY"
    path.write_bytes("Harbour bridge reopens\n\nThe bridge opened today.\n".encode("utf-16"))
    assert format_of(SourceFile(path, "news/STORY")) == "text"


# --- inferred dates: only evidence that dates the article ----------------------------------

@pytest.mark.parametrize("lead", [
    "Novelist Arthur Hailey, who was born in Luton, Bedfordshire, on 5 April 1920, has died.",
    "The singer vanished 10 years ago, on 1 February 1995, and was never found.",
    "Banks must fall in line with the rules until 15 July 2006, regulators said.",
    "Profits rose 76% in the three months to 31 December 2004, the firm said.",
    "Mobile phones marked the anniversary of the first call, made on 1 January 1985.",
])
def test_a_lead_date_that_is_some_other_day_does_not_date_the_article(tmp_path: Path,
                                                                      lead: str) -> None:
    article, _ = read_one(tmp_path, "story.txt", f"A headline\n\n{lead}\n\nMore text.\n")
    assert article.date is None and article.date_source == "unknown"


def test_a_date_deep_in_the_body_does_not_date_the_article(tmp_path: Path) -> None:
    body = "Officials met again to discuss the plan. " * 20
    article, _ = read_one(tmp_path, "story.txt", f"A headline\n\n{body}\n\n"
                          "The first talks were held on 7 March 2003.\n")
    assert article.date is None


def test_a_date_never_runs_across_a_line_break(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "fixture.txt",
                          "Blackburn v Everton\n\nEwood Park\n\nTuesday, 1 March\n\n2000 GMT\n")
    assert article.date is None


def test_the_news_day_in_the_lead_dates_the_article(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "story.txt", "Harbour reopens\n\nThe harbour reopened on "
                          "June 5, 2016 after repairs that began on 2 May 2015.\n")
    assert article.date == datetime(2016, 6, 5) and article.date_source == "inferred"


@pytest.mark.corpus
def test_bbc_inferred_dates_fall_in_its_years(corpora_dir: Path) -> None:
    """Every BBC story is from 2004-2005; none carries a date where news copy dates itself,
    and the 49 birthdays, anniversaries and deadlines once taken for dates are gone."""
    inferred = []
    for path in sorted((corpora_dir / "bbc").glob("*/*.txt")):
        article = enrich(next(iter(read(SourceFile(path, path.name)))))
        if article.date_source == "inferred":
            inferred.append(article.date.year)
    assert sum(year in (2004, 2005) for year in inferred) >= 0.95 * len(inferred)
    assert not [year for year in inferred if year not in (2004, 2005)]


# --- sources: only a sign-off naming a known outlet ----------------------------------------

@pytest.mark.parametrize("line, source", [
    ("Reuters", "Reuters"), ("-- BBC News", "BBC News"), ("(AP)", "AP"),
    ("Reuters/AFP", "Reuters/AFP"), ("\u00a9 Agence France-Presse", "Agence France-Presse"),
])
def test_a_closing_line_naming_a_known_outlet_is_the_source(tmp_path: Path, line: str,
                                                            source: str) -> None:
    article, _ = read_one(tmp_path, "story.txt",
                          f"Harbour reopens\n\nThe harbour reopened today.\n\n{line}\n")
    assert article.source == source and line not in article.body


@pytest.mark.parametrize("line", ["P O'Brien (New Zealand)", "WINNERS (once)", "Smith and Jones",
                                  "School Of Rock"])
def test_a_short_closing_line_that_names_no_outlet_stays_in_the_body(tmp_path: Path,
                                                                     line: str) -> None:
    article, _ = read_one(tmp_path, "story.txt",
                          f"Wales v England\n\nThe match is on Saturday.\n\n{line}\n")
    assert article.source == "" and article.body.endswith(line)


def test_an_archive_adds_its_own_outlets(tmp_path: Path) -> None:
    news = tmp_path / "news"
    news.mkdir()
    (news / "story.txt").write_text("Harbour reopens\n\nThe harbour reopened.\n\nHarbour Gazette\n")
    result = invoke("index", news, "--index", tmp_path / "index", "--source-name",
                    "Harbour Gazette", "--json")
    assert result.exit_code == 0, result.output
    shown = invoke("search", "harbour", "--index", tmp_path / "index", "--json")
    assert [h["source"] for h in json.loads(shown.stdout)["hits"]] == ["Harbour Gazette"]


@pytest.mark.corpus
def test_no_bbc_story_gets_a_source_from_a_line_that_is_not_one(corpora_dir: Path) -> None:
    sources = {enrich(next(iter(read(SourceFile(p, p.name))))).source
               for p in sorted((corpora_dir / "bbc").glob("*/*.txt"))}
    assert sources == {""}


# --- header blocks: one field a line, marked alike, before the body ------------------------

WIRE_HEADER = """\
-- Greek PM says talks with lenders going well
-- By Renee Maltezou
-- Mon Jan 2, 2012 9:30am EST
-- http://www.example.com/article/2012/01/02/greece-idUSL6E8C20KJ20120102

ATHENS (Reuters) - Greece's prime minister said on Monday talks with private creditors
on a debt swap were going well.

The talks resume on Wednesday.

(Reporting by Renee Maltezou; Editing by Ruth Pitchford)
"""


def test_a_wire_header_block_gives_headline_byline_time_and_address(tmp_path: Path) -> None:
    article, _ = read_one(tmp_path, "wire.txt", WIRE_HEADER)
    assert article.title == "Greek PM says talks with lenders going well"
    assert article.author == "Renee Maltezou"
    assert article.date == datetime(2012, 1, 2, 14, 30) and article.date_source == "explicit"
    assert article.url.startswith("http://www.example.com/article/2012/01/02/")
    assert article.source == "Reuters" and article.dateline == "Athens"
    assert article.body.startswith("Greece's prime minister said on Monday")
    assert article.body.endswith("The talks resume on Wednesday.")
    assert article.credits.startswith("Reporting by Renee Maltezou")


@pytest.mark.parametrize("marks", ["# ", "> ", "* ", "\u2014 ", "== "])
def test_any_shared_mark_opens_a_header_block(tmp_path: Path, marks: str) -> None:
    text = (f"{marks}Harbour bridge reopens\n{marks}By Ana Torres\n{marks}June 5, 2016\n\n"
            "The bridge reopened after repairs, officials said.\n")
    article, _ = read_one(tmp_path, "story.txt", text)
    assert (article.title, article.author, article.date) == (
        "Harbour bridge reopens", "Ana Torres", datetime(2016, 6, 5))
    assert article.body == "The bridge reopened after repairs, officials said."


def test_key_value_header_lines(tmp_path: Path) -> None:
    text = ("Title: Harbour bridge reopens\nAuthor: Ana Torres\nDate: 2016-06-05 09:30\n"
            "URL: https://example.org/bridge\n\nThe bridge reopened.\n")
    article, _ = read_one(tmp_path, "story.txt", text)
    assert (article.title, article.author, article.url) == (
        "Harbour bridge reopens", "Ana Torres", "https://example.org/bridge")
    assert article.date == datetime(2016, 6, 5, 9, 30) and article.body == "The bridge reopened."


@pytest.mark.parametrize("text", [
    "- apples\n- pears\n- plums\n\nA shopping list, not a header.\n",
    "Note: the bridge is closed\nWarning: expect delays\n\nDrivers should plan ahead.\n",
])
def test_a_list_at_the_top_is_not_a_header_block(tmp_path: Path, text: str) -> None:
    article, _ = read_one(tmp_path, "story.txt", text)
    assert article.author == "" and article.date is None and article.url == ""
    assert text.split("\n")[0].lstrip("- ") in article.title + article.body


def test_a_mail_or_news_header_gives_subject_sender_and_the_rest_to_extra(
        tmp_path: Path) -> None:
    """A Usenet post as the 20 Newsgroups collection keeps it: no blank line after the
    header, the sender as "address (Name)"."""
    text = ("From: dsoconne@quads.uchicago.edu (Daniel S OConnell)\n"
            "Subject: Re: Religion and homosexuality\nKeywords: being liberal\n"
            "Reply-To: dsoconne@midway.uchicago.edu\nOrganization: University of Chicago\n"
            "Lines: 32\nGood Luck on your journey!\n")
    article, _ = read_one(tmp_path, "82757", text)
    assert (article.title, article.author) == ("Re: Religion and homosexuality",
                                               "Daniel S OConnell")
    assert article.body == "Good Luck on your journey!"
    assert article.extra["organization"] == "University of Chicago"
    other, _ = read_one(tmp_path, "mail.txt", "From: \"Ana Torres\" <ana@example.org>\n"
                        "Subject: Harbour bridge\n\nIt reopened.\n")
    assert (other.title, other.author, other.body) == ("Harbour bridge", "Ana Torres",
                                                       "It reopened.")

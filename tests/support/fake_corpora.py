"""A tiny made-up ``corpora`` folder for the benchmark tests: BBC-style text files and
Reuters SGML files, in the layouts the real shared corpora have, with paragraphs of five
words or more (what the scale generator reads)."""

from __future__ import annotations

from pathlib import Path

WORDS = ("cocoa coffee harvest rain drought export price market bank rate steel strike "
         "election minister budget tax film music football league phone internet").split()


def text(i: int, n: int = 40) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n)) + "."


def story(newid: int) -> str:
    month = "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split()[newid % 12]
    return (f'<REUTERS TOPICS="YES" NEWID="{newid}">\n'
            f"<DATE>{10 + newid % 18:02d}-{month}-1987 15:01:01.79</DATE>\n"
            "<TOPICS><D>cocoa</D></TOPICS><PLACES><D>brazil</D></PLACES>\n"
            f"<TEXT>&#2;\n<TITLE>{WORDS[newid % len(WORDS)].upper()} "
            f"{WORDS[(newid + 5) % len(WORDS)].upper()} REVIEW {newid}</TITLE>\n"
            f"<DATELINE>    SALVADOR, Feb 26 - </DATELINE><BODY>{text(newid)}\n\n"
            f"{text(newid + 1)}\n Reuter\n&#3;</BODY></TEXT>\n</REUTERS>\n")


def write_news(root: Path, bbc_files: int, reuters_files: int, stories_per_file: int = 10
               ) -> Path:
    """``root/bbc/{business,tech}/NNN.txt`` and ``root/reuters21578/reut2-NNN.sgm``."""
    for i in range(bbc_files):
        folder = root / "bbc" / ("business" if i % 2 else "tech")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:03d}.txt").write_text(
            f"{WORDS[i].title()} {WORDS[i + 3]} story {i}\n\n{text(i)}\n\n{text(i + 2)}\n",
            "utf-8")
    reuters = root / "reuters21578"
    reuters.mkdir(parents=True, exist_ok=True)
    for f in range(reuters_files):
        stories = "".join(story(f * stories_per_file + k + 1) for k in range(stories_per_file))
        (reuters / f"reut2-{f:03d}.sgm").write_text(
            '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + stories, "latin-1")
    return root

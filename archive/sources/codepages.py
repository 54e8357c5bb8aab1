"""Which single-byte code page a file that is not UTF-8 may be in: Western or not.

Below a fifth of high bytes, ``decode_text`` reads a file as Windows-1252, since a detector
cannot tell one Latin code page from another on a few accented letters (it takes the BBC's
Latin-1 file for Japanese). But Turkish (cp1254) or Central European (cp1250) text read so
comes out with Icelandic thorns and superscript digits inside its words; those files, and only
those, go to the detector too.
"""

from __future__ import annotations

_LOW_BYTES = bytes(range(0x80))
#: the high bytes whose Windows-1252 letters and signs Western European text and English
#: typography use (accented letters, quotes and dashes, currency, degrees, ordinals)
_WESTERN_BYTES = "".join(
    "\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5\u00c6\u00c7\u00c8\u00c9\u00ca\u00cb\u00cc\u00cd"
    "\u00ce\u00cf\u00d1\u00d2\u00d3\u00d4\u00d5\u00d6\u00d8\u00d9\u00da\u00db\u00dc\u00df"
    "\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5\u00e6\u00e7\u00e8\u00e9\u00ea\u00eb\u00ec\u00ed"
    "\u00ee\u00ef\u00f1\u00f2\u00f3\u00f4\u00f5\u00f6\u00f8\u00f9\u00fa\u00fb\u00fc\u00ff"
    "\u0152\u0153\u0160\u0161\u017d\u017e\u20ac\u00a3\u00a2\u00a9\u00ae\u00b0\u00b1\u00b2"
    "\u00b5\u00b7\u00aa\u00ba\u00ab\u00bb\u00a1\u00bf\u00a7\u00b6\u00d7\u00f7\u00bd\u00a0"
    "\u00b4\u00a8\u00b8\u2022\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2026\u2020"
    "\u2021\u2030\u2039\u203a\u2122\u02c6\u02dc").encode("cp1252")


def unlike_western(data: bytes) -> bool:
    """Read as Windows-1252, do a tenth of the high bytes give signs no Western European text
    uses inside its words (Icelandic thorn and eth, superscripts, unassigned bytes)? Then it is
    another single-byte code page (Turkish, Central European...) and the detector decides."""
    high = data.translate(None, _LOW_BYTES)
    rare = high.translate(None, _WESTERN_BYTES)
    return len(rare) * 10 >= len(high)

"""Licence files: never articles, whatever they are called or whatever their extension.

A folder of articles copied out of a repository brings its ``LICENSE-MIT``, ``COPYING.LESSER``
or ``NOTICE.txt`` along; read as text, each became an "article" titled with its first line.
They are told by name (the licence word leads the name, a variant may follow) and, when named
otherwise, by the phrases the common licences open with.
"""

from __future__ import annotations

import re

_LICENCE_NAMES = {"license", "licence", "licenses", "licences", "copying", "notice",
                  "copyright", "unlicense"}
#: phrases that open the common licences (MIT, BSD, Apache, GPL family, Creative Commons, ...)
_LICENCE_TEXT = re.compile(
    rb"Permission is hereby granted, free of charge|Redistribution and use in source and binary"
    rb"|Licensed under the Apache License|Apache License\s+Version 2\.0|GNU (?:LESSER |AFFERO )?"
    rb"GENERAL PUBLIC LICENSE|Mozilla Public License|This is free and unencumbered software"
    rb"|Creative Commons (?:Legal Code|Attribution)|Boost Software License"
    rb"|THE SOFTWARE IS PROVIDED \"AS IS\"", re.I)


def is_licence_name(stem: str) -> bool:
    """``license``, ``LICENSE-MIT``, ``licence_apache`` (``stem`` is the name before its
    first dot, so ``COPYING.LESSER`` and ``LICENSE_1_0.txt`` come here as their first word)."""
    return re.split(r"[-_ ]", stem.lower(), maxsplit=1)[0] in _LICENCE_NAMES


def is_licence_text(head: bytes) -> bool:
    """The opening bytes of a file hold a licence's own words."""
    return bool(_LICENCE_TEXT.search(head[:2048]))

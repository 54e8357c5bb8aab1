"""The Jinja2 environment every renderer shares: template lookup, filters, output modes.

Templates are looked up in the user's folder first (``--templates DIR``), then in the built-in
ones (the package ``archive.templates``), so a theme overrides any template by name and
inherits the rest.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

import jinja2
from markupsafe import Markup, escape

from archive.article import web_url
from archive.search import Segment

BOLD_ON, BOLD_OFF = "\x1b[1;33m", "\x1b[0m"

#: C0 controls but tab and newline, DEL and C1: in a terminal they move the cursor, clear the
#: screen or retitle the window, and an article's text must not be able to
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _Styled(str):
    """Text whose terminal styling the renderer added itself, so it is printed as it is."""


def inert(value: Any) -> Any:
    """A value printed by a text template, with its control characters made U+FFFD (also
    an object's, such as a warning naming a file whose name holds them)."""
    if isinstance(value, _Styled) or isinstance(value, (int, float)):
        return value
    return _TERMINAL_CONTROLS.sub("\ufffd", str(value))


def builtin_templates() -> Path:
    """The shipped templates, found through their package so a wheel and a checkout agree.

    Jinja's file loader and the site's asset copy need a real folder: a wheel or an editable
    install gives one; a zipped install would not, and is refused here rather than half-run.
    """
    folder = resources.files("archive.templates")
    if not isinstance(folder, Path):
        raise RuntimeError(f"archive.templates is not a folder on disk: {folder}")
    return folder


def environment(kind: str, user_dir: Path | None = None, *, color: bool = False,
                html: bool = False) -> jinja2.Environment:
    """A Jinja2 environment for ``kind`` (``cli`` or ``site``).

    ``html`` turns on autoescaping (everything from an article is escaped); ``color`` makes
    the ``marked`` filter use terminal bold instead of ``[brackets]``.
    """
    search_path = [builtin_templates() / kind]
    if user_dir is not None:
        search_path.insert(0, Path(user_dir))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(p) for p in search_path]),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml", "j2html"),
                                            default_for_string=html, default=html),
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=None if html else inert,
    )
    env.filters["marked"] = _html_marked if html else (_ansi_marked if color else _bracketed)
    env.filters["day"] = format_day
    env.filters["longdate"] = format_long_date
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["wrap"] = wrap
    env.filters["fill"] = fill
    env.filters["dotted"] = dotted
    if not html:
        env.filters["wrap_marked"] = functools.partial(
            wrap_marked, mark=_ansi_mark if color else _bracket_mark)
    # An index written before addresses were checked, or a theme linking a hit's url, must
    # still never put a non-web address in an href: templates link only what this returns.
    env.filters["safe_href"] = web_url
    env.globals["color"] = color
    return env


def _bracketed(segments: Iterable[Segment]) -> str:
    return "".join(f"[{s.text}]" if s.match else s.text for s in segments)


def _ansi_marked(segments: Iterable[Segment]) -> str:
    return _Styled("".join(f"{BOLD_ON}{inert(s.text)}{BOLD_OFF}" if s.match else inert(s.text)
                           for s in segments))


def _html_marked(segments: Iterable[Segment]) -> Markup:
    return Markup("").join(Markup("<mark>{}</mark>").format(s.text) if s.match else escape(s.text)
                           for s in segments)


def format_day(value: datetime | None, unknown: str = "undated") -> str:
    return value.date().isoformat() if value else unknown


def format_long_date(value: datetime | None, unknown: str = "Undated") -> str:
    return f"{value:%-d %B %Y}" if value else unknown


def wrap(text: str, width: int = 88, indent: str = "") -> str:
    import textwrap
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    return "\n\n".join(textwrap.fill(p, width, initial_indent=indent, subsequent_indent=indent)
                       for p in paragraphs)


def render(env: jinja2.Environment, name: str, **context: Any) -> str:
    return env.get_template(name).render(**context)


# --- text for a terminal: widths, wrapping, hanging indents -------------------------------------

DEFAULT_WIDTH = 80
NARROWEST = 20
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
ELLIPSIS = "\u2026"
SNIPPET_LINES = 3


def output_width(stream: TextIO | None = None) -> int:
    """How many columns text output may use.

    ``COLUMNS`` wins when set (the convention ``shutil``, ``less`` and ``ls`` follow, and the
    way to choose a width for piped output); otherwise the terminal's own width; otherwise, when
    the output is piped or redirected, 80, so a file or a pager gets lines any reader can show.
    Never under 20 columns, where the hanging indents would leave no room for words.
    """
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(NARROWEST, int(columns))
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return max(NARROWEST, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):  # a stream without a file descriptor
        pass
    return DEFAULT_WIDTH


def visible_width(text: str) -> int:
    """Columns ``text`` takes on screen: its length without terminal colour codes."""
    return len(ANSI_ESCAPE.sub("", text))


def fill(text: str, width: int, first: str = "", rest: str | None = None) -> str:
    """``text`` wrapped at word boundaries to ``width``, after ``first`` on the first line and
    under ``rest`` (default: as much space as ``first``) on the others: a hanging indent.

    Words are never broken, hyphenated ones included, so ids, paths and URLs stay whole (and
    copyable) even where one is longer than the line.
    """
    hanging = " " * len(first) if rest is None else rest
    return textwrap.fill(" ".join(text.split()), width, initial_indent=first,
                         subsequent_indent=hanging, break_long_words=False,
                         break_on_hyphens=False)


def dotted(parts: Iterable[str | None]) -> str:
    """The parts that exist, joined by " · ": an empty field leaves no placeholder behind."""
    return " \u00b7 ".join(p for p in parts if p)


def wrap_marked(segments: Iterable[Segment], width: int, indent: str = "",
                max_lines: int = SNIPPET_LINES,
                *, mark: Callable[[str], str]) -> str:
    """A snippet wrapped into at most ``max_lines`` lines of ``width`` columns, each starting
    with ``indent``; what does not fit is cut at a word boundary and ends with an ellipsis.

    Highlighted words are marked one word at a time (``mark``: bold or brackets) before the
    lines are laid out, and widths are counted without colour codes, so every line carries
    whole, closed escape sequences: a pager or a cut line never leaves the terminal bold.
    """
    room = max(1, width - len(indent))
    lines: list[list[str]] = [[]]
    used = 0
    for word in _marked_words(segments, mark):
        size = visible_width(word)
        if lines[-1] and used + 1 + size > room:
            if len(lines) == max_lines:
                _end_with_ellipsis(lines[-1], room)
                break
            lines.append([])
            used = 0
        used += size + (1 if lines[-1] else 0)
        lines[-1].append(word)
    # the words' own text was made inert; the marks are the renderer's, printed as they are
    return _Styled("\n".join(indent + " ".join(line) for line in lines if line))


def _marked_words(segments: Iterable[Segment], mark: Callable[[str], str]) -> list[str]:
    """The snippet's words, a highlighted piece inside a word (``profits,``) marked on its own."""
    words: list[str] = []
    current = ""
    for segment in segments:
        for piece in re.split(r"(\s+)", segment.text):
            if not piece:
                continue
            if piece.isspace():
                if current:
                    words.append(current)
                current = ""
            else:
                piece = inert(piece)
                current += mark(piece) if segment.match else piece
    if current:
        words.append(current)
    return words


def _end_with_ellipsis(line: list[str], room: int) -> None:
    """Close a cut line with " …", dropping its last words until the ellipsis fits."""
    if ANSI_ESCAPE.sub("", line[-1]).endswith(ELLIPSIS):
        return
    while len(line) > 1 and visible_width(" ".join(line)) + 2 > room:
        line.pop()
    line.append(ELLIPSIS)


def _ansi_mark(word: str) -> str:
    return f"{BOLD_ON}{word}{BOLD_OFF}"


def _bracket_mark(word: str) -> str:
    return f"[{word}]"

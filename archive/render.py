"""The Jinja2 environment every renderer shares: template lookup, filters, output modes.

Templates are looked up in the user's folder first (``--templates DIR``), then in the built-in
``templates/`` tree, so a theme overrides any template by name and inherits the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

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
    """The shipped templates: inside the installed package, or the repo's top-level folder."""
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "templates"


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


def template_names(env: jinja2.Environment, names: Sequence[str]) -> list[str]:
    return [n for n in names if n in env.list_templates()]

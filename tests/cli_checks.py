"""Running ``archive`` in-process the way a user meets it: what it prints, what it exits with.

``conftest.ArchiveCLI`` lets an exception escape (the test then fails with its traceback);
these helpers instead look at a run as the user would see it, so a test can also say that a
refusal came as one line on stderr and never as a traceback.
"""

from __future__ import annotations

from click.testing import CliRunner, Result

from archive.cli import main


def invoke(*args: object) -> Result:
    """``archive ARGS...`` in this process; exceptions are kept on the result, not raised."""
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_clean(result: Result, *allowed: int) -> None:
    """Exit status 0 or one of ``allowed``, no exception but SystemExit, no traceback in
    the output, and a failure explained in at most one line on stderr."""
    assert result.exit_code in (0, *allowed), (result.exit_code, result.output[-2000:])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output
    if result.exit_code:
        assert len(result.stderr.strip().splitlines()) <= 1, result.stderr[-2000:]


def index_folder(paths: list, folder) -> object:  # noqa: ANN001 (Path in, Path out)
    """``archive index PATHS --index FOLDER``, which must succeed; returns FOLDER."""
    result = invoke("index", *paths, "--index", folder)
    assert result.exit_code == 0, result.output
    return folder

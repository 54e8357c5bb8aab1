"""``processes.Child`` with ``talks=True``: the parent and a forked child exchange messages
before the child's result (the search bundle's helper waits for its parent this way)."""

from __future__ import annotations

import os
import signal

import pytest

from archive import processes


class Refused(processes.ChildFailed):
    """The error class a caller asks for."""


def test_a_conversation_then_a_result() -> None:
    def work(line: processes.Line) -> int:
        first = line.receive()
        line.send(first * 2)
        return first + line.receive()

    child = processes.Child.start(work, "the doubler", talks=True)
    assert child is not None
    child.tell(20)
    assert child.hear() == 40
    child.tell(1)
    assert child.result() == 21
    with pytest.raises(ChildProcessError):   # reaped
        os.waitpid(-1, os.WNOHANG)


def test_a_failure_mid_conversation_raises_the_callers_error() -> None:
    def work(line: processes.Line) -> None:
        line.receive()
        raise ValueError("not today")

    child = processes.Child.start(work, "the helper", talks=True, error=Refused)
    assert child is not None
    child.tell(1)
    with pytest.raises(Refused, match="the helper failed: ValueError: not today"):
        child.hear()
    child.stop()


def test_telling_a_dead_child_says_it_died() -> None:
    def work(line: processes.Line) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    child = processes.Child.start(work, "the helper", talks=True)
    assert child is not None
    with pytest.raises(processes.ChildFailed, match=r"the helper died \(wait status 9\)"):
        for _ in range(1000):   # a pipe takes some orders before it notices
            child.tell(b"x" * 65536)
        child.hear()
    child.stop()


def test_a_token_is_taken_by_exactly_one_of_the_processes() -> None:
    """A job either process may do goes to the first to take the token: of a parent and
    its forked children, one ``take`` in all returns True."""
    token = processes.Token()
    children = [processes.Child.start(token.take, f"taker {n}") for n in range(4)]
    assert all(child is not None for child in children)
    taken = [child.result() for child in children if child is not None] + [token.take()]
    assert taken.count(True) == 1 and taken.count(False) == 4
    assert token.take() is False
    token.close()


def test_a_token_is_taken_once_in_one_process() -> None:
    token = processes.Token()
    assert [token.take(), token.take(), token.take()] == [True, False, False]
    token.close()

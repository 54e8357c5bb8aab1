"""What the forking parts (store.SplitWriter, the site's bundle helper, the site's page
writer) share.

Each forks a child that must never outlive its parent, kills and reaps it after a failure,
and decides from the cores this process may run on whether a second process pays. ``Child``
runs one function in a forked process and brings its result back; a child that must wait for
its parent mid-way (the bundle helper waits for the parent's pair spool) talks with it
through a ``Line``; a job either of two processes may do goes to the first to take the
``Token``.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Any, BinaryIO, NoReturn


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def second_process_pays() -> bool:
    """Whether forking a helper should speed a job up: a second core is usable, and this
    process runs no other thread (a fork copies the locks other threads hold, and the child
    could wait on one forever)."""
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1 and usable_cores() >= 2


def die_with_parent() -> None:
    """Linux: have the kernel SIGKILL this (forked) process when its parent dies."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the child finishes its work and exits, which is harmless
        pass


def kill_and_reap(pid: int) -> int:
    """SIGKILL a child (if still running) and wait for it; its wait status (0 if gone)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


class ChildFailed(RuntimeError):
    """A forked child's work raised, or the child died before reporting."""


class Line:
    """The child's end of a conversation with its parent (``Child.start(..., talks=True)``):
    the parent's orders come in, the child's mid-way replies go out."""

    def __init__(self, orders: BinaryIO, replies: BinaryIO):
        self.orders, self.replies = orders, replies

    def receive(self) -> Any:
        """The parent's next order (``Child.tell``); waits for it."""
        return pickle.load(self.orders)

    def send(self, message: Any) -> None:
        """A reply the parent reads with ``Child.hear``."""
        _send(self.replies, ("said", message))


class Child:
    """One function run in a forked child; its (picklable) result comes back through a pipe.

    The child shares everything the parent had open when it forked (a memory-mapped index
    reads the same in both), dies with the parent, and reports either its result or its
    failure in one message. ``start`` gives None where the system refuses a fork: the caller
    then runs the work itself. With ``talks``, the function gets a ``Line`` and the parent
    exchanges messages with it (``tell``, ``hear``) before its result; a failure or death of
    the child at any point raises ``error`` (a ``ChildFailed``) on the parent's side.
    """

    def __init__(self, pid: int, replies: BinaryIO, what: str, orders: BinaryIO | None = None,
                 error: type[ChildFailed] = ChildFailed):
        self.pid, self.replies, self.what = pid, replies, what
        self.orders, self.error = orders, error

    @classmethod
    def start(cls, work: Callable[..., Any], what: str, *, talks: bool = False,
              error: type[ChildFailed] = ChildFailed) -> Child | None:
        read_end, write_end = os.pipe()
        order_read, order_write = os.pipe() if talks else (-1, -1)
        ends = [fd for fd in (read_end, write_end, order_read, order_write) if fd >= 0]
        try:
            pid = os.fork()
        except OSError:
            for fd in ends:
                os.close(fd)
            return None
        if pid:
            os.close(write_end)
            if talks:
                os.close(order_read)
            orders = os.fdopen(order_write, "wb") if talks else None
            return cls(pid, os.fdopen(read_end, "rb"), what, orders, error)
        code = 1  # pragma: no cover - the child, which never returns
        try:
            os.close(read_end)
            if talks:
                os.close(order_write)
            die_with_parent()
            with os.fdopen(write_end, "wb") as replies:
                try:
                    if talks:
                        with os.fdopen(order_read, "rb") as orders:
                            message: tuple[str, Any] = ("done", work(Line(orders, replies)))
                    else:
                        message = ("done", work())
                except BaseException as exc:
                    message = ("error", f"{type(exc).__name__}: {exc}")
                _send(replies, message)
            code = 0
        finally:
            os._exit(code)

    def tell(self, message: Any) -> None:
        """Send the child an order (``Line.receive``); a child already gone raises why."""
        assert self.orders is not None, "tell() needs Child.start(..., talks=True)"
        try:
            _send(self.orders, message)
        except OSError:   # the child is gone: its last message says why
            self._failed(self._receive())

    def hear(self) -> Any:
        """The child's next reply (``Line.send``), or ``error`` if it failed or died first."""
        message = self._receive()
        if message[0] == "said":
            return message[1]
        self._failed(message)

    def result(self) -> Any:
        """Wait for the child's report; its result, or ``error`` saying what went wrong."""
        try:
            message = self._receive()
        finally:
            self._close()
        if message[0] == "done":
            self._reap()
            return message[1]
        self._failed(message)

    def stop(self) -> None:
        """Kill and reap a child still running (after a failure on the parent's side)."""
        self._close()
        if self.pid:
            pid, self.pid = self.pid, 0
            kill_and_reap(pid)

    def _receive(self) -> tuple[Any, ...]:
        try:
            return pickle.load(self.replies)
        except Exception:  # EOF (the child died) or a torn message
            return ("died", None)

    def _failed(self, message: tuple[Any, ...]) -> NoReturn:
        status = self._reap()
        if message[0] == "error":
            raise self.error(f"{self.what} failed: {message[1]}")
        raise self.error(f"{self.what} died (wait status {status})")

    def _close(self) -> None:
        for stream in (self.replies, self.orders):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _reap(self) -> int:
        if not self.pid:
            return 0
        pid, self.pid = self.pid, 0
        return os.waitpid(pid, 0)[1]


class Token:
    """One token, to be taken once among this process and the children it forks after
    making it: a job that either of two processes may do goes to whichever is free first.

    The token is one byte in a pipe; ``take`` reads without waiting, and a pipe hands a byte
    to one reader only, so exactly one ``take`` in all the processes returns True.
    """

    def __init__(self) -> None:
        self._read, write = os.pipe()
        os.write(write, b"t")
        os.close(write)
        os.set_blocking(self._read, False)

    def take(self) -> bool:
        """True for the first caller in any of the processes, False ever after."""
        try:
            return os.read(self._read, 1) == b"t"
        except OSError:   # this end closed; a taken token reads b"" (the writer is closed)
            return False

    def close(self) -> None:
        """Close this process's end (each process closes its own)."""
        try:
            os.close(self._read)
        except OSError:
            pass


def _send(stream: BinaryIO, message: tuple[Any, ...]) -> None:
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()

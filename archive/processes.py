"""What the forking parts (store.SplitWriter, the site's bundle helper, the site's page
writer) share.

Each forks a child that must never outlive its parent, kills and reaps it after a failure,
and decides from the cores this process may run on whether a second process pays. ``Child``
runs one function in a forked process and brings its result back.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Any, BinaryIO


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


class Child:
    """One function run in a forked child; its (picklable) result comes back through a pipe.

    The child shares everything the parent had open when it forked (a memory-mapped index
    reads the same in both), dies with the parent, and reports either its result or its
    failure in one message. ``start`` gives None where the system refuses a fork: the caller
    then runs the work itself.
    """

    def __init__(self, pid: int, replies: BinaryIO, what: str):
        self.pid, self.replies, self.what = pid, replies, what

    @classmethod
    def start(cls, work: Callable[[], Any], what: str) -> Child | None:
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid:
            os.close(write_end)
            return cls(pid, os.fdopen(read_end, "rb"), what)
        code = 1  # pragma: no cover - the child, which never returns
        try:
            os.close(read_end)
            die_with_parent()
            with os.fdopen(write_end, "wb") as replies:
                try:
                    message: tuple[str, Any] = ("done", work())
                except BaseException as exc:
                    message = ("error", f"{type(exc).__name__}: {exc}")
                pickle.dump(message, replies, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)

    def result(self) -> Any:
        """Wait for the child's report; its result, or ChildFailed saying what went wrong."""
        try:
            message = pickle.load(self.replies)
        except Exception:  # EOF (the child died) or a torn message
            message = ("died", None)
        finally:
            self.replies.close()
        status = self._reap()
        if message[0] == "done":
            return message[1]
        if message[0] == "error":
            raise ChildFailed(f"{self.what} failed: {message[1]}")
        raise ChildFailed(f"{self.what} died (wait status {status})")

    def stop(self) -> None:
        """Kill and reap a child still running (after a failure on the parent's side)."""
        try:
            self.replies.close()
        except OSError:
            pass
        if self.pid:
            pid, self.pid = self.pid, 0
            kill_and_reap(pid)

    def _reap(self) -> int:
        if not self.pid:
            return 0
        pid, self.pid = self.pid, 0
        return os.waitpid(pid, 0)[1]

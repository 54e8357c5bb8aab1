"""What the two forking parts (store.SplitWriter, the site's bundle helper) share.

Both fork a child that must never outlive its parent, both kill and reap it after a failure,
and both decide from the cores this process may run on whether a second process pays.
"""

from __future__ import annotations

import os
import signal


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


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

"""Indexing on a Dask cluster (``archive index --cluster ADDRESS`` or ``--workers N``).

- ``build``: the run's client side, ``DistributedIndexer`` (an ``Indexer`` whose reading and
  segment writing happen on the workers).
- ``tasks``: what the workers run.

Dask is an optional dependency (the ``dask`` extra): ``connect`` says so in one line when it
is missing, and nothing else in the archive imports it.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from archive.distributed.build import SHIPPING, DistributedIndexer

__all__ = ["DaskUnavailable", "DistributedIndexer", "SHIPPING", "connect", "dashboard"]


#: seconds a run waits for a first worker to join a scheduler it was pointed at
WAIT_FOR_WORKERS = 60


class DaskUnavailable(RuntimeError):
    """Dask is not installed, or the scheduler cannot be reached: one line for the user."""


@contextmanager
def connect(address: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A Dask client: of the scheduler at ``address``, or of a LocalCluster of ``workers``
    worker processes (one thread each: reading and enriching hold the GIL) started here and
    stopped on leaving."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise DaskUnavailable("--cluster and --workers need the dask[distributed] package "
                              "(pip install 'newsarchive[dask]')") from None
    # Dask logs every worker start and stop; the run reports what matters
    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = None
    try:
        if address:
            try:
                client = Client(address, timeout="15s")
            except (OSError, TimeoutError) as exc:
                raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: "
                                      f"{exc}") from None
            try:
                client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
            except TimeoutError:
                client.close()
                raise DaskUnavailable(f"no Dask worker joined the scheduler at {address} "
                                      f"within {WAIT_FOR_WORKERS}s") from None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.ERROR)
            client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def dashboard(client: Any) -> str | None:
    """The Dask dashboard's address, when the scheduler runs one."""
    try:
        services = client.scheduler_info().get("services", {})
    except Exception:
        return None
    if "dashboard" not in services:
        return None
    local = str(client.scheduler.address).startswith(("tcp://127.", "inproc://"))
    if local and importlib.util.find_spec("bokeh") is None:
        return None  # the scheduler's web server is up, but its dashboard needs bokeh
    return client.dashboard_link

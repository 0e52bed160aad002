"""Fixtures of the Dask tests: a real cluster of worker processes, and arrays cut into chunks.

The cluster is one per test process (session scope: starting two worker processes costs seconds), on
127.0.0.1; a test that uses it computes there (``Client.compute`` and, inside its ``as_current``
block, the runtime's own ``dask.compute``).  The tests that run without it use Dask's local scheduler
explicitly (``dask.config.set(scheduler="threads")``), so no test depends on whether another test
started a client first.
"""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the Dask extra is not installed (pip install coarsen-nb[dask])")
distributed = pytest.importorskip("distributed", reason="the Dask extra is not installed")

#: the chunkings every equality test runs: one chunk, uneven chunks (3, 3, ..., rest), one element each
CHUNKINGS = ("one", "uneven", "single")


def chunked(a, how: str, axis: int = 0):
    """``a`` (a NumPy array) as a Dask array cut along ``axis`` only (every other axis one chunk): one
    chunk, chunks of 3 with a shorter last one (uneven), or one element per chunk."""
    n = a.shape[axis]
    size = {"one": n, "uneven": 3, "single": 1}[how]
    sizes = tuple(min(size, n - s) for s in range(0, n, size)) or (0,)
    chunks = tuple(sizes if d == axis else (a.shape[d],) for d in range(a.ndim))
    return da.from_array(a, chunks=chunks)


@pytest.fixture(scope="session")
def client():
    """A ``dask.distributed`` client of a LocalCluster: 2 worker processes, one thread each, on 127.0.0.1."""
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=40)
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c
    cluster.close()


def computed(value):
    """A result as NumPy values (a Dask array computed; tuples element by element)."""
    if isinstance(value, tuple):
        return tuple(computed(v) for v in value)
    return np.asarray(value.compute()) if isinstance(value, da.Array) else value

"""Fixtures of the Dask tests: a real cluster of worker processes (the arrays cut into chunks: dask_chunks.py).

The cluster is one per test process (session scope: starting two worker processes costs seconds), on
127.0.0.1; a test that uses it computes there (``Client.compute`` and, inside its ``as_current``
block, the runtime's own ``dask.compute``).  The tests that run without it use Dask's local scheduler
explicitly (``dask.config.set(scheduler="threads")``), so no test depends on whether another test
started a client first.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("dask.array", reason="the Dask extra is not installed (pip install coarsen-nb[dask])")
distributed = pytest.importorskip("distributed", reason="the Dask extra is not installed")


@pytest.fixture(scope="session")
def client():
    """A ``dask.distributed`` client of a LocalCluster: 2 worker processes, one thread each, on 127.0.0.1."""
    environ = dict(os.environ)
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=40)
    # (distributed writes its workers' pre-spawn environment, MALLOC_TRIM_THRESHOLD_=65536, into this process's
    # os.environ and leaves it there: every process a later test of this session starts would inherit it, and
    # glibc then keeps its mmap threshold fixed — tests/benchmarks/test_harness.py's allocator test failed so)
    os.environ.clear()
    os.environ.update(environ)
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c
    cluster.close()

"""A chunk sum's graph is wired once per chunk structure (issue 18: "the graph is built once per signature and
chunk structure, and cached"): a later call on new lazy arrays of the same chunks decides nothing and builds
no task object again, only the blockwise over the new arrays and the tree's tasks named after them.

References: the NumPy backend on the same data (to 1e-12); the schedule's own counters
(``ChunkSchedule.cache_info``), and, so that a counter cannot pass while the work is redone, the decision's
weights made to fail and the task's key compared across the calls' graphs.
"""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask_chunks import MEAN_LOSS, computed, da

import coarsen_nb as cn
from coarsen_nb.dask_chunk_sums import ChunkSum


def _data(rows, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), 0.2, rng.standard_normal((rows, 3)), rng.standard_normal(rows)


def _lazy(X, y, rows_per_chunk):
    return da.from_array(X, chunks=(rows_per_chunk, 3)), da.from_array(y, chunks=rows_per_chunk)


def _schedule(f, args, kind="vjp"):
    return getattr(f._specialize(args), kind).chunkwise


def _task_keys(f, args) -> set:
    """The keys of the per-chunk task objects (the module, the weights) in the graphs of the lazy value and
    gradients that ``f.value_and_grad(*args)`` computes (its entry: the VJP)."""
    value, grads = _schedule(f, args).call("vjp", args)
    return {k for a in (value, *grads) for k in dict(a.__dask_graph__()) if str(k).startswith("chunk-task-")}


def _equal(got, want):
    value, grads = got
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w_ in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_second_call_of_the_same_chunking_decides_and_builds_nothing_again(backend, monkeypatch):
    """Three calls: data A in chunks of 3, data B (new lazy arrays) in chunks of 3, data B in chunks of 4.
    The second finds its wiring (no decision: the chunk weights, SymPy substitutions, now raise; the same
    task key), the third wires its own (another task key: the weights differ); all equal the NumPy backend."""
    reference = cn.coarsen(MEAN_LOSS, wrt=("w", "b", "X"), backend="numpy", namespace={"math": math})
    f = cn.coarsen(MEAN_LOSS, wrt=("w", "b", "X"), backend=backend, namespace={"math": math})
    w, b, X, y = _data(11, 0)
    _, b2, X2, y2 = _data(11, 1)
    first = (w, b, *_lazy(X, y, 3))
    with dask.config.set(scheduler="threads"):
        _equal(f.value_and_grad(*first), reference.value_and_grad(w, b, X, y))
        schedule = _schedule(f, first)
        assert schedule.cache_info().builds == 1 and schedule.cache_info().size == 1
        keys_first = _task_keys(f, first)
        assert len(keys_first) == 1

        second = (w, b2, *_lazy(X2, y2, 3))         # new names, same chunks; another b
        assert second[2].name != first[2].name
        with monkeypatch.context() as m:
            m.setattr(ChunkSum, "weight", lambda *a: pytest.fail("the chunking was decided again"))
            _equal(f.value_and_grad(*second), reference.value_and_grad(w, b2, X2, y2))
            assert _schedule(f, second).cache_info().builds == 1
            assert _task_keys(f, second) == keys_first

        third = (w, b2, *_lazy(X2, y2, 4))
        _equal(f.value_and_grad(*third), reference.value_and_grad(w, b2, X2, y2))
        info = _schedule(f, third).cache_info()
        assert info.builds == 2 and info.size == 2 and info.hits >= 2
        assert len(_task_keys(f, third) | keys_first) == 2


def test_the_wired_graph_runs_on_the_cluster_for_new_arrays(client):
    """On the LocalCluster: the second call's graph (wired from the first's) computes there, and equals."""
    reference = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numpy", namespace={"math": math})
    f = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numba", namespace={"math": math})
    for seed in (2, 3):
        w, b, X, y = _data(13, seed)
        args = (w, b, *_lazy(X, y, 5))
        with client.as_current():
            _equal(f.value_and_grad(*args), reference.value_and_grad(w, b, X, y))
    assert _schedule(f, args).cache_info().builds == 1


def test_another_fan_in_is_another_wiring():
    """The tree's groups depend on Dask's ``split_every`` (a number, or a dict by axis): a call under another
    one wires again, and each equals the NumPy backend."""
    reference = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numpy", namespace={"math": math})
    f = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numpy", namespace={"math": math})
    w, b, X, y = _data(20, 4)
    want = reference.value_and_grad(w, b, X, y)
    args = (w, b, *_lazy(X, y, 2))
    for k, fan_in in enumerate([None, 3, {0: 2}, 3]):
        with dask.config.set(scheduler="threads", split_every=fan_in):
            _equal(f.value_and_grad(*args), want)
        assert _schedule(f, args).cache_info().builds == min(k + 1, 3)

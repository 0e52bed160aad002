"""``f.chunking``: how the last call on Dask arrays was cut into chunks (coarsen_nb/dask_chunking.py).

References: what Dask itself reports about the same arrays and graphs (``chunks``, a block's ``nbytes``,
the materialized graph of the returned array, the levels of a tree reduction Dask builds on its own), and
the NumPy backend's answer (so the call that was described also gave the right result).
"""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask.utils import key_split
from dask_chunks import MEAN_LOSS, MIRRORED, computed, da
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coarsen_nb as cn

SCALED = '''
def scaled(x, a):
    return a * np.exp(x) + x
'''


def _data(rows, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), 0.2, rng.standard_normal((rows, 3)), rng.standard_normal(rows)


def _largest_block_bytes(a) -> int:
    """What Dask says the largest block of ``a`` holds (each block's own ``nbytes``)."""
    return max(a.blocks[idx].nbytes for idx in np.ndindex(*a.numblocks))


def _tree_levels(blocks: int) -> int:
    """The levels Dask's own tree sum over ``blocks`` blocks has: its partial layers and its aggregate."""
    graph = da.ones((blocks, 2), chunks=(1, 2)).sum(axis=0).__dask_graph__()
    return sum(key_split(name).endswith(("-partial", "-aggregate")) for name in graph.layers)


def test_a_chunkwise_gradient_says_its_chunks_bytes_and_tasks_as_dask_does(client):
    """The gradient with respect to the records alone is one lazy Dask array: the graph the call built is
    all of its graph, so its task count is what Dask materializes from it."""
    w, b, X, y = _data(23)
    want = cn.coarsen(MEAN_LOSS, wrt=("X",), backend="numpy", namespace={"math": math}).grad(w, b, X, y)
    f = cn.coarsen(MEAN_LOSS, wrt=("X",), backend="numba", namespace={"math": math})
    Xd, yd = da.from_array(X, chunks=(5, 3)), da.from_array(y, chunks=5)
    with client.as_current():
        g = f.grad(w, b, Xd, yd)
    np.testing.assert_allclose(computed(g), want, rtol=1e-12, atol=1e-12)
    c = f.chunking
    assert c.chunkwise and c.reason == "" and c.module == "numba"
    assert c.chunks == len(Xd.chunks[0]) == 5
    assert c.tasks == len(dict(g.__dask_graph__()))
    assert {a.name: (a.blocks, a.largest_bytes) for a in c.arguments} == {
        "X": (Xd.npartitions, _largest_block_bytes(Xd)), "y": (yd.npartitions, _largest_block_bytes(yd))}
    assert c.added == () and c.reductions == ()      # (each chunk's gradient is its own block: nothing added)
    assert "no reduction across chunks" in str(c)


@pytest.mark.parametrize("split_every", [2, 4])
def test_the_tree_sum_of_a_chunkwise_value_and_gradient_is_dasks_tree(split_every):
    """The value and the small gradients (w, b) are added across the chunks by Dask's tree: as many blocks
    as chunks, as many levels as Dask's own tree sum over that many blocks has at that fan-in."""
    w, b, X, y = _data(14, 1)
    f = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numpy", namespace={"math": math})
    want = f.value_and_grad(w, b, X, y)
    Xd, yd = da.from_array(X, chunks=(2, 3)), da.from_array(y, chunks=2)
    with dask.config.set(scheduler="threads", split_every=split_every):
        value, grads = f.value_and_grad(w, b, Xd, yd)
        levels = _tree_levels(7)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(grads[0], want[1][0], rtol=1e-12)
    c = f.chunking
    assert c.chunkwise and c.chunks == 7 and c.module == "numpy"
    assert c.added == ("the value", "the gradient with respect to w", "the gradient with respect to b")
    (tree,) = c.reductions
    assert (tree.name, tree.blocks, tree.depth, tree.fan_in) == ("sum", 7, levels, split_every)
    assert levels == math.ceil(math.log(7, split_every))      # (the reference agrees with Dask's rule)


def test_a_refused_call_says_why_in_the_users_names():
    """x[n - 1 - i] is not record i's own row: the dask module ran, and the reason names x and i, never $k1.2."""
    f = cn.coarsen(MIRRORED)
    x = np.linspace(0.5, 1.5, 10)
    want = f.value_and_grad(x, 0.3)
    xd = da.from_array(x, chunks=4)
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(xd, 0.3)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(computed(grads[0]), want[1][0], rtol=1e-12)
    c = f.chunking
    assert not c.chunkwise and c.reason == "it reads x at [len(x) - 1 - i]: not record i's own row"
    assert "$" not in str(c) and "because it reads x at [len(x) - 1 - i]" in str(c)
    assert c.chunks == len(xd.chunks[0]) == 3 and c.arguments[0].largest_bytes == _largest_block_bytes(xd)
    assert c.reductions and all(r.blocks >= 3 for r in c.reductions if r.name == "sum")


def test_the_dask_modules_lazy_array_has_the_tasks_it_says():
    """A function returning an array runs as the dask module's statements; its result is lazy, and the
    tasks the record counts are those of the graph Dask materializes from it."""
    f = cn.coarsen(SCALED, namespace={"np": np})
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    want = f(x, 0.5)
    xd = da.from_array(x, chunks=(2, 2))
    with dask.config.set(scheduler="threads"):
        out = f(xd, 0.5)
        np.testing.assert_allclose(computed(out), want, rtol=1e-12)
    c = f.chunking
    assert not c.chunkwise and c.reason and "$" not in c.reason
    assert c.tasks == len(dict(out.__dask_graph__()))
    assert c.chunks == xd.npartitions == 4 and c.reductions == ()
    assert c.arguments[0].largest == (2, 2) and c.arguments[0].largest_bytes == _largest_block_bytes(xd)


def test_a_call_on_numpy_arrays_leaves_no_chunking():
    w, b, X, y = _data(6)
    f = cn.coarsen(MEAN_LOSS, wrt=("w",), backend="numpy", namespace={"math": math})
    with dask.config.set(scheduler="threads"):
        f.grad(w, b, da.from_array(X, chunks=(3, 3)), da.from_array(y, chunks=3))
    assert f.chunking is not None
    f.grad(w, b, X, y)
    assert f.chunking is None


def test_chunks_of_unknown_size_are_said_unknown_not_nan():
    """A selection's chunks have no size before they are computed (Dask says NaN): the record says so."""
    from coarsen_nb.dask_arrays import is_dask
    from coarsen_nb.dask_chunking import describe

    x = da.from_array(np.linspace(-1.0, 1.0, 10), chunks=4)
    picked = x[x > 0]
    assert math.isnan(picked.chunks[0][0])          # (Dask's own word for it)
    c = describe("forward", ("x", "a"), (picked, 0.5), [picked], None, "its records' chunks have sizes "
                 "not known before they are computed", is_dask)
    (arg,) = c.arguments
    assert arg.blocks == picked.npartitions == 3 and arg.largest_bytes == -1
    assert "x: 3 chunks, the largest ? float64 (unknown size)" in str(c) and "nan" not in str(c)
    assert c.tasks == len(dict(picked.__dask_graph__()))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(0, 5), min_size=1, max_size=9).filter(lambda s: sum(s) >= 2 and 1 not in s),
       fan_in=st.integers(2, 5))
def test_any_chunking_is_said_as_dask_reports_it(sizes, fan_in):
    """Random chunkings of the records (empty chunks too) and fan-ins: the chunks, each argument's largest
    block, and the tree sum's blocks and depth are Dask's own figures (its depth: the levels of Dask's own
    tree sum over as many blocks)."""
    rows = sum(sizes)
    w, b, X, y = _data(rows, rows)
    f = cn.coarsen(MEAN_LOSS, wrt=("w", "b"), backend="numpy", namespace={"math": math})
    want = f.value_and_grad(w, b, X, y)[0]
    Xd, yd = da.from_array(X, chunks=(tuple(sizes), (3,))), da.from_array(y, chunks=(tuple(sizes),))
    with dask.config.set(scheduler="threads", split_every=fan_in):
        value, _ = f.value_and_grad(w, b, Xd, yd)
        levels = _tree_levels(len(sizes))
    np.testing.assert_allclose(value, want, rtol=1e-12)
    c = f.chunking
    assert c.chunkwise and c.chunks == len(Xd.chunks[0]) == len(sizes)
    assert [(a.name, a.blocks, a.largest_bytes) for a in c.arguments] == [
        ("X", Xd.npartitions, _largest_block_bytes(Xd)), ("y", yd.npartitions, _largest_block_bytes(yd))]
    (tree,) = c.reductions
    assert tree.blocks == len(sizes) and tree.depth == levels

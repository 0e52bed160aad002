"""The dask namespace's forms of what ``dask.array`` lacks (lower/dask_xp_forms.py, dask_helpers._put, dask_xp's
LaneCount) against NumPy's own functions, on Dask arrays in several chunkings.

Each form's graph is built under a scheduler that fails at any compute (``EarlyComputes(fail=True)``: the
form is lazy), then computed on Dask's synchronous scheduler and compared with NumPy's function of the same
NumPy arrays to 1e-12.  ``f.chunking`` says where a form gathered an argument into one block.
"""

from __future__ import annotations

import sys
from pathlib import Path

import dask
import numpy as np
import pytest
from dask_chunks import EarlyComputes, da

import coarsen_nb as cn
from coarsen_nb.lower import dask_helpers, dask_xp_forms  # noqa: F401 (the forms written into xp)
from coarsen_nb.lower.dask_xp import xp

sys.path.insert(0, str(Path(__file__).parent.parent))     # the corpora (tests/corpus*.py) import by name


def lazily(build):
    """``build()`` under a scheduler that fails at any compute; its result computed afterwards, synchronously."""
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        out = build()
    with dask.config.set(scheduler="sync"):
        return dask.compute(out)[0]


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


RNG = np.random.default_rng(3)
MATRIX = RNG.normal(size=(5, 5)) + 5.0 * np.eye(5)


@pytest.mark.parametrize("chunks", [5, 2, 1, (3, 2)])
def test_slogdet_det_solve_inv_equal_numpys_in_any_chunks(chunks):
    a = da.from_array(MATRIX, chunks=chunks)
    b = da.from_array(RNG.normal(size=5), chunks=2)
    sign, logdet = lazily(lambda: xp.linalg.slogdet(a))
    close(sign, np.linalg.slogdet(MATRIX)[0])
    close(logdet, np.linalg.slogdet(MATRIX)[1])
    close(lazily(lambda: xp.linalg.det(a)), np.linalg.det(MATRIX))
    close(lazily(lambda: xp.linalg.solve(a, b)), np.linalg.solve(MATRIX, b.compute()))
    close(lazily(lambda: xp.linalg.inv(a)), np.linalg.inv(MATRIX))


def test_a_stack_of_matrices_has_its_slogdet_each():
    stack = RNG.normal(size=(3, 4, 4)) + 4.0 * np.eye(4)
    sign, logdet = lazily(lambda: xp.linalg.slogdet(da.from_array(stack, chunks=(2, 2, 3))))
    close(sign, np.linalg.slogdet(stack)[0])
    close(logdet, np.linalg.slogdet(stack)[1])


def test_the_norm_of_a_3d_array_is_numpys():
    t = RNG.normal(size=(3, 2, 3))
    close(lazily(lambda: xp.linalg.norm(da.from_array(t, chunks=2))), np.linalg.norm(t))
    close(lazily(lambda: xp.linalg.norm(da.from_array(t, chunks=1), axis=0, keepdims=True)),
          np.linalg.norm(t, axis=0, keepdims=True))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), [(9, 3), (3, 9), (5, 5), (4, 7), (8, 2), (6, 1)])
def test_convolve_and_correlate_equal_numpys_in_every_mode_and_order(n, m, mode):
    a, v = RNG.normal(size=n), RNG.normal(size=m)
    for chunks in (n, 2, 1):
        da_a, da_v = da.from_array(a, chunks=chunks), da.from_array(v, chunks=2)
        close(lazily(lambda a=da_a, v=da_v: xp.convolve(a, v, mode=mode)), np.convolve(a, v, mode=mode))
        close(lazily(lambda a=da_a, v=da_v: xp.correlate(a, v, mode=mode)), np.correlate(a, v, mode=mode))


def test_repeat_by_counts_built_from_shapes_is_lazy_and_numpys():
    """Triangular counts ``max(0, n - (1 + i))`` from a Dask ``arange``: known without any data."""
    n = 7
    counts = xp.maximum(0, n - (1 + xp.arange(0, n, 1))) + xp.zeros(n, dtype=np.int64)
    got = lazily(lambda: xp.repeat(xp.arange(n), counts))
    np.testing.assert_array_equal(got, np.repeat(np.arange(n), np.maximum(0, n - 1 - np.arange(n))))
    values = da.from_array(RNG.normal(size=n), chunks=3)       # (data repeated by NumPy counts: lazy too)
    np.testing.assert_array_equal(lazily(lambda: xp.repeat(values, np.arange(n))),
                                  np.repeat(values.compute(), np.arange(n)))


def test_repeat_cuts_an_output_chunk_that_would_pass_the_chunk_size():
    with dask.config.set({"array.chunk-size": "64B"}):       # 8 int64 values a chunk
        out = xp.repeat(xp.arange(4), np.array([3, 9, 1, 5]))
    assert out.chunks[0] == (3, 9, 1, 5)         # (9 > 8 alone; each of the others alone: a cut at 8, at 16)
    np.testing.assert_array_equal(out.compute(scheduler="sync"), np.repeat(np.arange(4), [3, 9, 1, 5]))


def test_repeat_by_counts_computed_from_the_data_is_refused_saying_so():
    data = da.from_array(np.array([1, 2, 0]), chunks=2)
    with pytest.raises(NotImplementedError, match="counts computed from the data"):
        xp.repeat(xp.arange(3), data)


#: index tuples, built by NumPy (``m = np``) or by Dask from shapes (``m = xp``), as the generated code builds them
INDICES = {
    "a column": lambda m: (m.arange(5), 0),                     # a progression: a slice
    "a reversed row": lambda m: (1, 3 - m.arange(4)),          # after an integer (Dask's own assignment fails)
    "an open mesh": lambda m: (m.arange(1, 3)[:, None], m.arange(0, 4, 2)[None, :]),
    "not a progression": lambda m: ((m.arange(3) * 2 + 4) % 5, 1),      # [4, 1, 3]: written by where
    "a repeated index": lambda m: (m.arange(3) // 2 * 2 + 1, 2),        # [1, 1, 3]: the last write wins
}


@pytest.mark.parametrize("how", sorted(INDICES))
def test_a_write_through_index_arrays_is_numpys(how):
    x = RNG.normal(size=(5, 4))
    want = x.copy()
    index = INDICES[how](np)
    v = RNG.normal(size=want[index].shape)
    want[index] = v
    for chunks in (5, 2, 1):
        target = da.from_array(x, chunks=chunks)
        got = lazily(lambda t=target: dask_helpers._put(t, INDICES[how](xp), da.from_array(v, chunks=1)))
        np.testing.assert_array_equal(got, want)


def test_a_write_through_an_index_array_computed_from_the_data_is_refused_saying_so():
    x = da.from_array(np.zeros(4), chunks=2)
    with pytest.raises(NotImplementedError, match="index array computed from the data"):
        dask_helpers._put(x, (da.from_array(np.array([0, 2])),), 1.0)


def test_a_branch_nested_in_a_branch_fills_its_lanes():
    """``xp.full(ix.shape[0], 0.0)`` over the lanes of a mask: one value per selected lane, in their chunks."""
    x = np.arange(9.0)
    dx = da.from_array(x, chunks=2)
    (ix,) = xp.nonzero(dx % 3 != 0)
    got = lazily(lambda: xp.full(ix.shape[0], 0.5) + xp.take(dx, ix) + xp.zeros(ix.shape[0]))
    np.testing.assert_array_equal(got, 0.5 + x[x % 3 != 0])


def test_f_chunking_says_which_argument_was_gathered_for_which_function_and_why():
    from corpus_linalg import LINALG

    e = next(e for e in LINALG if e.name == "gaussian_loglik")
    args = e.make_args(np.random.default_rng(0))
    f = cn.coarsen(e.fn, wrt=e.wrt or None)
    dargs = tuple(da.from_array(a, chunks=2) if np.ndim(a) >= 1 else a for a in args)
    with dask.config.set(scheduler="sync"):
        f.value_and_grad(*dargs)
    said = str(f.chunking)
    assert ("gathered into one block for np.linalg.slogdet: the argument S (the determinant needs the whole "
            "matrix)") in said, said
    with dask.config.set(scheduler="sync"):
        f.value_and_grad(*(da.from_array(a) if np.ndim(a) >= 1 else a for a in args))
    assert "gathered" not in str(f.chunking)         # (in one chunk: nothing gathered, nothing said)

"""The numba ``xp`` namespace's ``empty``, ``zeros`` and ``zeros_like`` (``lower/numba_xp_fills.py``) against NumPy's.

Each is an intrinsic written into its caller (nothing else compiled).  Each is compared with NumPy's
array: dtype, shape, C order, +0.0 in every element (not -0.0; ``empty``: its shape and dtype only), a fresh array
(writing it leaves the argument as it was), and NumPy's ValueError and message for a negative length or a size too
big.  A chunk buffer of ``empty`` filled in a loop vectorizes as one of Numba's ``np.empty`` does.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from coarsen_nb.lower.numba_xp_fills import xp


@numba.njit
def _zeros_forms(a, n, m):
    return (xp.zeros(n), xp.zeros((n,)), xp.zeros(a.shape), xp.zeros(n, dtype=xp.float64), xp.zeros((n, 2)),
            xp.zeros(n, dtype=xp.int64), xp.zeros_like(a), xp.zeros_like(a, dtype=xp.float64), xp.zeros_like(a[::2]),
            xp.zeros_like(m), xp.zeros_like(a, dtype=xp.int64), xp.zeros((2, n, 3)), xp.zeros_like(m.T),
            xp.zeros_like(m, dtype=xp.float64), xp.zeros(()))


def _numpy_forms(a, n, m):
    return (np.zeros(n), np.zeros((n,)), np.zeros(a.shape), np.zeros(n, dtype=np.float64), np.zeros((n, 2)),
            np.zeros(n, dtype=np.int64), np.zeros_like(a), np.zeros_like(a, dtype=np.float64), np.zeros_like(a[::2]),
            np.zeros_like(m), np.zeros_like(a, dtype=np.int64), np.zeros((2, n, 3)), np.zeros_like(m.T),
            np.zeros_like(m, dtype=np.float64), np.zeros(()))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_zeros_and_zeros_like_equal_numpys(n):
    a = np.linspace(-1.0, 1.0, n)
    m = np.ones((3, 2))
    got, want = _zeros_forms(a, n, m), _numpy_forms(a, n, m)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.flags.c_contiguous, (g, w)
        np.testing.assert_array_equal(g, w)
        assert not np.signbit(g).any()
    got[6][:] = 5.0                     # (a fresh array: the argument is unchanged)
    np.testing.assert_array_equal(a, np.linspace(-1.0, 1.0, n))


def test_zeros_of_a_negative_length_raises_numpys_error():
    with pytest.raises(ValueError) as numpys:
        np.zeros(-1)
    with pytest.raises(ValueError) as ours:
        _zeros_forms(np.zeros(2), -1, np.ones((3, 2)))
    assert str(ours.value) == str(numpys.value)


@numba.njit
def _empty_forms(a, n):
    return (xp.empty(n), xp.empty((n,)), xp.empty(a.shape), xp.empty(n, dtype=xp.int64), xp.empty((2, n, 3)),
            xp.empty((n, 2), dtype=a.dtype), xp.empty(np.int32(n), dtype=xp.float32), xp.empty(()))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_empty_has_numpys_shape_and_dtype(n):
    a = np.linspace(-1.0, 1.0, n)
    want = (np.empty(n), np.empty((n,)), np.empty(a.shape), np.empty(n, dtype=np.int64), np.empty((2, n, 3)),
            np.empty((n, 2), dtype=a.dtype), np.empty(np.int32(n), dtype=np.float32), np.empty(()))
    got = _empty_forms(a, n)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.flags.c_contiguous
        assert g.strides == w.strides or not w.size     # (an empty array's strides are anything)
        g[...] = 3                      # (writable, its own memory)
        np.testing.assert_array_equal(g, np.full_like(w, 3))


@pytest.mark.parametrize("shape", [-1, (2, -1), (-3, 0)])
def test_empty_of_a_negative_length_raises_numpys_error(shape):
    with pytest.raises(ValueError) as numpys:
        np.empty(shape)
    with pytest.raises(ValueError) as ours:
        numba.njit(lambda s: xp.empty(s))(shape)
    assert str(ours.value) == str(numpys.value)


def _chunked_sum(empty):
    """black_scholes' loop shape: a constant-length chunk buffer filled at ``k - chunk``, then summed."""
    @numba.njit(error_model="numpy")
    def chunked(n, a, b, out):
        acc = 0.0
        terms = empty(256)
        for chunk in range(0, n, 256):
            stop = n if n < chunk + 256 else chunk + 256
            for k in range(chunk, stop):
                terms[k - chunk] = a[k] * b[k] + 2.0 * a[k]
            for j in range(stop - chunk):
                acc += terms[j]
                out[chunk + j] += terms[j]
        return acc
    return chunked


def test_a_chunk_buffer_loop_vectorizes_as_with_numbas_empty():
    """The buffer's constant length 256 visible to LLVM made InstCombine rewrite the index wraparound into bit
    arithmetic and the filling loop stayed scalar (black_scholes' gradient 23 -> 58 ms); its lengths are hidden."""
    a, b = np.linspace(0.0, 1.0, 1000), np.linspace(2.0, 3.0, 1000)
    results = {}
    for name, empty in [("numba", np.empty), ("xp", xp.empty)]:
        function, out = _chunked_sum(empty), np.zeros(1000)
        total = function(1000, a, b, out)
        results[name] = total, out, function.inspect_llvm(function.signatures[0]).count("store <")
    np.testing.assert_allclose(results["xp"][1], a * b + 2.0 * a, rtol=1e-15)
    assert results["xp"][0] == results["numba"][0] and (results["xp"][1] == results["numba"][1]).all()
    assert results["numba"][2] > 0, "Numba's np.empty loop no longer vectorizes: the comparison says nothing"
    assert results["xp"][2] >= results["numba"][2]


def test_an_array_too_big_raises_numpys_error():
    @numba.njit
    def square(n):
        return xp.empty((n, n))

    with pytest.raises(ValueError, match="array is too big") as numpys:
        np.empty((2**40, 2**40))
    with pytest.raises(ValueError, match="array is too big") as ours:
        square(2**40)
    assert str(ours.value) == str(numpys.value)


def test_allocations_compile_nothing_but_their_caller():
    """The allocations are written into the caller: Numba compiles no implementation of its own for them (its
    ``np.empty``, the zeros, the allocator per error model), which every cold start paid."""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    @numba.njit(error_model="numpy")
    def in_a_loop_function(n):
        return xp.empty(n), xp.zeros((n, 2), dtype=xp.int64)

    @numba.njit
    def in_an_entry(a):
        return xp.zeros(a.shape), xp.zeros_like(a), xp.empty((3,), dtype=a.dtype), in_a_loop_function(a.shape[0])

    with event.install_listener("numba:compile", Listener()):
        zeros, like, empty, (loop_empty, loop_zeros) = in_an_entry(np.ones(4))
    assert sorted(compiled) == ["in_a_loop_function", "in_an_entry"]
    assert zeros.shape == like.shape == loop_empty.shape == (4,) and empty.shape == (3,)
    np.testing.assert_array_equal(loop_zeros, np.zeros((4, 2), dtype=np.int64))
    assert not zeros.any() and not like.any()

"""The JVP reads an argument's tangent as the caller's array (no ``d_x + zeros(x.shape)`` copy): it must
give the same directional derivative, never write into the caller's tangent, and take integer tangents as
floats."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close

import coarsen_nb as cn


def reshaped_views(x, m):
    a = np.atleast_2d(x)
    b = np.reshape(m, (-1,))
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(x[1:] * x[:-1])


def written_in_place(x):
    u = x.copy()
    for i in range(1, len(u)):
        u[i] = u[i - 1] * 0.5 + u[i]
    return np.sum(u ** 2)


def matmul_cumsum(m, x):
    return np.sum(np.cumsum(m @ x) ** 2) + np.sum(np.diff(x) ** 2)


CASES = [
    (reshaped_views, lambda r: (r.normal(size=5), r.normal(size=(2, 3)))),
    (written_in_place, lambda r: (r.normal(size=6),)),
    (matmul_cumsum, lambda r: (r.normal(size=(3, 4)), r.normal(size=4))),
]


def _directional_fd(fn, args, tangents, eps=1e-6):
    plus = fn(*(a + eps * t for a, t in zip(args, tangents, strict=True)))
    minus = fn(*(a - eps * t for a, t in zip(args, tangents, strict=True)))
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}])
@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_argument_tangents_are_read_not_written(fn, make, selection):
    r = np.random.default_rng(3)
    args = make(r)
    tangents = tuple(r.normal(size=np.shape(a)) for a in args)
    kept = tuple(t.copy() for t in tangents)
    f = cn.coarsen(fn, **selection)
    value, d = f.jvp(args, tangents)
    assert_close(value, fn(*args), rtol=1e-12, atol=1e-12, what="value")
    assert_close(d, _directional_fd(fn, args, tangents), rtol=1e-6, atol=1e-7, what="jvp")
    for t, k in zip(tangents, kept, strict=True):
        np.testing.assert_array_equal(t, k)          # the caller's tangent is unchanged


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_integer_tangents_are_taken_as_floats(fn, make):
    r = np.random.default_rng(4)
    args = make(r)
    ints = tuple(r.integers(-3, 4, size=np.shape(a)) for a in args)
    f = cn.coarsen(fn)
    _, d_int = f.jvp(args, ints)
    _, d_float = f.jvp(args, tuple(t.astype(float) for t in ints))
    assert np.asarray(d_int).dtype == np.float64
    assert_close(d_int, d_float, rtol=1e-14, atol=0, what="jvp")

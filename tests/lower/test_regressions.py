"""Regression tests, each named after what broke."""

from __future__ import annotations

import numpy as np
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn


def constant_partial_inside_sum(b, x):
    g = 0.0
    for i in range(len(x)):
        g += b + x[i]          # d/db of the summand is 1 at every i: the adjoint must be summed over i
    return g * g


def test_constant_partial_inside_reduction_is_summed_over_the_loop():
    x = np.array([0.3, -1.2, 2.0, 0.7])
    f = cn.coarsen(constant_partial_inside_sum, wrt=("b", "x"))
    gb, gx = f.grad(0.4, x)
    assert_close(gb, finite_difference(constant_partial_inside_sum, (0.4, x), 0))
    assert_close(gx, finite_difference(constant_partial_inside_sum, (0.4, x), 1))


def nested_read_shadowed(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        s += z * z * w[i % len(w)]
    return s


def test_read_of_an_array_at_an_index_that_an_inner_loop_rebinds():
    rng = np.random.default_rng(1)
    w, X = rng.normal(size=3), rng.normal(size=(5, 3))
    f = cn.coarsen(nested_read_shadowed, wrt=("w",))
    assert_close(f.grad(w, X), finite_difference(nested_read_shadowed, (w, X), 0))


def invariant_read_in_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[0] * x[i]       # x[0] read at every i: its adjoint is scattered n times
    return s


def test_invariant_index_read_inside_a_reduction_scatters_every_iteration():
    x = np.array([1.5, -0.5, 2.0])
    f = cn.coarsen(invariant_read_in_sum)
    assert_close(f.grad(x), finite_difference(invariant_read_in_sum, (x,), 0))

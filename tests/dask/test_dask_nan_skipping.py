"""A loop's ``if g > m: m = g`` extremum on Dask arrays: its NaN test stays lazy.

Such a loop steps over a NaN term (``phi/recurrence_classes.nan_skipping``: the reduction ``red``, and where it is
a NaN the reduction again with NaN terms skipped).  The NumPy module prints the choice as ``if red == red:``; on a
0-d Dask array that Python ``if`` computed the maximum while the graph was being built.  The dask module prints
both arms and ``xp.where`` of them (``lower/dask_printing.py``: ``nan_test_choice``, ``both_arms``), in the
value and in the gradient's one-hot.

References: the plain function for the value, the NumPy backend on the same NumPy arrays for the gradient (itself
checked against central differences, NaN data included, in tests/lower/test_loop_extrema_nan.py).  Laziness as
in test_dask_lazy.py: a scheduler that fails at the first compute other than the runtime's one at return."""

from __future__ import annotations

import dask
import numpy as np
import pytest
from dask_chunks import CHUNKINGS, EarlyComputes, chunked, computed
from extremum_loops import above, below, from_minus_infinity

import coarsen_nb as cn

FUNCTIONS = {f.__name__: f for f in (above, below, from_minus_infinity)}

#: the data: no NaN, a NaN among the terms (skipped), NaN terms only (the start kept)
DATA = {
    "finite": np.array([0.3, -1.7, 1.2, -0.5, 0.7, 2.1, -0.2]),
    "a-nan": np.array([0.3, -1.7, np.nan, -0.5, 0.7, 2.1, -0.2]),
    "nan-first": np.array([np.nan, -1.7, 1.2, -0.5, 0.7, 2.1, -0.2]),
    "all-nan": np.full(5, np.nan),
}

#: (a, m0): a start below every term and one above some
STARTS = ((0.8, -3.0), (-1.3, 0.25))


def _results(name, x, how, scheduler=None):
    """The compiled function's value and gradient on ``x`` chunked as ``how``, and the references: the plain
    function's value and the NumPy backend's gradient."""
    f = cn.coarsen(FUNCTIONS[name], wrt=("a", "x"))
    out = []
    for a, m0 in STARTS:
        want_value = FUNCTIONS[name](a, m0, x)
        want_grads = cn.coarsen(FUNCTIONS[name], wrt=("a", "x"), backend="numpy").grad(a, m0, x)
        dx = chunked(x, how)
        if scheduler is None:
            got = f.value_and_grad(a, m0, dx)
        else:
            with dask.config.set(scheduler=scheduler):
                got = f.value_and_grad(a, m0, dx)
        out.append((got, want_value, want_grads))
    return f, out


def _assert_equal(got, want_value, want_grads):
    value, grads = computed(got[0]), computed(got[1])
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12, equal_nan=True)
    for g, w in zip(grads, want_grads, strict=True):
        np.testing.assert_allclose(computed(g), w, rtol=1e-12, atol=1e-12, equal_nan=True)


#: (data, chunking): every data set in uneven chunks, a NaN among the terms in each chunking
ON_A_CLUSTER = sorted({(d, "uneven") for d in DATA} | {("a-nan", how) for how in CHUNKINGS})


@pytest.mark.parametrize(("data", "how"), ON_A_CLUSTER)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_nan_skipping_extremum_on_a_cluster_equals_the_plain_function(client, name, data, how):
    with client.as_current():
        _, results = _results(name, DATA[data], how)
    for got, want_value, want_grads in results:
        _assert_equal(got, want_value, want_grads)


@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("data", ("finite", "a-nan"))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_nan_skipping_extremum_computes_nothing_until_its_result_is(name, data, how):
    _, results = _results(name, DATA[data], how, scheduler=EarlyComputes(dask.get, fail=True))
    with dask.config.set(scheduler="sync"):
        for got, want_value, want_grads in results:
            _assert_equal(got, want_value, want_grads)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_value_alone_computes_nothing_until_it_is_computed(name):
    f = cn.coarsen(FUNCTIONS[name], wrt=("a", "x"))
    x = DATA["a-nan"]
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        got = f(0.8, -3.0, chunked(x, "uneven"))
    with dask.config.set(scheduler="sync"):
        np.testing.assert_allclose(computed(got), FUNCTIONS[name](0.8, -3.0, x), rtol=1e-12, atol=1e-12)

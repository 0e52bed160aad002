"""A loop whose subscripts its tests prove in bounds is compiled without its bounds-checked twin
(``lower/numba_bounds.py``, ``numba_loader``): where a test fails, the loop raises the loader's signal, and the
call runs again on the same module with the twins, which raises the user's IndexError where a read is out of
bounds, and returns the right value where the read that failed the test is guarded by an ``if``.

The references: the plain Python function (its value, its IndexError), the gradient written by hand, and the
NumPy backend's error (the same line).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError
from coarsen_nb.lower.numba_bounds import TWINS_FLAG

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

GUARDED = """
def guarded(a, x, y, m):
    s = 0.0
    for i in range(y.shape[0]):
        for j in range(x.shape[0]):
            if i < m:
                s += a * x[i] * y[j]
    return s
"""

ROWS = """
def rows(w, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(w.shape[0]):
            z += X[i, j] * w[j]
        total += (z - y[i]) ** 2
    return total
"""


def _plain(src: str, name: str):
    space: dict = {}
    exec(src, space)                # noqa: S102 (this file's own source)
    return space[name]


def _twin_signatures(dispatcher) -> dict:
    """The checked twins in the dispatcher's module (``_soi2_vjp_rows`` beside ``_soi2_vjp_rows_in_bounds``),
    each with the signatures Numba compiled for it."""
    space = dispatcher.py_func.__globals__
    twins = {name.replace("_in_bounds", "") for name in space if name.startswith("_soi") and "_in_bounds" in name}
    return {name: list(space[name].signatures) for name in twins}


def test_a_guarded_read_past_a_test_runs_again_with_the_twins_and_is_right():
    """y longer than x: the rows' test (``len(y) > len(x)``) fails, but ``x[i]`` is read only where i < m."""
    f = cn.coarsen(GUARDED, wrt=("a",), backend="numba")
    plain = _plain(GUARDED, "guarded")
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(5), rng.standard_normal(5)
    assert_close(f.grad(0.7, x, y, 5), x.sum() * y.sum(), rtol=1e-12, what="in bounds")
    compiled = f._specialize((0.7, x, y, 5))
    assert "_vjp_rows_in_bounds" in compiled.source
    first = compiled.grad.dispatcher
    assert first.py_func.__globals__[TWINS_FLAG] is False
    twins = _twin_signatures(first)
    assert twins and not any(twins.values()), f"a checked twin was compiled where no test failed: {twins}"
    short = x[:3].copy()
    kept = (short.copy(), y.copy())
    got = f.grad(0.7, short, y, 3)
    assert_close(got, short.sum() * y[:3].sum(), rtol=1e-12, what="guarded, with the twins")
    assert_close(f(0.7, short, y, 3), plain(0.7, short, y, 3), rtol=1e-12, what="the value, guarded")
    np.testing.assert_array_equal(short, kept[0])
    np.testing.assert_array_equal(y, kept[1])
    now = compiled.grad.dispatcher
    assert now is not first and now.py_func.__globals__[TWINS_FLAG] is True
    assert_close(f.grad(0.7, x, y, 5), x.sum() * y.sum(), rtol=1e-12, what="in bounds again")


def test_a_read_out_of_bounds_after_the_signal_is_the_users_index_error():
    """More weights than X has columns: the plain loop raises IndexError; so does numba, at the NumPy
    backend's line, after the signal and the rerun with the twins."""
    f = cn.coarsen(ROWS, wrt=("w",), backend="numba")
    by_numpy = cn.coarsen(ROWS, wrt=("w",), backend="numpy")
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((5, 3)), rng.standard_normal(5)
    w = rng.standard_normal(3)
    assert_close(f.grad(w, X, y), by_numpy.grad(w, X, y), rtol=1e-12, what="in bounds")
    assert f._specialize((w, X, y)).grad.dispatcher.py_func.__globals__[TWINS_FLAG] is False
    long = rng.standard_normal(4)
    with pytest.raises(IndexError):
        _plain(ROWS, "rows")(long, X, y)
    with pytest.raises(CoarsenError) as numba_error:
        f.grad(long, X, y)
    with pytest.raises(CoarsenError) as numpy_error:
        by_numpy.grad(long, X, y)
    assert isinstance(numba_error.value, IndexError)
    assert numba_error.value.line == numpy_error.value.line
    assert str(numba_error.value) == str(numpy_error.value)
    assert_close(f.grad(w, X, y), by_numpy.grad(w, X, y), rtol=1e-12, what="in bounds after the error")

"""NaN, ±inf and ±0 in either argument of a two-argument max or min: the compiled function gives the plain one's
value, and its gradient where that value is finite and the two arguments differ.

Three definitions that agree on numbers and not on a NaN:

* Python's ``max(a, b)`` is ``b if b > a else a`` (``min``: ``b < a``): a NaN in either argument gives ``a``;
* NumPy's ``np.maximum(a, b)`` gives a NaN where either is one (``np.minimum`` too);
* ``np.fmax(a, b)`` gives the other argument where one is a NaN (``np.fmin`` too).

Each was lifted as one γ(a >= b, a, b), which gives ``b`` where either is a NaN: the plain function's value
for none of the three.  Scalars and arrays, the NumPy and numba backends."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from gradcheck import finite_difference

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning
from coarsen_nb.numba_loader import NumbaFallbackWarning

SPECIAL = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.0)
PAIRS = tuple(itertools.product(SPECIAL, SPECIAL))


def builtin_max(a, b):
    return max(a * 1.0, b * 1.0)


def builtin_min(a, b):
    return min(a * 1.0, b * 1.0)


def builtin_max3(a, b):
    return max(a * 1.0, b * 1.0, 0.25)


def np_maximum(a, b):
    return np.maximum(a * 1.0, b * 1.0)


def np_minimum(a, b):
    return np.minimum(a * 1.0, b * 1.0)


def np_fmax(a, b):
    return np.fmax(a * 1.0, b * 1.0)


def np_fmin(a, b):
    return np.fmin(a * 1.0, b * 1.0)


_BUILTIN_LEFT = pytest.mark.xfail(strict=True, reason="builtin max/min still lift as np.maximum's γ(a >= b, a, b) "
                                  "(b where either is a NaN): Python's chain is on branch h-rel21-builtin, not merged "
                                  "(Dask's empty rows and the clamp's masked arms, RESULTS.md stop 46)")
SCALAR_FUNCTIONS = (*(pytest.param(f, marks=_BUILTIN_LEFT) for f in (builtin_max, builtin_min, builtin_max3)),
                    np_maximum, np_minimum, np_fmax, np_fmin)


def arrays_maximum(a, x, y):
    return np.maximum(a * x, y)


def arrays_fmin(a, x, y):
    return np.fmin(a * x, y)


def arrays_sum_maximum(a, x, y):
    return np.sum(np.maximum(a * x, y))


def arrays_sum_fmax(a, x, y):
    return np.sum(np.fmax(a * x, y))


def _same(got, want) -> bool:
    """Equal values, a NaN for a NaN, and the sign of a zero kept."""
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("error", FallbackWarning)          # no other selection or backend
    warnings.simplefilter("error", NumbaFallbackWarning)
    warnings.simplefilter("ignore", RuntimeWarning)         # inf - inf in the differences, as Python's own
    return w


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fn", SCALAR_FUNCTIONS, ids=lambda f: getattr(f, "__name__", None))
def test_scalars_give_the_plain_functions_value_and_gradient(fn, backend):
    pytest.importorskip(backend)
    f = cn.coarsen(fn, wrt=("a", "b"), backend=backend)
    w = _quiet()
    try:
        for a, b in PAIRS:
            want = float(fn(a, b))
            got = f(a, b)
            # (NumPy's fmax of ±0 and ∓0 is either zero: a for two scalars and short arrays, b for long ones)
            same = got == want if fn in (np_fmax, np_fmin) and a == b == 0.0 else _same(got, want)
            assert same, f"{fn.__name__}({a!r}, {b!r}): {got!r} != the plain function's {want!r}"
            grads = f.grad(a, b)
            if not math.isfinite(want) or a == b:
                continue        # (a tie, or a non-finite value: no derivative to compare with)
            for k in (0, 1):
                fd = finite_difference(fn, (a, b), k)
                if math.isfinite(fd):
                    assert grads[k] == pytest.approx(fd, abs=1e-6), f"{fn.__name__}({a!r}, {b!r}): d/d arg {k}"
                else:
                    # the differences of an infinite argument: Python's derivative there is the other
                    # argument's (it never reads this one): 0
                    assert grads[k] == 0.0, f"{fn.__name__}({a!r}, {b!r}): d/d arg {k} {grads[k]!r}"
    finally:
        w.__exit__(None, None, None)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fn", (arrays_maximum, arrays_fmin), ids=lambda f: f.__name__)
def test_arrays_give_the_plain_functions_values(fn, backend):
    pytest.importorskip(backend)
    x = np.array([a for a, _ in PAIRS])
    y = np.array([b for _, b in PAIRS])
    f = cn.coarsen(fn, backend=backend)
    w = _quiet()
    try:
        got, want = np.asarray(f(1.0, x, y)), fn(1.0, x, y)
    finally:
        w.__exit__(None, None, None)
    bad = [(x[i], y[i], got[i], want[i]) for i in range(len(x)) if not _same(got[i], want[i])]
    assert not bad, f"{fn.__name__}: (x, y, got, NumPy's) {bad}"


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fn", (arrays_sum_maximum, arrays_sum_fmax), ids=lambda f: f.__name__)
def test_array_gradients_where_the_value_is_finite(fn, backend):
    """Finite data with ±0 and a NaN in y that fmax steps over (np.maximum's sum is then a NaN: value only)."""
    pytest.importorskip(backend)
    x = np.array([1.5, -2.0, 0.0, -0.0, 3.0, -1.0])
    y = np.array([0.5, -0.0, 1.0, -3.0, math.nan, 0.25])
    f = cn.coarsen(fn, wrt=("a", "x", "y"), backend=backend)
    w = _quiet()
    try:
        want = fn(1.25, x, y)
        got = f(1.25, x, y)
        assert _same(got, want), f"{fn.__name__}: {got!r} != the plain function's {want!r}"
        if not math.isfinite(want):
            return
        grads = f.grad(1.25, x, y)
        for k, g in enumerate(grads):
            fd = finite_difference(fn, (1.25, x, y), k)
            if k == 2:
                fd = np.where(np.isnan(y), 0.0, fd)       # a NaN element fmax steps over: derivative 0
            np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6, err_msg=f"{fn.__name__}: d/d arg {k}")
    finally:
        w.__exit__(None, None, None)


def clipped(a, x):
    return np.sum(np.clip(a * x, 0.0, 1.0))


@pytest.mark.xfail(strict=True, reason="np.clip still lifts as γ(x >= lo, x, lo) then γ(m <= hi, m, hi): a NaN x "
                   "gives lo where NumPy gives NaN (found at stop 46, not changed: its own γ chain in "
                   "rules/arrays._clip_lift, whose folding into a clamp's one where the masked-arms tests pin)")
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_nan_in_np_clip(backend):
    pytest.importorskip(backend)
    x = np.array([0.5, math.nan])
    assert _same(cn.coarsen(clipped, wrt=("a",), backend=backend)(1.0, x), clipped(1.0, x))

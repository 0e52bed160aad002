"""A Python ``/`` by a scalar of 0 raises ZeroDivisionError, however the compiled code computes the operands.

The user's ``total / n`` with ``n == 0`` raises in Python; the compiled function must too, not return NaN:
its numbers may be NumPy floats (a batched or fused sum is ``xp.sum(...)``, and ``np.float64(0.0) / 0`` is
nan with a RuntimeWarning), or run in a numba loop function under NumPy's error model (a scan's mean over no
steps).  The printers check such a divisor (``Printer.checked_division``): where the divisor is a scalar in
the user's program (a length, a loop's count, a sum of Python numbers), not an element of an array the user
divides elementwise, which keeps NumPy's inf and nan.  The reference is the plain function, its exception type
included; where it returns, the value and the gradient (central differences) are checked too.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.kernels.asian_option import asian_option

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def mean_of_squares(x, a):
    """A sum over the elements divided by their number (``len``)."""
    s = 0.0
    for i in range(len(x)):
        s += (a * x[i]) ** 2
    return s / len(x)


def over_a_sum(x, a):
    """A number divided by a sum over an empty array: ``a / 0.0`` in the user's loop."""
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i])
    return a / s


def over_a_count(x, a):
    """A loop's own count of its steps as the divisor."""
    acc, n = 0.0, 0
    for i in range(len(x)):
        acc += a * math.sin(x[i])
        n += 1
    return acc / n


def per_row_mean(z, a):
    """Each row's mean over its columns (a scan's count in numba, lanes in NumPy), then over the rows."""
    total = 0.0
    n_rows, n_cols = z.shape
    for p in range(n_rows):
        s = a
        running = 0.0
        for t in range(n_cols):
            s = s * math.exp(0.1 * z[p, t])
            running += s
        total += running / n_cols
    return total / n_rows


def floor_over_a_count(x, a):
    """``//`` and ``%`` by a count of 0 raise as ``/`` does."""
    s = 0.0
    for i in range(len(x)):
        s += a * x[i]
    return s // len(x) + a * (s % len(x))


def spread(x, a):
    """A sum of array elements over ``len(x) - 1``: on one record Python's sum is a NumPy float (it has a term),
    and its division by 0 is inf with a warning, not a ZeroDivisionError."""
    s = 0.0
    for i in range(len(x)):
        s += (x[i] - a) ** 2
    return s / (len(x) - 1)


def elementwise(x, y, a):
    """An elementwise division of arrays keeps NumPy's inf (the user's own NumPy semantics)."""
    return float(np.sum(a * x / y))


SELECTIONS = [pytest.param({}, id="default"), pytest.param({"max_soi": 1}, id="L=1"),
              pytest.param({"per_block": True}, id="per-block")]
BACKENDS = ["numpy", "numba"]
PROGRAMS = [mean_of_squares, over_a_sum, over_a_count, per_row_mean, floor_over_a_count]
# NumPy runs a loop over independent rows as lanes of arrays (phi/batching.py): each row's ``running / n_cols``
# is one array division of the lanes by 0, nan, and the array printer cannot tell lanes from the user's own
# arrays, whose division is NumPy's (lower/division_checks.py, "Left")
# (under warnings as errors: NumPy's RuntimeWarning of the nan, as the runtime reports it)
_LANES_DIVIDE = pytest.mark.xfail(strict=True, raises=(pytest.fail.Exception, RuntimeWarning), reason=(
    "known: a division inside a batched loop's lanes is array code (nan at a divisor of 0)"))
# The checked division raises where its numerator is 0 (a sum of no terms is Python's 0.0) or a Python number
# in the compiled code; a parameter divided by an empty sum in one fused SOI is a NumPy float there
# (lower/division_checks.py, "Left": the numerator's provenance)
_PARAMETER_OVER_EMPTY = pytest.mark.xfail(strict=True, raises=(pytest.fail.Exception, RuntimeWarning), reason=(
    "known (stop 46): a / s with s an empty sum of Python numbers fused into one SOI: a is a NumPy float there, "
    "and _div raises only for a numerator of 0, so the value is inf where Python raises"))
_COMPILED: dict = {}


def _compiled(fn, backend, selection):
    key = (fn.__name__, backend, tuple(sorted(selection.items())))
    if key not in _COMPILED:
        _COMPILED[key] = cn.coarsen(fn, wrt=("a",), backend=backend, **selection)
    return _COMPILED[key]


def _empty(fn):
    if fn is per_row_mean:
        return np.zeros((3, 0))
    return np.zeros(0)


def _data(fn):
    rng = np.random.default_rng(7)
    return rng.normal(size=(3, 4)) if fn is per_row_mean else rng.normal(size=5)


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize(("fn", "backend"), [
    pytest.param(fn, backend, marks=[_LANES_DIVIDE] if (fn, backend) == (per_row_mean, "numpy") else [],
                 id=f"{fn.__name__}-{backend}") for fn in PROGRAMS for backend in BACKENDS])
def test_a_scalar_divisor_of_zero_raises_as_python_does(fn, backend, selection, request):
    if fn is over_a_sum and not selection:
        request.applymarker(_PARAMETER_OVER_EMPTY)
    x, a = _empty(fn), 0.7
    with pytest.raises(ZeroDivisionError):
        fn(x, a)
    f = _compiled(fn, backend, selection)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # (not a RuntimeWarning of NumPy's nan, nor a fallback)
        with pytest.raises(ZeroDivisionError):
            f(x, a)
        with pytest.raises(ZeroDivisionError):
            f.value_and_grad(x, a)
    # (``f.grad`` alone computes no value: its derivative code divides as IEEE 754 does, as JAX's gradient)


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_nonzero_divisor_gives_pythons_value_and_gradient(fn, backend, selection):
    x, a = _data(fn), 0.7
    f = _compiled(fn, backend, selection)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, grad = f.value_and_grad(x, a)
    assert math.isclose(value, fn(x, a), rel_tol=1e-12, abs_tol=1e-14)
    h = 1e-6
    assert math.isclose(grad, (fn(x, a + h) - fn(x, a - h)) / (2 * h), rel_tol=1e-6, abs_tol=1e-8)


@pytest.mark.parametrize("backend", [pytest.param("numpy", marks=_LANES_DIVIDE), "numba"])
def test_the_mean_over_no_steps_of_asian_option_raises(backend):
    """asian_option's ``running / n_steps`` with paths but no steps: a scan's count (numba) or lanes (NumPy)."""
    z = np.zeros((4, 0))
    with pytest.raises(ZeroDivisionError):
        asian_option(z, 1.0, 0.2, 0.9)
    f = cn.coarsen(asian_option, wrt=("s0", "sigma", "strike"), backend=backend)
    with pytest.raises(ZeroDivisionError):
        f(z, 1.0, 0.2, 0.9)
    with pytest.raises(ZeroDivisionError):
        f.value_and_grad(z, 1.0, 0.2, 0.9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_paths_and_no_steps_raise_at_the_mean_over_paths(backend):
    """No paths: the per-path mean is never reached; Python raises at ``payoff / n_paths``, and so do we."""
    z = np.zeros((0, 0))
    with pytest.raises(ZeroDivisionError):
        asian_option(z, 1.0, 0.2, 0.9)
    f = cn.coarsen(asian_option, wrt=("s0", "sigma", "strike"), backend=backend)
    with pytest.raises(ZeroDivisionError):
        f(z, 1.0, 0.2, 0.9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_elementwise_division_of_arrays_keeps_numpys_infinity(backend):
    x, y = np.array([1.0, 2.0]), np.array([0.5, 0.0])
    with np.errstate(divide="ignore"):
        want = elementwise(x, y, 0.7)
        got = cn.coarsen(elementwise, wrt=("a",), backend=backend)(x, y, 0.7)
    assert want == math.inf and got == want


_ENTRY_RAISES = pytest.mark.xfail(strict=True, raises=ZeroDivisionError, reason=(
    "known, older than stop 46: numba's entry point runs Python's error model, where the sum is a float and "
    "s / 0 raises; Python's s is a NumPy float (it has a term) and gives inf"))


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=_ENTRY_RAISES)])
def test_a_sum_of_elements_over_zero_divides_as_numpy_does(backend, selection):
    """``s / (len(x) - 1)`` on one record: Python's ``s`` is a NumPy float, so the value is inf, not an error."""
    x = np.array([0.25])
    with np.errstate(divide="ignore"):
        want = spread(x, 0.7)
        got = _compiled(spread, backend, selection)(x, 0.7)
    assert want == math.inf and got == want

"""A maximum's adjoint scattered into an array at its one point (``ScatterAdjoints._arg_scatter``,
``SegmentPrinting.arg_scatter``): ``b_x[lo + step*k] += c·[k = argmax]`` over a loop is printed as
``_add_at(b_x, lo + step*ix, c)`` (``b_x[lo + step*ix] += c``) with ``ix`` the first arg-extremum's position (an
index array of one element, none for an empty loop), not as a one-hot of every point multiplied by ``c``. The
numbers must be the one-hot's: the first of equal maxima gets the cotangent (Python's ``max(m, v)`` keeps the
earlier ``m``), an empty loop adds nothing, and an empty input raises what the plain function raises.

References: the plain function (values, the error), central differences (gradients away from ties), the
first-maximum rule written out by hand (ties), softmax (log-sum-exp, whose gradient does not depend on the
maximum), and for the numba backend the NumPy backend's numbers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from corpus import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import coarsen_nb as cn

BY_NAME = {e.name: e for e in CORPUS}
# the corpus entries whose gradient scatters a maximum's adjoint into an array argument
ENTRIES = ["running_max", "logsumexp"]


def _source_of(f, part):
    src = f.source
    start = src.index(f"def {f.name}_{part}(")
    return src[start:src.index("\ndef ", start + 1)]


def _central(fn, args, wrt_index, h=1e-6):
    """Central differences of ``fn`` in the argument ``wrt_index`` (an array of any shape), element by element."""
    x = np.asarray(args[wrt_index], dtype=float)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = h
        up = fn(*args[:wrt_index], x + e, *args[wrt_index + 1:])
        down = fn(*args[:wrt_index], x - e, *args[wrt_index + 1:])
        out[i] = (up - down) / (2 * h)
    return out


@pytest.mark.parametrize("name", ENTRIES)
def test_the_gradient_adds_at_one_point_not_a_one_hot(name):
    """The printed gradient indexes the arg-maximum's position; no ``arange == argmax`` one-hot is built."""
    e = BY_NAME[name]
    f = cn.coarsen(e.fn, wrt=e.wrt)
    f.grad(*e.make_args(np.random.default_rng(0)))
    grad = _source_of(f, "grad")
    assert "xp.argmax(" in grad and "== xp.argmax(" not in grad
    assert "_add_at(b_x, " in grad and "ix, " in grad.split("_add_at(b_x, ", 1)[1].split("\n")[0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ENTRIES)
def test_values_and_gradients_against_the_plain_function(name, seed):
    """The corpus's inputs (distinct values): the value is the plain function's, the gradient its central
    differences'."""
    e = BY_NAME[name]
    args = e.make_args(np.random.default_rng(seed))
    f = cn.coarsen(e.fn, wrt=e.wrt)
    assert math.isclose(f(*args), e.fn(*args), rel_tol=1e-13, abs_tol=1e-13)
    g = f.grad(*args)
    np.testing.assert_allclose(g, _central(e.fn, args, 0), rtol=1e-6, atol=1e-7)


def _first_max_one_hot(x):
    """d running_max / dx: 1 at the first maximal element (max(m, v) keeps the earlier m on a tie)."""
    out = np.zeros(len(x))
    out[int(np.argmax(x))] = 1.0
    return out


@settings(max_examples=60, deadline=None)
@given(x=arrays(np.float64, st.integers(1, 9), elements=st.sampled_from([-1.5, -0.5, 0.0, 0.5, 2.0])))
def test_running_max_ties_go_to_the_first_maximum(x):
    """Five values, so equal maxima are common (and a lone element): the cotangent goes to the first."""
    f = cn.coarsen(BY_NAME["running_max"].fn, wrt=("x",))
    assert f(x) == BY_NAME["running_max"].fn(x)
    g = f.grad(x)
    np.testing.assert_array_equal(g, _first_max_one_hot(x))
    value, g2 = f.value_and_grad(x)
    assert value == f(x)
    np.testing.assert_array_equal(g2, g)


@settings(max_examples=40, deadline=None)
@given(x=arrays(np.float64, st.integers(1, 9), elements=st.sampled_from([-3.0, -1.0, 0.0, 1.0, 3.0])))
def test_logsumexp_with_equal_maxima_is_softmax(x):
    """With ties at the maximum: the gradient is softmax(x) (the maximum's own adjoint, 1 - Σ softmax, is
    at most a few ulps, and goes to one element)."""
    fn = BY_NAME["logsumexp"].fn
    f = cn.coarsen(fn, wrt=("x",))
    assert math.isclose(f(x), fn(x), rel_tol=1e-13, abs_tol=1e-13)
    g = f.grad(x)
    soft = np.exp(x - x.max())
    np.testing.assert_allclose(g, soft / soft.sum(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ENTRIES)
def test_an_empty_input_raises_what_the_plain_function_raises(name):
    """``m = x[0]`` of an empty array: the plain function's IndexError, from the value and the gradient
    (the adjoint's empty loop is never reached, nor its argmax of nothing)."""
    fn = BY_NAME[name].fn
    x = np.zeros(0)
    with pytest.raises(IndexError):
        fn(x)
    f = cn.coarsen(fn, wrt=("x",))
    with pytest.raises(IndexError):
        f(x)
    with pytest.raises(IndexError):
        f.grad(x)


@pytest.mark.parametrize("name", ENTRIES)
def test_one_element_the_loop_over_the_rest_is_empty(name):
    """One element: the loop over ``x[1:]`` (or the maximum's loop after ``x[0]``) adds nothing at its
    point, and the whole derivative is x[0]'s."""
    fn = BY_NAME[name].fn
    x = np.array([0.7])
    f = cn.coarsen(fn, wrt=("x",))
    assert math.isclose(f(x), fn(x), rel_tol=1e-15)
    g = f.grad(x)
    np.testing.assert_allclose(g, [1.0], rtol=1e-15)


# the numba backend prints the same glue through its namespace: the NumPy backend's numbers, ties and
# edges included (one compilation per entry, its module shared by the inputs)
NUMBA_INPUTS = {
    "tie_first": np.array([0.5, 2.0, -1.0, 2.0, 2.0]),
    "tie_at_0": np.array([2.0, 2.0, 1.0]),
    "one": np.array([0.7]),
    "two_equal": np.array([1.0, 1.0]),
    "ramp": np.linspace(-1.0, 1.0, 1001),
}


@pytest.mark.usefixtures("private_numba_cache")
@pytest.mark.parametrize("name", ENTRIES)
def test_numba_equals_numpy_at_ties_and_edges(name):
    pytest.importorskip("numba")
    fn = BY_NAME[name].fn
    fnum = cn.coarsen(fn, wrt=("x",), backend="numba")
    fref = cn.coarsen(fn, wrt=("x",), backend="numpy")
    for label, x in NUMBA_INPUTS.items():
        assert math.isclose(fnum(x), fref(x), rel_tol=1e-12, abs_tol=1e-12), label
        np.testing.assert_allclose(fnum.grad(x), fref.grad(x), rtol=1e-12, atol=1e-12, err_msg=label)
    grad = _source_of(fnum, "grad")
    assert "_add_at(b_x, " in grad and "ix, " in grad.split("_add_at(b_x, ", 1)[1].split("\n")[0]
    with pytest.raises(IndexError):
        fnum.grad(np.zeros(0))


# -- the rule table's whole-array max/min of a 1-D array (rules/reductions.py, ``AtIndex``) ----------------

def spread(x, y):
    return 2.0 * np.max(x) - np.min(x) + np.max(np.exp(-y)) * np.min(y)


def _spread_grad(x, y):
    """By hand: each extremum's cotangent at its first arg-extremum (NumPy's argmax/argmin)."""
    gx, gy = np.zeros(len(x)), np.zeros(len(y))
    gx[int(np.argmax(x))] += 2.0
    gx[int(np.argmin(x))] -= 1.0
    i = int(np.argmax(np.exp(-y)))
    gy[i] += -np.exp(-y[i]) * np.min(y)
    gy[int(np.argmin(y))] += np.max(np.exp(-y))
    return gx, gy


def test_a_whole_array_extremum_adds_at_its_index():
    f = cn.coarsen(spread, wrt=("x", "y"))
    f.grad(np.arange(3.0), np.arange(3.0))
    grad = _source_of(f, "grad")
    assert "_add_at(b_x, xp.argmax(x, keepdims=True), " in grad and "_add_at(b_x, xp.argmin(x, keepdims=True), " in grad
    assert "== xp.argmax(" not in grad and "xp.arange(" not in grad


@settings(max_examples=60, deadline=None)
@given(x=arrays(np.float64, st.integers(1, 8), elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0])),
       y=arrays(np.float64, st.integers(1, 8), elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0])))
def test_whole_array_extrema_ties_go_to_the_first(x, y):
    """Four values, so ties are common (and one element): the plain function's value, the hand gradient."""
    f = cn.coarsen(spread, wrt=("x", "y"))
    assert math.isclose(f(x, y), spread(x, y), rel_tol=1e-14, abs_tol=1e-14)
    for g, w in zip(f.grad(x, y), _spread_grad(x, y), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-14)


def test_whole_array_extremum_of_nothing_raises_as_numpy():
    x = np.zeros(0)
    with pytest.raises(ValueError):
        spread(x, np.ones(2))
    f = cn.coarsen(spread, wrt=("x", "y"))
    with pytest.raises(ValueError):
        f.grad(x, np.ones(2))


@pytest.mark.parametrize("name", ["methods_reductions", "methods_of_expressions", "methods_in_loop"])
def test_python_forms_with_extrema_against_central_differences(name):
    """The method spellings ``x.max()``, ``np.exp(-x).max()``, ``w.min()`` in a loop: gradients of the corpus
    inputs (values apart) against central differences."""
    from corpus_python_forms import PYTHON_FORMS
    e = next(e for e in PYTHON_FORMS if e.name == name)
    args = e.make_args(np.random.default_rng(1))
    f = cn.coarsen(e.fn, wrt=e.wrt)
    assert math.isclose(f(*args), e.fn(*args), rel_tol=1e-12)
    for k, g in enumerate(f.grad(*args)):
        np.testing.assert_allclose(g, _central(e.fn, args, k), rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("private_numba_cache")
def test_numba_whole_array_extrema_equal_numpy():
    pytest.importorskip("numba")
    fnum = cn.coarsen(spread, wrt=("x", "y"), backend="numba")
    fref = cn.coarsen(spread, wrt=("x", "y"))
    for x, y in [(np.array([2.0, 0.5, 2.0, -1.0, -1.0]), np.array([0.5, -1.0, -1.0])),
                 (np.array([0.3]), np.array([0.7])), (np.linspace(-1, 1, 999), np.cos(np.arange(50.0)))]:
        assert math.isclose(fnum(x, y), fref(x, y), rel_tol=1e-12)
        for g, w in zip(fnum.grad(x, y), fref.grad(x, y), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert "_add_at(b_x, xp.argmax(x, keepdims=True), " in _source_of(fnum, "grad")
    with pytest.raises(ValueError):
        fnum.grad(np.zeros(0), np.ones(2))


@pytest.mark.usefixtures("private_numba_cache")
def test_numba_an_extremum_over_an_axis_after_argmax_was_called_still_compiles():
    """``_first_extremum``'s extremum is a sign, not the function ``xp.argmax``: passed as a value, the function
    kept the caller out of Numba's disk cache (``cannot pickle '_dynfunc._Closure'``) once argmax had been
    typed by a call in the process, and the gradient ran as NumPy code (running_max, then column_range)."""
    pytest.importorskip("numba")
    from corpus_reductions import REDUCTIONS

    from coarsen_nb.numba_loader import NumbaFallbackWarning
    first = BY_NAME["running_max"]
    then = next(e for e in REDUCTIONS if e.name == "column_range")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        for e in (first, then):
            args = e.make_args(np.random.default_rng(0))
            got = cn.coarsen(e.fn, wrt=e.wrt, backend="numba").grad(*args)
            want = cn.coarsen(e.fn, wrt=e.wrt).grad(*args)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

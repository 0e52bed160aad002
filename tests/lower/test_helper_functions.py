"""The generated module's helpers as plain functions, against NumPy references and their definitions.

The helpers (``lower/scalar_helpers.py``, ``array_helpers.py``, ``index_helpers.py``,
``special_helpers.py``) are called here as they are imported, on NumPy: a gather against indexing, a
scatter against ``np.add.at``, a segmented reduction and a scan against the loop they replace, an
adjoint against its primal through ``<A x, y> = <x, A^T y>``.  The registry (``lower/helpers.py``) keeps
their text and reads what each calls from its code.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coarsen_nb.lower import array_helpers, extrema_helpers, helpers, index_helpers, scalar_helpers, special_helpers
from coarsen_nb.lower.helpers import HELPERS, Helper, closure

MODULES = (scalar_helpers, array_helpers, index_helpers, special_helpers, extrema_helpers)
H = {f.__name__: f for module in MODULES for f in module.HELPER_FUNCTIONS}

sizes = st.integers(min_value=0, max_value=7)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _inner(a, b) -> float:
    return float(np.sum(np.asarray(a) * np.asarray(b)))


# -- the registry -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_each_module_lists_every_helper_it_defines(module):
    defined = {n for n, f in vars(module).items() if inspect.isfunction(f) and f.__module__ == module.__name__}
    assert defined == {f.__name__ for f in module.HELPER_FUNCTIONS}


def test_the_registry_holds_each_helper_once_by_its_own_name_and_text():
    assert sorted(HELPERS) == sorted(H) and len(H) == sum(len(m.HELPER_FUNCTIONS) for m in MODULES)
    for name, h in HELPERS.items():
        assert h.name == name and h.source == inspect.getsource(H[name])
        assert h.source.startswith(f"def {name}(")      # one function, under the name it is called by


def test_what_a_helper_calls_is_read_from_its_code():
    def calls(name):
        return HELPERS[name].names & HELPERS.keys()

    assert calls("_index_add") == {"_scatter_sum"}
    assert calls("_erfc") == {"_erf", "_erfc_ratio", "_exp_minus_square"}
    assert calls("_window_outer_add") == {"_window_add"}
    assert calls("_mm_left") == calls("_window") == calls("_block") == set()
    assert closure({"_index_add"}, HELPERS) == {"_index_add", "_scatter_sum", "_segment_sum", "_segments"}
    assert closure({"_softplus", "_lin_scan"}, HELPERS) == {"_softplus", "_lin_scan", "_steps"}
    assert {n for n, h in HELPERS.items() if "math" in h.names} == \
        {"_softplus", "_sigmoid", "_ieee_div", "_ieee_pow", "_ipow", "_segment_max", "_segment_min",
         "_segment_first_zeros"}
    assert closure({"_loop_segment_max"}, HELPERS) == {"_loop_segment_max", "_segment_max", "_segments",
                                                       "_segment_first_zeros", "_segment_min"}


def test_nested_functions_and_text_helpers_are_read_too():
    assert "flip" in HELPERS["_cumprod_vjp"].names        # (inside its nested rev)
    text = Helper.of_source("_CACHE = {}\n\n\ndef _cached(k):\n    return _CACHE.get(k) or _softplus(k)\n")
    assert text.name == "_cached" and closure({"_cached"}, {**HELPERS, "_cached": text}) == {"_cached", "_softplus"}
    assert helpers.code_names(compile("math.inf", "<code>", "eval")) == {"math", "inf"}


# -- scalars ------------------------------------------------------------------------------------------------


def test_scalar_helpers_give_ieee_754_where_python_raises():
    assert H["_ieee_div"](1.0, 0.0) == math.inf and H["_ieee_div"](-1.0, -0.0) == math.inf
    assert math.isnan(H["_ieee_div"](0.0, 0.0)) and H["_ieee_div"](3.0, 2.0) == 1.5
    assert H["_ieee_pow"](0.0, -0.5) == math.inf and H["_ieee_pow"](-0.0, -3.0) == -math.inf
    assert math.isnan(H["_ieee_pow"](-2.0, 0.5)) and H["_ieee_pow"](2.0, 3.0) == 8.0
    assert H["_ipow"](10.0, 400) == math.inf and H["_ipow"](-10.0, 401) == -math.inf and H["_ipow"](3.0, 2) == 9.0


def test_div_raises_pythons_error_though_an_operand_is_a_numpy_float():
    """``np.float64(0.0) / 0`` is nan with a warning; a sum of no terms (0) or a Python number raises, a NumPy
    float other than 0 divides as NumPy's (lower/division_checks.py)."""
    for a, b in [(np.float64(0.0), 0), (0.0, np.float64(0.0)), (1.0, 0), (np.float64(0.0), np.int64(0))]:
        with pytest.raises(ZeroDivisionError):
            H["_div"](a, b)
    with np.errstate(divide="ignore"):
        assert H["_div"](np.float64(2.0), 0) == np.float64(2.0) / 0 == np.inf
    assert H["_div"](np.float64(3.0), 2) == 1.5 and H["_div"](1, 4) == 0.25
    for z in (-800.0, -3.0, 0.0, 2.5, 800.0):
        assert H["_softplus"](z) == pytest.approx(float(np.logaddexp(0.0, z)), rel=1e-15, abs=1e-300)
        assert H["_sigmoid"](z) == pytest.approx(float(np.exp(-np.logaddexp(0.0, -z))), rel=1e-15, abs=1e-300)


# -- gathers and scatters -----------------------------------------------------------------------------------


@settings(max_examples=60)
@given(seeds, st.integers(1, 9), st.integers(-12, 12), sizes, st.integers(-3, 3))
def test_take_is_python_indexing(seed, m, lo, n, step):
    x = np.random.default_rng(seed).normal(size=(m, 2))
    idx = [lo + step * k for k in range(n)]
    if not all(-m <= i < m for i in idx):
        return              # Python raises IndexError there; the generated code never asks for it
    np.testing.assert_array_equal(H["_take"](x, lo, n, step), x[idx])


@settings(max_examples=60)
@given(seeds, st.integers(1, 9), sizes)
def test_scatter_sum_and_segment_sum_are_add_at(seed, m, n):
    rng = np.random.default_rng(seed)
    idx, v = rng.integers(0, m, n), rng.normal(size=n)
    want = np.zeros(m)
    np.add.at(want, idx, v)
    np.testing.assert_allclose(H["_scatter_sum"](idx, v, m), want, rtol=1e-12, atol=1e-12)
    order = np.argsort(idx, kind="stable")
    np.testing.assert_allclose(H["_segment_sum"](idx[order], v[order], m), want, rtol=1e-12, atol=1e-12)


@settings(max_examples=60)
@given(seeds, st.integers(0, 6), sizes, st.sampled_from(["prod", "max", "min"]))
def test_segment_reductions_are_their_loops(seed, m, n, kind):
    rng = np.random.default_rng(seed)
    seg = np.sort(rng.integers(0, max(m, 1), n if m else 0))
    v = rng.normal(size=seg.shape)
    start = {"prod": 1.0, "max": -math.inf, "min": math.inf}[kind]
    step = {"prod": lambda a, b: a * b, "max": max, "min": min}[kind]
    want = [start] * m
    for s, x in zip(seg, v, strict=True):
        want[s] = step(want[s], x)
    np.testing.assert_allclose(H[f"_segment_{kind}"](seg, v, m), want, rtol=1e-12)


@settings(max_examples=60)
@given(seeds, st.integers(1, 5), st.integers(1, 4), st.integers(0, 6))
def test_put_is_assignment_and_index_add_is_add_at(seed, rows, cols, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, cols))
    idx = (rng.integers(-rows, rows, n), rng.integers(-cols, cols, n))
    v = rng.normal(size=n)
    want = x.copy()
    want[idx] = v
    np.testing.assert_array_equal(H["_put"](x.copy(), idx, v), want)
    added = x.copy()
    np.add.at(added, idx, v)
    np.testing.assert_allclose(H["_index_add"](x, idx, v), added, rtol=1e-12, atol=1e-12)
    row = (rng.integers(-rows, rows, n),)      # a gather of whole rows: its cotangent adds whole rows
    g = rng.normal(size=(n, cols))
    added = x.copy()
    np.add.at(added, row, g)
    np.testing.assert_allclose(H["_index_add"](x, row, g), added, rtol=1e-12, atol=1e-12)


@settings(max_examples=60)
@given(seeds, st.integers(1, 9), st.integers(-12, 12), sizes, st.integers(1, 3))
def test_scatter_add_is_the_adjoint_of_take(seed, m, lo, n, step):
    rng = np.random.default_rng(seed)
    if not all(-m <= lo + step * k < m for k in range(n)):
        return
    x, v = rng.normal(size=m), rng.normal(size=n)
    b = np.zeros(m)
    H["_scatter_add"](b, lo, n, step, v)
    assert _inner(H["_take"](x, lo, n, step), v) == pytest.approx(_inner(x, b), rel=1e-12, abs=1e-12)


@settings(max_examples=60)
@given(seeds, st.integers(1, 12), st.integers(-3, 8), st.integers(0, 5), st.integers(0, 5))
def test_window_add_is_the_adjoint_of_window(seed, m, lo, n0, n1):
    rng = np.random.default_rng(seed)
    if n0 and n1 and not all(-m <= lo + i + j < m for i in range(n0) for j in range(n1)):
        return
    x, v = rng.normal(size=m), rng.normal(size=(n0, n1))
    want = np.array([[x[lo + i + j] for j in range(n1)] for i in range(n0)]).reshape(n0, n1)
    np.testing.assert_array_equal(H["_window"](x, lo, n0, n1), want)
    b = np.zeros(m)
    H["_window_add"](b, lo, n0, n1, v)
    assert _inner(want, v) == pytest.approx(_inner(x, b), rel=1e-12, abs=1e-12)
    g, h = rng.normal(size=n0), rng.normal(size=n1)
    np.testing.assert_allclose(H["_window_matvec"](x, lo, n0, n1, h), want @ h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H["_window_vecmat"](g, x, lo, n0, n1), g @ want, rtol=1e-12, atol=1e-12)
    b = np.zeros(m)
    H["_window_outer_add"](b, lo, n0, n1, g, h)
    assert _inner(g, want @ h) == pytest.approx(_inner(x, b), rel=1e-12, abs=1e-12)


@settings(max_examples=60)
@given(seeds, st.integers(1, 5), st.integers(1, 5), st.integers(-2, 4), st.integers(0, 4), st.integers(-2, 4),
       st.integers(0, 4))
def test_block_add_is_the_adjoint_of_block(seed, r, c, lo0, n0, lo1, n1):
    rng = np.random.default_rng(seed)
    if not (all(-r <= lo0 + i < r for i in range(n0)) and all(-c <= lo1 + j < c for j in range(n1))):
        return
    x, v = rng.normal(size=(r, c)), rng.normal(size=(n0, n1))
    want = x[np.ix_([lo0 + i for i in range(n0)], [lo1 + j for j in range(n1)])]
    np.testing.assert_array_equal(H["_block"](x, lo0, n0, lo1, n1), want)
    b = np.zeros((r, c))
    H["_block_add"](b, lo0, n0, lo1, n1, v)
    assert _inner(want, v) == pytest.approx(_inner(x, b), rel=1e-12, abs=1e-12)


# -- whole arrays -------------------------------------------------------------------------------------------


@settings(max_examples=60)
@given(seeds, st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=3), st.integers(0, 2))
def test_sum_to_is_the_adjoint_of_broadcasting(seed, shape, lead):
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    full = tuple(rng.integers(1, 4, lead)) + tuple(d if d != 1 else int(rng.integers(1, 4)) for d in shape)
    assert H["_broadcast_shape"](shape, full) == np.broadcast_shapes(shape, full)
    g, y = rng.normal(size=full), rng.normal(size=shape)
    out = H["_sum_to"](g, shape)
    assert np.shape(out) == shape or np.broadcast_shapes(np.shape(out), shape) == shape
    assert _inner(g, np.broadcast_to(y, full)) == pytest.approx(_inner(np.broadcast_to(out, shape), y), rel=1e-12,
                                                                  abs=1e-12)


@pytest.mark.parametrize("xs, ys", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4))])
def test_mm_left_and_right_are_the_adjoints_of_matmul(xs, ys):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=xs), rng.normal(size=ys)
    g = rng.normal(size=np.shape(x @ y))
    dx, dy = rng.normal(size=xs), rng.normal(size=ys)
    assert _inner(g, dx @ y) == pytest.approx(_inner(dx, H["_mm_left"](g, y, x)), rel=1e-12)
    assert _inner(g, x @ dy) == pytest.approx(_inner(dy, H["_mm_right"](g, x, y)), rel=1e-12)


@settings(max_examples=40)
@given(seeds, st.integers(1, 6), st.booleans())
def test_products_of_the_others_without_division(seed, n, zero):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, 3))
    if zero:
        a[rng.integers(0, n), 1] = 0.0
    want = np.array([np.prod(np.delete(a.ravel(), k)) for k in range(a.size)]).reshape(a.shape)
    np.testing.assert_allclose(H["_prod_except"](a), want, rtol=1e-12, atol=1e-300)
    by_column = np.stack([[np.prod(np.delete(a[:, j], i)) for j in range(3)] for i in range(n)])
    np.testing.assert_allclose(H["_prod_except_axes"](a, (0,)), by_column, rtol=1e-12, atol=1e-300)


@settings(max_examples=40)
@given(seeds, st.integers(1, 6), st.integers(0, 2), st.integers(0, 1))
def test_cumprod_tangent_and_cotangent_are_transposes(seed, n, zeros, axis):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    x.ravel()[rng.integers(0, x.size, zeros)] = 0.0
    dx, g = rng.normal(size=x.shape), rng.normal(size=x.shape)
    eps = 1e-7
    fd = (np.cumprod(x + eps * dx, axis=axis) - np.cumprod(x - eps * dx, axis=axis)) / (2 * eps)
    tangent = H["_cumprod_jvp"](x, dx, axis)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-6)
    assert _inner(g, tangent) == pytest.approx(_inner(H["_cumprod_vjp"](x, g, axis), dx), rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("n, axis", [(1, 0), (2, 0), (1, 1), (3, 1)])
def test_diff_vjp_is_the_adjoint_of_diff(n, axis):
    rng = np.random.default_rng(n + axis)
    x = rng.normal(size=(5, 6))
    g = rng.normal(size=np.diff(x, n=n, axis=axis).shape)
    assert _inner(np.diff(x, n=n, axis=axis), g) == pytest.approx(_inner(x, H["_diff_vjp"](g, n, axis)), rel=1e-12)


def test_full_frame_and_div_or_zero():
    np.testing.assert_array_equal(H["_full_frame"](np.array([1.0, 2.0]), 5, 2), [0.0, 0.0, 1.0, 2.0, 0.0])
    np.testing.assert_array_equal(H["_div_or_zero"](np.array([1.0, 2.0]), np.array([0.0, 4.0])), [0.0, 0.5])


@settings(max_examples=60)
@given(seeds, st.integers(0, 40), st.booleans(), st.booleans())
def test_scans_are_the_recurrences_they_replace(seed, n, one_a, one_b):
    rng = np.random.default_rng(seed)
    a = float(rng.uniform(-1.2, 1.2)) if one_a else rng.uniform(-1.2, 1.2, n)
    b = float(rng.normal()) if one_b else rng.normal(size=n)
    init = float(rng.normal())
    s, lin, total, prod = init, [], init, init
    sums, prods = [], []
    for k in range(n):
        lin.append(s)
        sums.append(total)
        prods.append(prod)
        ak, bk = (a if one_a else a[k]), (b if one_b else b[k])
        s = ak * s + bk
        total += bk
        prod *= ak
    np.testing.assert_allclose(H["_lin_scan"](a, b, init, n), lin, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(H["_sum_scan"](b, init, n), sums, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H["_prod_scan"](a, init, n), prods, rtol=1e-12, atol=1e-300)


def test_erf_and_erfc_against_math():
    x = np.concatenate([np.linspace(-7.0, 7.0, 2001), [0.0, -0.0, 1.0, -1.0, 30.0, -30.0]])
    np.testing.assert_allclose(H["_erf"](x), [math.erf(v) for v in x], rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(H["_erfc"](x), [math.erfc(v) for v in x], rtol=1e-13, atol=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=9))
def test_expit_is_the_scalar_sigmoid_elementwise(xs):
    """The array logistic (a softplus's derivative) against the scalar helper, which is 1 / (1 + exp(-z))
    written per sign: equal to a few ulps everywhere, exactly 0 and 1 at the infinities, NaN for NaN."""
    x = np.asarray(xs, dtype=np.float64)
    got = H["_expit"](x)
    assert got.shape == x.shape
    for g, v in zip(got, x, strict=True):
        if math.isnan(v):
            assert math.isnan(g)
        else:
            assert g == pytest.approx(H["_sigmoid"](v), rel=4e-16, abs=1e-300)
    assert H["_expit"](np.array([-np.inf, np.inf, -800.0, 800.0])).tolist() == [0.0, 1.0, math.exp(-800.0), 1.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(max_value=0.0, allow_nan=False, allow_infinity=True, width=64), min_size=0, max_size=9))
def test_expit_of_nonpositive_arguments_is_expit(xs):
    """The logistic the printer uses where SymPy knows the argument is <= 0 (-|z|): the general one's values."""
    x = np.asarray(xs, dtype=np.float64)
    np.testing.assert_allclose(H["_expit_nonpositive"](x), H["_expit"](x), rtol=4e-16, atol=1e-300)

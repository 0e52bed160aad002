"""Two-level rectangular loop nests lowered as matrix products on array blocks.

Σ_j A[i + c, j + c']·h_j·g_i becomes ``_block(A, …) @ h`` (and its adjoints ``g @ M`` and the
block outer product) instead of flattened gathers; the offsets, bounds and Python's negative
indexing must give the same values and gradients as the plain loop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.lower.helpers import HELPERS


def matvec_loss(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        s += math.sin(z) * (i + 1.0)
    return s


def shifted(w, X):
    s = 0.0
    for i in range(1, X.shape[0]):
        z = 0.0
        for j in range(len(w) - 1):
            z += X[i - 1, j + 1] * w[j] * X[i, j]
        s += z * z
    return s


def wrapped(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i - 1, j] * math.cos(w[j])     # X[-1, j] is the last row, as in Python
        s += z * z
    return s


def weighted_sum(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(len(w)):
            s += X[i, j] * w[j] * (i + 0.5)     # d/dX is an outer product: no factor of both indices
    return s


def test_matvec_nest_is_a_matrix_product_in_the_generated_code():
    rng = np.random.default_rng(0)
    w, X = rng.normal(size=4), rng.normal(size=(6, 4))
    f = cn.coarsen(matvec_loss, wrt=("w", "X"))
    gw, gX = f.grad(w, X)
    src = f.source[f.source.find("def matvec_loss_grad"):f.source.find("def matvec_loss_jvp")]
    assert "_block(X" in src and "@" in src and "_scatter_sum" not in src and "_seg" not in src
    assert_close(f(w, X), matvec_loss(w, X), rtol=1e-12)
    assert_close(gw, finite_difference(matvec_loss, (w, X), 0))
    assert_close(gX, finite_difference(matvec_loss, (w, X), 1))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 5), d=st.integers(0, 4), fn=st.sampled_from([matvec_loss, shifted, wrapped, weighted_sum]))
def test_dense_nests_match_the_loops(n, d, fn):
    rng = np.random.default_rng(n * 10 + d)
    w, X = rng.normal(size=max(d, 1)), rng.normal(size=(max(n, 1), max(d, 1)))
    f = cn.coarsen(fn, wrt=("w", "X"))
    assert_close(f(w, X), fn(w, X), rtol=1e-12, atol=1e-12)
    gw, gX = f.grad(w, X)
    assert_close(gw, finite_difference(fn, (w, X), 0))
    assert_close(gX, finite_difference(fn, (w, X), 1))


def horner_loss(c, xs):
    s = 0.0
    for i in range(len(xs)):
        p = 0.0
        for k in range(len(c)):
            p = p * xs[i] + c[k]
        s += p * p
    return s


def power_sum(c, xs):
    s = 0.0
    for i in range(len(xs)):
        for k in range(len(c)):
            s += c[k] * xs[i] ** (k - 2)        # negative exponents: the table falls back to **
    return s


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 6), d=st.integers(0, 5), fn=st.sampled_from([horner_loss, power_sum]))
def test_power_tables_match_the_loops(n, d, fn):
    rng = np.random.default_rng(n * 10 + d)
    c, xs = rng.normal(size=d), rng.uniform(0.5, 1.5, size=n) * rng.choice([-1.0, 1.0], size=n)
    f = cn.coarsen(fn, wrt=("c", "xs"))
    assert_close(f(c, xs), fn(c, xs), rtol=1e-12, atol=1e-12)
    gc, gx = f.grad(c, xs)
    assert_close(gc, finite_difference(fn, (c, xs), 0))
    assert_close(gx, finite_difference(fn, (c, xs), 1))


def test_horner_gradient_uses_a_power_table():
    c, xs = np.array([0.5, -1.0, 2.0, 0.25]), np.linspace(-1.0, 1.0, 7)
    f = cn.coarsen(horner_loss, wrt=("c",))
    f.grad(c, xs)
    grad_src = f.source[f.source.find("def horner_loss_grad"):]
    assert "cumulative_prod" in grad_src and "@" in grad_src


def test_block_adjoint_without_a_block_read_defines_its_helper():
    """d/dX of Σ X[i, j]·w_j·(i + ½) alone: the only helper call is _block_add (it once went undefined)."""
    rng = np.random.default_rng(3)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    f = cn.coarsen(weighted_sum, wrt=("X",))
    assert_close(f.grad(w, X), finite_difference(weighted_sum, (w, X), 1))


# -- windows: x[i + k] inside a dense nest is a strided view, its contractions correlations (issue 16) ----


def _correlate_valid(x, w):
    n = len(x) - len(w) + 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(len(w)):
            acc += w[k] * x[i + k]
        out[i] = acc
    return np.sum(out ** 2)


def _moving_average(x, c):
    s = 0.0
    for i in range(len(x) - 5):
        t = 0.0
        for k in range(5):
            t += x[i + k + 1] * c
        s += (t / 5) ** 2
    return s


@pytest.mark.parametrize("fn, make", [
    (_correlate_valid, lambda r: (r.normal(size=int(r.integers(1, 12))), r.normal(size=int(r.integers(1, 6))))),
    (_moving_average, lambda r: (r.normal(size=int(r.integers(5, 14))), float(r.uniform(0.5, 1.5)))),
])
@pytest.mark.parametrize("seed", range(6))
def test_windows_are_views_with_exact_gradients(fn, make, seed):
    """Values against the plain function (an empty output when the filter is longer than the signal), both
    gradients against central differences; the generated code reads the windows, not a flattened gather."""
    rng = np.random.default_rng(seed)
    args = make(rng)
    f = cn.coarsen(fn)
    assert abs(f(*args) - fn(*args)) <= 1e-10 * max(1.0, abs(fn(*args)))
    grads = f.grad(*args)
    for k, g in enumerate(grads if isinstance(grads, tuple) else (grads,)):
        if np.ndim(args[k]) or isinstance(args[k], float):
            np.testing.assert_allclose(g, finite_difference(fn, args, k), rtol=1e-5, atol=1e-6)
    body = _functions(f)
    # the contractions are correlations (no (n, k) product, no flattened gather), in both directions
    assert "_window_matvec(" in body and "_window_outer_add(" in body and "_scatter_sum(" not in body


def _functions(f) -> str:
    """The generated functions' text, without the helpers' definitions (which name every helper)."""
    return f.source[f.source.index(f"def {f.name}("):]


def _wrapped_taps(x, w):
    # x[i + k - 1] reads x[-1] (the last element) at i = k = 0, as Python's negative indexing does
    s = 0.0
    for i in range(len(x) - len(w) + 1):
        acc = 0.0
        for k in range(len(w)):
            acc += w[k] * x[i + k - 1]
        s += math.sin(acc) * (i + 0.5)
    return s


@pytest.mark.parametrize("seed", range(4))
def test_windows_out_of_bounds_wrap_as_python_does(seed):
    """A window that starts at x[-1] is not a slice: the helpers take their gather forms and still agree
    with the plain loop and with central differences, for the signal and for the filter."""
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=int(rng.integers(4, 12))), rng.normal(size=int(rng.integers(1, 4)))
    f = cn.coarsen(_wrapped_taps)
    assert abs(f(x, w) - _wrapped_taps(x, w)) <= 1e-10 * max(1.0, abs(_wrapped_taps(x, w)))
    gx, gw = f.grad(x, w)
    np.testing.assert_allclose(gx, finite_difference(_wrapped_taps, (x, w), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, finite_difference(_wrapped_taps, (x, w), 1), rtol=1e-5, atol=1e-6)
    assert "_window_matvec(" in _functions(f)


def _window_helpers(xp) -> dict:
    env = {"xp": xp, "math": math}
    for h in ("_segments", "_segment_sum", "_scatter_sum", "_window", "_window_add", "_window_matvec", "_window_vecmat",
              "_window_outer_add"):
        exec(HELPERS[h].source, env)
    return env


@pytest.mark.parametrize("xp", ["numpy", "array_api_strict"])
@pytest.mark.parametrize("n, k", [(1, 1), (1, 5), (5, 1), (6, 6), (40, 7), (4096, 2), (8193, 3)])
def test_window_helpers_against_their_definitions(xp, n, k):
    """The window helpers against the sums they stand for, written as loops: NumPy's correlations and
    convolution in bounds (offset 1), the gather forms where a window wraps (offset -1) or where the
    namespace has no correlate (array_api_strict), with sizes of 1 included and rows past NumPy's
    _window_vecmat chunk of 4096."""
    mod = pytest.importorskip(xp)
    env = _window_helpers(mod)
    rng = np.random.default_rng(n * 10 + k)
    x, h, g = rng.normal(size=n + k + 1), rng.normal(size=k), rng.normal(size=n)
    for lo in (1, -1):
        idx = [[(lo + i + j) % x.shape[0] for j in range(k)] for i in range(n)]
        mv = [sum(x[idx[i][j]] * h[j] for j in range(k)) for i in range(n)]
        vm = [sum(g[i] * x[idx[i][j]] for i in range(n)) for j in range(k)]
        want = rng.normal(size=x.shape[0])
        b = mod.asarray(want.copy())
        for i in range(n):
            for j in range(k):
                want[idx[i][j]] += g[i] * h[j]
        xa, ha, ga = mod.asarray(x), mod.asarray(h), mod.asarray(g)
        np.testing.assert_allclose(np.asarray(env["_window_matvec"](xa, lo, n, k, ha)), mv, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.asarray(env["_window_vecmat"](ga, xa, lo, n, k)), vm, rtol=1e-13, atol=1e-13)
        env["_window_outer_add"](b, lo, n, k, ga, ha)
        np.testing.assert_allclose(np.asarray(b), want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("seed", range(4))
def test_window_tangent_is_two_correlations(seed):
    """Forward mode of a correlation: Σ_k dw_k·x[i+k] + w_k·dx[i+k] splits into two window products (no
    flattened (n, k) gathers), and ⟨J ẋ, 1⟩ equals ⟨ẋ, Jᵀ 1⟩ and central differences along the tangent."""
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=int(rng.integers(6, 14))), rng.normal(size=int(rng.integers(1, 5)))
    dx, dw = rng.normal(size=x.shape), rng.normal(size=w.shape)
    f = cn.coarsen(_correlate_valid)
    _, t = f.jvp((x, w), (dx, dw))
    gx, gw = f.grad(x, w)
    assert abs(t - (np.dot(gx, dx) + np.dot(gw, dw))) <= 1e-10 * max(1.0, abs(t))
    h = 1e-6
    fd = (_correlate_valid(x + h * dx, w + h * dw) - _correlate_valid(x - h * dx, w - h * dw)) / (2 * h)
    assert abs(t - fd) <= 1e-6 * max(1.0, abs(fd))
    jvp = f.source[f.source.index(f"def {f.name}_jvp("):]
    assert jvp.count("_window_matvec(") >= 3 and "xp.tile(" not in jvp, jvp

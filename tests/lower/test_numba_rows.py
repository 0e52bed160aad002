"""A row contraction under ``backend="numba"`` is one loop over the rows (``lower/numba_rows.py``).

The kernels hmc, logreg_nll and horner_fit (``z_i = sum_j X[i, j] w[j]``, the row's value on z_i, the
adjoint ``b_w[j] += g_i X[i, j]``; horner_fit's matrix a power table) are compared with the NumPy backend
and with ``jax.grad`` of a vectorized form written here, at the row counts 0 and 1 as well; random shapes and
data (Hypothesis) do the same for two user functions of that shape.  The structural test: the generated
``*_grad`` calls a row loop and makes no array of the rows' count (no ``@``, no ``nonzero``, no ``_block``,
no allocation but the adjoints' own).
"""

from __future__ import annotations

import ast
import importlib
import math

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.lower.numba_tiles import NEST_TILE, TILE

KERNELS = ("hmc", "logreg_nll", "horner_fit")


pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _jax_loss(name):
    """The kernel's loss as jax code, written from the kernel's docstring (not from coarsen_nb's output)."""
    jax, jnp = _jax()
    if name == "hmc":
        def loss(q, X, y, prior_var):
            m = y * (X @ q)
            return 0.5 * jnp.sum(q * q) / prior_var + jnp.sum(jnp.logaddexp(0.0, -m))
    elif name == "logreg_nll":
        def loss(w, b, X, y):
            z = X @ w + b
            return jnp.mean(jnp.maximum(z, 0.0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))
    else:
        def loss(c, xs, ys):
            p = jnp.zeros_like(xs)
            for k in range(c.shape[0]):
                p = p * xs + c[k]
            return jnp.mean((p - ys) ** 2)
    return jax, loss


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for name in KERNELS:
        mod = importlib.import_module(f"coarsen_nb.kernels.{name}")
        fn = getattr(mod, name)
        out[name] = (mod, cn.coarsen(fn, wrt=mod.META["wrt"], backend="numba"),
                     cn.coarsen(fn, wrt=mod.META["wrt"]))
    return out


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


def _inputs(mod, rows):
    return tuple(mod.make_inputs(rows, seed=rows))


@pytest.mark.parametrize("rows", [0, 1, 2, 37])
@pytest.mark.parametrize("name", KERNELS)
def test_the_kernels_equal_numpy_and_jax(compiled, name, rows):
    mod, numba_f, numpy_f = compiled[name]
    args = _inputs(mod, rows)
    got = _flat(numba_f.grad(*args))
    want = _flat(numpy_f.grad(*args))
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-12, atol=1e-14, what=f"{name} numba vs numpy, {rows} rows")
    if rows == 0 and name != "hmc":
        return          # (a mean over no rows: 0/0 in both backends, nothing for jax to agree with)
    jax, loss = _jax_loss(name)
    wrt = [mod.__dict__[name].__code__.co_varnames.index(w) for w in mod.META["wrt"]]
    ref = jax.grad(loss, argnums=tuple(wrt))(*args)
    for g, r in zip(got, ref, strict=True):
        assert_close(g, np.asarray(r), rtol=1e-9, atol=1e-12, what=f"{name} numba vs jax.grad, {rows} rows")


def _functions(source: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("name", KERNELS)
def test_the_grad_is_one_row_loop_without_row_sized_arrays(compiled, name):
    mod, numba_f, _ = compiled[name]
    numba_f.grad(*mod.make_inputs(4))
    functions = _functions(numba_f.source)
    grad = functions[f"{name}_grad"]
    called = {n.func.id for n in ast.walk(grad) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    rows = [f for f in called if "_rows" in f]
    assert rows, f"{name}_grad calls no row loop: {sorted(called)}"
    for fn in [grad, *(functions[f] for f in rows)]:
        text = ast.unparse(fn)
        assert not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in ast.walk(fn)), text
        for word in ("nonzero", "_block", "_take", "_put", "xp.take", "xp.where", "_sum_to"):
            assert word not in text, f"{fn.name} still has {word}:\n{text}"
        allocations = [ast.unparse(n) for n in ast.walk(fn) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Attribute) and n.func.attr in ("zeros", "empty", "ones")]
        # the adjoints of the arguments (b_q = xp.zeros(q.shape)), a tile's numbers (numba_row_exps; the rows in
        # tiles, numba_tiles.tiled_rows) and its scatters' lanes, (K, NEST_TILE), or both in one array the caller
        # passes (numba_row_tiles.passed_scratch), (4 * NEST_TILE + K * NEST_TILE,)
        wrt = mod.META["wrt"]
        assert all(any(a == f"xp.zeros({w}.shape)" for w in wrt) or a in (f"xp.empty({TILE})", f"xp.empty({NEST_TILE})")
                   or (a.startswith("xp.zeros((") and a.endswith((f", {NEST_TILE}))", f" * {NEST_TILE},))")))
                   for a in allocations), allocations


# -- random shapes and data: two user functions of the same shape ------------------------------------

def margin_branch(q, X, y, s):
    """hmc's shape: a branch on the row's margin, a scale outside the loop."""
    u = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(q)):
            z += X[i, j] * q[j]
        if z * y[i] > 0:
            u += s * math.log1p(math.exp(-z * y[i]))
        else:
            u += s * (z * y[i]) ** 2
    return u


def biased_rows(w, b, X, y):
    """logreg's shape: a bias, a value that is a sum over the rows (b) beside the scatter (w)."""
    total = 0.0
    for i in range(X.shape[0]):
        z = b
        for j in range(len(w)):
            z += X[i, j] * w[j]
        total += math.sin(z) * y[i] + 0.5 * z * z
    return total


def _jax_margin_branch(q, X, y, s):
    _, jnp = _jax()
    m = (X @ q) * y
    safe = jnp.where(m > 0, m, 0.0)
    return jnp.sum(jnp.where(m > 0, s * jnp.log1p(jnp.exp(-safe)), s * m ** 2))


def _jax_biased_rows(w, b, X, y):
    _, jnp = _jax()
    z = X @ w + b
    return jnp.sum(jnp.sin(z) * y + 0.5 * z * z)


@pytest.fixture(scope="module")
def user_functions():
    return {f.__name__: (cn.coarsen(f, wrt=wrt, backend="numba"), cn.coarsen(f, wrt=wrt), jf, wrt)
            for f, wrt, jf in ((margin_branch, ("q", "s"), _jax_margin_branch),
                               (biased_rows, ("w", "b"), _jax_biased_rows))}


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 23), cols=st.integers(0, 5), seed=st.integers(0, 2**31 - 1),
       which=st.sampled_from(["margin_branch", "biased_rows"]))
def test_random_shapes_equal_numpy_and_jax(user_functions, rows, cols, seed, which):
    numba_f, numpy_f, jax_f, wrt = user_functions[which]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, cols))
    args = (rng.standard_normal(cols), float(rng.uniform(0.5, 2.0)), X, np.sign(rng.standard_normal(rows)))
    if which == "margin_branch":
        args = (args[0], X, args[3], args[1])
    got = _flat(numba_f.grad(*args))
    want = _flat(numpy_f.grad(*args))
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-12, atol=1e-13, what=f"{which} numba vs numpy ({rows}x{cols})")
    jax, _ = _jax()
    order = {"margin_branch": ("q", "X", "y", "s"), "biased_rows": ("w", "b", "X", "y")}[which]
    ref = jax.grad(jax_f, argnums=tuple(order.index(w) for w in wrt))(*args)
    for g, r in zip(got, ref, strict=True):
        assert_close(g, np.asarray(r), rtol=1e-9, atol=1e-11, what=f"{which} numba vs jax.grad ({rows}x{cols})")


def test_columns_beyond_the_matrix_raise_index_error(user_functions):
    """More weights than X has columns: Python's loop reads X[i, j] out of bounds, and so does the row loop."""
    numba_f, numpy_f, _, _ = user_functions["biased_rows"]
    rng = np.random.default_rng(1)
    args = (rng.standard_normal(4), 0.3, rng.standard_normal((5, 3)), rng.standard_normal(5))
    with pytest.raises(IndexError):
        biased_rows(*args)
    with pytest.raises(IndexError):
        numpy_f.grad(*args)
    with pytest.raises(IndexError):
        numba_f.grad(*args)


@pytest.mark.parametrize("which", ["margin_branch", "biased_rows"])
def test_the_user_functions_run_as_row_loops(user_functions, which):
    """(So that the random test above compares the row loop, not array code.)"""
    numba_f, _, _, _ = user_functions[which]
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(3), 1.0, rng.standard_normal((4, 3)), rng.standard_normal(4))
    numba_f.grad(*((args[0], args[2], args[3], args[1]) if which == "margin_branch" else args))
    grad = _functions(numba_f.source)[f"{which}_grad"]
    text = ast.unparse(grad)
    assert "_rows" in text, text
    assert not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in ast.walk(grad)), text


# -- the rows domain record ---------------------------------------------------------------------------

def _rows_domains(monkeypatch, name):
    """Every ``rows`` domain the numba fuser builds for the kernel ``name`` (its module written, not loaded)."""
    from coarsen_nb import numba_loader
    from coarsen_nb.kernels import KERNELS, function
    from coarsen_nb.lower import numba_fusion, numba_rows

    seen = []

    class Recorded(numba_rows.RowLoopFunction):
        def __init__(self, writer, kernel, body, dom, tag):
            seen.append((body, dom))
            super().__init__(writer, kernel, body, dom, tag)

    def not_loaded(*args, **kwargs):
        raise ImportError("written, not loaded")

    monkeypatch.setattr(numba_fusion, "RowLoopFunction", Recorded)
    monkeypatch.setattr(numba_loader, "load", not_loaded)
    mod = KERNELS[name]
    try:
        cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numba")._specialize(
            mod.make_inputs(mod.META["test_size"], 0))
    except cn.CoarsenError:
        pass
    return seen


@pytest.mark.parametrize("name", KERNELS)
def test_the_rows_domains_verify(monkeypatch, name):
    import dataclasses

    from coarsen_nb.lower.domain import verify

    seen = _rows_domains(monkeypatch, name)
    # (the adjoint's scatters b_w[j] += ...; logreg_nll's and horner_fit's forwards are row sums too)
    assert any(t.mode == "scatter" for _, dom in seen for t in dom.targets), f"{name}: no rows domain"
    for body, dom in seen:
        verify(dom, body)
        i, (j, _) = dom.index, dom.inner
        assert dom.bounds == tuple(body.deps.ranges[i]) and f"{j} in range(" in str(dom)
        # the outer and inner loops swapped: verify refuses it
        swapped = dataclasses.replace(dom, index=j, inner=(i, dom.bounds), bounds=dom.inner[1])
        with pytest.raises(AssertionError):
            verify(swapped, body)

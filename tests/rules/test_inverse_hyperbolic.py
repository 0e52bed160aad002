"""``np.arcsinh``, ``np.arccosh``, ``np.arctanh`` (and ``math.asinh``/``acosh``/``atanh``): one registration
each in coarsen_nb/rules/elementwise.py (issue 13's "adding a primitive is one registration plus its test").

asinh is defined everywhere, acosh for x ≥ 1, atanh for |x| < 1; d asinh/dx = 1/√(x²+1),
d acosh/dx = 1/√(x²−1), d atanh/dx = 1/(1−x²).  Values are compared with the plain Python function,
gradients with central finite differences and, where JAX is installed, ``jax.grad``: on scalars and arrays,
in a loop over elements, in an iterated nonlinear recurrence and under branches, for the default
selection, ``max_soi=1`` and ``per_block=True``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from gradcheck import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st
from primitive_checks import SELECTIONS, assert_nvcc_compiles, check_against_jax, check_value_and_gradient

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.rules.table import PRIMITIVES


def scalar_inverse(x, y):
    return np.arcsinh(x) * y + math.acosh(1.5 + x * x) - np.arctanh(0.5 * np.tanh(y))


def array_inverse(x, w):
    return np.sum(np.arcsinh(x * w)) + np.sum(np.arccosh(1.0 + x * x + w)) + np.arctanh(np.sum(x * w) / 10.0)


def loop_inverse(x, w):
    s = 0.0
    for i in range(len(x)):
        s = s + w[i] * np.arctanh(0.4 * np.tanh(x[i])) + math.asinh(x[i] * w[i])
    t = s
    for _ in range(4):
        t = np.arcsinh(t * w[0] + 1.0)      # a nonlinear recurrence: an iterated loop
    return t + s


def branch_inverse(x, y):
    if x > 0.5:
        z = np.arccosh(x + 1.0) * y
    else:
        z = math.atanh(math.tanh(x - y)) ** 2
    return z


def loop_branch_inverse(x, w):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.0:
            s = s + np.arccosh(1.0 + x[i]) * w[i]
        else:
            s = s - np.arcsinh(x[i] * w[i])
    return s


def _cases():
    rng = np.random.default_rng(11)
    x, w = rng.uniform(0.3, 1.5, 6) * rng.choice([-1.0, 1.0], 6), rng.uniform(0.5, 1.5, 6)
    return [
        ("scalar", scalar_inverse, (-0.7, 1.3)),
        ("scalar", scalar_inverse, (1.9, -0.8)),
        ("array", array_inverse, (x, w)),
        ("loop", loop_inverse, (x, w)),
        ("branch-then", branch_inverse, (2.3, -1.1)),
        ("branch-else", branch_inverse, (-0.4, 0.6)),
        ("loop-branch", loop_branch_inverse, (x, w)),
    ]


CASES = _cases()
SCALAR_WRT = (scalar_inverse, branch_inverse)


def _id(case):
    return f"{case[0]}-{case[1].__name__}"


def _wrt(fn):
    return ("x", "y") if fn in SCALAR_WRT else ("x", "w")


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=SELECTIONS.keys())
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_value_and_gradient_match_python_and_finite_differences(case, selection):
    _, fn, args = case
    check_value_and_gradient(fn, args, _wrt(fn), selection)


JAX_CASES = [c for c in CASES if not c[0].startswith(("branch", "loop-branch"))]


@pytest.mark.parametrize("case", JAX_CASES, ids=[_id(c) for c in JAX_CASES])
def test_gradient_matches_jax(case):
    jnp = pytest.importorskip("jax.numpy")
    _, fn, args = case
    check_against_jax(fn, args, _wrt(fn), {"asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh,
                                           "tanh": jnp.tanh})


@settings(max_examples=40, deadline=None)
@given(st.floats(-4.0, 4.0), st.floats(1.05, 6.0), st.floats(-0.95, 0.95))
def test_each_derivative_is_the_closed_form_on_its_domain(a, b, c):
    def three(p, q, r):
        return np.arcsinh(p) + np.arccosh(q) + np.arctanh(r)

    got = cn.coarsen(three, wrt=("p", "q", "r")).grad(a, b, c)
    want = (1.0 / math.sqrt(a * a + 1.0), 1.0 / math.sqrt(b * b - 1.0), 1.0 / (1.0 - c * c))
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=1e-12)


def test_the_spelling_per_backend_and_the_cost_model():
    f = cn.coarsen(scalar_inverse, wrt=("x", "y"))
    f(0.3, 0.2)
    body = f.source.split("def scalar_inverse", 1)[1]
    assert "math.asinh(" in body and "math.acosh(" in body and "math.atanh(" in body and "xp." not in body
    case = next(c for c in CASES if c[1] is array_inverse)
    g = cn.coarsen(array_inverse, wrt=("x", "w"))
    g.grad(*case[2])
    assert "xp.asinh(" in g.source and "xp.acosh(" in g.source
    assert "math.atanh(" in g.source                        # of a sum: a scalar
    assert g.cost.derivative_ops > 0                        # the cost model knows the calls


def test_the_derivative_comes_from_the_registration():
    x = sp.Symbol("x", real=True)
    for name, want in (("arcsinh", lambda v: 1 / math.sqrt(v * v + 1)), ("arccosh", lambda v: 1 / math.sqrt(v * v - 1)),
                       ("arctanh", lambda v: 1 / (1 - v * v))):
        d = sp.diff(PRIMITIVES[name].lift(x), x)
        assert not d.has(sp.Derivative)
        v = 0.5 if name == "arctanh" else 1.7
        assert float(d.subs(x, v)) == pytest.approx(want(v), rel=1e-14)


def test_cuda_kernel_spells_the_functions_and_compiles(tmp_path):
    case = next(c for c in CASES if c[1] is loop_inverse)
    f = cn.coarsen(loop_inverse, wrt=("x", "w"))
    f(*case[2])
    fused = cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))
    assert fused and any("atanh(" in fk.operation for fk in fused)      # the adjoint kernel: asinh's derivative
    assert_nvcc_compiles(fused, tmp_path, "inverse")


@pytest.mark.parametrize("case", CASES[1:4], ids=[_id(c) for c in CASES[1:4]])
def test_numba_backend_equals_numpy_backend(case):
    pytest.importorskip("numba")
    _, fn, args = case
    want = cn.coarsen(fn, wrt=_wrt(fn)).grad(*args)
    got = cn.coarsen(fn, wrt=_wrt(fn), backend="numba").grad(*args)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-12, atol=1e-12, what=f"{fn.__name__}: numba vs NumPy")

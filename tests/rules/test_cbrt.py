"""``np.cbrt`` / ``math.cbrt``: one registration in coarsen_nb/rules/elementwise.py, checked end to end.

The cube root is real for negative x (∛-8 = -2, as NumPy and ``math.cbrt`` give), and d∛x/dx =
1/(3·∛x²).  Values are compared with the plain Python function, gradients with central finite
differences and, where JAX is installed, ``jax.grad`` — on scalars and arrays, in a loop over elements,
in an iterated nonlinear recurrence and under branches, for the default selection, ``max_soi=1`` and
``per_block=True``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from primitive_checks import SELECTIONS, assert_nvcc_compiles, check_against_jax, check_value_and_gradient

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.rules.table import PRIMITIVES


def scalar_cbrt(x, y):
    return np.cbrt(x) * y + math.cbrt(x * y - 1.0)


def array_cbrt(x, w):
    return np.sum(np.cbrt(x) * w) + np.cbrt(np.sum(x * w))


def loop_cbrt(x, w):
    s = 0.0
    for i in range(len(x)):
        s = s + w[i] * np.cbrt(x[i])
    t = s
    for _ in range(4):
        t = np.cbrt(t + 2.0) * w[0]          # a nonlinear recurrence: an iterated loop
    return t + s


def branch_cbrt(x, y):
    if x > 0.5:
        z = np.cbrt(x) * y
    else:
        z = math.cbrt(x - y) ** 2
    return z


def loop_branch_cbrt(x, w):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.0:
            s = s + np.cbrt(x[i]) * w[i]
        else:
            s = s - np.cbrt(x[i] * w[i])
    return s


def _signed(rng, n):
    """Values away from 0 (where the derivative is infinite) and of both signs."""
    return rng.uniform(0.3, 3.0, n) * rng.choice([-1.0, 1.0], n)


def _cases():
    rng = np.random.default_rng(7)
    x, w = _signed(rng, 6), rng.uniform(0.5, 1.5, 6)
    return [
        ("scalar", scalar_cbrt, (-2.7, 1.3)),
        ("scalar", scalar_cbrt, (1.9, -0.8)),
        ("array", array_cbrt, (x, w)),
        ("loop", loop_cbrt, (x, w)),
        ("branch-then", branch_cbrt, (2.3, -1.1)),
        ("branch-else", branch_cbrt, (-1.4, 0.6)),
        ("loop-branch", loop_branch_cbrt, (x, w)),
    ]


CASES = _cases()


def _id(case):
    return f"{case[0]}-{case[1].__name__}"


def _wrt(fn):
    return ("x", "y") if fn in (scalar_cbrt, branch_cbrt) else ("x", "w")


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=SELECTIONS.keys())
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_value_and_gradient_match_python_and_finite_differences(case, selection):
    _, fn, args = case
    check_value_and_gradient(fn, args, _wrt(fn), selection)


JAX_CASES = [c for c in CASES if not c[0].startswith(("branch", "loop-branch"))]


@pytest.mark.parametrize("case", JAX_CASES, ids=[_id(c) for c in JAX_CASES])
def test_gradient_matches_jax(case):
    _, fn, args = case
    check_against_jax(fn, args, _wrt(fn), {"cbrt": pytest.importorskip("jax.numpy").cbrt})


def test_negative_arguments_and_the_spelling_per_backend():
    f = cn.coarsen(scalar_cbrt, wrt=("x", "y"))
    assert f(-8.0, 1.0) == -2.0 + math.cbrt(-9.0)
    assert "math.cbrt(" in f.source and "xp." not in f.source.split("def scalar_cbrt", 1)[1]
    g = cn.coarsen(array_cbrt, wrt=("x", "w"))
    g.grad(*next(c for c in CASES if c[1] is array_cbrt)[2])
    assert "xp.cbrt(" in g.source
    assert g.cost.derivative_ops > 0                        # the cost model knows the call's shape


def test_the_derivative_and_latex_come_from_the_registration():
    x = sp.Symbol("x", real=True)
    c = PRIMITIVES["cbrt"].lift(x)
    assert c.is_real
    d = sp.diff(c, x)
    assert not d.has(sp.Derivative)
    for v in (-8.0, -0.5, 0.7, 27.0):
        assert float(d.subs(x, v).replace(type(c), lambda a: sp.Float(np.cbrt(float(a))))) == \
            pytest.approx(1.0 / (3.0 * np.cbrt(v) ** 2), rel=1e-14)
    assert sp.latex(c) == r"\sqrt[3]{x}"


def test_cuda_kernel_spells_cbrt_and_compiles(tmp_path):
    f = cn.coarsen(loop_cbrt, wrt=("x", "w"))
    case = next(c for c in CASES if c[1] is loop_cbrt)
    f(*case[2])
    fused = cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))
    assert fused and any("cbrt(" in fk.operation for fk in fused)
    assert_nvcc_compiles(fused, tmp_path, "cbrt")

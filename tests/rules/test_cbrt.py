"""``np.cbrt`` / ``math.cbrt``: one registration in coarsen_nb/rules/elementwise.py, checked end to end.

The cube root is real for negative x (∛-8 = -2, as NumPy and ``math.cbrt`` give), and d∛x/dx =
1/(3·∛x²).  Values are compared with the plain Python function, gradients with central finite
differences and, where JAX is installed, ``jax.grad`` — on scalars and arrays, in a loop over elements,
in an iterated nonlinear recurrence and under branches, for the default selection, ``max_soi=1`` and
``per_block=True``.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import types

import numpy as np
import pytest
import sympy as sp
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.rules.table import PRIMITIVES

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


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


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=SELECTIONS.keys())
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_value_and_gradient_match_python_and_finite_differences(case, selection):
    _, fn, args = case
    f = cn.coarsen(fn, wrt=("x", "y") if fn in (scalar_cbrt, branch_cbrt) else ("x", "w"), **selection)
    assert_close(f(*args), fn(*args), rtol=1e-13, atol=1e-13, what="value")
    grads = f.grad(*args)
    for k, g in enumerate(grads):
        assert_close(g, finite_difference(fn, args, k), rtol=1e-6, atol=1e-8, what=f"d/d arg {k}")


def _jax_version(fn):
    """``fn`` with ``np``/``math`` bound to jax.numpy (the same source, traced by JAX)."""
    jnp = pytest.importorskip("jax.numpy")
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp, "math": types.SimpleNamespace(cbrt=jnp.cbrt)})


@pytest.mark.parametrize("case", [c for c in CASES if not c[0].startswith(("branch", "loop-branch"))],
                         ids=[_id(c) for c in CASES if not c[0].startswith(("branch", "loop-branch"))])
def test_gradient_matches_jax(case):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    _, fn, args = case
    want = jax.grad(_jax_version(fn), argnums=(0, 1))(*args)
    for selection in SELECTIONS.values():
        wrt = ("x", "y") if fn is scalar_cbrt else ("x", "w")
        got = cn.coarsen(fn, wrt=wrt, **selection).grad(*args)
        for g, j in zip(got, want, strict=True):
            assert_close(g, np.asarray(j), rtol=1e-12, atol=1e-12, what=f"{fn.__name__} vs jax.grad")


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
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    cu = tmp_path / "cbrt.cu"
    cu.write_text("".join(cl.translation_unit(fk, namespace=f"k{i}") for i, fk in enumerate(fused)))
    res = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-std=c++17", "-o", str(tmp_path / "cbrt.o"), str(cu)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]

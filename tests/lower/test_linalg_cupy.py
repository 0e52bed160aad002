"""The linear-algebra corpus (``tests/corpus_linalg.py``) printed for CuPy: valid Python whose array calls are
functions CuPy has, and, where CuPy reaches a GPU, the same values and gradients as NumPy's.

CuPy has each linear-algebra function the rules spell (``cupy.linalg.solve``/``inv``/``det``/``slogdet``,
``cupy.einsum``, ``cupy.trace``, ``cupy.transpose``, ``cupy.eye``, checked against CuPy 14's reference);
without CuPy the check is on the spelling, with it on the numbers.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
from corpus_linalg import LINALG

import coarsen_nb as cn
from coarsen_nb.lower.module import ModuleWriter

#: The attributes of CuPy the linear-algebra rules print (CuPy 14 has each).
_CUPY_HAS = {"linalg.solve", "linalg.inv", "linalg.det", "linalg.slogdet", "einsum", "trace", "transpose", "eye",
             "matmul", "sum", "zeros", "reshape", "asarray", "float64", "exp", "sqrt", "log", "abs", "sin", "cos",
             "tanh", "broadcast_to", "int64", "arange", "newaxis", "where", "cosh",
             "ElementwiseKernel", "ReductionKernel", "__version__.split"}   # (the fused kernels, the version check)


def _compiled(e):
    f = cn.coarsen(e.fn, wrt=e.wrt)
    args = e.make_args(np.random.default_rng(0))
    f.grad(*args)
    return f, args, ModuleWriter(f.plan, tuple(e.wrt), "cupy", "").source()


def _xp_attributes(src: str) -> set[str]:
    """``linalg.solve`` for each ``xp.linalg.solve`` the module reads."""
    out = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Attribute):
            parts, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                parts.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "xp":
                out.add(".".join(reversed(parts)))
    return {a for a in out if not any(b != a and b.startswith(a + ".") for b in out)}


@pytest.mark.parametrize("e", LINALG, ids=[e.name for e in LINALG])
def test_cupy_module_is_python_calling_what_cupy_has(e):
    _, _, src = _compiled(e)
    compile(src, f"<cupy {e.name}>", "exec")
    assert "import cupy as xp" in src and "import numpy" not in src
    used = _xp_attributes(src)
    assert used <= _CUPY_HAS, sorted(used - _CUPY_HAS)


@pytest.mark.parametrize("e", LINALG, ids=[e.name for e in LINALG])
def test_cupy_values_and_gradients_match_numpy(e):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device")
    except Exception as exc:  # noqa: BLE001 - any CUDA runtime error means no usable device
        pytest.skip(f"CuPy cannot reach a CUDA device: {exc}")
    f, args, src = _compiled(e)
    env: dict = {}
    exec(compile(src, f"<cupy {e.name}>", "exec"), env)
    dargs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(float(env[f.name](*dargs)), f(*args), rtol=1e-10)
    _, g_np = f._last.vjp(*args)
    _, g_cp = env[f.name + "_vjp"](*dargs)
    for a, b in zip(g_cp, g_np, strict=True):
        np.testing.assert_allclose(cupy.asnumpy(cupy.asarray(a)), np.asarray(b), rtol=1e-9, atol=1e-12)

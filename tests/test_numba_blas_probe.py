"""A cold process compiles without importing ``scipy.linalg`` where its code calls no BLAS function, and with
it where it does (coarsen_nb/numba_blas_probe.py); loading the ``xp`` namespace imports none of NumPy's lazy
submodules (coarsen_nb/lower/numba_xp.py).

Each check is a fresh process with an empty ``COARSEN_NB_CACHE`` (what it tests happens once per process).
Gradients are checked against central differences of the plain Python function, and the BLAS one against
the NumPy backend too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

_PROCESS = textwrap.dedent('''
    import json, sys, warnings
    import numpy as np
    import coarsen_nb as cn
    warnings.simplefilter("error", UserWarning)     # a fallback to NumPy code fails the test
    SOURCE = sys.argv[1]
    A = np.linspace(-1.0, 1.0, 21).reshape(3, 7)
    x = np.linspace(-1.0, 2.0, 7) ** 2
    gA, gx, gw = cn.coarsen(SOURCE, backend="numba").grad(A, x, 1.5)
    import numba.np.arraymath as arraymath, numba.np.linalg as linalg
    print(json.dumps(dict(gA=gA.tolist(), gx=list(gx), gw=gw, scipy_linalg="scipy.linalg" in sys.modules,
                          f2py="numpy.f2py" in sys.modules, have_blas=arraymath._HAVE_BLAS,
                          restored=arraymath.ensure_blas is linalg.ensure_blas
                          and linalg.ensure_blas.__module__ == "numba.np.linalg")))
''')

_LOOP = """
def energy(A, x, w):
    s = 0.0
    for i in range(len(x)):
        for j in range(A.shape[0]):
            s += w * A[j, i] * A[j, i] * x[i] + 0.5 * x[i]
    return s
"""

# ``A @ x``: Numba's matmul calls BLAS (gemv)
_DOT = """
def energy(A, x, w):
    y = A @ x
    s = 0.0
    for j in range(len(y)):
        s += w * y[j] * y[j]
    return s + 0.5 * sum(x)
"""

_PLAIN = {"loop": lambda A, x, w: float(w * np.sum(A * A * x) + 0.5 * np.sum(x) * A.shape[0]),
          "dot": lambda A, x, w: float(w * np.sum((A @ x) ** 2) + 0.5 * np.sum(x))}


def _central(fn, A, x, w, h=1e-6):
    gA = np.array([(fn(A + h * e.reshape(A.shape), x, w) - fn(A - h * e.reshape(A.shape), x, w)) / (2 * h)
                   for e in np.eye(A.size)]).reshape(A.shape)
    gx = np.array([(fn(A, x + h * e, w) - fn(A, x - h * e, w)) / (2 * h) for e in np.eye(len(x))])
    return gA, gx, (fn(A, x, w + h) - fn(A, x, w - h)) / (2 * h)


def _run(source: str, tmp_path) -> dict:
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="0")
    done = subprocess.run([sys.executable, "-c", _PROCESS, source], env=env, capture_output=True, text=True,
                          check=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind, source, blas", [("loop", _LOOP, False), ("dot", _DOT, True)], ids=["loop", "dot"])
def test_scipy_linalg_is_imported_only_where_blas_is_called(kind, source, blas, tmp_path):
    out = _run(source, tmp_path)
    assert out["scipy_linalg"] is blas          # the loop's compile never imported it; np.dot's typing did
    assert not out["f2py"] or blas              # (nor NumPy's lazy submodules, which SciPy's shim imports)
    assert out["have_blas"]                     # Numba's own answer where SciPy is installed
    assert out["restored"]                      # Numba's function is back in both modules
    A = np.linspace(-1.0, 1.0, 21).reshape(3, 7)
    x = np.linspace(-1.0, 2.0, 7) ** 2
    rA, rx, rw = _central(_PLAIN[kind], A, x, 1.5)
    np.testing.assert_allclose(out["gA"], rA, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["gx"], rx, rtol=1e-6, atol=1e-6)
    assert out["gw"] == pytest.approx(rw, rel=1e-6)


def test_the_dot_gradient_equals_the_numpy_backends():
    import coarsen_nb as cn

    A = np.linspace(-1.0, 1.0, 21).reshape(3, 7)
    x = np.linspace(-1.0, 2.0, 7) ** 2
    want = cn.coarsen(_DOT, backend="numpy").grad(A, x, 1.5)
    got = cn.coarsen(_DOT, backend="numba").grad(A, x, 1.5)
    for g, r in zip(got, want, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_the_xp_namespace_reads_numpys_lazy_submodules_when_named():
    code = ("import sys; from coarsen_nb.lower.numba_xp import xp; import numpy as np; "
            "before = 'numpy.f2py' in sys.modules or 'numpy.testing' in sys.modules; "
            "print(before, xp.fft.fft is np.fft.fft, xp.sum is np.sum, hasattr(xp, '__path__'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["False", "True", "True", "False"]

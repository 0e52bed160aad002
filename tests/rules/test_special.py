"""``scipy.special``'s functions (coarsen_nb/rules/special.py), beyond the corpus (tests/corpus_special.py):
the generated ``_erfc`` against ``math.erfc`` over the whole double range, the ways a user imports a
function, what is refused and how, and the CuPy module of the corpus (nvcc-compiled without a GPU)."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
from corpus_special import SPECIAL
from lower.test_cupy import HookedWriter, _nvcc

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower.helpers import HELPERS
from coarsen_nb.lower.module import ModuleWriter


def _helper(name):
    space = {"xp": np, "math": math}
    for h in ("_erfc_ratio", "_erf", "_exp_minus_square", name):
        exec(HELPERS[h].source, space)
    return space[name]


def test_generated_erfc_is_math_erfc_to_full_precision_from_minus_30_to_30():
    erfc = _helper("_erfc")
    x = np.concatenate([np.linspace(-30.0, 30.0, 20001), [0.0, 1.0, -1.0, 8.0, -8.0, 26.5, 27.3, 1e-300]])
    want = np.array([math.erfc(v) for v in x])
    got = erfc(x)
    tiny = want < 1e-300            # (the subnormal tail: absolute error)
    np.testing.assert_allclose(got[~tiny], want[~tiny], rtol=2e-14, atol=0)
    np.testing.assert_allclose(got[tiny], want[tiny], atol=1e-300)


@pytest.mark.parametrize("imports, call", [
    ("from scipy.special import expit as sigmoid", "sigmoid(x)"),
    ("import scipy.special as sc", "sc.expit(x)"),
    ("import scipy.special", "scipy.special.expit(x)"),
    ("from scipy import special", "special.expit(x)"),
])
def test_every_way_of_importing_a_function_is_the_same_function(imports, call):
    namespace: dict = {}
    exec(f"import numpy as np\n{imports}\n\ndef f(x):\n    return np.sum({call} ** 2)\n", namespace)
    f = cn.coarsen(f"import numpy as np\n{imports}\n\ndef f(x):\n    return np.sum({call} ** 2)\n", name="f",
                   namespace=namespace)
    x = np.array([-2.0, 0.3, 4.0])
    assert f(x) == pytest.approx(namespace["f"](x), rel=1e-14)
    h = 1e-6
    fd = [(namespace["f"](x + h * e) - namespace["f"](x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(f.grad(x), fd, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("imports, call", [
    ("from numpy.linalg import inv as inverse", "inverse(A)"),
    ("import numpy.linalg as la", "la.inv(A)"),
])
def test_linear_algebra_imported_by_name(imports, call):
    text = f"import numpy as np\n{imports}\n\ndef f(A):\n    return np.sum({call} ** 2)\n"
    namespace: dict = {}
    exec(text, namespace)
    f = cn.coarsen(text, name="f", namespace=namespace)
    A = np.array([[3.0, 0.5], [0.25, 2.0]])
    assert f(A) == pytest.approx(namespace["f"](A), rel=1e-13)
    h = 1e-6
    fd = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        d = np.zeros_like(A)
        d[idx] = h
        fd[idx] = (namespace["f"](A + d) - namespace["f"](A - d)) / (2 * h)
    np.testing.assert_allclose(f.grad(A), fd, rtol=1e-7, atol=1e-10)


def _error(text, args):
    namespace: dict = {}
    exec(text, namespace)
    with pytest.raises(cn.CoarsenError) as info:
        cn.coarsen(text, name="f", namespace=namespace).grad(*args)
    return info.value, text.splitlines()


def test_an_unsupported_scipy_special_function_is_named_with_the_supported_ones():
    err, lines = _error("import numpy as np\nimport scipy.special as sc\n\ndef f(x):\n    return np.sum(sc.gamma(x))\n",
                        (np.ones(3),))
    assert "scipy.special.gamma" in str(err) and "expit" in err.hint and "logsumexp" in err.hint
    assert err.line == 5 and err.col == lines[4].index("sc.gamma")


def test_logsumexp_weights_are_refused_at_the_parameter():
    err, lines = _error("import numpy as np\nfrom scipy.special import logsumexp\n\ndef f(x, w):\n"
                        "    return logsumexp(x, b=w)\n", (np.ones(3), np.ones(3)))
    assert "b=" in str(err) or "'b'" in str(err)
    assert err.line == 5


def test_a_function_numpy_does_not_have_is_refused():
    """``np.erf`` is not NumPy's (the plain function raises AttributeError): it was accepted as erf."""
    err, lines = _error("import numpy as np\n\ndef f(x):\n    return np.sum(np.erf(x))\n", (np.ones(3),))
    assert "np.erf" in str(err) and err.line == 4


def test_second_derivative_of_gammaln_is_not_needed_for_a_gradient():
    """The gradient of gammaln is the digamma function, evaluated by SciPy in the generated module."""
    import scipy.special
    text = "import numpy as np\nfrom scipy.special import gammaln\n\ndef f(a):\n    return np.sum(gammaln(a))\n"
    namespace: dict = {}
    exec(text, namespace)
    f = cn.coarsen(text, name="f", namespace=namespace)
    a = np.array([0.3, 1.0, 2.5, 40.0])
    np.testing.assert_allclose(f.grad(a), scipy.special.digamma(a), rtol=1e-14)
    assert "_digamma(" in f.source and "Standalone" in f.source


def test_the_corpus_cupy_modules_are_python_and_their_fused_kernels_compile(tmp_path):
    fused = []
    for entry in SPECIAL:
        f = cn.coarsen(entry.fn, wrt=entry.wrt)
        f(*entry.make_args(np.random.default_rng(0)))
        src = HookedWriter(f.plan, f._last.wrt, "cupy", "").source()
        compile(src, f"<cupy {entry.name}>", "exec")
        assert "import cupy as xp" in src and "import numpy" not in src
        fused += [fk for fk in cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))]
    assert len(fused) > 10
    if shutil.which("nvcc") is None:
        return
    res = _nvcc("".join(cl.translation_unit(fk, namespace=f"k{i}") for i, fk in enumerate(fused)), tmp_path, "special")
    assert res.returncode == 0, res.stderr[-4000:]

"""Numerical regressions of issue 12, each test named after what broke.

Every case runs under the three selections a user can ask for (the default,
``max_soi=1`` and ``per_block=True``) with warnings raised as errors: a case that
only works by falling back to a finer selection, or that leaks a NumPy warning,
fails here.  The oracles are the plain function run by Python, central finite
differences and, where a derivative is infinite, JAX.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]


def _python(src: str):
    """The plain function of ``src``, as Python runs it (the oracle)."""
    ns = {"math": math, "np": np}
    exec(src, ns)
    return next(v for k, v in ns.items() if callable(v) and k not in ("math", "np"))


def _compiled(src: str, options: dict, wrt=None):
    return cn.coarsen(src, wrt=wrt, **options)


def _strict(fn, *args):
    """``fn(*args)`` with every warning an error (a fallback warning, a NumPy overflow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


# -- 5: the adjoint of a broadcast operand is summed over the broadcast axes -------------------

_BROADCAST_SOURCES = {
    "add": "def f(a, b):\n    return np.sum(np.tanh(a + b))\n",
    "mul": "def f(a, b):\n    return np.sum(a * b)\n",
    "both": "def f(a, b):\n    return np.sum(np.sin(a) * np.exp(b) + a * a * b)\n",
}

_BROADCAST_SHAPES = [((), (3,)), ((3,), ()), ((4, 3), (3,)), ((3,), (4, 3)), ((4, 3), (1, 3)),
                     ((4, 1), (1, 3)), ((4, 1), (3,)), ((4, 3), (4, 1)), ((1,), (4, 3)), ((2, 4, 3), (4, 1))]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("shapes", _BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(_BROADCAST_SOURCES))
def test_adjoint_of_a_broadcast_operand_is_summed_to_its_shape(op, shapes, options):
    src = _BROADCAST_SOURCES[op]
    rng = np.random.default_rng(5)
    args = tuple(rng.normal(size=s) if s else 0.3 for s in shapes)
    f = _compiled(src, options)
    grads = _strict(f.grad, *args)
    for i in range(2):
        assert_close(grads[i], finite_difference(_python(src), args, i), rtol=1e-5, atol=1e-6, what=f"arg {i}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_bias_broadcast_over_the_rows_of_a_matrix_product(options):
    src = "def f(W, b, X):\n    return np.sum(np.tanh(X @ W + b))\n"
    rng = np.random.default_rng(0)
    args = (0.1 * np.ones((3, 4)), rng.normal(size=4), rng.normal(size=(10, 3)))
    f = _compiled(src, options)
    grads = _strict(f.grad, *args)
    for i in range(3):
        assert_close(grads[i], finite_difference(_python(src), args, i), rtol=1e-5, atol=1e-6, what=f"arg {i}")

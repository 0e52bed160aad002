"""Predicates that hold a γ, each named after what broke (CI's random programs, 2026-12-01).

A conditional expression inside a comparison, ``(u if c else v) > t``, makes SymPy fold the
inner γ into an ITE and try to prove the chain exhaustive through solution sets; its inequality
solver raised IndexError on a relation of two ``abs`` terms, and ``not (p and q)`` inside the
chain had no negation normal form.  Each case runs under the three selections and is checked
against the plain function and central finite differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.phi import gammas

SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]

_SOURCES = {
    "two_abs": "def f(a, b):\n    return b * a if (a * b if abs(a) < abs(a - 2.0) else b - a) > 0.1 else b\n",
    "and_two_abs": ("def f(a, b):\n"
                    "    return b * a if (a * b if (a > 0.0) and (abs(a) < abs(a - 2.0)) else b - a) > 0.1 else b\n"),
    "not_and": ("def f(a, b):\n"
                "    t = a * b if not ((a > 0.0) and (a < 1.5)) else b - a\n"
                "    u = 2.0 * a if t > 0.1 else b\n"
                "    return u * (1.0 + a) + (a if u > 0.5 else b)\n"),
    "not_and_flag": ("def f(a, b):\n"
                     "    c = (not ((a > 0.0) and (a < 1.5))) if b > 0.0 else (a < -1.0)\n"
                     "    t = a * b if c else b - a\n"
                     "    return b * a if t > 0.1 else b\n"),
    "not_or_in_while": ("def f(a, b):\n"
                        "    w = a\n"
                        "    k = 0\n"
                        "    while k < 4 and not ((w > 2.0) or (abs(w) < abs(w - 3.0) * 0.1)):\n"
                        "        k += 1\n"
                        "        w = (w * 1.5 if w > b else w + b) + 0.1\n"
                        "    return w * b\n"),
}
_POINTS = [(0.7, 0.3), (-0.4, 0.9), (1.8, -0.6), (2.6, 0.35)]


def _python(src: str):
    ns = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("name", sorted(_SOURCES))
def test_gamma_inside_a_predicate_compiles_and_matches_python(name, options):
    src = _SOURCES[name]
    py, f = _python(src), cn.coarsen(src, **options)
    for point in _POINTS:
        assert_close(f(*point), py(*point))
        # finite differences on a generic point near the sample (off the branch boundaries)
        moved = (point[0] + 0.0123, point[1] - 0.0071)
        want = [finite_difference(py, moved, i) for i in range(2)]
        assert_close(f.grad(*moved), want, rtol=1e-6, what=f"{name} at {moved}")


def test_negation_of_short_circuit_and_or_has_a_normal_form():
    a, b = sp.symbols("a b", real=True)
    for inner, outer in ((gammas.AndThen(a > 0, b < 1), sp.Or), (gammas.OrElse(a > 0, b < 1), sp.And)):
        nnf = sp.Not(inner).to_nnf()
        assert nnf == outer(a <= 0, b >= 1)

"""``backend="numba"``: a divisor a fused loop's iteration divides by more than once is one reciprocal.

``lower/numba_reciprocals.py`` rewrites ``b**-n`` (read by two or more terms) as a power of one temporary
``1 / b``.  Checked: which powers it rewrites (SymPy expressions), programs whose derivatives divide by the same
value several times against the NumPy backend (value, ``value_and_grad`` and ``grad``: 1e-10), the plain
function and central differences, hypothesis data (a zero divisor included: the same infinities and NaNs as
NumPy's), and black_scholes' adjoint loop dividing four times an element, not eleven.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs, as_tuple

from coarsen_nb.lower.numba_reciprocals import shared_reciprocals

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


a, b, t, x, y = sp.symbols("a b t x y")


def test_a_divisor_read_twice_becomes_one_reciprocal():
    powers, temps = shared_reciprocals([x / a + y / a**2 + x * y / (a * b)], {})
    ((inv, value),) = temps.items()
    assert value == 1 / a and powers == {1 / a: inv, a**-2: inv**2}


def test_a_divisor_read_through_a_temporary_counts():
    u = sp.Symbol("u")
    powers, temps = shared_reciprocals([x / a + u], {u: y / a**2})
    assert set(powers) == {1 / a, a**-2}


def test_no_reciprocal_where_the_products_divide_anyway():
    """(brachistochrone's adjoint: ``(v' + v)`` shared, but each product also divides by its own ``s``, ``y``)"""
    assert shared_reciprocals([x / (b * a) + y / (t * a**2)], {}) == ({}, {})


def test_a_root_and_its_square_share_the_roots_reciprocal():
    powers, temps = shared_reciprocals([x / sp.sqrt(t) + y / t], {})
    ((inv, value),) = temps.items()
    assert value == sp.Pow(sp.sqrt(t), -1, evaluate=False) and powers == {t**sp.Rational(-1, 2): inv, 1 / t: inv**2}


def test_one_division_or_exponents_of_no_common_unit_stay():
    assert shared_reciprocals([x / a + y * b], {}) == ({}, {})
    assert shared_reciprocals([x * a**sp.Rational(-1, 2) + y * a**sp.Rational(-1, 3)], {}) == ({}, {})


def test_a_constant_root_is_shared_but_a_number_is_not():
    powers, temps = shared_reciprocals([x / sp.sqrt(sp.pi) + y / (a * sp.sqrt(sp.pi)) + x / 3 + y / 3], {})
    assert set(temps.values()) == {sp.Pow(sp.sqrt(sp.pi), -1, evaluate=False)}


def ratios(s, k, v):
    """Black-Scholes' shape: a root and its square in the denominators, a log of a quotient."""
    total = 0.0
    for i in range(len(s)):
        q = v[i] * math.sqrt(k[i])
        d = (math.log(s[i] / 2.0) + 0.5 * v[i] * v[i] * k[i]) / q
        total += s[i] * math.erf(d) + math.exp(-d * d) / q
    return total


def quotients(x, w, c):
    """Several quotients by one element and by one number."""
    s = 0.0
    for i in range(len(x)):
        s += x[i] / (w[i] * c) + x[i] * x[i] / w[i] + c / (w[i] * w[i])
    return s


def quotient_map(x, w):
    """Elementwise: every element its own quotients (a zero divisor gives NumPy's infinities and NaNs)."""
    return np.sum((x / w) * x + 1.0 / (w * w) + x / w)


PROGRAMS = {"ratios": (ratios, ("s", "k", "v")), "quotients": (quotients, ("x", "w", "c")),
            "quotient_map": (quotient_map, ("x", "w"))}
PAIRS = BackendPairs(PROGRAMS)


def _inputs(name, rng, n):
    if name == "ratios":
        return (rng.uniform(0.5, 3.0, n), rng.uniform(0.1, 2.0, n), rng.uniform(0.1, 0.9, n))
    if name == "quotients":
        return (rng.uniform(-2.0, 2.0, n), rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n), 1.7)
    return (rng.uniform(-2.0, 2.0, n), rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n))


def _check_grad(name, args):
    _, by_numpy, by_numba = PAIRS.pair(name)
    for g, w in zip(as_tuple(by_numba.grad(*args)), as_tuple(by_numpy.grad(*args)), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} grad")


@pytest.mark.parametrize("name,n", [(name, n) for name in PROGRAMS for n in (1, 2, 5, 40)])
def test_numba_equals_numpy_and_central_differences(name, n):
    args = _inputs(name, np.random.default_rng(n), n)
    PAIRS.check_with_differences(name, args)
    _check_grad(name, args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), n=st.integers(0, 20), seed=st.integers(0, 2**16))
def test_random_data(name, n, seed):
    args = _inputs(name, np.random.default_rng(seed), n)
    PAIRS.check(name, args)
    _check_grad(name, args)


def test_a_zero_divisor_gives_numpys_infinities_and_nans():
    x = np.array([1.5, -2.0, 0.0, 3.0])
    w = np.array([0.5, 0.0, 0.0, -1.0])
    _, by_numpy, by_numba = PAIRS.pair("quotient_map")
    with np.errstate(all="ignore"):
        want = by_numpy.grad(x, w)
    got = by_numba.grad(x, w)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        np.testing.assert_array_equal(np.isposinf(g), np.isposinf(e))
        finite = np.isfinite(e)
        np.testing.assert_allclose(g[finite], e[finite], rtol=1e-12)


def test_black_scholes_adjoint_loop_divides_four_times_an_element():
    """(11 on main: σ√τ, √π σ, √π √τ σ², √π S √τ σ ... each its own division; the hand-written loop takes 3.)"""
    import coarsen_nb as cn
    from coarsen_nb.kernels import black_scholes as kernel

    f = cn.coarsen(kernel.black_scholes, wrt=tuple(kernel.META["wrt"]), backend="numba")
    args = kernel.make_inputs(kernel.META["test_size"])
    f.grad(*args)
    text = "\n".join(p.text for p in f.module_parts if p.role not in ("carried", "head"))
    grad = text[text.index("def black_scholes_grad("):]
    (loop,) = [name for name in _functions(text) if name + "(" in grad and "_vjp_" in name]
    body = text[text.index(f"def {loop}("):]
    body = body[:body.find("\n@", 1)] if "\n@" in body else body
    # (a constant's reciprocal, `1.0 / 1.7724538509055159`, is folded by the compiler: not a division at run time)
    divisions = [line for line in body.splitlines()
                 if " / " in line and not line.rsplit(" / ", 1)[1].replace(".", "").isdigit()]
    assert len(divisions) <= 4, "\n".join(divisions)


def _functions(source: str) -> list[str]:
    return [line[4:line.index("(")] for line in source.splitlines() if line.startswith("def ")]

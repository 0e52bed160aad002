"""The numba module's ``_log`` and ``_erf_scalar`` (``lower/numba_elementary.py``): libm's log and erf in arithmetic
LLVM vectorizes, written as LLVM instructions (``lower/numba_xp_elementary.py``).

Compiled from the helpers' own text, as a numba module carries them, each equals bit for bit the Python text it
replaced (``elementary_reference``: the jit functions of stop 44) on random and edge numbers, and is checked
against libm's (Python's ``math``): ``_log`` within 1 ulp from the least subnormal to the largest float,
``_erf_scalar`` within 3 ulp on [-7, 7] and near 0, scalar and in a store loop (the vectorized lanes and the
scalar remainder), and exactly libm's value at the edges (NaN, +-inf, +-0, a negative number: NaN as Numba's
``math.log`` gives in a loop).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from elementary_reference import compiled_reference

from coarsen_nb.lower import numba_xp_elementary
from coarsen_nb.lower.numba_helpers import NUMBA_HELPER_DECORATORS, NUMBA_HELPERS


def _helpers() -> dict:
    """The numba module's helpers, compiled as the module compiles them (its decorators, its prologue's
    ``elementary_call``)."""
    env = {"math": math, "_np": np, "xp": np, "numba": numba, "_jit_helper": numba.njit,
           "elementary_call": numba_xp_elementary.elementary_call}
    for name in ("_exp", "_log", "_erf_scalar"):
        exec(NUMBA_HELPERS[name], env)
        env[name] = eval(NUMBA_HELPER_DECORATORS.get(name, "@_jit_helper")[1:], env)(env[name])
    return env


@pytest.fixture(scope="module")
def compiled():
    env = _helpers()
    log, erf = env["_log"], env["_erf_scalar"]

    @numba.njit
    def log_loop(a, out):
        for i in range(a.shape[0]):
            out[i] = log(a[i])

    @numba.njit
    def erf_loop(a, out):
        for i in range(a.shape[0]):
            out[i] = erf(a[i])

    return {"log": (numba.njit(lambda x: log(x)), log_loop), "erf": (numba.njit(lambda x: erf(x)), erf_loop)}


def _bit_test_numbers(rng) -> np.ndarray:
    """Random numbers over every binade (both signs, subnormals), near the helpers' switch points, and the
    edges: +-0, +-inf, NaN, the least subnormal, the largest float, 1 and its neighbours."""
    spread = rng.integers(0, 2**64 - 1, 40000, dtype=np.uint64).view(np.float64)    # (every float, NaNs too)
    switch = np.array([1.0, 6.0, 709.8, -745.2, 2.2250738585072014e-308, np.sqrt(2.0), np.sqrt(0.5)])
    near = (switch[:, None] + np.linspace(-1e-6, 1e-6, 201)[None, :] * np.abs(switch[:, None])).ravel()
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310, 1.7976931348623157e308,
             -1.7976931348623157e308, np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0), 1e-300, -1e-300, 27.0]
    return np.concatenate([spread, rng.uniform(-8.0, 8.0, 20000), rng.standard_normal(5000),
                           np.exp(rng.uniform(-744.0, 709.0, 20000)), rng.uniform(-750.0, 712.0, 20000),
                           near, -near, edges])


@pytest.mark.parametrize("name", ["_exp", "_log", "_erf_scalar"])
def test_bit_for_bit_the_python_text_it_replaced(name):
    """Scalar and in a store loop (vectorized lanes and the remainder), the intrinsic gives the very bits the jit
    function of the same arithmetic gave (NaN's bits too)."""
    new, old = _helpers()[name], compiled_reference()[name]

    def store_loop(f):
        @numba.njit
        def loop(a, out):
            for i in range(a.shape[0]):
                out[i] = f(a[i])
        return loop

    a = _bit_test_numbers(np.random.default_rng(7))
    got, want = np.empty_like(a), np.empty_like(a)
    store_loop(new)(a, got)
    store_loop(old)(a, want)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    scalar_new, scalar_old = numba.njit(lambda x: new(x)), numba.njit(lambda x: old(x))
    picks = np.concatenate([a[:: 97], a[-16:]])
    scalar_got = np.array([scalar_new(v) for v in picks])
    np.testing.assert_array_equal(scalar_got.view(np.int64), np.array([scalar_old(v) for v in picks]).view(np.int64))


def _libm(name, a):
    return np.array([getattr(math, name)(v) for v in a])


def test_log_within_one_ulp_of_libm(compiled):
    scalar, loop = compiled["log"]
    rng = np.random.default_rng(0)
    edges = [5e-324, 1e-310, 2.2250738585072014e-308, np.nextafter(1.0, 0.0), 1.0, 2.0, 1.7976931348623157e308]
    a = np.concatenate([np.exp(rng.uniform(-744.0, 709.0, 20000)), rng.uniform(0.0, 3.0, 5000),
                        1.0 + rng.uniform(-1e-7, 1e-7, 1001), edges])
    out = np.empty_like(a)
    loop(a, out)
    np.testing.assert_array_max_ulp(out, _libm("log", a), maxulp=1)
    assert out[-3] == 0.0                                               # (log 1 is +0.0)
    np.testing.assert_array_equal([scalar(v) for v in a[:50]], out[:50])     # (the scalar path: the same)


def test_erf_within_three_ulp_of_libm(compiled):
    scalar, loop = compiled["erf"]
    rng = np.random.default_rng(1)
    a = np.concatenate([rng.uniform(-7.0, 7.0, 20000), rng.standard_normal(5000), rng.uniform(-1e-8, 1e-8, 1001),
                        [1.0, -1.0, np.nextafter(1.0, 2.0), 5.9, 6.0, 6.1, 27.0, 1e-300, -1e-300]])
    out = np.empty_like(a)
    loop(a, out)
    np.testing.assert_array_max_ulp(out, _libm("erf", a), maxulp=3)
    np.testing.assert_array_equal([scalar(v) for v in a[:50]], out[:50])


@pytest.mark.parametrize("v", [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -1e-300, -np.inf])
def test_the_edges_of_log_are_libms(compiled, v):
    scalar, loop = compiled["log"]
    out = np.empty(1)
    loop(np.array([v]), out)
    with np.errstate(all="ignore"):
        want = np.log(v)            # (libm's value; Python's math.log raises below 0)
    for got in (scalar(v), out[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("v", [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-320, -1e-320])
def test_the_edges_of_erf_are_libms(compiled, v):
    scalar, loop = compiled["erf"]
    out = np.empty(1)
    loop(np.array([v]), out)
    want = math.erf(v)
    for got in (scalar(v), out[0]):
        np.testing.assert_array_equal(got, want)
        assert math.copysign(1.0, got) == math.copysign(1.0, want)       # (-0.0 stays -0.0)


def test_fma_rounds_once_where_the_cpu_has_it():
    """The helpers' ``fma(a, b, c)`` steps: a * b + c rounded once (the exact -2^-60 below) where the CPU Numba
    compiles for has a fused multiply-add, as Python rounds a * b + c (twice: 0.0) where it does not."""
    from fractions import Fraction

    from llvmlite import binding

    @numba.extending.intrinsic
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return numba_xp_elementary.ElementaryWriter(builder).fma(*args)

        return numba.float64(numba.float64, numba.float64, numba.float64), codegen

    call = numba.njit(lambda a, b, c: fma(a, b, c))
    a, b, c = 1.0 + 2.0**-30, 1.0 - 2.0**-30, -1.0
    exact = float(Fraction(a) * Fraction(b) + Fraction(c))
    fused = numba.config.CPU_NAME is None and binding.get_host_cpu_features().get("fma", False)
    assert call(a, b, c) == (exact if fused else a * b + c)
    assert exact == -(2.0**-60) and a * b + c == 0.0


@pytest.mark.parametrize("name", ["log", "erf"])
def test_a_loop_inlines_the_helper_it_calls(compiled, name):
    """``_log``/``_erf_scalar`` write their instructions into the loop that calls them: its optimized code has
    their arithmetic, not a call (which would keep the loop from being vectorized), and vector instructions."""
    scalar, loop = compiled[name]
    a = np.linspace(0.5, 2.0, 37)
    out = np.empty_like(a)
    loop(a, out)
    assert np.all(np.abs(out - _libm(name, a)) <= 4 * np.spacing(np.abs(_libm(name, a))))
    helper = {"log": "_log", "erf": "_erf_scalar"}[name]
    calls = [line for ir in loop.inspect_llvm().values() for line in ir.splitlines()
             if " call " in line and (helper in line or "@log" in line or "@erf" in line)]
    assert calls == []
    assert any(" x double> " in ir for ir in loop.inspect_llvm().values())     # (vectorized: <2/4/8 x double>)

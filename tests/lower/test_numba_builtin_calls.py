"""``lower/numba_builtin_calls.py``: a numba loop function's ``max``/``min`` of two numbers printed as the
conditional Numba's overload computes, and ``int`` of a range counter or an integer name dropped (entries too).

The conditionals are checked against Numba's own ``max``/``min`` (the reference: what the loop functions
called before), bit for bit and type for type, on ints, floats, a mix, zeros of both signs, infinities and
NaN in either place; the pass on records; and gmm's numba gradient, whose loop functions it rewrites, against
the NumPy backend's.
"""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS
from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_builtin_calls import without_builtin_calls

_VALUES = [0, 1, -3, 7, 0.0, -0.0, 2.5, -1.5, math.inf, -math.inf, math.nan]


def _printed(body) -> str:
    return "\n".join(lir.print_body(tuple(body), 0))


def _jitted(code: str):
    env: dict = {}
    exec(f"def f(a, b):\n    return {code}\n", env)
    return numba.njit(env["f"])


@pytest.mark.parametrize("kind", ["max", "min"])
def test_the_conditional_is_numbas_max_and_min(kind):
    call = lir.ExprStmt(lir.Call(lir.Name(kind), (lir.Name("a"), lir.Name("b"))))
    (stmt,) = without_builtin_calls((call,))
    conditional = str(stmt.value)
    assert kind not in conditional, conditional
    builtin, rewritten = _jitted(f"{kind}(a, b)"), _jitted(conditional)
    for a, b in itertools.product(_VALUES, repeat=2):
        want, got = builtin(a, b), rewritten(a, b)
        assert type(got) is type(want), (a, b, want, got)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (a, b, want, got)


def test_trip_counts_tiles_and_counters_printed_without_the_builtins():
    n, k, tile, i = (lir.Name(x) for x in ("n", "k", "tile", "i"))
    count = lir.Call(lir.Name("max"), (lir.Lit("0"), n))
    body = (
        lir.Assign(lir.Name("row"), lir.Call(lir.Attr(lir.Name("xp"), "empty"),
                                             (lir.BinOp("*", count, lir.Lit("64")),))),
        lir.For(tile, lir.Call(lir.Name("range"), (lir.Lit("0"), n, lir.Lit("64"))), (
            lir.Assign(lir.Name("stop"), lir.Call(lir.Name("min"), (lir.BinOp("+", tile, lir.Lit("64")), n))),)),
        lir.For(k, lir.Call(lir.Name("range"), (lir.Lit("0"), count)), (
            lir.AugAssign(lir.Index(lir.Name("b"), (lir.Call(lir.Name("int"), (k,)),)), "+", lir.Lit("1.0")),)),
    )
    assert _printed(without_builtin_calls(body)) == "\n".join([
        "row = xp.empty((n if n > 0 else 0) * 64)",
        "for tile in range(0, n, 64):",
        "    stop = n if n < tile + 64 else tile + 64",
        "for k in range(0, n if n > 0 else 0):",
        "    b[k] += 1.0",
    ])


def test_what_is_not_a_counter_or_not_cheap_keeps_its_call():
    k, x = lir.Name("k"), lir.Name("x")
    body = (
        lir.For(k, lir.Call(lir.Name("range"), (lir.Lit("3"),)), (
            lir.Assign(k, lir.BinOp("*", k, lir.Lit("2"))),
            lir.Assign(lir.Name("a"), lir.Call(lir.Name("int"), (k,))))),
        lir.Assign(lir.Name("c"), lir.Call(lir.Name("int"), (x,))),
        lir.Assign(lir.Name("m"), lir.Call(lir.Name("max"), (lir.Lit("0"), lir.Index(x, (lir.Lit("0"),))))),
        lir.Assign(lir.Name("m3"), lir.Call(lir.Name("max"), (lir.Lit("0"), x, k))),
    )
    assert _printed(without_builtin_calls(body)) == "\n".join([
        "for k in range(3):",
        "    k = k * 2",
        "    a = int(k)",
        "c = int(x)",
        "m = max(0, x[0])",
        "m3 = max(0, x, k)",
    ])


@pytest.mark.parametrize("size", [0, 1, 63, 64, 130])
def test_gmm_numba_gradient_equals_numpy(size):
    mod = KERNELS["gmm"]
    args = mod.make_inputs(max(size, 1), 0)
    args = (args[0][:size],) + tuple(args[1:])
    fn = mod.gmm
    by_numba = cn.coarsen(fn, wrt=tuple(mod.META["wrt"]), backend="numba")
    by_numpy = cn.coarsen(fn, wrt=tuple(mod.META["wrt"]), backend="numpy")
    np.testing.assert_allclose(by_numba(*args), by_numpy(*args), rtol=1e-12, atol=0)
    for got, want in zip(by_numba.grad(*args), by_numpy.grad(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    loops = by_numba.source.split("def _soi", 1)[1].split("def gmm(")[0]
    assert "max(0," not in loops and "min(" not in loops and "int(k" not in loops


def test_int_of_integer_arithmetic_dropped_but_not_of_a_parameter_or_a_float():
    n, t, p, f = (lir.Name(x) for x in ("n", "t", "p", "f"))
    y = lir.Name("y")

    def int_of(e):
        return lir.Call(lir.Name("int"), (e,))

    body = (
        lir.Assign(n, lir.Index(lir.Attr(y, "shape"), (lir.Lit("0"),))),
        lir.Assign(t, lir.BinOp("-", lir.Call(lir.Name("max"), (lir.Lit("0"), n)), lir.Lit("1"))),
        lir.Assign(lir.Name("a"), lir.Index(y, (int_of(t),))),
        lir.Assign(p, lir.Call(lir.Name("max"), (lir.Lit("0"), p))),       # (p: a parameter, any type)
        lir.Assign(lir.Name("b"), int_of(p)),
        lir.Assign(f, lir.BinOp("/", n, lir.Lit("2"))),
        lir.Assign(lir.Name("c"), int_of(f)),
        lir.Assign(lir.Name("d"), int_of(lir.Call(lir.Name("len"), (y,)))),
    )
    assert _printed(without_builtin_calls(body)) == "\n".join([
        "n = y.shape[0]",
        "t = (n if n > 0 else 0) - 1",
        "a = y[t]",
        "p = p if p > 0 else 0",
        "b = int(p)",
        "f = n / 2",
        "c = int(f)",
        "d = int(len(y))",
    ])


@pytest.mark.parametrize("name", ["brachistochrone", "horner_fit"])
def test_entry_points_printed_without_int_of_integers_equal_numpy(name):
    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["test_size"])
    fn = getattr(mod, name)
    by_numba = cn.coarsen(fn, wrt=tuple(mod.META["wrt"]), backend="numba")
    by_numpy = cn.coarsen(fn, wrt=tuple(mod.META["wrt"]), backend="numpy")
    for got, want in zip(by_numba.grad(*args), by_numpy.grad(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert by_numba.fallback is None
    entry = by_numba.source.split(f"def {name}_grad(", 1)[1].split("\n@", 1)[0]
    assert "int(t" not in entry, entry

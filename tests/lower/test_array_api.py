"""The array-namespace code against ``array_api_strict``: no NumPy-only API where it claims portability.

The generated module is written for ``xp = array_api_strict`` (via
``ModuleWriter(plan, wrt, "array_api_strict", "")``) and its forward value and
gradient are compared with the NumPy build.  This covers the entries whose
generated code runs under the strict namespace today — at the time of
writing only the scalar-code entries: every entry with an array input still
reaches a NumPy-only call (``len(array)``, ``xp.shape``, ``xp.bincount``,
``xp.tile`` with an int, ``xp.max(..., initial=)``, ``xp.array``, ``xp.dot``,
``xp.empty(n, dtype=bool)``, ``.reshape``/``.sum`` methods, int-array ×
Python-float promotion); those are listed in the lowering report, not
hidden behind xfail.  Add an entry to ``STRICT_OK`` when its code is made
portable.  (``power_rec`` left the list when its loop became the C9 closed
form: Σ bᵖ over an index array prints ``xp.power`` of a float and an int array.)
"""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS

import coarsen_nb as cn
from coarsen_nb.lower.module import ModuleWriter

xps = pytest.importorskip("array_api_strict", reason="array_api_strict is not installed")

# corpus entries whose generated module runs under array_api_strict (scalar code only, so far)
STRICT_OK = (
    "aug_assign", "black_scholes_call", "bool_predicates", "chained_compare", "collatz_steps",
    "early_return_top", "elif_chain", "helper_call", "helper_with_returns", "ifexp_abs_min_max", "int_arith",
    "int_gcd", "loop_tuple_rotate", "math_mix", "nested_if", "nested_returns", "np_scalar_mix", "one_armed_if",
    "poly2", "rotate3", "swap_order", "tuple_return", "unary_ops", "while_continue",
    "while_countdown", "while_newton_sqrt", "while_true_break",
)
ENTRIES = [e for e in CORPUS if e.name in STRICT_OK]


def _strict_module(f):
    c = f._last
    src = ModuleWriter(c.plan, c.wrt, "array_api_strict", "").source()
    # the namespace is imported exactly when the module uses it (scalar-only code needs only math)
    assert ("import array_api_strict as xp" in src) == ("xp." in src)
    env: dict = {}
    exec(compile(src, f"<array_api_strict {f.name}>", "exec"), env)
    return env, c


def _np(v):
    if isinstance(v, tuple):
        return tuple(_np(x) for x in v)
    return np.asarray(v, dtype=float)


def test_every_listed_entry_exists():
    assert {e.name for e in ENTRIES} == set(STRICT_OK)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_forward_and_gradient_match_numpy(entry):
    f = cn.coarsen(entry.fn, wrt=entry.wrt or None)
    for seed in (0, 1):
        args = entry.make_args(np.random.default_rng(seed))
        want = f(*args)
        env, c = _strict_module(f)
        sargs = [xps.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        got = env[f.name](*sargs)
        np.testing.assert_allclose(np.asarray(_np(got), dtype=float), np.asarray(_np(want), dtype=float),
                                   rtol=1e-12, atol=1e-12)
        if c.wrt:
            v_np, g_np = c.vjp(*args)
            v_st, g_st = env[f.name + "_vjp"](*sargs)
            np.testing.assert_allclose(_np(v_st), _np(v_np), rtol=1e-12, atol=1e-12)
            for a, b in zip(g_st, g_np, strict=True):
                np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)

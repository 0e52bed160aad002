"""Bad input is a :class:`CoarsenError` naming the parameter — never a bare
internal traceback and never a silently wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb import CoarsenError

SOURCE = "def f(x, w, n):\n    s = 0.0\n    for i in range(n):\n        s += x * w[i]\n    return s\n"
GOOD = (0.5, np.array([1.0, 2.0, 3.0]), 3)


@pytest.fixture
def f():
    return cn.coarsen(SOURCE)


def test_good_call_works(f):
    assert f(*GOOD) == pytest.approx(3.0)


BAD_KINDS = {
    "list": (1, [1.0, 2.0, 3.0]),
    "string": (0, "0.5"),
    "string_array": (1, np.array(["a", "b", "c"])),
    "none": (2, None),
    "complex": (0, 1j),
    "dict": (1, {"a": 1.0}),
}


@pytest.mark.parametrize("call", ["__call__", "grad", "value_and_grad", "vjp"])
@pytest.mark.parametrize("case", list(BAD_KINDS))
def test_wrong_kind_names_the_parameter(f, case, call):
    pos, bad = BAD_KINDS[case]
    args = list(GOOD)
    args[pos] = bad
    with pytest.raises(CoarsenError) as info:
        getattr(f, call)(*args)
    assert repr(f.params[pos]) in str(info.value), str(info.value)


@pytest.mark.parametrize("args", [GOOD[:2], GOOD + (1.0,), ()], ids=["too_few", "too_many", "none"])
@pytest.mark.parametrize("call", ["__call__", "grad"])
def test_wrong_count(f, args, call):
    with pytest.raises(CoarsenError) as info:
        getattr(f, call)(*args)
    msg = str(info.value)
    assert "3" in msg and str(len(args)) in msg
    assert all(p in msg for p in f.params), msg


def test_float_trip_count_is_rejected(f):
    """``range(3.0)`` is a TypeError in Python; coarsen_nb must not run it (and certainly not report d/dn = 0)."""
    ns: dict = {}
    exec(SOURCE, ns)
    with pytest.raises(TypeError):   # the plain function refuses it
        ns["f"](0.5, GOOD[1], 3.0)
    with pytest.raises(CoarsenError) as info:
        f(0.5, GOOD[1], 3.0)
    assert "'n'" in str(info.value)


@pytest.mark.parametrize("wrt", ["z", ("x", "z"), "x, nope"])
def test_wrt_not_a_parameter(wrt):
    with pytest.raises(CoarsenError) as info:
        cn.coarsen(SOURCE, wrt=wrt)
    assert ("'z'" in str(info.value)) or ("'nope'" in str(info.value))


@pytest.mark.parametrize("call", ["__call__", "grad"])
def test_wrt_an_int_parameter(call):
    g = cn.coarsen(SOURCE, wrt=("x", "n"))
    with pytest.raises(CoarsenError) as info:
        getattr(g, call)(*GOOD)
    assert "'n'" in str(info.value)


def test_wrt_an_int_array():
    g = cn.coarsen(SOURCE, wrt="w")
    with pytest.raises(CoarsenError) as info:
        g.grad(0.5, np.array([1, 2, 3]), 3)
    assert "'w'" in str(info.value)


def test_inspection_before_a_call_is_a_coarsen_error(f):
    with pytest.raises(CoarsenError):
        _ = f.source
    with pytest.raises(CoarsenError):
        _ = f.plan

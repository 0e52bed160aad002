"""Fallback to a finer SOI selection happens only on the named signal, :class:`NoSegmentForm`.

Any other exception inside the compiler is a bug in coarsen_nb and is reported as an
:class:`InternalCompilerError` (a CoarsenError saying so, with the original exception chained),
never hidden behind a fallback.  ``tests/conftest.py`` makes every test fail on either unless it is
marked; this module checks the mechanism itself by injecting faults into the compiler.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.errors import SEGMENT_LIMITS, FallbackWarning, InternalCompilerError, NoSegmentForm
from coarsen_nb.phi import lift as lift_module

SRC = "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i] * x[i]\n    return s\n"


@pytest.mark.expects_internal_error
@pytest.mark.parametrize("exc", [TypeError("boom"), KeyError("_xi_1"), AssertionError("post-condition"),
                                 ValueError("v"), IndexError("i"), AttributeError("a"), ZeroDivisionError()])
def test_an_internal_exception_is_reported_as_a_compiler_bug_not_a_fallback(monkeypatch, exc):
    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(lift_module, "lift", broken)
    f = cn.coarsen(SRC)
    with warnings.catch_warnings(record=True) as record, pytest.raises(InternalCompilerError) as info:
        warnings.simplefilter("always")
        f(np.ones(3))
    assert not [w for w in record if issubclass(w.category, FallbackWarning)]
    msg = str(info.value)
    assert "internal compiler error" in msg and "bug in coarsen_nb" in msg and type(exc).__name__ in msg
    assert info.value.__cause__ is exc
    assert f.fallback is None


@pytest.mark.allows_fallback("the test raises each documented limit on purpose")
@pytest.mark.parametrize("limit", sorted(SEGMENT_LIMITS))
def test_a_documented_limit_falls_back_with_a_named_warning_and_exact_results(monkeypatch, limit):
    real = lift_module.lift

    def limited(g, types, mode="phi", *args, **kwargs):
        if mode == "phi":
            raise NoSegmentForm(limit)
        return real(g, types, mode, *args, **kwargs)

    monkeypatch.setattr(lift_module, "lift", limited)
    f = cn.coarsen(SRC)
    x = np.array([0.5, -1.5, 2.0])
    with pytest.warns(FallbackWarning, match="per-block"):
        g = f.grad(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-12)
    assert SEGMENT_LIMITS[limit] in f.fallback


def test_an_undocumented_limit_cannot_be_raised():
    with pytest.raises(KeyError, match="undocumented"):
        NoSegmentForm("some new excuse")


@pytest.mark.expects_internal_error
def test_internal_error_is_a_coarsen_error_so_the_notebook_shows_no_compiler_frames():
    err = InternalCompilerError("f", "lowering", TypeError("x"))
    assert isinstance(err, cn.CoarsenError)
    assert err._render_traceback_()[0].startswith("CoarsenError: internal compiler error while compiling f()")


@pytest.mark.expects_internal_error
@pytest.mark.parametrize("exc", [NameError("name '_t3' is not defined"), AttributeError("'float' has no 'shape'"),
                                 KeyError("b_x"), UnboundLocalError("cannot access local variable '_t1'")])
def test_a_compiler_bug_met_at_run_time_is_reported_as_one_not_as_the_users_error(exc):
    f = cn.coarsen(SRC)
    x = np.ones(3)
    f(x)

    def broken(*args):
        raise exc

    f._last.forward = broken                # the generated function, as a bug in it would behave
    with pytest.raises(InternalCompilerError, match="running the generated code"):
        f(x)


def test_an_unbound_read_still_raises_pythons_error():
    f = cn.coarsen("def f(x):\n    if x > 0:\n        y = x\n    return y\n")
    with pytest.raises(UnboundLocalError, match="'y'"):
        f(-0.5)
    assert f(0.5) == 0.5


@pytest.mark.allows_fallback("the test raises a documented limit on purpose")
def test_fallback_belongs_to_the_signature_it_was_compiled_for(monkeypatch):
    real = lift_module.lift

    def limited_for_arrays(g, types, mode="phi", *args, **kwargs):
        if mode == "phi" and types["x"].is_array:
            raise NoSegmentForm("nested-write")
        return real(g, types, mode, *args, **kwargs)

    monkeypatch.setattr(lift_module, "lift", limited_for_arrays)
    f = cn.coarsen("def f(x):\n    return x * x\n")
    with pytest.warns(FallbackWarning) as record:
        f(np.ones(2))
    assert record[0].filename == __file__          # the warning points at the user's call, not at coarsen_nb
    assert f.fallback is not None
    f(2.0)
    assert f.fallback is None
    f(np.ones(2))                                   # cached: the array signature's fallback is still its own
    assert f.fallback is not None

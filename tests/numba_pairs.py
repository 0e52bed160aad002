"""Programs compiled under ``backend="numpy"`` and ``backend="numba"`` and checked against each other, the
plain function and central differences (the numba fuser's tests: ``tests/lower/test_numba_*.py``)."""

from __future__ import annotations

import inspect

import numpy as np
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


class BackendPairs:
    """``programs`` (name -> (function, wrt names)), each compiled once per backend on first use."""

    def __init__(self, programs: dict):
        self.programs = programs
        self._compiled: dict = {}

    def pair(self, name):
        """``(function, under numpy, under numba)``."""
        if name not in self._compiled:
            fn, wrt = self.programs[name]
            self._compiled[name] = (fn, cn.coarsen(fn, wrt=wrt, backend="numpy"),
                                    cn.coarsen(fn, wrt=wrt, backend="numba"))
        return self._compiled[name]

    def check(self, name, args):
        """numba's value and gradient equal numpy's (1e-10), numpy's value the plain function's; returns
        ``(function, numpy's gradient)``."""
        fn, by_numpy, by_numba = self.pair(name)
        want_value, want_grad = by_numpy.value_and_grad(*args)
        got_value, got_grad = by_numba.value_and_grad(*args)
        assert_close(got_value, want_value, rtol=1e-10, atol=1e-12, what=f"{name} value")
        assert_close(want_value, fn(*args), rtol=1e-10, atol=1e-12, what=f"{name} value vs the plain function")
        for g, w in zip(as_tuple(got_grad), as_tuple(want_grad), strict=True):
            assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} gradient")
        return fn, want_grad

    def check_with_differences(self, name, args):
        """:meth:`check`, and numpy's gradient against central differences of the plain function."""
        fn, grad = self.check(name, args)
        names = list(inspect.signature(fn).parameters)
        for g, w in zip(as_tuple(grad), self.programs[name][1], strict=True):
            assert_close(g, finite_difference(fn, args, names.index(w)), rtol=1e-5, atol=1e-7,
                         what=f"{name} d/d{w}")

    def equal_to_numpy(self, name, args, grad_atol: float):
        """numba's value and gradient equal the NumPy backend's to 1e-12 relative (NaN where it is NaN), on inputs
        the plain function may not be defined on (NumPy's value and numba's computed with NumPy's warnings off:
        inf, NaN); returns numba's gradient."""
        _, by_numpy, by_numba = self.pair(name)
        with np.errstate(all="ignore"):
            want_value, want = by_numpy.value_and_grad(*args)
            got_value = by_numba(*args)
        got = by_numba.grad(*args)
        np.testing.assert_allclose(got_value, want_value, rtol=1e-12, atol=1e-300, err_msg=f"{name} value")
        for g, w in zip(as_tuple(got), as_tuple(want), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=grad_atol, err_msg=name)      # (NaN where NaN)
        return got

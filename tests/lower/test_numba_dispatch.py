"""``backend="numba"``: after the first call, Numba's own dispatch picks the compiled version (no typing of the
arguments in Python); arguments of another Numba type (a strided view, a read-only array, Fortran order,
a NumPy scalar for a Python float) are compiled for once, explicitly, and give the NumPy backend's gradient.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close

import coarsen_nb as cn

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def energy(a, c):
    e = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1] - 1):
            e += math.sin(c * a[i, j + 1] - a[i, j])
    return e


def _variants(a):
    readonly = a.copy()
    readonly.setflags(write=False)
    wide = np.zeros((a.shape[0], 2 * a.shape[1]))
    wide[:, ::2] = a
    return {"c order": (a, 0.7), "fortran order": (np.asfortranarray(a), 0.7), "read-only": (readonly, 0.7),
            "strided view": (wide[:, ::2], 0.7), "numpy scalar": (a, np.float64(0.7))}


def test_each_argument_kind_gives_the_numpy_gradient():
    by_numba = cn.coarsen(energy, wrt=("a", "c"), backend="numba")
    by_numpy = cn.coarsen(energy, wrt=("a", "c"), backend="numpy")
    a = np.random.default_rng(0).uniform(-1, 1, (5, 4))
    for what, args in _variants(a).items():
        for _ in range(2):          # (the second call goes through Numba's dispatch alone)
            got, want = by_numba.grad(*args), by_numpy.grad(*args)
            for g, w in zip(got, want, strict=True):
                assert_close(g, w, rtol=1e-10, atol=1e-12, what=what)
    assert by_numba._last.grad.dispatcher._can_compile is False      # (Numba never compiles in a call)

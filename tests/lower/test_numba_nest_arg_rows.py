"""A per-row minimum's derivative under the numba backend: each row's own arg-minimum (numba_nests' arg loop)."""

from __future__ import annotations

import numpy as np
import pytest
from extremum_loops import per_row  # (the per-row minimum test_loop_extrema_nan checks too)
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_each_rows_minimum_gives_its_own_rows_derivative(backend):
    """The numba nest's adjoint loop over the rows (``for i2``) read the arg-minimum the value's loop over the rows
    (``for i``) had left, its last row's, at every row: d/da of ``per_row`` was -1.0 where it is -2.5 (finite
    data, older than the NaN work: the arg loop's memo was keyed by the rows' index, not by the loop's variable)."""
    pytest.importorskip(backend)
    x = np.array([1.0, 2.0, 3.0, -2.0, 0.25, -0.5])
    d_a, d_x = cn.coarsen(per_row, wrt=("a", "x"), backend=backend).grad(1.5, 0.5, x)
    assert_close(d_a, finite_difference(lambda a_: per_row(a_, 0.5, x), (1.5,), 0), rtol=1e-6, what="d/da")
    assert_close(d_x, finite_difference(lambda x_: per_row(1.5, 0.5, x_), (x,), 0), rtol=1e-6, what="d/dx")

"""A loop over ``x`` whose body sums a choice over a slice of ``x`` (``np.where(x[:-1] > b, x[:-1],
np.sin(x[:-1]))``): every selection gives the plain function's value.

Found by ``tests/fuzz_driver.py`` (extended generator, seed 22, RESULTS.md stop 46).  **Left (strict xfail):**
``per_block=True`` raises ``CoarsenValueError: shapes ((3,), (3,), (3,), (4,)) do not broadcast`` at the
``for`` line — a CoarsenError blaming a valid program; the slice's length (len(x) - 1) meets the loop's lanes
(len(x)) in the batched body.

Cause (h-iadd22, stop 46): no loop is needed — ``np.sum(np.where(x[:-1] > b, x[:-1], np.sin(x[:-1]))) + y``
fails so under the default selection and per_block (``LOOP_FREE`` below; max_soi=1 passes).  A kernel has one
elementwise level whose shape is the broadcast of all the kernel's arrays (``lower/forward.py`` ``printer``:
``_broadcast_shape(x_head.shape, ..., y.shape)``); a choice whose arm is computed under a mask
(``lower/branches.py``) materializes its arrays at that shape, but the slice's elements (len(x) - 1) and ``y``'s
(or the batched loop's lanes, ``lane_zeros``, len(x)) are two element spaces that only meet after the sum.
``np.sum(np.sin(x[:-1])) + y`` and an arm that is a number pass: nothing is broadcast to the kernel's shape
there.  The fix is either kernels that do not join two element spaces (the SOI builder) or a choice printed at
the shape of the arrays it reads; not done.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from program_gen import main_function

import coarsen_nb as cn

SOURCE = """
import numpy as np

def main(b, x):
    s0 = 0.0
    for e1 in x:
        s0 += np.sum(np.where(x[:-1] > b, x[:-1], np.sin(x[:-1])))
    return s0
"""

SELECTIONS = {
    "default": {},
    "max_soi=1": {"max_soi": 1},
    "per_block": pytest.param({"per_block": True}, marks=pytest.mark.xfail(
        strict=True, raises=cn.CoarsenError, reason="per_block batches the loop's lanes with the slice's "
        "elements: shapes ((3,), (3,), (3,), (4,)) do not broadcast (stop 46, not fixed)")),
}


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=list(SELECTIONS))
def test_value_of_a_slice_sum_in_a_loop_over_x(selection):
    x = np.array([0.65, 1e-5, -0.66, 1.13])
    got = cn.coarsen(SOURCE, wrt=("b", "x"), backend="numpy", **selection)(0.03, x)
    assert math.isclose(got, main_function(SOURCE)(0.03, x), rel_tol=1e-12)


LOOP_FREE = """
import numpy as np

def main(b, x, y):
    s0 = np.sum(np.where(x[:-1] > b, x[:-1], np.sin(x[:-1]))) + y
    return np.sum(s0)
"""


_ONE_KERNEL = pytest.mark.xfail(strict=True, raises=cn.CoarsenError, reason=(
    "a masked choice over x[:-1] is broadcast to the kernel's elementwise shape, which y's length joins: "
    "((3,), (3,), (3,), (4,)) (not fixed, stop 46; max_soi=1 puts the sum and the add in two kernels)"))


@pytest.mark.parametrize("selection", [pytest.param({}, marks=_ONE_KERNEL), {"max_soi": 1},
                                       pytest.param({"per_block": True}, marks=_ONE_KERNEL)], ids=list(SELECTIONS))
def test_value_of_a_slice_choice_sum_added_to_a_longer_array(selection):
    x = np.array([0.65, 1e-5, -0.66, 1.13])
    y = np.array([0.2, -0.4, 0.9, 1.5])
    got = cn.coarsen(LOOP_FREE, wrt=("b", "x", "y"), backend="numpy", **selection)(0.03, x, y)
    assert math.isclose(got, main_function(LOOP_FREE)(0.03, x, y), rel_tol=1e-12)

"""A loop over ``x`` whose body sums a choice over a slice of ``x`` (``np.where(x[:-1] > b, x[:-1],
np.sin(x[:-1]))``): every selection gives the plain function's value.

Found by ``tests/fuzz_driver.py`` (extended generator, seed 22, RESULTS.md stop 46).  **Left (strict xfail):**
``per_block=True`` raises ``CoarsenValueError: shapes ((3,), (3,), (3,), (4,)) do not broadcast`` at the
``for`` line — a CoarsenError blaming a valid program; the slice's length (len(x) - 1) meets the loop's lanes
(len(x)) in the batched body.  Not minimized further, not fixed (found at the end of the stop).
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

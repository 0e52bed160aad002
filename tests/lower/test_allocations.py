"""Allocations per gradient call do not grow with the trip count for loops
lifted to closed forms (one array expression per SOI, no tape).

Measure: the peak number of live Python allocation blocks above the count
before the call, sampled at every line of the generated module — the minimum
over seven calls (:func:`coarsen_nb.benchmarks.allocations.peak_live_blocks`).  Equal up
to one block of interpreter noise.  NumPy array *objects* are blocks; their
data buffers are not, so an array of 10⁴ elements counts as one allocation,
like one of 10³.  ``test_iterated_loop_tape_is_seen`` checks the measure
itself: an iterated loop's tape holds one state per iteration, and the
measure must see at least one block per extra iteration there, or the
closed-form test could not fail.  The table of blocks and bytes at larger
sizes is ``python -m coarsen_nb.benchmarks.allocations``.
"""

from __future__ import annotations

import numpy as np
import pytest
from corpus import (
    for_over_array,
    horner,
    pendulum_euler,
    piecewise_sum,
    product_with_zero,
    rosenbrock,
    running_max,
    sum_range,
    while_countdown,
)

import coarsen_nb as cn
from coarsen_nb.benchmarks.allocations import peak_live_blocks

CLOSED = {
    "piecewise_sum": (piecewise_sum, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "for_over_array": (for_over_array, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "rosenbrock": (rosenbrock, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "horner": (horner, lambda n: (np.linspace(-1.0, 1.0, n), 0.5)),
    "product_with_zero": (product_with_zero, lambda n: (np.linspace(0.9, 1.1, n),)),  # no overflow: a warning allocates
    "running_max": (running_max, lambda n: (np.sin(np.arange(n, dtype=float)),)),
    "sum_range": (sum_range, lambda n: (0.3, n)),
}


@pytest.mark.parametrize("name", list(CLOSED))
def test_closed_form_allocations_independent_of_trip_count(name):
    fn, make = CLOSED[name]
    f = cn.coarsen(fn)
    small = peak_live_blocks(f.grad, *make(1000))
    large = peak_live_blocks(f.grad, *make(10000))
    print(f"\n{name}: peak live blocks {small} at n=1e3, {large} at n=1e4")
    # ±1 block is interpreter noise (it shows for every function alike); a per-iteration allocation
    # adds ≥ 9000 blocks here (see test_iterated_loop_tape_is_seen).
    assert abs(large - small) <= 1, f"{name}: {small} live blocks at n=1e3, {large} at n=1e4"


ITERATED = {
    "pendulum_euler": (pendulum_euler, lambda n: (0.1, 0.2, 9.8, 0.1, 0.01, n)),
    "while_countdown": (while_countdown, lambda n: (0.3, n)),
}


@pytest.mark.parametrize("name", list(ITERATED))
def test_iterated_loop_tape_is_seen(name):
    fn, make = ITERATED[name]
    f = cn.coarsen(fn)
    small, large = (peak_live_blocks(f.grad, *make(n)) for n in (30, 300))
    # The tape keeps a state per iteration: at least one more live block per extra iteration.
    assert large - small >= 300 - 30, f"{name}: the tape should show: {small} blocks at n=30, {large} at n=300"

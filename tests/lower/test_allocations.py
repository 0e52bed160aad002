"""Allocations per gradient call do not grow with the trip count for loops
lifted to closed forms (one array expression per SOI, no tape).

Measure: the peak number of live Python allocation blocks
(``sys.getallocatedblocks``, sampled at every line of the generated module
via ``sys.settrace``) above the count before the call — the minimum over
seven calls.  Equal up to one block of interpreter noise.  NumPy array *objects* are blocks; their data buffers are not,
so an array of 10⁴ elements counts as one allocation, like one of 10³.  An
iterated loop's tape holds one state per iteration, so for those the count
grows with the trip count; ``test_iterated_loops_report`` measures and prints
that (``tracemalloc`` peak bytes per element as well) and asserts it grows, so
the measure is known to see a tape.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import tracemalloc

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

_PREFIX = tempfile.gettempdir().rstrip("/") + "/coarsen_nb_"


def peak_live_blocks(fn, *args) -> int:
    fn(*args)
    counts = []
    for _ in range(7):   # the minimum over several calls: a stray allocation by the interpreter is not ours
        peak = [0]

        def tracer(frame, event, arg, peak=peak):
            if frame.f_code.co_filename.startswith(_PREFIX):
                peak[0] = max(peak[0], sys.getallocatedblocks())
                return tracer
            return None

        # A cyclic collection during the call frees unrelated blocks (the count then reads 0 for one
        # size and 16 for the other, by where the collector's threshold happens to fall): none during it.
        gc.collect()
        gc.disable()
        base = sys.getallocatedblocks()
        peak[0] = base
        sys.settrace(tracer)
        try:
            fn(*args)
        finally:
            sys.settrace(None)
            gc.enable()
        counts.append(peak[0] - base)
    return min(counts)


def peak_bytes(fn, *args) -> int:
    fn(*args)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


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
    # adds ≥ 9000 blocks here (see test_iterated_loops_report).
    assert abs(large - small) <= 1, f"{name}: {small} live blocks at n=1e3, {large} at n=1e4"


ITERATED = {
    "pendulum_euler": (pendulum_euler, lambda n: (0.1, 0.2, 9.8, 0.1, 0.01, n)),
    "while_countdown": (while_countdown, lambda n: (0.3, n)),
}


def test_iterated_loops_report():
    print(f"\n{'function':22s} {'n':>6s} {'peak blocks':>12s} {'peak bytes/n':>13s}")
    for name, (fn, make) in ITERATED.items():
        f = cn.coarsen(fn)
        blocks = []
        for n in (300, 3000):
            blocks.append(peak_live_blocks(f.grad, *make(n)))
            print(f"{name:22s} {n:6d} {blocks[-1]:12d} {peak_bytes(f.grad, *make(n)) / n:13.1f}")
        assert blocks[1] > 5 * blocks[0] > 0, f"{name}: the tape should show: {blocks}"

"""Allocations per gradient call do not grow with the trip count for loops
lifted to closed forms (one array expression per SOI, no tape).

Measure: the peak number of live Python allocation blocks above the count
before the call, sampled at every line of the generated module — the minimum
over three calls (:func:`coarsen_nb.benchmarks.allocations.peak_live_blocks`).  Equal up
to one block of interpreter noise.  NumPy array *objects* are blocks; their
data buffers are not, so an array of 10⁴ elements counts as one allocation,
like one of 10³.  ``test_iterated_loop_tape_is_seen`` checks the measure
itself: an iterated loop's tape holds one state per iteration, and the
measure must see at least one block per extra iteration there, or the
closed-form test could not fail.  The table of blocks and bytes at larger
sizes is ``python -m coarsen_nb.benchmarks.allocations``.

The counts are taken in a fresh Python process (this file run as a script,
once per test process, every program and size): ``sys.getallocatedblocks()``,
read at every traced line, walks the whole heap, and a test worker that has
compiled thousands of modules made it take 195 s here for what takes 10 s in
a fresh process.  A fresh process also gives the same count on every call
after the first, which is why three calls are enough.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:       # (run as a script: corpus is in tests/)
    sys.path.insert(0, _TESTS)

from corpus import (  # noqa: E402
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

CLOSED = {
    "piecewise_sum": (piecewise_sum, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "for_over_array": (for_over_array, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "rosenbrock": (rosenbrock, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "horner": (horner, lambda n: (np.linspace(-1.0, 1.0, n), 0.5)),
    "product_with_zero": (product_with_zero, lambda n: (np.linspace(0.9, 1.1, n),)),  # no overflow: a warning allocates
    "running_max": (running_max, lambda n: (np.sin(np.arange(n, dtype=float)),)),
    "sum_range": (sum_range, lambda n: (0.3, n)),
}
CLOSED_SIZES = (1000, 10000)

ITERATED = {
    "pendulum_euler": (pendulum_euler, lambda n: (0.1, 0.2, 9.8, 0.1, 0.01, n)),
    "while_countdown": (while_countdown, lambda n: (0.3, n)),
}
ITERATED_SIZES = (30, 300)


def _measure() -> dict[str, list[int]]:
    """Each program's peak live blocks at its two sizes, measured in this process (the script's side)."""
    import coarsen_nb as cn
    from coarsen_nb.benchmarks.allocations import peak_live_blocks

    counts = {}
    for table, sizes in ((CLOSED, CLOSED_SIZES), (ITERATED, ITERATED_SIZES)):
        for name, (fn, make) in table.items():
            f = cn.coarsen(fn)
            counts[name] = [peak_live_blocks(f.grad, *make(n), calls=3) for n in sizes]
    return counts


@pytest.fixture(scope="module")
def blocks() -> dict[str, list[int]]:
    """:func:`_measure` run by a fresh interpreter (it inherits the environment: the suite's backend)."""
    root = os.path.dirname(_TESTS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, os.path.abspath(__file__)], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, f"the measuring process failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", list(CLOSED))
def test_closed_form_allocations_independent_of_trip_count(name, blocks):
    small, large = blocks[name]
    print(f"\n{name}: peak live blocks {small} at n=1e3, {large} at n=1e4")
    # ±1 block is interpreter noise (it shows for every function alike); a per-iteration allocation
    # adds ≥ 9000 blocks here (see test_iterated_loop_tape_is_seen).
    assert abs(large - small) <= 1, f"{name}: {small} live blocks at n=1e3, {large} at n=1e4"


@pytest.mark.parametrize("name", list(ITERATED))
def test_iterated_loop_tape_is_seen(name, blocks):
    small, large = blocks[name]
    # The tape keeps a state per iteration: at least one more live block per extra iteration.
    assert large - small >= 300 - 30, f"{name}: the tape should show: {small} blocks at n=30, {large} at n=300"


if __name__ == "__main__":
    print(json.dumps(_measure()))

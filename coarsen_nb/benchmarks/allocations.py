"""``python -m coarsen_nb.benchmarks.allocations``: live allocations of one gradient call against the trip count.

Coarsening lifts a reduction loop to a closed form (one array expression per
SOI, no tape), so the allocations of its gradient do not grow with the trip
count; an iterated loop (a recurrence with no closed form) keeps one state
per iteration on its tape, so its allocations do.  This prints both, for a
few programs and trip counts, in two measures:

* *peak live blocks*: the peak of ``sys.getallocatedblocks()`` above the count
  before the call, sampled at every line of the generated module through
  ``sys.settrace``, the minimum over seven calls.  NumPy array *objects* are
  blocks, their data buffers are not, so an array of 10⁴ elements counts as
  one block, like one of 10³;
* *peak bytes per trip*: the ``tracemalloc`` peak of one call, divided by n.

``tests/lower/test_allocations.py`` asserts the two properties with the same
measure at sizes that keep it fast; this report is for looking at the numbers
(tracing every line at n = 3000 takes tens of seconds).
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import tempfile
import tracemalloc

import numpy as np

# Generated modules are loaded from files named like this (coarsen_nb.runtime): the lines traced.
_PREFIX = tempfile.gettempdir().rstrip("/") + "/coarsen_nb_"


def peak_live_blocks(fn, *args, calls: int = 7) -> int:
    """The peak number of live allocation blocks while ``fn(*args)`` runs generated code, above the start.

    The minimum over ``calls`` traced calls: a stray allocation by the interpreter is not ours.  In a fresh
    process the first traced call reads a few blocks more and every later one the same count, so 3 are
    enough there (``tests/lower/test_allocations.py``).

    Cost: ``sys.getallocatedblocks()`` walks every arena of the process, once per traced line, so a call
    here costs in proportion to the whole heap (a long-lived process, a test worker that compiled thousands
    of modules, pays tens of times what a fresh one does: measure in a fresh process)."""
    fn(*args)
    # Before each call, a full collection: it frees the unrelated garbage a collection during the call would
    # (the count then read 0 for one size and 16 for the other), and -- only a full one does -- it empties the
    # interpreter's free lists (floats, tuples, ...), whose reuse would hide allocations from the count.  The
    # heap that exists now is frozen first (gc.freeze): a full collection then skips it, so each costs what
    # the calls made, not what the process holds; unfrozen at the end.
    gc.collect()
    gc.freeze()
    counts = []
    try:
        for _ in range(calls):
            peak = [0]

            def tracer(frame, event, arg, peak=peak):
                if frame.f_code.co_filename.startswith(_PREFIX):
                    peak[0] = max(peak[0], sys.getallocatedblocks())
                    return tracer
                return None

            gc.collect()
            gc.disable()      # (no collection during the call)
            base = sys.getallocatedblocks()
            peak[0] = base
            sys.settrace(tracer)
            try:
                fn(*args)
            finally:
                sys.settrace(None)
                gc.enable()
            counts.append(peak[0] - base)
    finally:
        gc.unfreeze()
    return min(counts)


def peak_bytes(fn, *args) -> int:
    """The ``tracemalloc`` peak of one call of ``fn(*args)`` (after a warm-up call)."""
    fn(*args)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# The programs, as a user writes them (the same as in tests/corpus.py).

def piecewise_sum(x):
    s = 0.0
    for v in x:
        if v > 0.0:
            s += v * v
        else:
            s += -0.5 * v
    return s


def sum_range(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
    return s


def pendulum_euler(theta0, omega0, g, damping, dt, n):
    theta = theta0
    omega = omega0
    for _ in range(n):
        theta, omega = theta + dt * omega, omega - dt * (g * math.sin(theta) + damping * omega)
    return theta * theta + omega


def while_countdown(x, n):
    s = 0.0
    k = n
    while k > 0:
        s += x / k
        k -= 1
    return s


PROGRAMS = {
    "piecewise_sum": ("closed form", piecewise_sum, lambda n: (np.linspace(-1.0, 1.0, n),)),
    "sum_range": ("closed form", sum_range, lambda n: (0.3, n)),
    "pendulum_euler": ("iterated", pendulum_euler, lambda n: (0.1, 0.2, 9.8, 0.1, 0.01, n)),
    "while_countdown": ("iterated", while_countdown, lambda n: (0.3, n)),
}


def report(sizes=(300, 3000), names=None) -> str:
    """The table: for each program and n, peak live blocks and peak bytes per trip of ``grad``."""
    import coarsen_nb as cn

    rows = [f"{'function':18s} {'loop':12s} {'n':>6s} {'peak blocks':>12s} {'peak bytes/n':>13s}"]
    for name in names or PROGRAMS:
        kind, fn, make = PROGRAMS[name]
        f = cn.coarsen(fn, backend="numpy")          # (NumPy's temporaries are what this counts)
        for n in sizes:
            blocks = peak_live_blocks(f.grad, *make(n))
            rows.append(f"{name:18s} {kind:12s} {n:6d} {blocks:12d} {peak_bytes(f.grad, *make(n)) / n:13.1f}")
    return "\n".join(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m coarsen_nb.benchmarks.allocations", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="300,3000", help="trip counts, comma-separated (default: 300,3000)")
    p.add_argument("--programs", default=None, help=f"comma-separated, from: {', '.join(PROGRAMS)}")
    a = p.parse_args(argv)
    names = [n.strip() for n in a.programs.split(",")] if a.programs else None
    unknown = [n for n in names or () if n not in PROGRAMS]
    if unknown:
        p.error(f"unknown program(s) {', '.join(unknown)}; choose from: {', '.join(PROGRAMS)}")
    print(report(tuple(int(s) for s in a.sizes.split(",")), names))
    return 0


if __name__ == "__main__":
    sys.exit(main())

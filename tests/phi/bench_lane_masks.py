"""Benchmark (not collected by pytest): barrier_break, a knock-out barrier with a per-path ``break``, batched under
a mask (phi/lane_masks.py) against the same nest left iterated (batching off: the form before the mask), the
plain Python function and a vectorized NumPy forward.  Values and gradients are checked against the plain
function and the hand-written gradient before anything is timed; the methods are interleaved in one run, each
timed ``--repeats`` times, and the median is reported.

    PYTHONPATH=.:tests:tests/phi python tests/phi/bench_lane_masks.py --paths 10000 --steps 50 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

import numpy as np
from test_lane_masks import barrier_break

import coarsen_nb as cn
from coarsen_nb.kernels import barrier_option
from coarsen_nb.phi import batching


def numpy_forward(z, s0, sigma, level):
    """The same price as whole-array NumPy: a knocked-out path contributes 0 wherever it stopped."""
    paths = s0 * np.exp(np.cumsum(sigma * z - 0.5 * sigma * sigma, axis=1))
    alive = ~np.any(paths > level, axis=1)
    return float(np.sum(np.where(alive, np.maximum(paths[:, -1] - s0, 0.0), 0.0))) / z.shape[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=10000)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((a.paths, a.steps)), 1.0, 0.02, 1.15)
    batched = cn.coarsen(barrier_break, wrt=("s0", "sigma"), backend="numpy")
    iterated = cn.coarsen(barrier_break, wrt=("s0", "sigma"), backend="numpy")
    batched(*args)
    with mock.patch.object(batching, "candidates", lambda plan: set()):
        iterated(*args)                 # specialized once, here: the plan with the nest left iterated
    assert "lanes(" in str(batched.plan) and "lanes(" not in str(iterated.plan)
    ref_v, ref_g = barrier_break(*args), barrier_option.grad(*args)
    for f in (batched, iterated):
        assert abs(f(*args) - ref_v) <= 1e-12 * max(1.0, abs(ref_v))
        np.testing.assert_allclose(f.grad(*args), ref_g, rtol=1e-9, atol=1e-12)
    assert abs(numpy_forward(*args) - ref_v) <= 1e-12 * max(1.0, abs(ref_v))
    methods = {
        "plain Python forward": lambda: barrier_break(*args),
        "NumPy vectorized forward": lambda: numpy_forward(*args),
        "hand-written NumPy gradient": lambda: barrier_option.grad(*args),
        "iterated (before) forward": lambda: iterated(*args),
        "iterated (before) grad": lambda: iterated.grad(*args),
        "masked lanes (after) forward": lambda: batched(*args),
        "masked lanes (after) grad": lambda: batched.grad(*args),
    }
    times: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(a.repeats):
        for name, run in methods.items():
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
    print(f"barrier_break, {a.paths} paths x {a.steps} steps, median of {a.repeats} (interleaved)")
    for name, ts in times.items():
        print(f"  {name:30s} {statistics.median(ts) * 1e3:10.2f} ms")


if __name__ == "__main__":
    main()

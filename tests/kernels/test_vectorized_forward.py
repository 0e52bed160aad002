"""Each kernel's vectorized NumPy forward computes the same value as its plain loops.

The benchmarks divide coarsen_nb's gradient time by the time of ``vectorized(*args)`` (issue 16), so
that function must be the same function, not a cheaper one: here it is compared with the plain-loop
function run by Python, on the test inputs (where branches and clamps take every arm over the seeds)
and at the smallest benchmark size.  The only difference allowed is rounding (sums in another order,
exp of a cumulative sum for a product of exps).
"""

import math

import numpy as np
import pytest

from coarsen_nb.kernels import KERNELS, NAMES, function, vectorized

# Issue 16's shapes: per-path Monte Carlo loops, an IIR filter, smoothing with element writes, a 1-D
# convolution, a clamped projection inside a running maximum.  Each must have a vectorized forward.
ISSUE_16 = ("barrier_option", "asian_option", "iir_filter", "exp_smoothing", "conv1d", "segment_distance")
WITH_VECTORIZED = [n for n in NAMES if vectorized(KERNELS[n]) is not None]
RTOL = 1e-9


def test_issue_16_kernels_have_a_vectorized_forward():
    assert set(ISSUE_16) <= set(WITH_VECTORIZED), set(ISSUE_16) - set(WITH_VECTORIZED)


@pytest.mark.parametrize("seed", (0, 1, 2))
@pytest.mark.parametrize("name", WITH_VECTORIZED)
def test_vectorized_forward_matches_the_loops(name, seed):
    mod = KERNELS[name]
    for size in (mod.META["test_size"], min(mod.META["sizes"])):
        args = mod.make_inputs(size, seed)
        loops = function(mod)(*args)
        vec = vectorized(mod)(*args)
        assert isinstance(vec, float) and math.isfinite(vec)
        # atol: a payoff max(A − K, 0) near 0 keeps the rounding of A, not a relative error
        scale = max(1.0, float(np.max([np.max(np.abs(a)) for a in args])))
        assert vec == pytest.approx(loops, rel=RTOL, abs=1e-13 * scale), f"{name}[{size}], seed {seed}"


@pytest.mark.parametrize("name", WITH_VECTORIZED)
def test_vectorized_forward_does_not_change_its_inputs(name):
    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["test_size"], 0)
    copies = [np.copy(a) for a in args]
    vectorized(mod)(*args)
    for a, c in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_segment_distance_inputs_take_every_arm_of_the_clamp():
    """Over the test seeds the farthest point projects before a, inside the segment and beyond b, so the
    gradient checks (test_kernels.py) cover each arm of ``min(max(t, 0), 1)`` at the arg-maximum."""
    mod = KERNELS["segment_distance"]
    arms = set()
    for seed in (0, 1, 2):
        px, py, ax, ay, bx, by = mod.make_inputs(mod.META["test_size"], seed)
        dx, dy = bx - ax, by - ay
        t = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)
        tc = np.clip(t, 0.0, 1.0)
        i = int(np.argmax((px - ax - tc * dx) ** 2 + (py - ay - tc * dy) ** 2))
        arms.add("before" if t[i] < 0 else "beyond" if t[i] > 1 else "inside")
    assert arms == {"before", "inside", "beyond"}

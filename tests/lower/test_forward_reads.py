"""An SOI's adjoint reads the log-sum-exp its forward computed (lower/forward_reads.py), a row log-sum-exp from
c = 0 has no refill (numba_lse_rows), and an SOI reads a literal number an earlier SOI assigned as the number
(phi.lift.literal_numbers): each against the NumPy backend, the plain function and central differences."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from gradcheck import assert_close
from numba_pairs import BackendPairs, as_tuple


def log_norm_then_points(x, logits):
    """gmm's shape: a log-sum-exp over the weights (SOI 2), read by the points after it."""
    m = -math.inf
    s = 0.0
    for k in range(len(logits)):
        if logits[k] > m:
            s = s * math.exp(m - logits[k]) + 1.0
            m = logits[k]
        else:
            s += math.exp(logits[k] - m)
    log_norm = m + math.log(s)
    total = 0.0
    for i in range(len(x)):
        total += x[i] * (logits[i % len(logits)] - log_norm)
    return total


def log_norm_in_a_loop(logits, steps):
    """A log-sum-exp inside an iterated loop: its value is one iteration's, never read by the adjoint."""
    w = logits * 1.0
    acc = 0.0
    for _ in range(steps):
        m = np.max(w)
        lse = m + np.log(np.sum(np.exp(w - m)))
        acc = acc + lse
        w = w * 0.5 + lse * 0.1
    return acc


def restarted_sum(x, c):
    """A constant assigned before an opaque step (``len``), read by the loop's SOI after it."""
    s = 0.0
    n = len(x)
    for i in range(n):
        s += (x[i] - c) * (x[i] - c)
    return s * 0.5


PROGRAMS = {"log_norm": (log_norm_then_points, ("x", "logits")),
            "in_a_loop": (log_norm_in_a_loop, ("logits",)),
            "restarted": (restarted_sum, ("x", "c"))}
PAIRS = BackendPairs(PROGRAMS)


def _args(name, n=7, seed=0):
    rng = np.random.default_rng(seed)
    if name == "log_norm":
        return rng.normal(size=n), rng.normal(size=4)
    if name == "in_a_loop":
        return rng.normal(size=n), 3
    return rng.normal(size=n), 0.3


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("n", [1, 7])
def test_equals_numpy_the_plain_function_and_central_differences(name, n):
    PAIRS.check_with_differences(name, _args(name, n, seed=n))


def test_the_adjoint_reads_the_forwards_log_sum_exp():
    """The weights' adjoint is one scatter loop reading ``log_norm``; only the forward computes it (a nest)."""
    _, _, by_numba = PAIRS.pair("log_norm")
    by_numba.grad(*_args("log_norm"))
    text = by_numba.source
    grad = text[text.index("def log_norm_then_points_grad("):]
    grad = grad[:grad.index("\n\n\n")]
    call = re.search(r"(_soi\d+_vjp_scatter)\(([^)]*)\)", grad)
    assert call and "log_norm" in call.group(2).split(", ")
    assert grad.count("_fwd_nest") == 1 and "_vjp_nest" not in grad


@pytest.mark.parametrize("case", ["-inf weight", "all -inf", "+inf", "nan", "large"])
def test_edges_equal_numpy(case):
    """Where L is ±inf or NaN the softmax is NaN under both backends (no refill to print: c = 0)."""
    x, logits = _args("log_norm", 6, seed=3)
    if case == "-inf weight":
        logits[1] = -np.inf
    elif case == "all -inf":
        logits[:] = -np.inf
    elif case == "+inf":
        logits[2] = np.inf
    elif case == "nan":
        logits[0] = np.nan
    else:
        logits[3] = 800.0
    _, by_numpy, by_numba = PAIRS.pair("log_norm")
    with np.errstate(all="ignore"):
        want_value, want_grad = by_numpy.value_and_grad(x, logits)
        got_value, got_grad = by_numba.value_and_grad(x, logits)
    assert_close(got_value, want_value, rtol=1e-10, atol=1e-12, what=f"{case} value")
    for g, w in zip(as_tuple(got_grad), as_tuple(want_grad), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{case} gradient")


def test_a_literal_before_an_opaque_step_is_read_as_the_number():
    """``s = 0.0`` before ``len(x)``: no SOI of its own, no ``s_1`` input read by the loop's SOI."""
    _, by_numpy, _ = PAIRS.pair("restarted")
    by_numpy.grad(*_args("restarted"))
    text = by_numpy.source
    assert "s_1" not in text and "# SOI 1 (line" in text and "# SOI 2 " not in text

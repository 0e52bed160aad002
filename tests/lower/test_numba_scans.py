"""``backend="numba"``: a loop state that the iteration reads (a scan) runs as sequential compiled loops.

The NumPy printer computes a :class:`~coarsen_nb.phi.scans.LinScan` and its costate as doubling scans over
whole arrays; the numba fuser (``lower/numba_scans.py``) runs the SOI as one pass in k's order (and, for the
adjoint, one in reverse order carrying the costate).  Each program here is checked three ways: its numba
value and gradient against the NumPy backend's (1e-10), the NumPy gradient against central differences of
the plain function, and the shape of the generated code (the scan loop is there, no doubling scan is left).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs

import coarsen_nb as cn
from coarsen_nb.lower import domain as domain_record
from coarsen_nb.lower import numba_fusion, numba_scan_domain

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def iir(x, y, a, g):
    s = 0.0
    loss = 0.0
    for k in range(len(x)):
        s = a * s + g * x[k]
        loss += (s - y[k]) ** 2
    return loss


def smoothing(x, alpha):
    s = np.zeros(len(x) + 1)
    sse = 0.0
    for i in range(len(x)):
        err = x[i] - s[i]
        sse += err * err
        s[i + 1] = alpha * x[i] + (1 - alpha) * s[i]
    return sse / len(x)


def prefix_sum(x, c):
    acc = c
    tot = 0.0
    for k in range(len(x)):
        acc += x[k]
        tot += math.exp(-acc * acc)
    return tot


def prefix_product(x, y):
    p = 1.0
    tot = 0.0
    for k in range(len(x)):
        p *= x[k]
        tot += p * y[k]
    return tot


def scan_of_scan(x, a, b):
    s = 0.0
    t = 0.0
    tot = 0.0
    for k in range(len(x)):
        s = a * s + x[k]
        t = b * t + s
        tot += t * t
    return tot


def late_start(x, a):
    s = 1.0
    tot = 0.0
    for k in range(2, len(x)):
        s = a * s + x[k]
        tot += s * x[k - 1]
    return tot


def branching(x, a):
    s = 0.0
    tot = 0.0
    for k in range(len(x)):
        s = a * s + x[k]
        if s > 0:
            tot += s * s
        else:
            tot -= 0.5 * s
    return tot


def every_other(x, a):
    s = 0.0
    tot = 0.0
    for k in range(0, len(x), 2):
        s = a * s + x[k]
        tot += s * s
    return tot


def average_call(z, s0, sigma, strike):
    total = 0.0
    n_paths, n_steps = z.shape
    for p in range(n_paths):
        s = s0
        running = 0.0
        for t in range(n_steps):
            s = s * math.exp(sigma * z[p, t])
            running += s
        # a branch on the path's whole sum (one SOI with the scan, numba running the paths as a loop): the
        # adjoint's reverse pass reads a sum its forward pass completes
        total += max(running / n_steps - strike, 0.0) + 0.1 * running
    return total


def discounted(x, r, c):
    s = 0.0
    tot = 0.0
    for k in range(len(x)):
        # a coefficient that is an exponential of the step's data alone (stored ahead of the forward pass, by
        # the helper _exp) and one of the state (computed in the forward pass, libm's math.exp)
        s = math.exp(-r * x[k]) * s + x[k]
        tot += math.exp(c * s) * x[k]
    return tot


def overrun(z, s0, sigma, n_steps):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        for t in range(n_steps):        # (past z's columns where n_steps is: the plain loop's IndexError)
            s = s * math.exp(sigma * z[p, t])
            total += s
    return total


def _inputs(rng, name, n):
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    return {"iir": (x, y, 0.7, 1.3), "smoothing": (x, 0.3), "prefix_sum": (x, 0.2),
            "prefix_product": (rng.uniform(0.5, 1.5, n), y), "scan_of_scan": (x, 0.6, -0.4),
            "late_start": (x, 0.8), "branching": (x, 0.9), "every_other": (x, 0.5),
            "average_call": (rng.normal(size=(3, n)), 1.0, 0.3, float(rng.uniform(0.5, 1.5))),
            "discounted": (x, 0.4, 0.3), "overrun": (rng.normal(size=(3, n)), 1.0, 0.3, n)}[name]


PROGRAMS = {"iir": (iir, ("x", "a", "g")), "smoothing": (smoothing, ("x", "alpha")),
            "prefix_sum": (prefix_sum, ("x", "c")), "prefix_product": (prefix_product, ("x", "y")),
            "scan_of_scan": (scan_of_scan, ("x", "a", "b")), "late_start": (late_start, ("x", "a")),
            "branching": (branching, ("x", "a")), "every_other": (every_other, ("x", "a")),
            "average_call": (average_call, ("z", "s0", "sigma", "strike")),
            "discounted": (discounted, ("x", "r", "c")), "overrun": (overrun, ("s0", "sigma"))}
#: programs whose adjoint SOI is a scan domain under numba (every_other's range has step 2: array code)
FUSED = set(PROGRAMS) - {"every_other"}

PAIRS = BackendPairs(PROGRAMS)
_pair, _check = PAIRS.pair, PAIRS.check


# (smoothing and average_call are means: no elements is a division by zero in the plain function too)
@pytest.mark.parametrize("name,n", [(name, n) for name in PROGRAMS for n in (0, 1, 2, 3, 7, 40)
                                    if (name, n) not in (("smoothing", 0), ("average_call", 0))])
def test_numba_equals_numpy_and_central_differences(name, n):
    args = _inputs(np.random.default_rng(n), name, n)
    PAIRS.check_with_differences(name, args)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_scan_runs_as_a_sequential_loop(name):
    """The fused programs' numba gradient calls one scan loop and no doubling scan; the one whose range
    has step 2 keeps its array code (and is still right, above)."""
    _check(name, _inputs(np.random.default_rng(0), name, 9))
    source = _pair(name)[2].source
    grad = source[source.index(f"def {name}_grad("):]
    grad = grad[:grad.find("\n@", 1)] if "\n@" in grad else grad
    if name in FUSED:
        assert "_vjp_scan" in grad, grad
        assert not any(f"{h}(" in grad for h in ("_lin_scan", "_sum_scan", "_prod_scan")), grad
        assert "for k in range(" in source and ", -1):" in source     # the reverse pass
    else:
        assert "_vjp_scan" not in grad


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 12), a=st.floats(-0.95, 0.95), b=st.floats(-0.95, 0.95), seed=st.integers(0, 2**16))
def test_random_coefficients_and_lengths(n, a, b, seed):
    x = np.random.default_rng(seed).uniform(-2, 2, n)
    _check("scan_of_scan", (x, a, b))
    _check("iir", (x, np.roll(x, 1), a, b))


def test_the_scan_domain_passes_verify(monkeypatch):
    """Every scan domain the fuser builds for these programs satisfies the record's invariants."""
    built = []
    original = numba_scan_domain.scan_domain

    def recorded(body, targets):
        dom = original(body, targets)
        if dom is not None:
            domain_record.verify(dom, body)
            built.append(dom)
        return dom

    monkeypatch.setattr(numba_fusion, "scan_domain", recorded)
    for name in sorted(FUSED):
        fn, wrt = PROGRAMS[name]
        cn.coarsen(fn, wrt=wrt, backend="numba").value_and_grad(*_inputs(np.random.default_rng(1), name, 5))
    assert {d.kind for d in built} == {"scan"}
    assert len(built) >= len(FUSED)         # (each program's adjoint at least; forwards too where they scan)


def _vjp_scan(name) -> str:
    source = _pair(name)[2].source
    # (a function's part is its decorator line, then its def; the carried namespace has one-line parts too)
    return next(part for part in source.split("\n\n\n") if "_vjp_scan(" in _second_line(part))


def _second_line(part: str) -> str:
    lines = part.split("\n")
    return lines[1] if len(lines) > 1 else ""


def test_the_reverse_pass_reads_the_forward_passs_costly_values():
    """average_call's step computes exp(sigma*z[p, t]) and the adjoint reads it at every step: its scan
    function evaluates it once per step (in a loop ahead of the forward pass that only stores it, with the
    vectorizable helper ``_exp``) and the forward and reverse passes read it back, not computing it again;
    the gradient stays right (checked first)."""
    _check("average_call", _inputs(np.random.default_rng(3), "average_call", 7))
    vjp = _vjp_scan("average_call")
    ahead, forward_pass, *reverse = vjp.split("    for k in range(")[1:]
    reverse_pass = "".join(reverse)     # (its first step peeled off its end: test_the_first_step_is_tested_once)
    assert ahead.count("_exp(") == 1 and "_at[k] = _exp(" in ahead, vjp
    assert "math.exp(" not in vjp, vjp
    assert "_at[k]" in forward_pass and "_exp(" not in forward_pass, vjp
    assert "_at[k]" in reverse_pass and "_exp(" not in reverse_pass, vjp
    # the state and the exponential stored in the rows of one array: one allocation a path
    assert vjp.count("xp.empty(") == 1 and "s_at = tape[0]" in vjp, vjp


def test_the_first_step_is_tested_once():
    """average_call's derivative by the initial price is the costate's value at the first step (a branch on
    ``k == 0`` in the reverse pass): the steps after it run in a loop without the test, the first step alone in
    a second loop, after them, as printed before (numba_scan_peel); the gradient stays right on paths of 1, 2
    and 7 steps (checked first)."""
    for steps in (1, 2, 7):
        _check("average_call", _inputs(np.random.default_rng(5), "average_call", steps))
    vjp = _vjp_scan("average_call")
    *_, later, first = vjp.split("    for k in range(")
    assert later.startswith("n_steps - 1, 0, -1):") and "k == 0" not in later, vjp
    assert first.startswith("n_steps - 1 if n_steps - 1 < 0 else 0, -1, -1):") and "k == 0" in first, vjp


def test_only_an_exponential_of_the_steps_data_is_stored_ahead():
    """discounted's coefficient exp(-r*x[k]) reads the step's data alone: stored ahead by ``_exp``; its sum's
    exp(c*s) reads the state, known only in the forward pass: libm's ``math.exp`` there, stored beside the
    state for the reverse pass."""
    _check("discounted", _inputs(np.random.default_rng(4), "discounted", 9))
    vjp = _vjp_scan("discounted")
    ahead, forward_pass, reverse_pass = vjp.split("    for k in range(")[1:]
    assert ahead.count("_exp(") == 1 and "math.exp(" not in ahead, vjp
    assert forward_pass.count("math.exp(") == 1, vjp
    assert "exp(" not in reverse_pass, vjp


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=st.integers(1, 4), n=st.integers(1, 30), sigma=st.floats(-3.0, 3.0), s0=st.floats(0.1, 10.0),
       strike=st.floats(0.0, 5.0), seed=st.integers(0, 2**16))
def test_exponentials_stored_ahead_on_random_paths(paths, n, sigma, s0, strike, seed):
    """The exponentials stored ahead (``_exp``, within 1 ulp of libm's) leave the value and the gradient
    equal to the NumPy backend's, on random paths and volatilities (steps up to e^(3·4.5))."""
    z = np.random.default_rng(seed).normal(size=(paths, n))
    _check("average_call", (z, s0, sigma, strike))
    _check("discounted", (z[0], sigma, 0.1))


def test_an_adjoint_scan_in_bounds_by_its_tests_runs_unchecked_and_past_them_raises_the_users_index_error():
    """overrun's adjoint scan reads z[int(p), int(t)] for its path p (a number parameter) and t < n_steps:
    tests before the passes (``0 <= p and p < z.shape[0]``, ``n_steps > z.shape[1]``) prove them in bounds,
    and the function runs without Numba's bounds checks; one more step than z has columns fails a test, and
    the gradient raises the IndexError the plain loop and the NumPy backend raise, at the same line."""
    z = np.random.default_rng(5).normal(size=(3, 6))
    _check("overrun", (z, 1.0, 0.3, 6))
    vjp = next(part for part in _pair("overrun")[2].source.split("\n\n\n")
               if "_vjp_scan_in_bounds(" in _second_line(part))
    # (both tests under one guard: numba_bounds.bounds_guard)
    assert "if not (0 <= p" in vjp and "< z.shape[0]) or " in vjp and "> z.shape[1]:" in vjp, vjp
    fn, by_numpy, by_numba = _pair("overrun")
    with pytest.raises(IndexError):
        fn(z, 1.0, 0.3, 7)
    with pytest.raises(cn.CoarsenError) as numba_error:
        by_numba.grad(z, 1.0, 0.3, 7)
    with pytest.raises(cn.CoarsenError) as numpy_error:
        by_numpy.grad(z, 1.0, 0.3, 7)
    assert isinstance(numba_error.value, IndexError)
    assert numba_error.value.line == numpy_error.value.line
    _check("overrun", (z, 1.0, 0.3, 6))       # (in bounds again)

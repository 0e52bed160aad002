"""``backend="numba"`` runs a time loop over whole arrays as each element's steps on numbers
(``lower/numba_interchange.py``) where the elements are independent, and today's loop elsewhere.

Each program is checked against the NumPy backend (which runs the loop as written, one array operation per
step) to 1e-10, values and gradients, and the NumPy backend's gradient against central differences of the
plain function on small inputs; which schedule numba chose is read from its module (the interchanged loop
functions are ``_loop_..._elems``), and the run-time branch (the states' first values of one shape) is
tested both ways.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs

from coarsen_nb.kernels.pendulum_batch import pendulum_batch

pytestmark = [pytest.mark.usefixtures("private_numba_cache"),     # (tests/lower/conftest.py)
              # (a function Numba cannot compile runs as NumPy code, with this warning: a failure here)
              pytest.mark.filterwarnings("error::coarsen_nb.numba_loader.NumbaFallbackWarning")]


def damped_oscillators(x0, v0, k, c, dt, n):
    x = x0 * 1.0
    v = v0 * 1.0
    for _ in range(n):
        a = -k * x - c * v
        x, v = x + dt * v, v + dt * a
    return np.sum(x * x + v * v)


def logistic_growth(p0, r, cap, dt, n):
    p = p0 * 1.0
    steps = 0
    while steps < n:
        p = p + dt * r * p * (1.0 - p / cap)
        steps += 1
    return np.sum(np.log(p))


def diffusion(u0, d, n):
    u = u0 * 1.0
    for _ in range(n):
        u = u + d * (np.roll(u, 1) - u)
    return np.sum(u * u)


def spring_from_rest(x0, c, dt, n):
    x = np.array(x0)
    v = np.ones_like(x0)
    for _ in range(n):
        x, v = x + dt * v, v - dt * c * x
    return np.sum(x * v)


def mean_field(x0, c, n):
    x = x0 * 1.0
    for _ in range(n):
        x = x + c * np.tanh(0.1 * np.sum(x) - x)
    return np.sum(x * x)


PAIRS = BackendPairs({
    "pendulum_batch": (pendulum_batch, ("theta0", "damping")),
    "damped_oscillators": (damped_oscillators, ("x0", "v0", "k", "c")),
    "logistic_growth": (logistic_growth, ("p0", "r", "cap")),
    # five directions: past numba_interchange_tangents.MOST_TANGENTS, so the VJP runs in reverse mode
    "oscillators_reverse": (damped_oscillators, ("x0", "v0", "k", "c", "dt")),
    "spring_from_rest": (spring_from_rest, ("x0", "c")),
    "diffusion": (diffusion, ("u0", "d")),
    "mean_field": (mean_field, ("x0", "c")),
})
INTERCHANGED = ("pendulum_batch", "damped_oscillators", "logistic_growth", "oscillators_reverse", "spring_from_rest")
REVERSE_MODE = ("oscillators_reverse",)


def _args(name, size, steps, seed=0, v_shape=None):
    rng = np.random.default_rng(seed)
    if name == "pendulum_batch":
        return rng.uniform(0.5, 2.5, size), float(rng.uniform(0.05, 0.3)), 0.01, steps
    if name in ("damped_oscillators", "oscillators_reverse"):
        v0 = rng.normal(size=v_shape if v_shape is not None else size)
        return rng.normal(size=size), v0, 2.0, 0.3, 0.05, steps
    if name == "logistic_growth":
        return rng.uniform(0.1, 0.9, size), 0.7, 1.5, 0.1, steps
    if name == "spring_from_rest":
        return rng.normal(size=size), 1.5, 0.05, steps
    if name == "diffusion":
        return rng.normal(size=size), 0.2, steps
    return rng.normal(size=size), 0.05, steps


@pytest.mark.parametrize("name", list(PAIRS.programs))
def test_numba_equals_numpy_and_differences(name):
    PAIRS.check_with_differences(name, _args(name, 5, 7))


@pytest.mark.parametrize("name", list(PAIRS.programs))
def test_which_loops_are_interchanged(name):
    """The independent elements' loops run element by element, forward and adjoint (the adjoint in forward
    mode where the directions are few, else in reverse mode); a loop whose step reads other elements
    (``np.roll``, a sum) runs as written."""
    _, _, by_numba = PAIRS.pair(name)
    by_numba(*_args(name, 3, 2))
    forward = by_numba.source
    by_numba.grad(*_args(name, 3, 2))
    source = by_numba.source
    assert ("_fwd_elems(" in forward) == (name in INTERCHANGED)
    assert ("_jvp_elems(" in source) == (name in INTERCHANGED and name not in REVERSE_MODE)
    assert ("_vjp_elems(" in source) == (name in REVERSE_MODE)
    # forward mode's adjoints: the tangents contracted with the η adjoints in one loop over the elements
    assert ("_contract_elems(" in source) == (name in INTERCHANGED and name not in REVERSE_MODE)


def test_pendulum_batch_gradient_glue_is_calls_of_loop_functions():
    """NAME_grad of pendulum_batch: the adjoints after the loop are the loop functions' new arrays, assigned
    (no zero fills, no ``_sum_to`` of an array's own shape, no array expressions or ``xp.sum`` contracting
    the tangents: each a compilation of its own under Numba), and the gradient still equals NumPy's."""
    args = _args("pendulum_batch", 7, 30)
    PAIRS.check("pendulum_batch", args)
    _, _, by_numba = PAIRS.pair("pendulum_batch")
    by_numba.grad(*args)
    source = by_numba.source
    entry = source[source.index("def pendulum_batch_grad("):]
    entry = entry[:entry.index("\n\n\n")] if "\n\n\n" in entry else entry
    for spelled in ("_sum_to(", "xp.sum(", "xp.zeros(", " * _jac_"):
        assert spelled not in entry, entry
    assert "_contract_elems(" in entry, entry


@pytest.mark.parametrize("name", INTERCHANGED)
@pytest.mark.parametrize("size, steps", [(1, 1), (6, 0), (0, 3), (40, 25)])
def test_interchanged_edges(name, size, steps):
    PAIRS.check(name, _args(name, size, steps, seed=size + steps))


def test_states_of_different_shapes_run_todays_loop():
    """v0 of shape (1,) beside x0 of (n,): the states broadcast on the first step, so the elements are not
    independent from the start; the run-time test sends the call to the loop as written, and v0's
    gradient keeps v0's shape."""
    for name in ("damped_oscillators", "oscillators_reverse"):
        args = _args(name, 4, 6, v_shape=(1,))
        PAIRS.check_with_differences(name, args)
        grads = PAIRS.pair(name)[2].grad(*args)
        assert grads[1].shape == (1,)


@pytest.mark.parametrize("name, tested", [("pendulum_batch", False), ("spring_from_rest", False),
                                          ("damped_oscillators", True), ("oscillators_reverse", True)])
def test_states_of_one_shape_by_construction_need_no_test(name, tested):
    """pendulum_batch's ``theta0.copy()`` and ``np.zeros_like(theta0)``, spring_from_rest's ``np.array(x0)``
    and ``np.ones_like(x0)``: the states' first values have one shape whatever the call, so the gradient
    runs the interchanged loop with no run-time test and no loop as written beside it (Numba compiled that
    one although no call ran it); ``x0 * 1.0`` beside ``v0 * 1.0`` may differ (a broadcast ``v0``) and keeps
    both.  The values and gradients are checked against the NumPy backend at a size where the test would
    pass."""
    args = _args(name, 6, 9)
    PAIRS.check(name, args)
    by_numba = PAIRS.pair(name)[2]
    by_numba.grad(*args)
    assert ("_interchange_" in by_numba.source) == tested
    assert ("run iteration by iteration" in by_numba.source) == tested


@pytest.mark.parametrize("name", ["damped_oscillators", "oscillators_reverse"])
@settings(max_examples=20, deadline=None)
@given(size=st.integers(0, 30), steps=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_interchange_property(name, size, steps, seed):
    PAIRS.check(name, _args(name, size, steps, seed))

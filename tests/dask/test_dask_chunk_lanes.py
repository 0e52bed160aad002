"""A loop run iteration by iteration whose state is lane-wise in the records runs chunk by chunk
(coarsen_nb/dask_chunk_lanes.py; issue 18): each chunk of lanes runs the whole loop alone.

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere.  Each test asserts which path ran (``f.chunking``), so a refusal cannot pass as the dask module's
equal answer, and the other way round.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from dask_chunks import CHUNKINGS, chunked, computed

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

#: pendulum_batch with the lanes coupled: the mean of the lanes pulls each one, every step (a sum of the lanes
#: fed back into the loop's state: each chunk alone would see only its own lanes' mean)
COUPLED = '''
def coupled(theta0, damping, dt, n_steps):
    theta = theta0.copy()
    omega = np.zeros_like(theta0)
    for _ in range(n_steps):
        pull = np.sum(theta) / 8.0 - theta
        alpha = -9.81 * np.sin(theta) - damping * omega + 0.5 * pull
        theta, omega = theta + dt * omega, omega + dt * alpha
    return np.sum(0.5 * omega * omega + 9.81 * (1.0 - np.cos(theta)))
'''

#: ... or one lane's value read at an index and fed back (lane 0 drives every other)
DRIVEN = COUPLED.replace("coupled", "driven").replace("np.sum(theta) / 8.0", "theta[0]")


def _compile(text: str, name: str):
    assert f"def {name}(" in text
    return cn.coarsen(text, wrt=("theta0", "damping"), backend="numpy", namespace={"np": np})


@pytest.mark.parametrize("how", CHUNKINGS)
def test_pendulum_batch_runs_each_chunk_of_lanes_through_its_loop(client, how):
    """1000 Euler steps over 64 lanes: the chunks run the whole loop each, the gradients equal NumPy's."""
    mod = KERNELS["pendulum_batch"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numpy")
    theta0, damping, dt, n_steps = args = mod.make_inputs(64, seed=3)
    assert n_steps == 1000
    want_value, want_grads = f.value_and_grad(*args)
    dtheta0 = chunked(theta0, how)
    with client.as_current():
        start = time.perf_counter()
        value, (g_theta0, g_damping) = f.value_and_grad(dtheta0, damping, dt, n_steps)
        g_theta0 = computed(g_theta0)
        print(f"pendulum_batch, 64 lanes, {how}: {time.perf_counter() - start:.2f} s")
    said = str(f.chunking)
    assert f.chunking.chunkwise, said
    assert f.chunking.chunks == len(dtheta0.chunks[0])
    assert "each chunk ran the loop at line 35 whole" in said, said
    assert isinstance(g_theta0, np.ndarray)
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_theta0, want_grads[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(computed(g_damping), want_grads[1], rtol=1e-12, atol=1e-12)
    # (the reference itself: the kernel's hand-written tangents)
    np.testing.assert_allclose(g_theta0, mod.grad(*args)[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("text", "name", "read"), [(COUPLED, "coupled", "np.sum(theta)"),
                                                      (DRIVEN, "driven", "theta[0]")])
def test_a_loop_reading_across_its_lanes_is_refused_and_runs_as_array_statements(client, text, name, read):
    """A carried value that reads the lanes across (their sum, one lane at an index) is refused in words, and
    the dask module's array statements compute it, equal to NumPy's (20 steps: their graph grows per step)."""
    f = _compile(text, name)
    theta0 = np.linspace(0.5, 2.5, 8)
    args = (theta0, 0.2, 0.01, 20)
    want_value, want_grads = f.value_and_grad(*args)
    with client.as_current():
        value, (g_theta0, g_damping) = f.value_and_grad(chunked(theta0, "uneven"), *args[1:])
        g_theta0 = computed(g_theta0)
    said = str(f.chunking)
    assert not f.chunking.chunkwise, said
    assert "a loop run iteration by iteration (line 5) carries" in said, said
    assert "which reads theta0 across its lanes" in said, said
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_theta0, want_grads[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(computed(g_damping), want_grads[1], rtol=1e-12, atol=1e-12)
    assert read in text


def test_a_loop_with_lanes_of_other_arguments_only_keeps_its_records_chunkwise(client):
    """A loop whose state is lane-wise in a NumPy argument (not chunked) beside a sum over the Dask records:
    the loop is free of the records, each chunk runs it whole, equal to NumPy's."""
    text = '''
def shared(x, w, steps):
    v = w.copy()
    for _ in range(steps):
        v = v - 0.1 * np.sin(v)
    return np.sum(x * x) * np.sum(v)
'''
    f = cn.coarsen(text, wrt=("x", "w"), backend="numpy", namespace={"np": np})
    x, w = np.linspace(-1.0, 1.0, 10), np.linspace(0.2, 0.9, 4)
    want_value, want_grads = f.value_and_grad(x, w, 30)
    with client.as_current():
        value, (g_x, g_w) = f.value_and_grad(chunked(x, "uneven"), w, 30)
        g_x = computed(g_x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_x, want_grads[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(computed(g_w), want_grads[1], rtol=1e-12, atol=1e-12)
    print(f.chunking)

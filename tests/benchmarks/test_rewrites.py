"""The peers' best forms (benchmarks/rewrites/): each gradient equals the kernel's hand-written one.

The hand-written analytical gradient is the oracle, at the kernel's test size, compared the way the harness
compares before it times anything (:func:`coarsen_nb.benchmarks.measure.compare`, rtol 1e-6), and each
method's forward against the plain loop.  The adapters are called in this process (the harness's workers
are tested in test_harness.py).  JAX is in the test extra; PyTensor is a bench extra only (it pins Numba
below the version the numba backend is tested with), so its cases skip where it is not installed, and they
compile in ``FAST_COMPILE`` mode (Python thunks): the graph and its gradient are what is checked here, the C
compilation is PyTensor's own.
"""

from __future__ import annotations

import importlib.util
import types

import numpy as np
import pytest

from coarsen_nb.benchmarks import rewrites
from coarsen_nb.benchmarks.measure import compare, kernel_function, wrt_indices
from coarsen_nb.benchmarks.peers import METHODS, Unsupported
from coarsen_nb.kernels import KERNELS

ORIGINAL = ("bgd_hyperopt", "black_scholes", "brachistochrone", "gmm", "hmc", "hookean_spring", "horner_fit",
            "logreg_nll", "pairwise_energy", "pendulum", "pendulum_batch", "piecewise_sum", "rosenbrock")
ADDED = ("iir_filter", "exp_smoothing", "conv1d", "segment_distance", "barrier_option", "asian_option")


def _pytensor(fn, mod, args, widx):
    return rewrites.pytensor_best(fn, mod, args, widx, mode="FAST_COMPILE")


PEERS = {"jax best": ("jax", rewrites.jax_best), "numba by hand": ("numba", rewrites.numba_by_hand),
         "pytensor": ("pytensor", _pytensor)}


def _check(kernel, peer):
    package, adapter = PEERS[peer]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")
    mod = KERNELS[kernel]
    fn = kernel_function(mod)
    args = mod.make_inputs(mod.META["test_size"], seed=0)
    widx = wrt_indices(fn, mod.META["wrt"])
    ref = rewrites.as_tuple(mod.grad(*args), len(widx))
    bound = adapter(fn, mod, args, widx)
    got = bound.grads_to_numpy(bound.sync(bound.grad()))
    ok, rel, detail = compare(got, ref, 1e-6)
    assert ok, f"{peer} on {kernel}: {detail}"
    value = bound.value_to_float(bound.sync(bound.forward()))
    assert np.isclose(value, fn(*args), rtol=1e-6), (value, fn(*args))
    return rel


@pytest.mark.parametrize("kernel", ORIGINAL + ADDED)
@pytest.mark.parametrize("peer", list(PEERS))
def test_best_form_gradient_equals_the_hand_written_one(peer, kernel):
    _check(kernel, peer)


@pytest.mark.parametrize("peer", list(PEERS))
def test_best_form_gradient_at_another_seed_and_size(peer):
    """A second draw (bgd_hyperopt at 50 records, its break taken at another step) guards against a rewrite
    that only matches the test size's particular inputs."""
    package, adapter = PEERS[peer]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")
    mod = KERNELS["bgd_hyperopt"]
    fn = kernel_function(mod)
    args = mod.make_inputs(50, seed=3)
    widx = wrt_indices(fn, mod.META["wrt"])
    bound = adapter(fn, mod, args, widx)
    assert compare(bound.grads_to_numpy(bound.grad()), (np.asarray(mod.grad(*args)),), 1e-6)[0]


def test_methods_are_registered_as_compiled_and_guarded_by_their_package():
    for name, package in (("jax best", "jax"), ("numba by hand", "numba"), ("pytensor", "pytensor")):
        m = METHODS[name]
        assert m.compiled and m.requires == (package,)
        assert m.adapter.startswith("coarsen_nb.benchmarks.rewrites:")


def test_a_kernel_without_a_rewrite_is_unsupported_with_the_reason():
    from coarsen_nb.benchmarks.rewrites import numba_grads

    mod = types.SimpleNamespace(META=dict(name="nonesuch"))
    with pytest.raises(Unsupported, match=r"Numba: no rewrite written for this kernel yet"):
        rewrites._form(numba_grads, mod, "Numba")

"""The kernels whose loops run over an array axis, on Dask arrays, on a LocalCluster of two worker processes.

Each kernel's value and gradient with its data as Dask arrays cut along that axis (one chunk, uneven
chunks, one element per chunk) equal the NumPy backend's on the same NumPy arrays to 1e-12; a gradient
with respect to a chunked argument is a Dask array with that argument's chunks, one with respect to a
number or a NumPy array a computed value.  The reference is the NumPy backend, itself checked against
finite differences and JAX by tests/kernels and tests/lower.
"""

from __future__ import annotations

import functools

import dask
import numpy as np
import pytest
from dask_chunks import CHUNKINGS, EarlyComputes, chunked, computed, da

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

#: kernel -> the parameters holding its data, cut along axis 0 (records, options, paths); the others stay
#: as the kernel makes them (numbers, and logreg_nll's weights w as a NumPy array)
CHUNKED = {
    "piecewise_sum": ("x",),
    "logreg_nll": ("X", "y"),
    "black_scholes": ("spot", "strike", "vol", "tau"),
    "asian_option": ("z",),
    "barrier_option": ("z",),
    "brachistochrone": ("y",),          # (its gradient scatters into an offset slice: dask_helpers._scatter_add)
    "exp_smoothing": ("x",),
    "iir_filter": ("x", "y"),
    "gmm": ("x",),
    "horner_fit": ("xs", "ys"),
    "hmc": ("X", "y"),
    # (its pairs i < j: np.repeat by counts built from the shapes, lazy in dask_xp_forms; the pairs gathered
    # by Dask's indexing from the chunked coordinates)
    "pairwise_energy": ("x", "y", "z"),
    "rosenbrock": ("x",),               # (x[i + 1]: chunk by chunk with a halo, dask_chunk_halos)
    "hookean_spring": ("px", "py"),     # (a grid: its rows cut, springs read the next row and column)
    "conv1d": ("x", "y"),               # (the kernel w whole: dask_xp_forms' convolve, a halo of len(w) - 1)
    "segment_distance": ("px", "py"),
    # loops over steps, their state elementwise over the chunked lanes (pendulum_batch: each chunk runs the
    # whole loop, dask_chunk_lanes; 1000 steps in test_dask_chunk_lanes.py), or sums over the chunked records
    # (bgd_hyperopt's descent, a while loop the data ends): 10 steps, as the options' (the dask module's graph
    # grows by a chain of operations per step; at the benchmarks' 200 steps bgd_hyperopt is a CoarsenError
    # "the Dask graph is too deep")
    "pendulum_batch": ("theta0",),
    "bgd_hyperopt": ("x", "y"),
}

#: the kernels run at fewer steps here: the index of their steps argument
_STEPS = {"pendulum_batch": 3, "bgd_hyperopt": 3}


def _inputs(name: str) -> tuple:
    """The kernel's inputs at a small size: at least 7 records (two uneven chunks and a short one), and the
    options' paths over their first 10 time steps (each step is a few graph operations per chunk: the
    time loop runs step by step, and 50 steps of one-element chunks would be most of this file's time)."""
    mod = KERNELS[name]
    args = mod.make_inputs(max(mod.META["test_size"], 7), seed=1)
    if name in _STEPS:
        return args[:_STEPS[name]] + (10,) + args[_STEPS[name] + 1:]
    return (args[0][:, :10],) + args[1:] if name in ("asian_option", "barrier_option") else args


@functools.cache
def _compiled(name: str):
    """The kernel compiled once per test process (its NumPy and dask modules both cached in it), its inputs
    and the NumPy backend's value and gradient on them."""
    f = cn.coarsen(function(KERNELS[name]), wrt=KERNELS[name].META["wrt"])
    args = _inputs(name)
    return f, args, f.value_and_grad(*args)


def _on_dask(name: str, args: tuple, how: str) -> tuple:
    params = cn.coarsen(function(KERNELS[name])).params
    return tuple(chunked(a, how) if p in CHUNKED[name] else a for p, a in zip(params, args, strict=True))


@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(CHUNKED))
def test_kernel_on_a_cluster_equals_the_numpy_backend(client, name, how):
    mod = KERNELS[name]
    f, args, (want_value, want_grads) = _compiled(name)
    dargs = _on_dask(name, args, how)
    with client.as_current():
        value, grads = f.value_and_grad(*dargs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        want_grads = want_grads if isinstance(want_grads, tuple) else (want_grads,)
        assert not isinstance(value, da.Array)
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
        for w, g, want in zip(mod.META["wrt"], grads, want_grads, strict=True):
            arg = dargs[f.params.index(w)]
            if isinstance(arg, da.Array):
                assert isinstance(g, da.Array) and g.chunks == arg.chunks, (w, getattr(g, "chunks", g))
            else:
                assert not isinstance(g, da.Array), w
            np.testing.assert_allclose(computed(g), want, rtol=1e-12, atol=1e-12, err_msg=w)


def test_every_kernel_with_an_array_argument_runs_here():
    """The issue's bar is every kernel whose loops run over an array axis: each kernel with an array argument
    is in CHUNKED (pendulum's arguments are numbers: its loop runs over time steps only)."""
    with_arrays = {name for name, mod in KERNELS.items()
                   if any(np.ndim(a) >= 1 for a in mod.make_inputs(mod.META["test_size"], seed=1))}
    assert with_arrays == set(CHUNKED), sorted(with_arrays ^ set(CHUNKED))
    assert set(KERNELS) - with_arrays == {"pendulum"}


def test_an_option_with_its_time_axis_chunked_is_refused_naming_the_loop():
    """asian_option's time loop runs step by step (its running sum's state is carried): with the time axis
    of z in several chunks it cannot run chunk by chunk, and the error says which loop and what to do."""
    mod = KERNELS["asian_option"]
    z, s0, sigma, strike = mod.make_inputs(8)
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    with pytest.raises(cn.CoarsenError) as err:
        f.grad(da.from_array(z, chunks=(4, 10)), s0, sigma, strike)
    text = str(err.value)
    assert "line 36" in text and "'z' along axis 1" in text and "5 chunks" in text
    assert "rechunk({1: -1})" in text


#: the kernels whose graph is built without computing anything (brachistochrone, exp_smoothing and iir_filter
#: since the dask namespace's lazy ``math`` and helpers, test_dask_lazy.py; horner_fit was already, unlisted;
#: gmm since it runs chunk by chunk, its mixture weights computed in each chunk: the dask module's mu[k] by a
#: Dask index array computed it; pairwise_energy since its pairs have a lazy form); the others (``EAGER``:
#: bgd_hyperopt, whose while loop's exit is a value) compute a part of it where they run, named in
#: coarsen_nb/dask_arrays.py
LAZY = ("piecewise_sum", "logreg_nll", "black_scholes", "asian_option", "barrier_option", "hmc",
        "brachistochrone", "exp_smoothing", "iir_filter", "horner_fit", "gmm", "pairwise_energy", "rosenbrock",
        "hookean_spring", "conv1d", "segment_distance", "pendulum_batch")
EAGER = {"bgd_hyperopt": "a while loop the data ends (if abs(dw) + abs(db) < tol: break), its test each step"}


@pytest.mark.parametrize("name", LAZY)
def test_a_kernels_graph_is_built_without_computing_anything(name):
    """The value and the computed gradients come from one ``dask.compute`` at return: no Python branch or
    ``float()`` of the generated code computed a part of the graph while it was being built."""
    f, args, _ = _compiled(name)
    calls = []

    def counting(dsk, keys, **kwargs):
        calls.append(keys)
        return dask.get(dsk, keys, **kwargs)

    with dask.config.set(scheduler=counting):
        f.value_and_grad(*_on_dask(name, args, "uneven"))
    assert len(calls) == 1


def test_the_kernels_still_eager_are_the_ones_named():
    """Every kernel of this file is LAZY or EAGER, and an EAGER one does compute while building its graph
    (so that a kernel made lazy leaves the list, and the list names no kernel that is lazy)."""
    assert set(LAZY) | set(EAGER) == set(CHUNKED) and not set(LAZY) & set(EAGER)
    for name in EAGER:
        f, args, _ = _compiled(name)
        scheduler = EarlyComputes(dask.get)
        with dask.config.set(scheduler=scheduler):
            f.value_and_grad(*_on_dask(name, args, "uneven"))
        assert scheduler.early, name

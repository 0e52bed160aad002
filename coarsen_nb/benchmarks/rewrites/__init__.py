"""The peers on their best forms (issue 14's yardstick): adapters for the methods ``jax best``, ``pytensor``
and ``numba by hand``.

The other peer methods (:mod:`coarsen_nb.benchmarks.peers`) run the user's plain loop under each tool, which
asks "what does this code cost there".  These ask the question a user weighing coarsen_nb asks: how fast is
the gradient if I rewrite the kernel the way each tool wants it?  So each peer gets a faithful rewrite of the
same computation, written once per kernel in its own spelling, as an expert user of that tool writes it:

* :mod:`.jax_forms` — a ``jnp`` vectorized forward, ``jax.jit(jax.grad(...))`` in float64;
* :mod:`.pytensor_forms` — the same graph in PyTensor, ``pytensor.function`` of ``pytensor.grad``, compiled
  with the C backend (mode ``CVM``) when a C++ compiler is configured, else PyTensor's Numba backend;
  ``COARSEN_NB_PYTENSOR_MODE`` overrides the mode;
* :mod:`.numba_grads` — a hand-written ``@njit`` gradient loop; the forward is the user's own loop under
  ``@njit``.

Each module holds one function per kernel, named like the kernel; a kernel a module does not name is
reported as unsupported with the reason.  Nothing here is imported until a worker builds the method, so a
JAX worker never imports PyTensor or Numba's compiled gradients, and the reverse.  Compilation is lazy in all
three (``jit`` on first call, ``pytensor.function`` in the first call, Numba's type specialization on first
call), so the harness's compile time (first call − steady state) means the same thing for each.
"""

from __future__ import annotations

import inspect
import os
import types

import numpy as np

from coarsen_nb.benchmarks.peers import Bound, Unsupported, as_tuple


def _form(module, mod, peer):
    name = mod.META["name"]
    f = getattr(module, name, None)
    if f is None:
        reason = getattr(module, "UNSUPPORTED", {}).get(name, "no rewrite written for this kernel yet")
        raise Unsupported(f"{peer}: {reason} ({module.__name__})")
    return f


# --- JAX -----------------------------------------------------------------------------------------------------

def jax_best(fn, mod, args, wrt_idx):
    """``jax.jit(jax.grad(rewrite))`` (``jacfwd`` where reverse mode cannot run); non-array arguments that are
    not differentiated are static, as a JAX user passes loop counts and constants."""
    import jax
    import jax.numpy as jnp

    from coarsen_nb.benchmarks.rewrites import jax_forms

    f = _form(jax_forms, mod, "JAX")
    static = tuple(i for i, a in enumerate(args) if i not in wrt_idx and not isinstance(a, np.ndarray))
    jargs = tuple(jnp.asarray(a, dtype=jnp.float64) if i in wrt_idx
                  else (jnp.asarray(a) if isinstance(a, np.ndarray) else a) for i, a in enumerate(args))
    diff = jax.jacfwd if mod.META["name"] in jax_forms.FORWARD_MODE else jax.grad
    g = jax.jit(diff(f, argnums=tuple(wrt_idx)), static_argnums=static)
    fwd = jax.jit(f, static_argnums=static)
    n = len(wrt_idx)
    return Bound(grad=lambda: g(*jargs), forward=lambda: fwd(*jargs),
                 grads_to_numpy=lambda r: as_tuple(tuple(np.asarray(c) for c in r), n),
                 sync=jax.block_until_ready)


# --- PyTensor ------------------------------------------------------------------------------------------------

def pytensor_mode() -> str:
    """The compilation mode: ``COARSEN_NB_PYTENSOR_MODE``, else ``CVM`` (C thunks, C loop) with a C++
    compiler, else ``NUMBA``."""
    import pytensor

    return os.environ.get("COARSEN_NB_PYTENSOR_MODE") or ("CVM" if pytensor.config.cxx else "NUMBA")


def pytensor_best(fn, mod, args, wrt_idx, mode=None):
    """``pytensor.function(inputs, pytensor.grad(loss, wrt))``, compiled in the first call.

    Arrays and differentiated scalars are graph inputs (arrays with their static shapes); other numbers are
    constants of the graph.  The compiled functions are called with ``trust_input``, as a user calling one in
    a hot loop does (inputs are already float64 arrays).
    """
    import pytensor
    import pytensor.tensor as pt

    from coarsen_nb.benchmarks.rewrites import pytensor_forms

    f = _form(pytensor_forms, mod, "PyTensor")
    mode = mode or pytensor_mode()
    names = list(inspect.signature(fn).parameters)
    sym, inputs, values = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            v = pt.tensor(names[i], dtype=str(a.dtype), shape=a.shape)
            values.append(a)
        elif i in wrt_idx:
            v = pt.dscalar(names[i])
            values.append(np.asarray(float(a)))
        else:
            sym.append(a)
            continue
        sym.append(v)
        inputs.append(v)
    loss = f(*sym)
    grads = pytensor.grad(loss, [sym[i] for i in wrt_idx])
    compiled = {}

    def call(key, outputs):
        fc = compiled.get(key)
        if fc is None:
            fc = compiled[key] = pytensor.function(inputs, outputs, mode=mode)
            fc.trust_input = True
        return fc(*values)

    n = len(wrt_idx)
    return Bound(grad=lambda: call("grad", grads), forward=lambda: call("forward", loss),
                 grads_to_numpy=lambda r: as_tuple(tuple(r), n))


# --- Numba ---------------------------------------------------------------------------------------------------

def njit_user_function(fn):
    """The user's own function under ``@njit``, with the same-module helpers it calls jitted too."""
    from numba import njit

    g = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        v = g.get(name)
        if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__ and v is not fn:
            g[name] = njit(v)
    return njit(types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__))


def numba_by_hand(fn, mod, args, wrt_idx):
    """A hand-written ``@njit`` gradient loop (:mod:`.numba_grads`); the forward is the user's loop, jitted."""
    from coarsen_nb.benchmarks.rewrites import numba_grads

    g = _form(numba_grads, mod, "Numba")
    fwd = njit_user_function(fn)
    n = len(wrt_idx)
    return Bound(grad=lambda: g(*args), forward=lambda: fwd(*args), grads_to_numpy=lambda r: as_tuple(r, n))

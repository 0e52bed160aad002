"""The checks every corpus of the subset runs on its entries (``Entry`` of tests/corpus.py):
the frontend's desugaring alone, value and gradient under a selection, and the gradient against JAX."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from ssa_interp import assert_same, run_ir

import coarsen_nb as cn
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import to_ssa, verify

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}
SEEDS = (0, 1, 2)


def flat(v) -> tuple:
    return v if isinstance(v, tuple) else (v,)


def check_desugared_ir(entry) -> None:
    """The SSA of the frontend's output verifies and, run by the reference interpreter, means what Python means."""
    ssa = to_ssa(parse(entry.fn))
    verify(ssa)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_same(run_ir(ssa, args), entry.fn(*args), f"{entry.name}, seed {seed}")


def check_value_and_gradient(entry, selection: str) -> None:
    """Value against the plain function, gradient against central differences, under ``SELECTIONS[selection]``."""
    f = cn.coarsen(entry.fn, wrt=entry.wrt, **SELECTIONS[selection])
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_close(f(*args), entry.fn(*args), rtol=1e-10, atol=1e-12, what=f"{entry.name} seed {seed} value")
        grads = flat(f.grad(*args))
        assert len(grads) == len(entry.wrt)
        for name, g in zip(entry.wrt, grads, strict=True):
            fd = finite_difference(entry.fn, args, f.params.index(name))
            assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"{entry.name} seed {seed} d/d{name} vs FD")


def jax_module():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_function(fn, jax):
    """``fn`` with ``np`` as ``jax.numpy`` and ``math`` as JAX functions, its module's private helpers too."""
    jnp = jax.numpy
    glb = dict(fn.__globals__)
    glb["np"] = jnp
    glb["math"] = types.SimpleNamespace(sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, log=jnp.log, sqrt=jnp.sqrt,
                                        tanh=jnp.tanh, floor=jnp.floor, ceil=jnp.ceil, pi=math.pi,
                                        erf=jax.scipy.special.erf, erfc=jax.scipy.special.erfc)
    for k, v in list(glb.items()):       # scipy.special and numpy.linalg, imported by any name
        module = getattr(v, "__name__", None) if isinstance(v, types.ModuleType) else None
        if module in ("scipy", "scipy.special"):
            glb[k] = jax.scipy if module == "scipy" else jax.scipy.special
        elif callable(v) and isinstance(getattr(v, "__name__", None), str):
            import scipy.special
            for theirs, ours in ((scipy.special, jax.scipy.special), (np.linalg, jnp.linalg)):
                if getattr(theirs, v.__name__, None) is v:
                    glb[k] = getattr(ours, v.__name__)
    for k, v in list(glb.items()):
        if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__ and k.startswith("_"):
            glb[k] = types.FunctionType(v.__code__, glb, k, v.__defaults__)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)


def check_gradient_against_jax(entry, may_write: bool) -> None:
    """The gradient equals ``jax.grad`` of the same code.  ``may_write``: an entry that writes into an array
    is skipped when JAX says its arrays are immutable (any other error fails)."""
    jax = jax_module()
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    jfn = jax_function(entry.fn, jax)
    argnums = tuple(f.params.index(w) for w in entry.wrt)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        jargs = tuple(jax.numpy.asarray(a, dtype=jax.numpy.float64) if isinstance(a, (np.ndarray, float)) else a
                      for a in args)
        try:
            want = jax.grad(jfn, argnums=argnums)(*jargs)
        except TypeError as exc:        # JAX arrays are immutable: z[i] = v cannot run under JAX
            if may_write and "immutable" in str(exc):
                pytest.skip(f"JAX cannot run {entry.name}: {str(exc).splitlines()[0]}")
            raise
        for name, g, w in zip(entry.wrt, flat(f.grad(*args)), want, strict=True):
            assert_close(g, np.asarray(w), rtol=1e-9, atol=1e-12, what=f"{entry.name} seed {seed} d/d{name} vs JAX")

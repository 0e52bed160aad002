"""The Python-level forms of issue 15 (``tests/corpus_python_forms.py``), compiled under the default
selection, ``max_soi=1`` and ``per_block=True``: the value equals the plain Python function's, the
gradient equals central finite differences and, where JAX can run the same code, ``jax.grad`` of it."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from corpus_python_forms import PYTHON_FORMS, PYTHON_FORMS_IDS
from gradcheck import assert_close, finite_difference
from ssa_interp import assert_same, run_ir

import coarsen_nb as cn
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import to_ssa, verify

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}
SEEDS = (0, 1, 2)


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_desugared_ir_means_what_python_means(entry):
    """The frontend alone: the desugared SSA is well formed and the reference interpreter runs it to the
    plain function's value, before any lifting."""
    ssa = to_ssa(parse(entry.fn))
    verify(ssa)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_same(run_ir(ssa, args), entry.fn(*args), f"{entry.name}, seed {seed}")


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_inputs_are_off_kinks(entry):
    """Central differences at two step sizes agree, so FD is a valid reference at these inputs."""
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        for name in entry.wrt:
            k = list(entry.fn.__code__.co_varnames).index(name)
            assert_close(finite_difference(entry.fn, args, k, eps=1e-5), finite_difference(entry.fn, args, k),
                         rtol=1e-4, atol=1e-6, what=f"{entry.name} seed {seed} d/d{name}")


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_value_and_gradient(entry, selection):
    f = cn.coarsen(entry.fn, wrt=entry.wrt, **SELECTIONS[selection])
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_close(f(*args), entry.fn(*args), rtol=1e-10, atol=1e-12, what=f"{entry.name} seed {seed} value")
        grads = _flat(f.grad(*args))
        assert len(grads) == len(entry.wrt)
        for name, g in zip(entry.wrt, grads, strict=True):
            fd = finite_difference(entry.fn, args, f.params.index(name))
            assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"{entry.name} seed {seed} d/d{name} vs FD")


# --------------------------------------------------------------------------
# JAX: the same code, with np → jax.numpy and math → JAX functions
# --------------------------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _rebind(fn, jax):
    jnp = jax.numpy
    glb = dict(fn.__globals__)
    glb["np"] = jnp
    glb["math"] = types.SimpleNamespace(sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, log=jnp.log, sqrt=jnp.sqrt,
                                        tanh=jnp.tanh, floor=jnp.floor, ceil=jnp.ceil, pi=math.pi)
    for k, v in list(glb.items()):
        if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__ and k.startswith("_"):
            glb[k] = types.FunctionType(v.__code__, glb, k, v.__defaults__)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)


def _jax_args(jax, args):
    return tuple(jax.numpy.asarray(a, dtype=jax.numpy.float64) if isinstance(a, (np.ndarray, float)) else a
                 for a in args)


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_gradient_matches_jax(entry):
    jax = _jax()
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    jfn = _rebind(entry.fn, jax)
    argnums = tuple(f.params.index(w) for w in entry.wrt)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        try:
            want = jax.grad(jfn, argnums=argnums)(*_jax_args(jax, args))
        except TypeError as exc:        # JAX arrays are immutable: z[i] = v cannot run under JAX
            if "immutable" in str(exc):
                pytest.skip(f"JAX cannot run {entry.name}: {str(exc).splitlines()[0]}")
            raise
        for name, g, w in zip(entry.wrt, _flat(f.grad(*args)), want, strict=True):
            assert_close(g, np.asarray(w), rtol=1e-9, atol=1e-12, what=f"{entry.name} seed {seed} d/d{name} vs JAX")

"""Every differentiable corpus function: the gradient agrees with two independent
references — central finite differences in float64 and eager ``jax.grad`` of
the very same plain-loop code.

The JAX reference runs the corpus function's own bytecode with its globals
rebound (``np`` → ``jax.numpy``, ``math`` → a shim of JAX functions, helpers
rebound the same way), so no hand translation can hide a disagreement.  JAX is
skipped per function only where JAX itself cannot run the code (in-place
array writes, a Python list passed to a jax.numpy function), with JAX's own error as the reason.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from corpus import CORPUS
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

DIFF = [e for e in CORPUS if e.differentiable and e.wrt]
DIFF_IDS = [e.name for e in DIFF]
SEEDS = (0, 1, 2)


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


_COMPILED: dict = {}


def _compiled(entry):
    if entry.name not in _COMPILED:
        _COMPILED[entry.name] = cn.coarsen(entry.fn, wrt=entry.wrt)
    return _COMPILED[entry.name]


@pytest.mark.parametrize("entry", DIFF, ids=DIFF_IDS)
def test_gradient_matches_central_differences(entry):
    """float64 central differences, rtol 1e-6 (the corpus inputs are kept off kinks)."""
    f = _compiled(entry)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        grads = _flat(f.grad(*args))
        assert len(grads) == len(entry.wrt)
        for name, g in zip(entry.wrt, grads, strict=True):
            fd = finite_difference(entry.fn, args, f.params.index(name))
            assert np.all(np.isfinite(g)), f"{entry.name} d/d{name} not finite: {g}"
            assert_close(g, fd, rtol=1e-6, atol=1e-7, what=f"{entry.name} seed {seed} d/d{name} vs FD")


# --------------------------------------------------------------------------
# JAX
# --------------------------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _math_shim(jax):
    jnp = jax.numpy
    shim = types.SimpleNamespace(
        sin=jnp.sin, cos=jnp.cos, tan=jnp.tan, exp=jnp.exp, log=jnp.log, sqrt=jnp.sqrt, tanh=jnp.tanh,
        sinh=jnp.sinh, cosh=jnp.cosh, atan=jnp.arctan, asin=jnp.arcsin, acos=jnp.arccos, atan2=jnp.arctan2,
        log1p=jnp.log1p, expm1=jnp.expm1, hypot=jnp.hypot, fabs=jnp.abs, pow=jnp.power,
        erf=jax.scipy.special.erf, pi=math.pi, e=math.e, inf=math.inf,
    )
    return shim


def _rebind(fn, jax):
    """``fn`` with ``np`` → jax.numpy and ``math`` → JAX shim; same-module helpers rebound too."""
    glb = dict(fn.__globals__)
    glb["np"] = jax.numpy
    glb["math"] = _math_shim(jax)
    for k, v in list(glb.items()):
        if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__ and k.startswith("_"):
            glb[k] = types.FunctionType(v.__code__, glb, k, v.__defaults__)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)


def _jax_cannot(exc: TypeError) -> bool:
    """Whether JAX refused the code itself: in-place writes, or a list where jax.numpy wants an array."""
    return "immutable" in str(exc) or "requires ndarray or scalar arguments" in str(exc)


def _jax_args(jax, args):
    return tuple(jax.numpy.asarray(a, dtype=jax.numpy.float64) if isinstance(a, (np.ndarray, float)) else a
                 for a in args)


@pytest.mark.parametrize("entry", DIFF, ids=DIFF_IDS)
def test_gradient_matches_jax(entry):
    jax = _jax()
    f = _compiled(entry)
    jfn = _rebind(entry.fn, jax)
    argnums = tuple(f.params.index(w) for w in entry.wrt)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        try:
            want = jax.grad(jfn, argnums=argnums)(*_jax_args(jax, args))
        except TypeError as exc:   # JAX arrays are immutable: x[i] = v cannot run under JAX; nor jnp.sum([a, b])
            if _jax_cannot(exc):
                pytest.skip(f"JAX cannot run {entry.name}: {str(exc).splitlines()[0]}")
            raise
        got = _flat(f.grad(*args))
        for name, g, w in zip(entry.wrt, got, want, strict=True):
            assert_close(g, np.asarray(w), rtol=1e-9, atol=1e-12, what=f"{entry.name} seed {seed} d/d{name} vs JAX")


@pytest.mark.parametrize("entry", DIFF, ids=DIFF_IDS)
def test_forward_matches_jax(entry):
    """The rebinding itself is sound: JAX's forward value equals plain NumPy's."""
    jax = _jax()
    jfn = _rebind(entry.fn, jax)
    args = entry.make_args(np.random.default_rng(0))
    try:
        got = jfn(*_jax_args(jax, args))
    except TypeError as exc:
        if _jax_cannot(exc):
            pytest.skip(f"JAX cannot run {entry.name}: {str(exc).splitlines()[0]}")
        raise
    assert_close(np.asarray(got), entry.fn(*args), rtol=1e-12, atol=1e-12, what=entry.name)

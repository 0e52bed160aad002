"""Adapters: one small function per method, each turning a kernel into timed callables.

Why adapters run the *same* plain-loop function for every peer: the question
the benchmark answers is "what does this user code cost under each tool", so
no peer gets a hand-vectorized rewrite.  The function's code object is reused
with its globals rebound (``np`` → the peer's NumPy, ``math`` → a shim onto
the peer's elementwise functions), including helper functions of the same
module that it calls, so the loops, branches and scalar indexing are exactly
what the user wrote.

An adapter is ``adapter(fn, mod, args, wrt_idx) -> Bound``.  It does all input
conversion up front, so timing sees only the gradient (or forward) call.
Adapters raise :class:`Unsupported` for a known limitation of a peer (e.g.
immutable arrays and ``out[i] = …``); any other exception is reported by the
harness as the peer's failure.  Each :class:`Method` names its adapter as
``"module:function"`` so a worker process can import it by name.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from coarsen_nb.benchmarks.shims import autograd_math, jax_math, numpy_math, torch_math, torch_numpy


class Unsupported(Exception):
    """A peer cannot express this kernel (a documented limitation, not a crash)."""


@dataclass(frozen=True)
class Method:
    """A benchmarked method: how to build it and what to measure for it."""

    name: str
    adapter: str                 # "module:function", imported inside the worker
    numpy_based: bool = False    # peak memory / NumPy allocation count are meaningful
    compiled: bool = False       # first call includes compilation: report compile time
    requires: tuple[str, ...] = ()   # missing → "unavailable", not an error
    preload: tuple[str, ...] = ()    # imported before the build is timed, so build_s is not import time


@dataclass
class Bound:
    """A method bound to one kernel's prepared inputs."""

    grad: Callable[[], Any]
    forward: Callable[[], Any]
    grads_to_numpy: Callable[[Any], tuple[np.ndarray, ...]]
    value_to_float: Callable[[Any], float] = float
    sync: Callable[[Any], Any] = lambda r: r   # e.g. block_until_ready; runs inside the timed region


def as_tuple(g, n):
    """Normalize a gradient to a tuple of float64 arrays, one per wrt name."""
    if n == 1 and not (isinstance(g, (tuple, list)) and len(g) == 1):
        g = (g,)
    if len(g) != n:
        raise ValueError(f"gradient has {len(g)} components, expected {n}")
    return tuple(np.asarray(c, dtype=np.float64) for c in g)


def rebind(fn, **names):
    """Copy ``fn`` (and the same-module functions it can call) with some globals replaced.

    Names imported as bare functions (``from math import exp``) are mapped too,
    by identity with the ``math``/``numpy`` attribute they came from.
    """
    g = dict(fn.__globals__)
    g.update(names)
    replacements = {}
    for modname in ("math", "np"):
        if modname in names:
            real = math if modname == "math" else np
            for k, v in fn.__globals__.items():
                if callable(v) and not isinstance(v, type) and getattr(real, getattr(v, "__name__", ""), None) is v:
                    try:
                        replacements[k] = getattr(names[modname], v.__name__)
                    except AttributeError:
                        pass
    g.update(replacements)
    for k, v in list(g.items()):
        if isinstance(v, types.FunctionType) and v.__globals__ is fn.__globals__:
            g[k] = types.FunctionType(v.__code__, g, v.__name__, v.__defaults__, v.__closure__)
    return g[fn.__name__] if fn.__name__ in g else types.FunctionType(
        fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def subscript_writes(fn) -> list[tuple[str, int]]:
    """``(target source, line number)`` of each ``a[i] = …`` in ``fn``: what immutable-array peers cannot do."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    first = fn.__code__.co_firstlineno
    return [(ast.unparse(t), first + t.lineno - 1)
            for t in ast.walk(tree) if isinstance(t, ast.Subscript) and isinstance(t.ctx, ast.Store)]


def _immutable_guard(fn, peer):
    writes = subscript_writes(fn)
    if writes:
        target, line = writes[0]
        raise Unsupported(f"in-place write {target} = … (line {line}): {peer} arrays are immutable")


# --- NumPy-based methods -------------------------------------------------------------------

def hand_written(fn, mod, args, wrt_idx):
    """The kernel's analytical NumPy gradient: the practical limit every ratio is taken against."""
    n = len(wrt_idx)
    return Bound(grad=lambda: mod.grad(*args), forward=lambda: fn(*args),
                 grads_to_numpy=lambda g: as_tuple(g, n))


def _coarsen(fn, mod, args, wrt_idx, **knobs):
    import coarsen_nb as cn

    # (backend numpy unless a method names another: the methods' names and the committed results mean that,
    # whatever the default, backend="auto", resolves to on the machine that runs them)
    f = cn.coarsen(fn, wrt=tuple(mod.META["wrt"]), **{"backend": "numpy", **knobs})
    n = len(wrt_idx)
    return Bound(grad=lambda: f.grad(*args), forward=lambda: f(*args),
                 grads_to_numpy=lambda g: as_tuple(g, n))


def coarsen_default(fn, mod, args, wrt_idx):
    """coarsen_nb with its default SOI selection."""
    return _coarsen(fn, mod, args, wrt_idx)


def coarsen_numba(fn, mod, args, wrt_idx):
    """coarsen_nb's default selection under backend="numba" (the same module, compiled by Numba)."""
    return _coarsen(fn, mod, args, wrt_idx, backend="numba")


def coarsen_numba_parallel(fn, mod, args, wrt_idx):
    """coarsen_nb numba with parallel=True: the independent loops on threads (reported apart: the headline
    figures stay single-threaded)."""
    return _coarsen(fn, mod, args, wrt_idx, backend="numba", parallel=True)


def coarsen_l1(fn, mod, args, wrt_idx):
    """coarsen_nb with max_soi=1: operator-level AD in the same pipeline (the in-house baseline)."""
    return _coarsen(fn, mod, args, wrt_idx, max_soi=1)


def coarsen_per_block(fn, mod, args, wrt_idx):
    """coarsen_nb per basic block: the paper's ablation without the phi-calculus."""
    return _coarsen(fn, mod, args, wrt_idx, per_block=True)


def autograd_peer(fn, mod, args, wrt_idx):
    """HIPS autograd: operator-level tape over autograd.numpy; boxes cannot be written into arrays."""
    import autograd
    import autograd.numpy as anp

    _immutable_guard(fn, "autograd")
    f = rebind(fn, np=anp, math=autograd_math())
    g = autograd.grad(f, argnum=tuple(wrt_idx) if len(wrt_idx) > 1 else wrt_idx[0])
    n = len(wrt_idx)
    return Bound(grad=lambda: g(*args), forward=lambda: f(*args), grads_to_numpy=lambda r: as_tuple(r, n))


def tangent_peer(fn, mod, args, wrt_idx):
    """tangent (source-to-source AD on NumPy); the transformation happens here, at build time."""
    import tangent

    f = rebind(fn, math=numpy_math())
    df = tangent.grad(f, wrt=tuple(wrt_idx), verbose=0)
    n = len(wrt_idx)
    return Bound(grad=lambda: df(*args), forward=lambda: f(*args), grads_to_numpy=lambda r: as_tuple(r, n))


# --- JAX -----------------------------------------------------------------------------------

def _jax_setup(fn, args, wrt_idx):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    _immutable_guard(fn, "JAX")
    f = rebind(fn, np=jnp, math=jax_math())
    def to_jax(i, a):
        if i in wrt_idx:
            return jnp.asarray(a, dtype=jnp.float64)
        return jnp.asarray(a) if isinstance(a, np.ndarray) else a

    jargs = tuple(to_jax(i, a) for i, a in enumerate(args))
    n = len(wrt_idx)
    to_np = lambda r: as_tuple(tuple(np.asarray(c) for c in r), n)  # noqa: E731
    return jax, f, jargs, to_np


def jax_eager(fn, mod, args, wrt_idx):
    """jax.grad without jit: traced op by op at every call, Python control flow allowed."""
    jax, f, jargs, to_np = _jax_setup(fn, args, wrt_idx)
    g = jax.grad(f, argnums=tuple(wrt_idx))
    return Bound(grad=lambda: g(*jargs), forward=lambda: f(*jargs), grads_to_numpy=to_np,
                 sync=jax.block_until_ready)


def jax_jit(fn, mod, args, wrt_idx):
    """jit(grad): loops unroll at trace time; non-array, non-wrt arguments are static (as a user would)."""
    jax, f, jargs, to_np = _jax_setup(fn, args, wrt_idx)
    static = tuple(i for i, a in enumerate(args) if i not in wrt_idx and isinstance(a, (int, float, bool)))
    g = jax.jit(jax.grad(f, argnums=tuple(wrt_idx)), static_argnums=static)
    fwd = jax.jit(f, static_argnums=static)
    return Bound(grad=lambda: g(*jargs), forward=lambda: fwd(*jargs), grads_to_numpy=to_np,
                 sync=jax.block_until_ready)


# --- PyTorch -------------------------------------------------------------------------------

def torch_eager(fn, mod, args, wrt_idx):
    """PyTorch autograd, eager, CPU, float64; forward timed under no_grad."""
    import torch

    torch.set_default_dtype(torch.float64)
    f = rebind(fn, np=torch_numpy(), math=torch_math())
    targs, leaves = [], []
    for i, a in enumerate(args):
        if i in wrt_idx:
            t = torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)
            leaves.append(t)
            targs.append(t)
        elif isinstance(a, np.ndarray):
            targs.append(torch.from_numpy(a))
        else:
            targs.append(a)

    def grad():
        out = f(*targs)
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            raise TypeError(f"output {type(out).__name__} does not depend on the wrt inputs as a tensor")
        return torch.autograd.grad(out, leaves, allow_unused=True)

    def forward():
        with torch.no_grad():
            return f(*targs)

    def to_np(r):
        return tuple(np.zeros(np.shape(a)) if c is None else c.detach().numpy()
                     for c, a in zip(r, [args[i] for i in wrt_idx], strict=True))

    return Bound(grad=grad, forward=forward, grads_to_numpy=to_np,
                 value_to_float=lambda v: float(v.item() if isinstance(v, torch.Tensor) else v))


_M = "coarsen_nb.benchmarks.peers:"
_CN = ("coarsen_nb",)
_CN_PRE = ("sympy", "coarsen_nb.runtime")
_JAX_PRE = ("jax.numpy", "jax.scipy.special")
_R = "coarsen_nb.benchmarks.rewrites:"

METHODS: dict[str, Method] = {m.name: m for m in (
    Method("hand-written", _M + "hand_written", numpy_based=True),
    Method("coarsen_nb", _M + "coarsen_default", numpy_based=True, compiled=True, requires=_CN, preload=_CN_PRE),
    Method("coarsen_nb numba", _M + "coarsen_numba", numpy_based=True, compiled=True, requires=_CN + ("numba",),
           preload=_CN_PRE + ("numba",)),
    Method("coarsen_nb numba parallel", _M + "coarsen_numba_parallel", numpy_based=True, compiled=True,
           requires=_CN + ("numba",), preload=_CN_PRE + ("numba",)),
    Method("coarsen_nb L=1", _M + "coarsen_l1", numpy_based=True, compiled=True, requires=_CN, preload=_CN_PRE),
    Method("coarsen_nb per-block", _M + "coarsen_per_block", numpy_based=True, compiled=True,
           requires=_CN, preload=_CN_PRE),
    Method("autograd", _M + "autograd_peer", numpy_based=True, requires=("autograd",),
           preload=("autograd.numpy", "autograd.scipy.special")),
    Method("jax", _M + "jax_eager", requires=("jax",), preload=_JAX_PRE),
    Method("jax jit", _M + "jax_jit", compiled=True, requires=("jax",), preload=_JAX_PRE),
    Method("torch", _M + "torch_eager", requires=("torch",)),
    Method("tangent", _M + "tangent_peer", numpy_based=True, requires=("tangent",), preload=("scipy.special",)),
    # The peers on their best forms (issue 14): rewrites in coarsen_nb/benchmarks/rewrites/.
    Method("numba by hand", _R + "numba_by_hand", compiled=True, requires=("numba",), preload=("numba",)),
    Method("jax best", _R + "jax_best", compiled=True, requires=("jax",), preload=_JAX_PRE),
    Method("pytensor", _R + "pytensor_best", compiled=True, requires=("pytensor",),
           preload=("pytensor.tensor", "pytensor.scan")),
)}

BASELINE = "hand-written"

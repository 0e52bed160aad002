"""What the runtime checks before it compiles or runs anything: options, ``wrt``, tangents, cotangents.

Generated code trusts its inputs: it is written for one signature, and a
tangent of the wrong shape broadcasts into a plausible number, a duplicate
``wrt`` name makes the module a SyntaxError, an option of the wrong type turns
into an internal TypeError deep in SOI selection.  So everything a user passes
is checked here first, against what it must be, and a bad value is a
:class:`CoarsenError` that names the option or the parameter the way the user
wrote it and says what to pass instead.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from coarsen_nb.backends import AUTO, BACKENDS, PARALLEL_BACKENDS, is_array, resolve
from coarsen_nb.errors import CoarsenError


def options(backend, max_soi, reuse, per_block, parallel=False) -> tuple:
    """``(backend, max_soi, reuse)``: the backend ``"auto"`` stands for resolved (:func:`coarsen_nb.backends.resolve`),
    the knobs normalized (a whole float such as ``2.0`` becomes ``2``); raise on a bad option.

    ``max_soi`` (L) counts operations, so at least 1 (``1`` is operator-level AD); ``reuse`` (R) is a
    number of reads, so 0 or more (``0``: every value read at all is materialized, no substitution).
    ``None`` and ``math.inf`` mean no cap.
    """
    if not isinstance(backend, str) or (backend not in BACKENDS and backend != AUTO):
        raise CoarsenError("backend", message=f"unknown backend {backend!r}",
                           hint="use " + " or ".join(f'backend="{b}"' for b in (AUTO, *BACKENDS)))
    if not isinstance(per_block, (bool, np.bool_)):
        raise CoarsenError("per_block", message=f"per_block must be True or False, got {per_block!r}",
                           hint="pass per_block=True for SOIs that never cross a branch or loop join")
    if not isinstance(parallel, (bool, np.bool_)):
        raise CoarsenError("parallel", message=f"parallel must be True or False, got {parallel!r}",
                           hint="pass parallel=True to run the independent loops of the numba backend on threads")
    if parallel and resolve(backend) not in PARALLEL_BACKENDS:
        raise CoarsenError("parallel", message=f"parallel=True needs the numba backend, not {resolve(backend)!r}",
                           hint='pass backend="numba" with parallel=True (install Numba: pip install numba), '
                                "or leave parallel=False")
    return (resolve(backend),
            _count("max_soi", max_soi, 1, "the size cap L of an SOI in operations; 1 is operator-level AD"),
            _count("reuse", reuse, 0, "the reuse threshold R: a value read more than R times is kept as a temp"))


def _count(option: str, value, least: int, meaning: str):
    hint = f"pass an integer >= {least}, or None (or math.inf) for no limit ({meaning})"
    if value is None or (isinstance(value, numbers.Real) and value == math.inf):
        return value
    whole = isinstance(value, numbers.Integral) or (isinstance(value, numbers.Real) and float(value).is_integer())
    if isinstance(value, (bool, np.bool_)) or not whole:
        raise CoarsenError(option, message=f"{option} must be a whole number, got {value!r}", hint=hint)
    if value < least:
        raise CoarsenError(option, message=f"{option}={int(value)} is out of range", hint=hint)
    return int(value)


def wrt_names(wrt, params: tuple[str, ...], fname: str) -> tuple[str, ...] | None:
    """The ``wrt`` names as a tuple (``None``: every float parameter); raise on a non-parameter or a repeat."""
    if wrt is None:
        return None
    hint = "pass a parameter name, a comma-separated string of them, or a tuple of names (None: every float one)"
    if isinstance(wrt, str):
        wrt = tuple(w.strip() for w in wrt.split(",") if w.strip())
    if not isinstance(wrt, (tuple, list)) or not all(isinstance(w, str) for w in wrt):
        raise CoarsenError("wrt", message=f"wrt must name parameters of {fname}, got {wrt!r}", hint=hint)
    if not wrt:
        raise CoarsenError("wrt", message="wrt names no parameter", hint=hint)
    seen: set = set()
    for w in wrt:
        if w not in params:
            raise CoarsenError(str(w), hint=f"parameters are: {', '.join(params)}",
                               message=f"wrt names {w!r}, which is not a parameter of {fname}")
        if w in seen:
            raise CoarsenError(w, hint=f"name each parameter once: wrt={tuple(dict.fromkeys(wrt))!r}",
                               message=f"wrt names {w!r} twice")
        seen.add(w)
    return tuple(wrt)


def signature(params: tuple[str, ...], defaults: dict) -> inspect.Signature:
    """The compiled function's Python signature: every parameter by position or by keyword, with the
    defaults of its ``def`` (numbers only; the frontend checked them)."""
    empty = inspect.Parameter.empty
    return inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=defaults.get(p, empty)) for p in params])


def bind(fname: str, sig: inspect.Signature, args: tuple, kwargs: dict) -> tuple:
    """``args`` and ``kwargs`` bound as Python binds them to ``sig``: one value per parameter, in order,
    defaults filled in.  Python's TypeError (a missing argument, an unknown keyword, a value given twice)
    is a CoarsenError naming the function and showing how to call it."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        params = list(sig.parameters.values())
        required = sum(p.default is inspect.Parameter.empty for p in params)
        count = f"{len(params)}" if required == len(params) else f"{required} to {len(params)}"
        got = f"got {len(args)}" + (f" and the keywords {', '.join(kwargs)}" if kwargs else "")
        raise CoarsenError(fname, message=f"{fname}() takes {count} arguments ({', '.join(sig.parameters)}), "
                           f"{got}: {exc}", hint=f"call it as {fname}{sig}") from None
    bound.apply_defaults()
    return tuple(bound.args)


def arguments(params: tuple[str, ...], args: tuple) -> None:
    """Raise unless each of ``args`` (one per parameter: :func:`bind` made them) is a number or a numeric array."""
    for p, a in zip(params, args, strict=True):
        if isinstance(a, (bool, int, float, np.integer, np.floating, np.bool_)):
            continue
        if is_array(a):
            if a.dtype.kind not in "biuf":
                raise CoarsenError(p, message=f"parameter {p!r}: array of dtype {a.dtype} is not numeric",
                                   hint="pass a float array")
            continue
        raise CoarsenError(p, message=f"parameter {p!r}: expected a number or a NumPy array, "
                           f"got {type(a).__name__}", hint=f"convert it first, e.g. np.asarray({p})")


def primals(fname: str, args) -> tuple:
    """``f.jvp``'s first argument as a tuple: the arguments, like the tangents, come as one tuple."""
    if not isinstance(args, (tuple, list)):
        raise CoarsenError("jvp", message=f"jvp takes the arguments of {fname} as one tuple, "
                           f"got {type(args).__name__}", hint=f"call {fname}.jvp((x, ...), (dx, ...))")
    return tuple(args)


def tangents(params: tuple[str, ...], args: tuple, wrt: tuple[str, ...], given) -> tuple:
    """The tangents of ``f.jvp``, one per ``wrt`` name, each shaped like its primal argument."""
    given = tuple(given) if isinstance(given, (tuple, list)) else (given,)
    if len(given) != len(wrt):
        raise CoarsenError("jvp", message=f"jvp needs one tangent per wrt name ({', '.join(wrt)}), "
                           f"got {len(given)}", hint="pass a tuple of tangents")
    out = tuple(_like(t, args[params.index(w)], f"the tangent of {w!r}", "tangents")
                for w, t in zip(wrt, given, strict=True))
    # an integer array is a tangent of floats too; as floats, the generated JVP reads it as it is
    return tuple(t.astype(np.float64) if is_array(t) and t.dtype.kind in "iu" else t for t in out)


def cotangent(value, given, fname: str):
    """The cotangent of ``f.vjp``'s pullback, shaped like the value: a number, an array or a tuple of those."""
    if isinstance(value, tuple):
        if not isinstance(given, tuple) or len(given) != len(value):
            raise CoarsenError("cotangent", message=f"{fname} returns a tuple of {len(value)} values; "
                               f"the cotangent must be a tuple of {len(value)} too",
                               hint="pass one cotangent per returned value")
        return tuple(_like(g, v, f"element {k} of the cotangent", "cotangents")
                     for k, (v, g) in enumerate(zip(value, given, strict=True)))
    return _like(given, value, "the cotangent", "cotangents")


def _like(t, primal, what: str, kind: str):
    """``t`` as a tangent (or cotangent) of ``primal``: a number for a number, an array of its shape."""
    shape = np.shape(primal)
    want = "a number (or a 0-d array)" if shape == () else f"an array of shape {shape}"
    hint = f"{kind} have the shape of what they go with: pass {want}"
    if isinstance(t, (bool, np.bool_)) or not (isinstance(t, numbers.Real) or is_array(t)):
        raise CoarsenError(what, message=f"{what} must be {want}, got {type(t).__name__}", hint=hint)
    if isinstance(t, numbers.Real):
        if shape != ():
            raise CoarsenError(what, message=f"{what} must be {want}, got the number {t!r}", hint=hint)
        return t
    if t.dtype.kind not in "iuf":
        raise CoarsenError(what, message=f"{what} has dtype {t.dtype}, which is not a real number type", hint=hint)
    if t.shape != shape:
        raise CoarsenError(what, message=f"{what} must be {want}, got an array of shape {t.shape}", hint=hint)
    return t

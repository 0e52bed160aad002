"""The ``xp`` namespace of a numba module: NumPy, with the functions Numba lacks written for it.

Generated code calls its array library as ``xp.NAME`` with the array API's names and keywords
(``cumulative_sum(x, axis=1, include_initial=True)``, ``concat([a, b], axis=1)``,
``asarray(v, dtype=xp.float64, copy=True)``, ``matmul``).  NumPy has them all; Numba's subset has
none of these spellings.  So the numba backend prints the very same statements, and this file,
copied verbatim after the imports of every numba module (``Backend.prologue``), rebinds ``xp``
to a module object holding NumPy's attributes, with each missing function replaced by a stub
that Numba compiles through ``numba.extending.overload``: a loop per array rank, with NumPy's
values (NaN first in ``argmax``, an integer sum of integers, the row-major order of
``concat``).  A form not written here (a rank or keyword the generated code never uses) is a
typing error, which the loader turns into the named NumPy fallback.

The file is also an importable module, so the tests compare each function with NumPy's
directly.  It must stay self-contained (NumPy and Numba only) and without a ``__future__``
import: it runs in the middle of a generated module.
"""

import types as _types

import numba
import numba.extending
import numpy as _np
from numba.core import types as _nt
from numba.np.numpy_support import as_dtype

xp = _types.ModuleType("xp")
# NumPy's attributes as they are, its lazily imported submodules (``fft``, ``testing``, ``f2py``, ``ma``, ...)
# looked up when first named: reading every name of ``dir(numpy)`` imported them all, 165 modules and
# ~0.07 s of CPU in every process that loads a numba module (benchmarks/RESULTS.md, stop 40)
xp.__dict__.update({_k: _v for _k, _v in vars(_np).items() if not _k.startswith("__")})


def _numpy_attribute(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_np, name)


xp.__getattr__ = _numpy_attribute


#: Numba's options for a function only compiled code calls (a helper, an implementation): without the
#: wrappers that let Python (the CPython wrapper) and C (the cfunc wrapper) call it.  Numba lowers and
#: optimizes both for every function it compiles, argument unboxing and all (with the other changes of
#: benchmarks/RESULTS.md's stop 38: a cold compile's CPU time -9%).  Python cannot call such a function;
#: nothing does.
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _omitted(arg):
    """The keyword was not passed (or passed as None)."""
    return arg is None or isinstance(arg, (_nt.NoneType, _nt.Omitted))


def _constant_flag(arg):
    """A boolean keyword's value at compile time (True or False), or None where it is not a constant."""
    if isinstance(arg, _nt.BooleanLiteral):
        return arg.literal_value
    if isinstance(arg, _nt.Omitted):
        return bool(arg.value)
    return arg if isinstance(arg, bool) else None


def _keeping_axis(along):
    """The implementation ``along(x, axis)`` of a 2-D reduction over one axis, with that axis kept (of length 1).
    (Numba matches an implementation's parameter names to its typing function's: both say ``x``.)"""
    along_compiled = numba.njit(**INTERNAL)(along)

    def kept(x, axis=None, keepdims=False):
        out = along_compiled(x, axis)
        return out.reshape((1, out.shape[0])) if axis == 0 or axis == -2 else out.reshape((out.shape[0], 1))
    return kept


def _scan_dtype(x):
    return _np.float64 if isinstance(x.dtype, _nt.Float) else _np.int64


def _stub(name):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"xp.{name} is compiled by Numba only")

    stub.__name__ = name
    return stub


def _implements(name, holder=None, cache=True, **options):
    """Decorate the typing function of ``xp.NAME``: a stub in ``xp`` (or in ``holder``, a namespace
    within it: ``xp.linalg``) that Numba compiles through ``numba.extending.overload`` (the typing
    function returns the implementation for the argument types, or None where it has none).

    ``cache``: Numba caches the implementations on disk, beside this text's file (numba_loader loads
    it as a module of its own, so once per machine; a closure is cached by its cells' values).  False
    where the typing function prints its implementation as text and ``exec`` s it: such code has no
    file to cache beside, and Numba refuses to compile it with ``cache=True``."""
    def register(typing):
        stub = _stub(name)
        # (an implementation has no CPython wrapper anyway: Numba's default for overloads)
        numba.extending.overload(stub, jit_options={"cache": cache, **INTERNAL}, **options)(typing)
        setattr(xp if holder is None else holder, name, stub)
        return typing

    return register


def _make_scan(name, is_prod):
    @_implements(name)
    def _overload(x, axis=None, include_initial=False):
        out_dtype = _scan_dtype(x)
        if x.ndim == 1:
            def scan_1d(x, axis=None, include_initial=False):
                n = x.shape[0]
                start = 1 if include_initial else 0
                out = xp.empty(n + start, dtype=out_dtype)
                acc = out_dtype(1) if is_prod else out_dtype(0)
                if start:
                    out[0] = acc
                for i in range(n):
                    acc = acc * x[i] if is_prod else acc + x[i]
                    out[i + start] = acc
                return out
            return scan_1d
        if x.ndim == 2:
            def scan_2d(x, axis=None, include_initial=False):
                along_rows = axis == 0 or axis == -2
                m = x.shape[1] if along_rows else x.shape[0]
                n = x.shape[0] if along_rows else x.shape[1]
                start = 1 if include_initial else 0
                out = xp.empty((m, n + start), dtype=out_dtype)
                for r in range(m):
                    acc = out_dtype(1) if is_prod else out_dtype(0)
                    if start:
                        out[r, 0] = acc
                    for i in range(n):
                        v = x[i, r] if along_rows else x[r, i]
                        acc = acc * v if is_prod else acc + v
                        out[r, i + start] = acc
                return out.T.copy() if along_rows else out
            return scan_2d
        return None



_make_scan("cumulative_sum", False)
_make_scan("cumulative_prod", True)


@_implements("asarray", prefer_literal=True)
def _asarray(v, dtype=None, copy=None):
    if isinstance(v, _nt.Array):
        if _omitted(dtype):
            # (copy decides whether the result may be written: a constant, as the generated code passes it)
            if isinstance(copy, _nt.BooleanLiteral) and copy.literal_value:
                def copied(v, dtype=None, copy=None):
                    return v.copy()
                return copied
            if not (_omitted(copy) or copy is False or isinstance(copy, _nt.BooleanLiteral)):
                return None

            def same(v, dtype=None, copy=None):
                return v
            return same

        wanted = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
        if wanted == v.dtype and (_omitted(copy) or copy is False or
                                  isinstance(copy, _nt.BooleanLiteral) and not copy.literal_value):
            # NumPy's asarray of an array of that dtype is the array itself (``astype`` copies: a choice's
            # arm ``asarray(m, dtype=float64)`` copied 10**6 floats, lower/branches.py)
            def as_it_is(v, dtype=None, copy=None):
                return v
            return as_it_is

        def converted(v, dtype=None, copy=None):
            return v.astype(dtype)
        return converted
    if isinstance(v, (_nt.List, _nt.UniTuple)) and isinstance(v.dtype, (_nt.Number, _nt.Boolean)):
        own = as_dtype(v.dtype).type            # (NumPy's dtype of a list of these numbers)
        if _omitted(dtype):
            def from_sequence(v, dtype=None, copy=None):
                out = xp.empty(len(v), dtype=own)
                for i in range(len(v)):
                    out[i] = v[i]
                return out
            return from_sequence

        def from_sequence_as(v, dtype=None, copy=None):
            out = xp.empty(len(v), dtype=dtype)
            for i in range(len(v)):
                out[i] = v[i]
            return out
        return from_sequence_as
    if isinstance(v, (_nt.Number, _nt.Boolean)):
        if _omitted(dtype):
            def scalar(v, dtype=None, copy=None):
                return _np.array(v)
            return scalar

        def scalar_as(v, dtype=None, copy=None):
            return _np.array(v).astype(dtype)
        return scalar_as
    return None


@_implements("concat")
def _concat(arrays, axis=0):
    if isinstance(arrays, (_nt.BaseTuple,)):
        def from_tuple(arrays, axis=0):
            return _np.concatenate(arrays, axis)
        return from_tuple
    if not isinstance(arrays, _nt.List) or not isinstance(arrays.dtype, _nt.Array):
        return None
    ndim = arrays.dtype.ndim
    dtype = as_dtype(arrays.dtype.dtype).type
    # Element loops, not slice assignments: Numba's ``out[a:b] = x`` compiles a formatted shape-mismatch
    # message (str, join, repr: a third of a cold compile); the shapes are checked here instead.
    if ndim == 1:
        def concat_1d(arrays, axis=0):
            total = 0
            for a in arrays:
                total += a.shape[0]
            out = xp.empty(total, dtype=dtype)
            at = 0
            for a in arrays:
                for i in range(a.shape[0]):
                    out[at + i] = a[i]
                at += a.shape[0]
            return out
        return concat_1d
    if ndim == 2:
        def concat_2d(arrays, axis=0):
            columns = axis == 1 or axis == -1
            total = 0
            first = arrays[0]
            for a in arrays:
                total += a.shape[1] if columns else a.shape[0]
                if (a.shape[0] != first.shape[0]) if columns else (a.shape[1] != first.shape[1]):
                    raise ValueError("all the input array dimensions except for the concatenation axis "
                                     "must match exactly")
            out = xp.empty((first.shape[0], total) if columns else (total, first.shape[1]), dtype=dtype)
            at = 0
            for a in arrays:
                for i in range(a.shape[0]):
                    for j in range(a.shape[1]):
                        if columns:
                            out[i, at + j] = a[i, j]
                        else:
                            out[at + i, j] = a[i, j]
                at += a.shape[1] if columns else a.shape[0]
            return out
        return concat_2d
    return None


@_implements("matmul")
def _matmul(a, b):
    if not (isinstance(a, _nt.Array) and isinstance(b, _nt.Array)):
        return None
    floats = isinstance(a.dtype, _nt.Float) or isinstance(b.dtype, _nt.Float)
    dtype = _np.float64 if floats else _np.int64
    if a.ndim == 1 and b.ndim == 1:
        def dot(a, b):
            if a.shape[0] != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            acc = dtype(0)
            for k in range(a.shape[0]):
                acc += a[k] * b[k]
            return acc
        return dot
    if a.ndim == 2 and b.ndim == 1:
        def matvec(a, b):
            if a.shape[1] != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            out = xp.zeros(a.shape[0], dtype=dtype)
            for i in range(a.shape[0]):
                for k in range(a.shape[1]):
                    out[i] += a[i, k] * b[k]
            return out
        return matvec
    if a.ndim == 1 and b.ndim == 2:
        def vecmat(a, b):
            if a.shape[0] != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            out = xp.zeros(b.shape[1], dtype=dtype)
            for k in range(a.shape[0]):
                for j in range(b.shape[1]):
                    out[j] += a[k] * b[k, j]
            return out
        return vecmat
    if a.ndim == 2 and b.ndim == 2:
        def matmat(a, b):
            if a.shape[1] != b.shape[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            out = xp.zeros((a.shape[0], b.shape[1]), dtype=dtype)
            for i in range(a.shape[0]):
                for k in range(a.shape[1]):
                    aik = a[i, k]
                    for j in range(b.shape[1]):
                        out[i, j] += aik * b[k, j]
            return out
        return matmat
    return None


@_implements("tile")
def _tile(x, reps):
    if isinstance(x, _nt.Array) and x.ndim == 1 and isinstance(reps, _nt.UniTuple) and reps.count == 1:
        def tile_1d(x, reps):
            n = x.shape[0]
            r = reps[0]
            out = xp.empty(n * max(r, 0), dtype=x.dtype)
            for k in range(max(r, 0)):
                for i in range(n):          # (an element loop: see concat)
                    out[k * n + i] = x[i]
            return out
        return tile_1d
    return None


@_implements("reshape")
def _reshape(x, shape):
    if isinstance(x, _nt.Array):
        def reshape(x, shape):
            return _np.ascontiguousarray(x).reshape(shape)
        return reshape
    return None


@_implements("contiguous_rows", prefer_literal=True)
def _contiguous_rows(x, lo, hi, step):
    """``contiguous_rows(x, lo, hi, step)``: ``x[lo:hi:step]`` (elements, or rows of a matrix) typed 'C': the view
    where it is contiguous, else a C-ordered copy, as ``ascontiguousarray`` gives (the numba helper ``_take``).
    For x typed 'C' and the constant step 1 (what the generated code passes) the slice itself, which Numba
    types 'C': its ``ascontiguousarray`` of the strided slice, typed 'A', compiles a run-time contiguity
    check and a copy (~0.15 s of a cold start) for a view that is always contiguous there."""
    if not isinstance(x, _nt.Array) or x.ndim == 0:
        return None
    if x.layout == "C" and isinstance(step, _nt.IntegerLiteral) and step.literal_value == 1:
        def unit_step(x, lo, hi, step):
            return x[lo:hi]
        return unit_step

    def strided(x, lo, hi, step):
        return _np.ascontiguousarray(x[lo:hi:step, ...])
    return strided

"""The ``xp`` namespace of a dask module: ``dask.array``, with the array API's names and the lazy forms of
the statements NumPy runs eagerly.

The dask backend prints the very statements the NumPy backend prints; this file, copied verbatim after the
imports of every dask module (``Backend.prologue``, as ``numba_xp.py`` is for numba), rebinds ``xp`` to a
module object holding ``dask.array``'s attributes, with

* the array API's spellings that ``dask.array`` lacks (``cumulative_sum``, ``concat``, ``astype``,
  ``asarray(..., copy=)``, ``isdtype``), written over dask's own functions, so that every array statement
  stays a lazy graph: an SOI's elementwise chain is fused by dask's blockwise optimisation into one task
  per chunk, and ``xp.sum`` is a tree reduction over the chunks;
* the masked lanes of a branch on arrays.  NumPy's code computes the elements of the branch not taken
  from ``ix = xp.nonzero(m)[0]`` (their indices), ``g = xp.take(a, ix, axis=0)`` (their values) and
  ``_put(c, (ix,), v)`` (written back), so nothing is evaluated on the other branch's elements.  Indices
  of a lazy mask have unknown chunk sizes; here ``nonzero`` returns a :class:`Lanes` (the mask itself),
  ``take`` of it is ``a[m]`` (the selected elements, chunk by chunk: still only those elements are
  evaluated), and the dask module's ``_put`` (``lower/dask_helpers.py``) writes them back chunk by
  chunk, the k-th chunk of the values into the k-th chunk of the target; ``ix.shape[0]`` is a
  :class:`LaneCount` (NaN, holding the mask), whose ``full``/``zeros``/``ones``/``empty`` are the lanes' own
  (a branch nested in a branch); where a shape needs its value (``arange``, ``tile``, ``reshape`` of it) the
  mask's count per block is computed then, once (:func:`lane_counts`, an early compute ``f.chunking`` says);
* ``errstate``, NumPy's (the generated code's guarded forms use it where they evaluate both sides);
* the scalar glue between SOIs kept lazy: this file rebinds the module's ``math`` to a namespace whose
  float functions (``math.log``, ``math.tanh``, ``math.sqrt``, ...) given a 0-d Dask array return a 0-d
  Dask array whose task is Python's function of its value (the same value, the same domain errors, raised
  when it is computed), and Python's ``math`` function of anything else; and ``float`` to a function
  that casts a 0-d Dask array lazily (``xp.asarray([float(a), float(b)])``, an array literal of reduced
  values, is ``stack``ed by ``asarray``); and ``where`` of a scalar choice (``choice = xp.where(t2, a, b)``,
  printed for this backend where NumPy's module has ``if t2: choice = a else: choice = b`` between two
  names or numbers) lazy on a reduced ``t2``, Python's choice on a plain truth value.  What stays eager is
  named in :mod:`coarsen_nb.dask_arrays`: a Python ``if`` or ``while`` on a reduced value, ``int()`` of one.

The forms ``dask.array`` lacks or refuses on some chunks (``linalg.slogdet``/``det``, ``solve``/``inv`` on chunks
that are not square, ``convolve``/``correlate``, ``repeat`` by counts) are in ``dask_xp_forms.py``, whose text
follows this file's in a dask module.  Anything else the namespace has no lazy form for (``argsort``,
``linalg.eigh``) raises a ``NotImplementedError`` naming it, which the runtime reports at the user's line:
never an eager NumPy call, never a silently different value.  The file is also an importable module, so the
tests compare its functions with NumPy's.  It must stay self-contained (NumPy and Dask
only) and without a ``__future__`` import: it runs in the middle of a generated module.
"""

import builtins as _builtins
import math as _math
import types as _types

import dask.array as _da
import numpy as _np

xp = _types.ModuleType("xp")
xp.__dict__.update({_k: getattr(_da, _k) for _k in dir(_da) if not _k.startswith("__")})
xp.bool = _np.bool_
xp.errstate = _np.errstate
xp.finfo = _np.finfo
xp.iinfo = _np.iinfo


class LaneCount(_builtins.float):
    """``ix.shape[0]`` of masked lanes: NaN (unknown until computed), which is true, so the generated ``if
    ix.shape[0]:`` evaluates the branch, on no element where the mask is all false; it holds the mask, so
    that ``full``, ``zeros``, ``ones`` and ``empty`` of it are an array of the selected lanes, chunk by chunk
    as ``take`` of the lanes is (a branch nested in a branch: ``choice2 = xp.full(ix.shape[0], 0.0)``)."""

    def __new__(cls, mask):
        count = super().__new__(cls, _np.nan)
        count.mask = mask
        return count


class Lanes:
    """The lanes a mask selects, standing for NumPy's ``nonzero(m)[0]`` (a 1-D mask only: the lanes of a
    branch over the elements of a vector); ``shape[0]`` is a :class:`LaneCount`."""

    def __init__(self, mask):
        self.mask = mask
        self.shape = (LaneCount(mask),)
        self.ndim = 1

    def __repr__(self) -> str:
        return f"Lanes({self.mask!r})"


def _nonzero(m):
    m = _da.asarray(m)
    if m.ndim != 1:
        raise NotImplementedError("xp.nonzero of a mask of more than one axis has no lazy form here")
    return (Lanes(m),)


def _take(a, index, axis=None):
    if isinstance(index, Lanes):
        if axis not in (0, None) or (axis is None and a.ndim != 1):
            raise NotImplementedError("xp.take of masked lanes along an axis other than the first")
        a = _da.asarray(a)
        known = not (_math.isnan(a.shape[0]) or _math.isnan(index.mask.shape[0]))
        if a.shape[0] != index.mask.shape[0] if known else a.numblocks[0] != index.mask.numblocks[0]:
            raise ValueError(f"the lanes of a mask of {index.mask.shape[0]} elements taken from {a.shape[0]}")
        return _selected(a, index.mask)
    return _da.take(a, index, axis=0 if axis is None else axis)


def lane_aligned(a, mask):
    """``a`` in the chunks of the 1-D ``mask`` along its first axis; where both are lanes already selected
    (chunk sizes unknown, one block per block of the outer mask), as it is."""
    a = _da.asarray(a)
    known = not any(_math.isnan(c) for c in a.chunks[0] + mask.chunks[0])
    return a.rechunk({0: mask.chunks[0]}) if known else a


def lanes_chunked(v, mask):
    """The lanes' values ``v`` in the lanes' chunks, one block per block of ``mask``, where their counts are
    known and ``v``'s chunks are others (a sum over ``j`` reshaped to ``(ix.shape[0], n_j)`` is chunked as
    Dask's reshape cut it); else as they are."""
    counts = _known_counts(mask)
    if counts is None or not isinstance(v, _da.Array) or v.ndim != 1 or v.chunks[0] == counts:
        return v
    if any(_math.isnan(c) for c in v.chunks[0]):
        return v
    return v.rechunk((counts,))


def _lanes_of(shape):
    """The :class:`LaneCount` a creation function is given as its shape (``n`` or ``(n,)``), else None."""
    shape = shape if isinstance(shape, tuple) else (shape,)
    return shape[0] if len(shape) == 1 and isinstance(shape[0], LaneCount) else None


def _lane_creation(name, fill):
    """``xp.<name>`` (``zeros``, ``ones``, ``empty``), whose shape may be a :class:`LaneCount`: then
    ``fill`` (any value, for ``empty``) at every selected lane, in the lanes' chunks."""
    original = getattr(_da, name)

    def create(shape, dtype=_np.float64, **kwargs):
        lanes = _lanes_of(shape)
        if lanes is None:
            return original(shape, dtype=dtype, **kwargs)
        return _selected(_da.full_like(lanes.mask, fill, dtype=dtype), lanes.mask)
    create.__name__ = create.__qualname__ = name
    return create


def lane_counts(mask):
    """The number of lanes the 1-D ``mask`` selects in each of its blocks, computed once and kept on the mask.

    An early compute, the one a :class:`LaneCount` costs where a shape needs its value (``arange`` of it:
    the segment form of a sum over ``j`` inside a branch, hmc_like_potential's ``xp.repeat(xp.arange(
    ix.shape[0]), n_j)``, ``xp.tile(j, (ix.shape[0],))``, ``xp.reshape(..., (ix.shape[0], n_j))``): the mask's
    count per block, computed on the current scheduler (reading the data the mask reads); ``xp.computed_early``
    records it for ``f.chunking``.  No lazy form: the lanes' position is a cumulative sum of the mask, but
    reading ``i2[seg]`` (an array of unknown chunks, indexed by an array) and reshaping to ``(ix.shape[0], n_j)``
    both need the sizes.  With the counts known, the lanes' arrays (``take``, ``full``, ``zeros``) have known
    chunks, one block per block of the mask, and every shape of the count is a number."""
    counts = getattr(mask, "coarsen_lane_counts", None)
    if counts is None:
        per_block = _da.map_blocks(_count_block, mask, chunks=((1,) * mask.numblocks[0],), dtype=_np.int64)
        counts = tuple(_builtins.int(c) for c in per_block.compute())
        mask.coarsen_lane_counts = counts
        xp.computed_early.append("the number of lanes a branch selects (an arange of them)")
    return counts


def _count_block(block):
    return _np.array([_np.count_nonzero(block)], dtype=_np.int64)


def _known_counts(mask):
    """The lanes' counts per block where :func:`lane_counts` computed them already, else None."""
    return getattr(mask, "coarsen_lane_counts", None)


def _sized(n):
    """``n``, or where it is a :class:`LaneCount`, the number of its lanes (computed: :func:`lane_counts`)."""
    return _builtins.sum(lane_counts(n.mask)) if isinstance(n, LaneCount) else n


def _sized_shape(shape):
    return tuple(_sized(n) for n in shape) if isinstance(shape, tuple) else _sized(shape)


def _arange(*args, **kwargs):
    if len(args) == 1 and isinstance(args[0], LaneCount) and not kwargs:
        counts = lane_counts(args[0].mask)              # (the lanes' positions, in the lanes' chunks)
        return _da.arange(_builtins.sum(counts), chunks=(counts,))
    return _da.arange(*(_sized(a) for a in args), **kwargs)


def _tile(a, reps):
    return _da.tile(a, _sized_shape(reps))


def _selected(a, mask):
    """``a[mask]`` along the first axis, ``a`` in the chunks of the 1-D ``mask``: in known chunks where the
    lanes' counts are known (a 1-D ``a``), else of unknown sizes, one block per block of the mask."""
    a = lane_aligned(a, mask)
    counts = _known_counts(mask)
    if counts is None or a.ndim != 1 or a.numblocks[0] != len(counts):
        return a[mask]
    return _da.map_blocks(_select_block, a, mask, chunks=(counts,), dtype=a.dtype)


def _select_block(block, mask):
    return block[mask]


def _full(shape, fill_value, dtype=None, **kwargs):
    lanes = _lanes_of(shape)
    if lanes is None:
        return _da.full(shape, fill_value, dtype=dtype, **kwargs)
    return _selected(_da.full_like(lanes.mask, fill_value, dtype=dtype or _np.asarray(fill_value).dtype),
                     lanes.mask)


def _asarray(a, dtype=None, copy=None, device=None):
    """``asarray``; with ``copy=True`` a new array object even where ``a`` is already one (dask's
    ``asarray`` returns its argument): the generated code writes into such a copy (``z[i] = v``), and
    dask's assignment rebinds the graph of the object written, which must not be the caller's."""
    if isinstance(a, (list, tuple)) and any(isinstance(e, _da.Array) for e in a):
        a = _da.stack([_da.asarray(e) for e in a])         # (a literal of reduced values: still lazy)
    out = _da.asarray(a)
    if dtype is not None and out.dtype != dtype:
        return out.astype(dtype)
    return out.copy() if copy else out


def _astype(a, dtype, copy=True):
    return _da.asarray(a).astype(dtype)


def _cumulative(scan, identity):
    def cumulative(x, axis=None, dtype=None, include_initial=False):
        x = _da.asarray(x)
        if axis is None:
            axis = 0
        out = scan(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis] = 1
            first = _da.full(tuple(shape), identity, dtype=out.dtype)
            out = _da.concatenate([first, out], axis=axis)
        return out
    return cumulative


def _where(condition, a, b):
    """``where``; of a Python (or NumPy) truth value choosing between two numbers or 0-d arrays, that one, as
    Python's ``if`` chooses.  The printer writes a scalar choice between two names as ``choice =
    xp.where(t2, a, b)`` for this backend (``lower/branches.py``): lazy where ``t2`` is a reduced value (a
    0-d Dask array), and where it is a plain truth value the choice stays the plain number it was (a size
    computed from argument shapes must stay a Python int: ``arange``, ``full`` and slices take it)."""
    if isinstance(condition, (_builtins.bool, _np.bool_)) and _np.ndim(a) == 0 and _np.ndim(b) == 0:
        return a if condition else b
    return _da.where(condition, a, b)


def _reshape(x, shape):
    return _da.reshape(_da.asarray(x), _sized_shape(shape))


def _concat(arrays, axis=0):
    return _da.concatenate(list(arrays), axis=axis)


def _isdtype(dtype, kind):
    return _np.isdtype(dtype, kind)


def _permute_dims(x, axes):
    return _da.transpose(x, axes)


def _matrix_transpose(x):
    return _da.swapaxes(x, -1, -2)


def _missing(name):
    """A name ``dask.array`` has no lazy form of (``argsort``, ``linalg.eigh``, ``ufunc.at``):
    an error that says so, which the runtime reports at the user's line (never an eager NumPy call that
    would load the whole array into one process)."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"{name} has no lazy form over Dask arrays in coarsen_nb; compute this part "
                              "with NumPy arrays (np.asarray of the argument) or write it elementwise")


def _arg_extremum(find):
    """``dask.array``'s ``argmax``/``argmin`` of a NumPy array too: a call not run chunk by chunk runs the module on
    its NumPy arguments, which the rest of ``dask.array`` takes, but its arg reductions read ``x.chunks``."""
    def arg(x, *args, **kwargs):
        return find(_da.asarray(x), *args, **kwargs)
    return arg


def _namespace(name, module):
    """``module``'s public names in a namespace of their own whose missing names raise as ``_missing`` says."""
    space = _types.ModuleType(name)
    space.__dict__.update({k: getattr(module, k) for k in dir(module) if not k.startswith("__")})
    space.__getattr__ = lambda attr: _missing(f"{name}.{attr}")
    return space


xp.Lanes = Lanes
xp.zeros, xp.ones, xp.empty = (_lane_creation(n, v) for n, v in (("zeros", 0), ("ones", 1), ("empty", 0)))
xp.full = _full
xp.arange = _arange
xp.tile = _tile
xp.computed_early = []     # (what a call computed while building its graph: lane_counts; the runtime empties it)
xp.__getattr__ = _missing
xp.linalg = _namespace("linalg", _da.linalg)
xp.asin, xp.acos, xp.atan, xp.atan2 = _da.arcsin, _da.arccos, _da.arctan, _da.arctan2
xp.asinh, xp.acosh, xp.atanh, xp.pow = _da.arcsinh, _da.arccosh, _da.arctanh, _da.power
xp.permute_dims = _permute_dims
xp.matrix_transpose = _matrix_transpose
xp.broadcast_shapes = _np.broadcast_shapes
xp.nonzero = _nonzero
xp.take = _take
xp.asarray = _asarray
xp.astype = _astype
xp.cumulative_sum = _cumulative(_da.cumsum, 0)
xp.cumulative_prod = _cumulative(_da.cumprod, 1)
xp.concat = _concat
xp.reshape = _reshape
xp.where = _where
xp.isdtype = _isdtype
xp.argmax, xp.argmin = _arg_extremum(_da.argmax), _arg_extremum(_da.argmin)


#: ``math``'s float functions that stay lazy on a 0-d Dask array (``math.log(total)`` of a sum over the chunks):
#: Python's own function applied in the graph's task, so the value is the NumPy backend's to the bit and a
#: domain error (``math.log(0.0)``, ``math.exp(1000.0)``) raises as Python's does, when the result is
#: computed; functions returning an int or a bool (``floor``, ``isfinite``) are not here: their result
#: decides Python code, which computes it
_LAZY_MATH = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "atan2", "copysign", "pow", "hypot",
              "erf", "erfc", "gamma", "lgamma")


def _lazy_math_function(name, eager):
    def task(*args):
        return _np.float64(eager(*args))

    def function(*args):
        if any(isinstance(a, _da.Array) for a in args) and all(
                not isinstance(a, _da.Array) or a.ndim == 0 for a in args):
            return _da.map_blocks(task, *args, dtype=_np.float64, meta=_np.float64(0.0))
        return eager(*args)
    task.__name__ = task.__qualname__ = function.__name__ = function.__qualname__ = name
    return function


def _lazy_math():
    """A ``math`` whose float functions stay lazy on 0-d Dask arrays (``_LAZY_MATH``), every other name Python's."""
    space = _types.ModuleType("math")
    space.__dict__.update({k: getattr(_math, k) for k in dir(_math) if not k.startswith("__")})
    for name in _LAZY_MATH:
        setattr(space, name, _lazy_math_function(name, getattr(_math, name)))
    return space


def float(x=0.0):       # noqa: A001 (the generated code's float(), lazy on a Dask array)
    """Python's ``float(x)``; of a Dask array (a reduced value, 0-d), that array cast lazily to float64."""
    if isinstance(x, _da.Array) and x.ndim == 0:
        return x.astype(_np.float64)
    return _builtins.float(x)


math = _lazy_math()

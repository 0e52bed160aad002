"""The dask backend's own versions of helpers whose NumPy-backend text runs eagerly or writes in place.

A dask module's statements must stay lazy: a Python ``if`` on an array's value (``if xp.any(far):``)
would compute the graph built so far, and an element write through a mask of unknown size has no lazy
form.  The module writer uses an entry of :data:`DASK_HELPERS` in place of the NumPy backend's helper of
that name (``Backend.load_helpers``), as numba's own helpers are used (:mod:`.numba_helpers`).

* ``_put`` writes masked lanes back chunk by chunk (``_put_lanes`` is the NumPy code of one chunk): the
  values ``v`` were computed from ``xp.take(a, lanes)``, the selected elements of each chunk in order,
  so the k-th chunk of ``v`` belongs to the k-th chunk of the mask (``lower/dask_xp.py``, ``Lanes``).
* ``_scatter_add``, ``_window_add``, ``_block_add`` add into the array they are given, as NumPy's in-place
  adds do: ``b[...] = b + ...`` rebinds the graph of the caller's object (``b += ...`` would bind a new
  array to the helper's own name, and the caller would never see it: brachistochrone's gradient was wrong).
* ``_logsumexp`` is dask's reductions (SciPy's would compute the whole array into one process).
* ``_scatter_sum`` puts its weights in the chunks of its indices (dask's ``bincount`` requires it).
* ``_softplus``, ``_sigmoid`` and ``_ieee_div`` (the scalar helpers, a Python ``if`` on their argument) and
  ``_erfc`` (an ``if xp.any(mid):`` over its lanes) are, given a Dask array, ``where`` of both arms: each
  arm is a few elementwise operations, made safe on the elements it is not selected for (the argument
  clipped, a divisor of 0 replaced by 1), so both are evaluated and the graph stays lazy; the same
  formulas, so the same values.  Given Python numbers the scalar helpers run the NumPy backend's code.
* ``_lin_scan`` keeps a coefficient that is not a Dask array a NumPy number: its doubling loop runs while
  the coefficient's power is not 0 (``while sh < n and c != 0:``), which on a 0-d Dask array would compute
  it at every pass (exp_smoothing, iir_filter: ``alpha`` is a number).  A coefficient that is a Dask array
  (reduced from the data) still decides the loop's trip count, so it is computed there: eager, named in
  :mod:`coarsen_nb.dask_arrays`.
* ``_gather_points`` reads ``m[i, j]`` by several index arrays at once (NumPy's pointwise read), which Dask's
  indexing refuses ("Don't yet support nd fancy indexing"): the dask printer calls it where NumPy's module
  indexes (``FormPrinting.indexed``).  ``_python_sign`` is Python's sign of a number (the printer's scalar
  ``1.0 if a > 0 else ...``), on a 0-d Dask array ``where`` of the same choices, so the graph stays lazy.
* ``_loop_max``, ``_loop_min`` and their segment forms (a loop's extremum with the first of equal zeros,
  :mod:`coarsen_nb.lower.extrema_helpers`) settle each result with ``where``, not behind ``if xp.any(m == 0):``.
* ``_erf`` evaluates Cephes' tail form on every element, with ``|x|`` clipped to [1, 6] so that it is
  finite everywhere, and selects it with ``where`` where ``|x| > 1``: the same formulas, so the same
  values as the NumPy helper, without asking the data which branch any element takes.

The functions are written against the dask module's ``xp`` and ``_np`` (``lower/dask_xp.py`` binds both),
which this file binds the same way, so that the tests call them as they are.
"""

from __future__ import annotations  # noqa: I001 (the own-module block below stays last)

import inspect

import numpy as _np

from coarsen_nb.lower.dask_xp import lane_aligned, lanes_chunked, math, xp

# <own-module>
# (the generated module defines the NumPy helpers _steps, _erfc_ratio, _exp_minus_square beside these: these
# imports give this file, imported on its own by the tests, the same names; tests/test_import_graph.py skips
# such a block)
from coarsen_nb.lower.array_helpers import _steps  # noqa: E402
from coarsen_nb.lower.extrema_helpers import _first_zeros, _segment_first_zeros  # noqa: E402
from coarsen_nb.lower.index_helpers import _segment_max, _segment_min  # noqa: E402
from coarsen_nb.lower.dask_xp_forms import _known_values  # noqa: E402 (the prologue's, in a generated module)
from coarsen_nb.lower.special_helpers import _erfc_ratio, _exp_minus_square  # noqa: E402

# </own-module>


def _put(x, idx, v):
    """x[idx] = v as a new lazy array: lanes of a 1-D mask chunk by chunk, any other index by dask's
    own assignment (which copies: the NumPy helper writes in place, and its callers use the result), its
    index arrays first made NumPy values and slices (``_write_index``: Dask's assignment takes neither a Dask
    index array nor some NumPy ones), or where they are not slices, ``_put_scattered``."""
    if len(idx) == 1 and isinstance(idx[0], xp.Lanes):
        mask = idx[0].mask
        x = xp.asarray(x)
        if x.ndim != 1:
            raise NotImplementedError("masked lanes written into an array of more than one axis")
        x = lane_aligned(x, mask)
        return xp.map_blocks(_put_lanes, x, mask, lanes_chunked(v, mask), dtype=x.dtype)
    x = xp.asarray(x).copy()
    index = _write_index(idx)
    if index is None:
        return _put_scattered(x, idx, v)
    index, v = _ascending(x.shape, index, v)
    x[index] = v
    return x


def _ascending(shape, index, v):
    """``index`` (integers and slices) with its slices of negative step made ascending, and ``v`` reversed
    along their axes, so that ``x[index] = v`` writes the same: Dask's assignment fails on a negative step
    after an integer (``x[1, ::-1] = v``: IndexError)."""
    if not any(isinstance(part, slice) and (part.step or 1) < 0 for part in index):
        return index, v
    target = _np.broadcast_to(_np.float64(0.0), shape)[index].shape
    v = xp.broadcast_to(xp.asarray(v), target)
    out, flips, axis = [], [], 0
    for dim, part in zip(shape, index, strict=False):
        if isinstance(part, slice):
            span = range(*part.indices(dim))
            if part.step is not None and part.step < 0 and len(span) > 0:
                part = slice(span[-1], span[0] + 1, -span.step)
                flips.append(axis)
            axis += 1
        out.append(part)
    if flips:
        v = xp.flip(v, axis=tuple(flips))
    return tuple(out) + tuple(index[len(out):]), v


def _write_index(idx):
    """``idx`` (integers, slices, index arrays) with its index arrays as slices, where they are arithmetic
    progressions known without the data: one 1-D array, or several adjacent ones each varying along its own
    axis only (an open mesh: ``k[:, None], j[None, :]``), which select what the slices select, in the same
    order and shape.  None where they are not (``_put_scattered`` writes them); an index array computed from
    the data raises, saying so."""
    known = []
    for part in idx:
        if isinstance(part, xp.Array) or isinstance(part, (list, _np.ndarray)):
            values = _known_values(part)
            if values is None:
                raise NotImplementedError("an element write through an index array computed from the data has "
                                          "no lazy form over Dask arrays in coarsen_nb")
            part = values.astype(_np.int64)
        known.append(part)
    arrays = [k for k, part in enumerate(known) if isinstance(part, _np.ndarray)]
    if not arrays:
        return tuple(known)
    rank = len(arrays)
    if arrays != list(range(arrays[0], arrays[0] + rank)):
        return None
    out = list(known)
    for axis, k in enumerate(arrays):
        part = known[k]
        if rank > 1 and (part.ndim != rank or any(n != 1 for a, n in enumerate(part.shape) if a != axis)):
            return None
        if rank == 1 and part.ndim != 1:
            return None
        out[k] = _progression(part.reshape(-1))
        if out[k] is None:
            return None
    return tuple(out)


def _progression(values):
    """The slice selecting ``values`` in order (non-negative, an arithmetic progression), else None."""
    if values.size == 0 or (values < 0).any():
        return None
    step = int(values[1] - values[0]) if values.size > 1 else 1
    if step == 0 or (values != values[0] + step * _np.arange(values.size)).any():
        return None
    stop = int(values[-1]) + step
    return slice(int(values[0]), stop if stop >= 0 else None, step)


def _put_scattered(x, idx, v):
    """x[idx] = v for index arrays that are not slices, known without the data: where each element of ``x``
    takes its value from (NumPy's ``x[idx] = v`` on an array of positions: the last write wins, as NumPy's),
    then ``where`` of the values gathered there and ``x``."""
    known = tuple(part if isinstance(part, (int, slice)) or part is None or part is Ellipsis
                  else _known_values(part).astype(_np.int64) for part in idx)
    positions = _np.arange(x.size).reshape(x.shape)[known]
    source = _np.full(x.size, -1)
    source[positions.reshape(-1)] = _np.arange(positions.size)
    hit = source >= 0
    values = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=x.dtype), positions.shape), (-1,))
    gathered = xp.reshape(values[_np.where(hit, source, 0)], x.shape).rechunk(x.chunks)
    return xp.where(_np.reshape(hit, x.shape), gathered, x)


def _put_lanes(chunk, mask, values):
    """One chunk of ``_put``: ``chunk`` with the values of its selected lanes written (NumPy, in a task)."""
    out = _np.array(chunk, copy=True)
    out[mask] = values
    return out


def _gather_points(a, index):
    """``a[index]`` read point by point by one index array per axis, broadcast together (``m[i, j]``): index
    arrays known without the data (``_known_values``) through ``a.vindex``; others as the 1-D read of ``a``
    flattened at each point's row-major position, each index made non-negative as NumPy reads it, and an
    index outside its axis raising IndexError when computed (``_points_inside``), as NumPy's read does, rather
    than reading a neighbour.  Not a Dask array, fewer than two index arrays, or an
    index with slices: ``a[index]`` (Dask's own indexing)."""
    plain = any(isinstance(p, slice) or p is None or p is Ellipsis for p in index)
    if not isinstance(a, xp.Array) or plain or len(index) != a.ndim or sum(_np.ndim(p) > 0 for p in index) < 2:
        return a[index]
    known = [_known_values(p) for p in index]
    if all(k is not None for k in known):
        return a.vindex[tuple(k.astype(_np.int64) for k in known)]
    flat, outside = 0, False
    for p, n in zip(index, a.shape, strict=True):
        p = xp.asarray(p)
        flat = flat * n + xp.where(p < 0, p + n, p)
        outside = outside | (p < -n) | (p >= n)
    flat = xp.map_blocks(_points_inside, flat, outside, dtype=flat.dtype)
    return xp.reshape(xp.reshape(a, (-1,))[xp.reshape(flat, (-1,))], flat.shape)


def _points_inside(flat, outside):
    """One chunk of ``_gather_points``' positions, raising IndexError (in the task) where an index is outside
    its axis: the 1-D read of a position past the end is not sure to raise in every chunking."""
    if _np.any(outside):
        raise IndexError("an index of a pointwise read is out of bounds for its axis")
    return flat


def _python_sign(a):
    """Python's sign of a number, ``1.0 if a > 0 else (-1.0 if a < 0 else 0.0)`` (nan's is 0.0); of a 0-d
    Dask array (a reduced value) ``where`` of the same choices, rather than the ``if`` that computes it."""
    if isinstance(a, xp.Array):
        return xp.where(a > 0, 1.0, xp.where(a < 0, -1.0, 0.0))
    return 1.0 if a > 0 else (-1.0 if a < 0 else 0.0)


def _erf(x):
    """erf, elementwise, to full double precision: the NumPy helper's Cephes forms, the tail's selected
    by ``where`` (no data-dependent branch, so the graph stays lazy)."""
    x = xp.asarray(x, dtype=xp.float64)
    s = xp.clip(x, -1.0, 1.0)
    z = s * s
    t = (((9.60497373987051638749 * z + 90.0260197203842689217) * z + 2232.00534594684319226) * z
         + 7003.32514112805075473) * z + 55592.3013010394962768
    u = ((((z + 33.5617141647503099647) * z + 521.357949780152679795) * z + 4594.32382970980127987) * z
         + 22629.0000613890934246) * z + 49267.3942608635921086
    b = xp.clip(xp.abs(x), 1.0, 6.0)
    tail = xp.copysign(1.0 - xp.exp(-(b * b)) * _erfc_ratio(b), x)
    return xp.where(xp.abs(x) > 1.0, tail, s * t / u)


def _softplus(z):
    """log(1 + exp(z)) without overflow: the NumPy backend's two arms, on a Dask array max(z, 0) plus the
    log1p(exp(-|z|)) both share (adding 0.0 to the arm for z <= 0 changes nothing)."""
    if not isinstance(z, xp.Array):
        return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))
    return xp.maximum(z, 0.0) + xp.log1p(xp.exp(-xp.abs(z)))


def _sigmoid(z):
    """1 / (1 + exp(-z)) without overflow: on a Dask array the NumPy backend's two arms from e = exp(-|z|)
    (exp(-z) for z >= 0, exp(z) below), selected by ``where``."""
    if not isinstance(z, xp.Array):
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        ez = math.exp(z)
        return ez / (1.0 + ez)
    e = xp.exp(-xp.abs(z))
    return xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _ieee_div(a, b):
    """a / b as IEEE 754 divides (+-inf, nan where Python raises): on Dask arrays the quotient by b where
    b != 0 (divided by 1 elsewhere, never computed as 0's quotient), else nan for a nan or zero a and
    +-inf with the signs' product."""
    if not (isinstance(a, xp.Array) or isinstance(b, xp.Array)):
        if b != 0:
            return a / b
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    nonzero = b != 0
    edge = xp.where((a != a) | (a == 0), math.nan, xp.copysign(math.inf, a) * xp.copysign(1.0, b))
    return xp.where(nonzero, a / xp.where(nonzero, b, 1.0), edge)


def _erfc(x):
    """erfc, elementwise: the NumPy helper's three forms (1 - erf for |x| <= 1, Cephes' ratio below 8, the
    asymptotic series beyond), each evaluated on every element with |x| clipped into its own range and
    selected by ``where``, rather than on the lanes ``if xp.any(mid):`` finds (which would compute them)."""
    x = xp.asarray(x, dtype=xp.float64)
    a = xp.abs(x)
    out = 1.0 - _erf(xp.clip(a, 0.0, 1.0))
    b = xp.clip(a, 1.0, 8.0)
    mid = _exp_minus_square(b) * _erfc_ratio(b)
    b = xp.maximum(a, 8.0)
    u = 1.0 / (2.0 * b * b)
    term = xp.ones_like(b)
    total = xp.ones_like(b)
    for k in range(1, 17):
        term = -term * (2 * k - 1) * u
        total = total + term
    far = _exp_minus_square(b) / (b * 1.7724538509055160273) * total
    out = xp.where((a > 1.0) & (a < 8.0), mid, xp.where(a >= 8.0, far, out))
    return xp.where(x < 0, 2.0 - out, out)


def _lin_scan(a, b, init, n):
    """The NumPy helper's doubling scan of s <- a[k]*s + b[k] (``lower/array_helpers.py``), with a number
    ``a`` kept a NumPy float64 rather than made a 0-d Dask array: the loop's test ``c != 0`` is then on a
    number and computes nothing; the same products, so the same values."""
    b = _steps(b, n)
    if n == 0:
        return b
    s = xp.concat([xp.reshape(xp.asarray(init, dtype=xp.float64), (1,)), b[:n - 1]])
    a = xp.asarray(a, dtype=xp.float64) if isinstance(a, xp.Array) or _np.ndim(a) else _np.float64(a)
    sh = 1
    if a.ndim == 0:
        c = a
        while sh < n and c != 0:
            s[sh:] += c * s[:-sh]
            c = c * c
            c = c if abs(c) >= 2.2250738585072014e-308 else 0.0
            sh *= 2
        return s
    c = xp.concat([xp.ones(1), a[:n - 1]])
    while sh < n:
        s[sh:] = c[sh:] * s[:-sh] + s[sh:]
        c[sh:] = c[sh:] * c[:-sh]
        sh *= 2
    return s


def _scatter_sum(idx, v, n):
    """Sums of v at each index of range(n) (0 <= idx < n, repeats accumulate): the adjoint of a gather.
    Dask's bincount needs its weights in the chunks of the indices."""
    idx = xp.asarray(idx)
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), idx.shape).rechunk(idx.chunks)
    return xp.bincount(idx, weights=v, minlength=n)


def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(exp(a))) over axis, shifted by the maximum (a maximum that is not finite shifts by 0, as
    SciPy's): SciPy's logsumexp would turn a Dask array into one NumPy array, so it is written here with
    dask's reductions, a tree over the chunks."""
    a = xp.asarray(a, dtype=xp.float64)
    m = xp.max(a, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0)
    out = xp.log(xp.sum(xp.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else xp.squeeze(out, axis=axis)


def _scatter_add(b, lo, n, step, v):
    """b[lo + step*k] += v[k] for k < n (the adjoint of _take), written into ``b`` itself: the caller's
    array object, as NumPy's in-place add writes it (``b += ...`` would bind a new Dask array to this
    function's own name only)."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < b.shape[0]:
        b[lo:hi + 1:step] += v
    elif n > 0:
        b[...] = b + _scatter_sum((lo + step * xp.arange(n)) % b.shape[0], v, b.shape[0])


def _window_add(b, lo, n0, n1, v):
    """b[lo + i + j] += v[i, j] (the adjoint of _window), written into ``b`` itself (see _scatter_add)."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1))
    if n0 > 0 and n1 > 0:
        flat = xp.reshape((lo + xp.reshape(xp.arange(n0), (-1, 1)) + xp.reshape(xp.arange(n1), (1, -1)))
                          % b.shape[0], (-1,))
        b[...] = b + _scatter_sum(flat, xp.reshape(v, (-1,)), b.shape[0])


def _block_add(b, lo0, n0, lo1, n1, v):
    """b[lo0 + i, lo1 + j] += v[i, j] (the adjoint of _block), written into ``b`` itself (see _scatter_add)."""
    if 0 <= lo0 and lo0 + n0 <= b.shape[0] and 0 <= lo1 and lo1 + n1 <= b.shape[1]:
        b[lo0:lo0 + n0, lo1:lo1 + n1] += v
    elif n0 > 0 and n1 > 0:
        i = (lo0 + xp.arange(n0))[:, None] % b.shape[0]
        j = (lo1 + xp.arange(n1))[None, :] % b.shape[1]
        flat = xp.reshape(i * b.shape[1] + j, (-1,))
        v = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1)), (-1,))
        b[...] = b + xp.reshape(_scatter_sum(flat, v, b.shape[0] * b.shape[1]), b.shape)


def _loop_max(v, axis=None):
    """xp.max(v, axis=axis), a zero as the first zero of its row (lower/extrema_helpers.py): settled by ``where``
    everywhere, as ``if xp.any(m == 0):`` would compute the graph."""
    return _first_zeros(xp.max(v, axis=axis), v, axis)


def _loop_min(v, axis=None):
    """xp.min(v, axis=axis), a zero as the first zero of its row, settled by ``where`` (see _loop_max)."""
    return _first_zeros(xp.min(v, axis=axis), v, axis)


def _loop_segment_max(seg, v, n):
    """_segment_max(seg, v, n), a zero as the first zero of its segment, settled by ``where`` (see _loop_max)."""
    return _segment_first_zeros(_segment_max(seg, v, n), seg, v, n)


def _loop_segment_min(seg, v, n):
    """_segment_min(seg, v, n), a zero as the first zero of its segment, settled by ``where`` (see _loop_max)."""
    return _segment_first_zeros(_segment_min(seg, v, n), seg, v, n)


#: helper name -> this backend's text of it (``Backend.load_helpers``); ``_erfc_ratio`` is the NumPy
#: helper's own (arithmetic only, so lazy as it is)
DASK_HELPERS = {f.__name__: inspect.getsource(f) for f in (
    _put, _write_index, _progression, _ascending, _put_scattered, _put_lanes, _erf, _softplus, _sigmoid, _ieee_div,
    _erfc, _lin_scan, _scatter_sum, _logsumexp,
    _scatter_add, _window_add, _block_add, _gather_points, _points_inside, _python_sign,
    _loop_max, _loop_min, _loop_segment_max, _loop_segment_min)}

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
* ``_erf`` evaluates Cephes' tail form on every element, with ``|x|`` clipped to [1, 6] so that it is
  finite everywhere, and selects it with ``where`` where ``|x| > 1``: the same formulas, so the same
  values as the NumPy helper, without asking the data which branch any element takes.

The functions are written against the dask module's ``xp`` and ``_np`` (``lower/dask_xp.py`` binds both),
which this file binds the same way, so that the tests call them as they are.
"""

from __future__ import annotations

import inspect

import numpy as _np

from coarsen_nb.lower.dask_xp import xp

# <own-module>
# (the generated module defines the NumPy helper _erfc_ratio beside these: this import gives this file,
# imported on its own by the tests, the same name; tests/test_import_graph.py skips such a block)
from coarsen_nb.lower.special_helpers import _erfc_ratio  # noqa: E402

# </own-module>


def _put(x, idx, v):
    """x[idx] = v as a new lazy array: lanes of a 1-D mask chunk by chunk, any other index by dask's
    own assignment (which copies: the NumPy helper writes in place, and its callers use the result)."""
    if len(idx) == 1 and isinstance(idx[0], xp.Lanes):
        mask = idx[0].mask
        x = xp.asarray(x)
        if x.ndim != 1:
            raise NotImplementedError("masked lanes written into an array of more than one axis")
        x = x.rechunk({0: mask.chunks[0]})
        return xp.map_blocks(_put_lanes, x, mask, v, dtype=x.dtype)
    x = xp.asarray(x).copy()
    x[idx] = v
    return x


def _put_lanes(chunk, mask, values):
    """One chunk of ``_put``: ``chunk`` with the values of its selected lanes written (NumPy, in a task)."""
    out = _np.array(chunk, copy=True)
    out[mask] = values
    return out


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


#: helper name -> this backend's text of it (``Backend.load_helpers``); ``_erfc_ratio`` is the NumPy
#: helper's own (arithmetic only, so lazy as it is)
DASK_HELPERS = {f.__name__: inspect.getsource(f) for f in (
    _put, _put_lanes, _erf, _scatter_sum, _logsumexp, _scatter_add, _window_add, _block_add)}

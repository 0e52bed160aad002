"""The dask backend's own versions of helpers whose NumPy-backend text runs eagerly or writes in place.

A dask module's statements must stay lazy: a Python ``if`` on an array's value (``if xp.any(far):``)
would compute the graph built so far, and an element write through a mask of unknown size has no lazy
form.  The module writer uses an entry of :data:`DASK_HELPERS` in place of the NumPy backend's helper of
that name (``Backend.load_helpers``), as numba's own helpers are used (:mod:`.numba_helpers`).

* ``_put`` writes masked lanes back chunk by chunk (``_put_lanes`` is the NumPy code of one chunk): the
  values ``v`` were computed from ``xp.take(a, lanes)``, the selected elements of each chunk in order,
  so the k-th chunk of ``v`` belongs to the k-th chunk of the mask (``lower/dask_xp.py``, ``Lanes``).
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


#: helper name -> this backend's text of it (``Backend.load_helpers``); ``_erfc_ratio`` is the NumPy
#: helper's own (arithmetic only, so lazy as it is)
DASK_HELPERS = {f.__name__: inspect.getsource(f) for f in (_put, _put_lanes, _erf, _scatter_sum, _logsumexp)}

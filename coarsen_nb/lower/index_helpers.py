"""The generated module's helpers for indexing: gathers, scatters, segments, windows and blocks.

Each is a plain function written for the module's array namespace ``xp``, run by the tests as it is here;
the module writer copies its text (``inspect.getsource``) into a generated module that calls it
(:mod:`coarsen_nb.lower.helpers`).  The array API standard has no scatter (no ``ufunc.at``, no
``bincount``, no assignment through integer arrays): these helpers take NumPy's and CuPy's fast path
where the namespace has it, and otherwise a standard-only form: sort, then reduce a table of the
sorted runs.  A read is a view where it is in bounds, Python's indexing (negative indices wrap)
otherwise.
"""

from __future__ import annotations

import math

import numpy as xp


def _take(x, lo, n, step):
    """x[lo + step*k] for k < n (elements, or rows of a matrix): a view when the range is in bounds,
    Python's indexing otherwise."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < x.shape[0]:
        return x[lo:hi + 1:step, ...]
    return x[lo + step * xp.arange(n)]


def _put(x, idx, v):
    """x[idx] = v for a tuple of index arrays (Python's negative indices; the last write wins).

    In place where the namespace assigns through integer arrays (NumPy, CuPy); otherwise a new array,
    from the last write to each element after a stable sort of the flat indices.
    """
    if hasattr(xp, "bincount"):
        x[idx] = v
        return x
    flat = 0
    for i, size in zip(idx, x.shape):
        flat = flat * size + xp.asarray(i) % size
    flat = xp.reshape(flat, (-1,))
    v = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=x.dtype), flat.shape), (-1,))
    if flat.shape[0] == 0:
        return x
    order = xp.argsort(flat, stable=True)
    s, vs = xp.take(flat, order), xp.take(v, order)
    last = xp.clip(xp.searchsorted(s, xp.arange(x.size), side="right") - 1, 0, None)
    hit = xp.take(s, last) == xp.arange(x.size)
    return xp.reshape(xp.where(hit, xp.take(vs, last), xp.reshape(x, (-1,))), x.shape)


def _index_add(b, idx, v):
    """b with v added at x[idx] for a tuple of ints and int arrays (repeats accumulate, Python's negative
    indices), the axes after them whole: the adjoint of the gather x[idx]."""
    flat = xp.asarray(0)
    for i, size in zip(idx, b.shape):
        flat = flat * size + xp.asarray(i) % size
    inner = 1
    for size in b.shape[len(idx):]:
        inner *= size
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), flat.shape + b.shape[len(idx):])
    flat = xp.reshape(flat, (-1, 1)) * inner + xp.reshape(xp.arange(inner), (1, -1))
    total = _scatter_sum(xp.reshape(flat, (-1,)), xp.reshape(v, (-1,)), b.size)
    return b + xp.reshape(total, b.shape)


def _add_at(b, ix, v):
    """b[ix] += v in place, at the distinct positions of the int array ix: a maximum's adjoint adds at its one
    element, not through a one-hot of b's size.  Where the namespace assigns through integer arrays (NumPy,
    CuPy, Dask) that is the statement itself; the standard assigns through integers only: one element at a
    time (ix has few)."""
    if hasattr(xp, "bincount"):
        b[ix] += v
        return
    v = xp.broadcast_to(xp.asarray(v, dtype=b.dtype), ix.shape)
    for k in range(ix.shape[0]):
        b[int(ix[k])] += v[k]


def _scatter_add(b, lo, n, step, v):
    """b[lo + step*k] += v[k] for k < n (the adjoint of _take)."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < b.shape[0]:
        b[lo:hi + 1:step] += v
    elif n > 0:
        b += _scatter_sum((lo + step * xp.arange(n)) % b.shape[0], v, b.shape[0])


def _scatter_sum(idx, v, n):
    """Sums of v at each index of range(n) (0 <= idx < n, repeats accumulate): the adjoint of a gather."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), idx.shape)
    if hasattr(xp, "bincount"):
        return xp.bincount(idx, weights=v, minlength=n)
    order = xp.argsort(idx)
    return _segment_sum(xp.take(idx, order), xp.take(v, order), n)


def _segments(seg, v, n, fill):
    """The runs of the sorted segment ids seg (0 <= seg < n) as rows of a table, padded with fill:
    row j holds the values v[k] with seg[k] == j.  Standard-only; memory n times the longest run."""
    t = xp.arange(n)
    start = xp.searchsorted(seg, t)
    count = xp.searchsorted(seg, t, side="right") - start
    if seg.shape[0] == 0 or n == 0:
        return xp.full((n, 1), fill)
    width = int(xp.max(count))
    col = xp.arange(max(width, 1))
    inside = col < count[:, None]
    pos = xp.where(inside, start[:, None] + col, 0)
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), seg.shape)
    return xp.where(inside, xp.reshape(xp.take(v, xp.reshape(pos, (-1,))), pos.shape), fill)


def _segment_sum(seg, v, n):
    """Sums of v over the runs of the sorted segment ids seg (0 <= seg < n)."""
    if hasattr(xp, "bincount"):
        return xp.bincount(seg, weights=v, minlength=n)
    return xp.sum(_segments(seg, v, n, 0.0), axis=1)


def _segment_prod(seg, v, n):
    """Prod of v over the runs of the sorted segment ids seg (1.0 for an empty run)."""
    if hasattr(xp.multiply, "at"):
        out = xp.full(n, 1.0)
        xp.multiply.at(out, seg, v)
        return out
    return xp.prod(_segments(seg, v, n, 1.0), axis=1)


def _segment_max(seg, v, n):
    """Max of v over the runs of the sorted segment ids seg (-math.inf for an empty run)."""
    if hasattr(xp.maximum, "at"):
        out = xp.full(n, -math.inf)
        xp.maximum.at(out, seg, v)
        return out
    return xp.max(_segments(seg, v, n, -math.inf), axis=1)


def _segment_min(seg, v, n):
    """Min of v over the runs of the sorted segment ids seg (math.inf for an empty run)."""
    if hasattr(xp.minimum, "at"):
        out = xp.full(n, math.inf)
        xp.minimum.at(out, seg, v)
        return out
    return xp.min(_segments(seg, v, n, math.inf), axis=1)


def _window(x, lo, n0, n1):
    """x[lo + i + j] for i < n0, j < n1 as an (n0, n1) array (the windows of a correlation): a strided
    view when in bounds and the namespace has one, a gather otherwise."""
    if n0 > 0 and n1 > 0 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] and hasattr(xp, "lib"):
        return xp.lib.stride_tricks.sliding_window_view(x[lo:lo + n0 + n1 - 1], n1)
    return x[(lo + xp.reshape(xp.arange(n0), (-1, 1)) + xp.reshape(xp.arange(n1), (1, -1))) % x.shape[0]]


def _window_add(b, lo, n0, n1, v):
    """b[lo + i + j] += v[i, j] (the adjoint of _window): one slice add per column, or per row when
    the rows are fewer."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1))
    if n0 > 0 and n1 > 0 and 0 <= lo and lo + n0 + n1 - 1 <= b.shape[0]:
        if n1 <= n0:
            for j in range(n1):
                b[lo + j:lo + j + n0] += v[:, j]
        else:
            for i in range(n0):
                b[lo + i:lo + i + n1] += v[i, :]
    elif n0 > 0 and n1 > 0:
        flat = xp.reshape((lo + xp.reshape(xp.arange(n0), (-1, 1)) + xp.reshape(xp.arange(n1), (1, -1)))
                          % b.shape[0], (-1,))
        b += _scatter_sum(flat, xp.reshape(v, (-1,)), b.shape[0])


# The contractions of a window with vectors (coarsen_nb.lower.nests): correlations and a convolution, one
# pass over the signal each, instead of the product of the (n0, n1) windows with a vector (not BLAS on a
# sliding view: its rows overlap) or an (n0, n1) outer product scattered column by column.
def _window_matvec(x, lo, n0, n1, h):
    """_window(x, lo, n0, n1) @ h: sum_j x[lo + i + j] * h[j] for i < n0, a valid correlation of the
    signal with h where the namespace has one, the product on the windows otherwise."""
    if x.ndim == 1 and h.shape == (n1,) and 0 < n0 and 0 < n1 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] \
            and hasattr(xp, "correlate"):
        return xp.correlate(x[lo:lo + n0 + n1 - 1], h, mode="valid")
    return _window(x, lo, n0, n1) @ h


def _window_vecmat(g, x, lo, n0, n1):
    """g @ _window(x, lo, n0, n1): sum_i g[i] * x[lo + i + j] for j < n1, a valid correlation of the
    signal with g (the adjoint of _window_matvec for h).  NumPy's correlation is n1 dots of length n0;
    it runs over rows of 4096 at a time because a longer dot is where BLAS starts threads (OpenBLAS
    above 10**4), and on a loaded machine a threaded dot waits for cores (100 ms instead of 0.1 ms)."""
    if x.ndim == 1 and g.shape == (n0,) and 0 < n0 and 0 < n1 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] \
            and hasattr(xp, "correlate"):
        rows = 4096 if xp.__name__ == "numpy" else n0
        out = xp.correlate(x[lo:lo + min(rows, n0) + n1 - 1], g[:rows], mode="valid")
        for i in range(rows, n0, rows):
            m = min(rows, n0 - i)
            out += xp.correlate(x[lo + i:lo + i + m + n1 - 1], g[i:i + m], mode="valid")
        return out
    return g @ _window(x, lo, n0, n1)


def _window_outer_add(b, lo, n0, n1, g, h):
    """b[lo + i + j] += g[i] * h[j] for i < n0, j < n1 (the adjoint of _window_matvec for x): one full
    convolution of g and h added to a slice, no (n0, n1) outer product."""
    if b.ndim == 1 and g.shape == (n0,) and h.shape == (n1,) and 0 < n0 and 0 < n1 and 0 <= lo \
            and lo + n0 + n1 - 1 <= b.shape[0] and hasattr(xp, "convolve"):
        b[lo:lo + n0 + n1 - 1] += xp.convolve(g, h)
    elif n0 > 0 and n1 > 0:
        _window_add(b, lo, n0, n1, xp.reshape(g, (-1, 1)) * xp.reshape(h, (1, -1)))


def _block(x, lo0, n0, lo1, n1):
    """x[lo0 + i, lo1 + j] for i < n0, j < n1 as an (n0, n1) array: a view when in bounds."""
    if 0 <= lo0 and lo0 + n0 <= x.shape[0] and 0 <= lo1 and lo1 + n1 <= x.shape[1]:
        return x[lo0:lo0 + n0, lo1:lo1 + n1]
    return x[(lo0 + xp.arange(n0))[:, None], (lo1 + xp.arange(n1))[None, :]]


def _block_add(b, lo0, n0, lo1, n1, v):
    """b[lo0 + i, lo1 + j] += v[i, j] (the adjoint of _block)."""
    if 0 <= lo0 and lo0 + n0 <= b.shape[0] and 0 <= lo1 and lo1 + n1 <= b.shape[1]:
        b[lo0:lo0 + n0, lo1:lo1 + n1] += v
    elif n0 > 0 and n1 > 0:
        i = (lo0 + xp.arange(n0))[:, None] % b.shape[0]
        j = (lo1 + xp.arange(n1))[None, :] % b.shape[1]
        flat = xp.reshape(i * b.shape[1] + j, (-1,))
        v = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1)), (-1,))
        b += xp.reshape(_scatter_sum(flat, v, b.shape[0] * b.shape[1]), b.shape)


#: the helpers of this module, in the order the registry (:mod:`coarsen_nb.lower.helpers`) lists them
HELPER_FUNCTIONS = (_take, _put, _index_add, _add_at, _scatter_add, _scatter_sum, _segments, _segment_sum,
                    _segment_prod, _segment_max, _segment_min, _window, _window_add, _window_matvec,
                    _window_vecmat, _window_outer_add, _block, _block_add)

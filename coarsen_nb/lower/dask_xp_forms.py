# <own-module>
"""More of the dask module's ``xp`` namespace: lazy forms of what ``dask.array`` lacks or refuses on some chunks.

In a generated module this file's text follows dask_xp's (``Backend.prologue``, as numba_xp_axes follows
numba_xp; the paste leaves out this whole ``own-module`` block: this docstring and the imports below), so it
writes into the same ``xp``.  Every form builds a lazy graph; none computes the data.

* **Whole blocks, said.**  A determinant needs the whole matrix, a convolution's every output reads the whole
  kernel, Dask's LU wants chunks all of one square size.  Such a form rechunks its operand into one block
  along those axes and then names that block's layer ``coarsen-whole-<operation>-<token>`` (an identity
  task per block), which :mod:`coarsen_nb.dask_chunking` reads back to tell the user, in ``f.chunking``,
  which argument was gathered into one block, for which operation, and why (:mod:`coarsen_nb.dask_whole_blocks`).  An
  operand already in one block along those axes gathers nothing and is not named.
* ``linalg.slogdet`` and ``linalg.det``: NumPy's own, in a task on the matrix in one block (their values to
  the bit); ``linalg.solve`` and ``linalg.inv``: Dask's LU where the chunks are all one square size, else on
  the matrix in one block (where it fits Dask's ``array.chunk-size``: NumPy's pivoting over the whole
  matrix), else in square chunks of the largest size dividing its order; ``linalg.norm`` over more than two
  axes (NumPy's ``ord=None``: ``sqrt(sum(x * x))``), which Dask's refuses.
* ``convolve`` and ``correlate`` in every mode: the shorter operand (the kernel) in one block, the longer
  kept in its chunks: each output chunk is NumPy's ``convolve(..., mode="valid")`` of a window of the
  longer one, its chunk and the ``len(kernel) - 1`` elements beside it (the halo), which Dask slices from
  the neighbouring chunks; ``correlate`` is ``convolve`` with the kernel reversed, as NumPy's is.
* ``repeat`` by an array of counts: Dask's takes an integer only.  Counts that are NumPy values, or a Dask
  graph built from shapes alone (``arange``, ``zeros``: its roots are Dask's creation functions, no
  argument's data in it), are known here without computing any data; the repeated array is then lazy,
  ``np.repeat`` of each chunk of the repeated values by its counts, cut so that an output chunk holds at
  most about twice Dask's ``array.chunk-size`` (or one element's repeats, where they are more).  Counts
  computed from the data would give an array of unknown length: refused, saying so.
"""

import dask.array as _da  # noqa: E402, I001
import numpy as _np  # noqa: E402

from coarsen_nb.lower.dask_xp import xp  # noqa: E402
# </own-module>

import dask as _dask  # noqa: E402, I001
from dask.base import tokenize as _tokenize  # noqa: E402

#: Dask's creation functions, whose layers read no array (a graph whose roots are all of them holds no data)
_SHAPE_ONLY_ROOTS = ("arange", "zeros_like", "ones_like", "full_like", "empty_like", "eye", "linspace", "tri")


def _whole_block_identity(block):
    return block


def _whole(a, axes, operation):
    """``a`` rechunked into one block along ``axes``; where that gathers several blocks, the result's layer is
    named for ``operation`` (``coarsen-whole-<operation>``), so that ``f.chunking`` can say so."""
    a = _da.asarray(a)
    axes = tuple(ax % a.ndim for ax in axes)
    if all(len(a.chunks[ax]) == 1 for ax in axes):
        return a
    gathered = a.rechunk({ax: -1 for ax in axes})
    name = f"coarsen-whole-{operation}-{_tokenize(gathered)}"
    return _da.map_blocks(_whole_block_identity, gathered, name=name, dtype=a.dtype, meta=gathered._meta)


def _slogdet_pair(block):
    sign, logdet = _np.linalg.slogdet(block)
    return _np.stack([sign, logdet], axis=-1)


def _slogdet(a):
    """NumPy's ``(sign, logabsdet)`` of a matrix (or a stack of them), each a lazy Dask array."""
    a = _whole(a, (-2, -1), "slogdet")
    pair = a.map_blocks(_slogdet_pair, drop_axis=a.ndim - 1, chunks=a.chunks[:-2] + ((2,),), dtype=_np.float64)
    return pair[..., 0], pair[..., 1]


def _det(a):
    a = _whole(a, (-2, -1), "det")
    return a.map_blocks(_np.linalg.det, drop_axis=(a.ndim - 2, a.ndim - 1), dtype=_np.float64)


def _square_chunks(a, operation):
    """``a`` (a square matrix) in chunks Dask's LU takes: all of one square size.  Chunks that are not
    give the matrix in one block where it fits ``array.chunk-size`` (named, ``_whole``), else square chunks
    of the largest size dividing its order that is not above its largest chunk."""
    a = _da.asarray(a)
    if a.ndim != 2 or len(set(a.chunks[0] + a.chunks[1])) == 1:
        return a
    n = a.shape[0]
    if n * n * a.dtype.itemsize <= _dask.utils.parse_bytes(_dask.config.get("array.chunk-size")):
        return _whole(a, (0, 1), operation)
    size = max(c for c in range(1, max(a.chunks[0]) + 1) if n % c == 0)
    return a.rechunk((size, size))


def _solve(a, b):
    return _da.linalg.solve(_square_chunks(a, "solve"), _da.asarray(b))


def _inv(a):
    return _da.linalg.inv(_square_chunks(a, "inv"))


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (NumPy's keyword)
    """NumPy's ``linalg.norm``; with ``ord=None`` over every axis of an array of more than two, which Dask's
    refuses, ``sqrt(sum(x * x))`` (NumPy's own formula for it)."""
    x = _da.asarray(x)
    if ord is None and axis is None and x.ndim > 2:
        return _da.sqrt(_da.sum(x * x, keepdims=keepdims))
    return _da.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _convolve_valid(window, kernel):
    return _np.convolve(window, kernel, mode="valid")


def _full_convolution(a, v, operation, start, stop):
    """Outputs ``start:stop`` of NumPy's ``convolve(a, v, "full")`` of 1-D arrays, ``a`` the longer, in its
    chunks (plus a last chunk of the ``len(v) - 1`` outputs past its end), each cut to ``start:stop``, ``v``
    in one block (named, ``_whole``).  Only those outputs are computed: a ``valid`` convolution of two long
    arrays (a gradient's) has few, and the full one would cost the product of their lengths per chunk."""
    m = v.shape[0]
    dtype = _np.result_type(a.dtype, v.dtype)
    v = _whole(v, (0,), operation)
    zeros = _da.zeros(m - 1, dtype=a.dtype)
    padded = _da.concatenate([zeros, a, zeros])
    bounds = _np.cumsum((0,) + a.chunks[0] + ((m - 1,) if m > 1 else ()))
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        lo, hi = max(int(lo), start), min(int(hi), stop)
        if hi > lo:
            window = padded[lo:hi + m - 1].rechunk(-1)
            parts.append(_da.map_blocks(_convolve_valid, window, v, chunks=((hi - lo,),), dtype=dtype))
    return _da.concatenate(parts) if parts else _da.zeros(0, dtype=dtype)


def _convolve(a, v, mode="full", *, operation="convolve"):
    """NumPy's ``convolve(a, v, mode)``, lazy: the outputs of the full convolution (``_full_convolution``)
    NumPy's modes keep (``same``: ``max(n, m)`` outputs from ``(min(n, m) - 1) // 2``; ``valid``: the
    ``|n - m| + 1`` where the shorter lies wholly inside the longer)."""
    a, v = _da.asarray(a), _da.asarray(v)
    if a.ndim != 1 or v.ndim != 1 or a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{operation} takes two non-empty 1-D arrays")
    n, m = a.shape[0], v.shape[0]
    start, length = {"full": (0, n + m - 1), "same": ((min(n, m) - 1) // 2, max(n, m)),
                     "valid": (min(n, m) - 1, max(n, m) - min(n, m) + 1)}[mode]
    longer, shorter = (a, v) if n >= m else (v, a)
    return _full_convolution(longer, shorter, operation, start, start + length)


def _correlate(a, v, mode="valid"):
    """NumPy's ``correlate(a, v, mode)`` of real arrays: ``convolve(a, v[::-1], mode)``, and where ``v`` is
    the longer, ``convolve(v, a[::-1], mode)`` reversed (NumPy swaps them so)."""
    a, v = _da.asarray(a), _da.asarray(v)
    if a.shape[0] >= v.shape[0]:
        return _convolve(a, v[::-1], mode, operation="correlate")
    return _convolve(v, a[::-1], mode, operation="correlate")[::-1]


def _known_values(a):
    """``a`` as a NumPy array where it is known without computing any data: a NumPy value as it is, a Dask
    graph whose roots are all creation functions (``arange``, ``zeros``: shapes only, no argument's data in
    it) evaluated here, in this process; else (a Dask array computed from data) None."""
    if not isinstance(a, _da.Array):
        return _np.asarray(a)
    graph = a.__dask_graph__()
    roots = [name for name in graph.layers if not graph.dependencies.get(name)]
    if not all(_dask.utils.key_split(name) in _SHAPE_ONLY_ROOTS for name in roots):
        return None
    return _np.asarray(a.compute(scheduler="sync"))


def _repeat_block(block, counts):
    return _np.repeat(block, counts)


def _repeat(a, repeats, axis=None):
    """NumPy's ``repeat``; by an array of counts (Dask's takes an integer only) a lazy Dask array of known
    length, where the counts are known without the data (``_known_values``)."""
    if _np.ndim(repeats) == 0 and not isinstance(repeats, _da.Array):
        a, axis = _da.asarray(a), 0 if axis is None and _np.ndim(a) == 1 else axis
        if a.size == 0:     # (no lanes a branch selects: Dask's repeat fails on no blocks to concatenate)
            return _da.from_array(_np.repeat(_np.empty(a.shape, a.dtype), int(repeats), axis=axis))
        return _da.repeat(a, int(repeats), axis=axis)
    counts = _known_values(repeats)
    if counts is None:
        raise NotImplementedError("repeat by counts computed from the data has no lazy form over Dask arrays in "
                                  "coarsen_nb: the length of the result is unknown until they are computed")
    a = _da.asarray(a)
    if a.ndim != 1 or axis not in (None, 0) or counts.shape != a.shape:
        raise NotImplementedError("repeat by an array of counts has a lazy form here for a 1-D array only, "
                                  "with one count per element")
    ends = _np.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    target = max(1, _dask.utils.parse_bytes(_dask.config.get("array.chunk-size")) // max(a.dtype.itemsize, 1))
    cuts = set(_np.cumsum(a.chunks[0])[:-1].tolist())
    cuts |= set(_np.searchsorted(ends, _np.arange(target, total, target), side="right").tolist())
    large = _np.flatnonzero(counts > target)                 # (each alone in its chunk)
    cuts |= set(large.tolist()) | set((large + 1).tolist())
    cuts = sorted(c for c in cuts if 0 < c < a.shape[0])
    bounds = [0, *cuts, a.shape[0]]
    a = a.rechunk((tuple(_np.diff(bounds).tolist()),))
    starts = _np.concatenate([[0], ends])
    sizes = tuple(int(starts[hi] - starts[lo]) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))
    counts = _da.from_array(counts, chunks=a.chunks)
    return _da.map_blocks(_repeat_block, a, counts, chunks=(sizes,), dtype=a.dtype)


xp.linalg.slogdet = _slogdet
xp.linalg.det = _det
xp.linalg.solve = _solve
xp.linalg.inv = _inv
xp.linalg.norm = _norm
xp.convolve = _convolve
xp.correlate = _correlate
xp.repeat = _repeat

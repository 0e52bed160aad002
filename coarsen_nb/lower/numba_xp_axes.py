# <own-module>
"""More of the numba ``xp`` namespace: the functions that work axis by axis.

``argmax``, ``max`` and ``min`` of a matrix along an axis, literal or known only at run time (a float
matrix: :mod:`numba_xp_along`'s vector loops, only the one for a literal axis; other dtypes a loop over the
other axis).  :mod:`numba_xp_reductions` adds the forms with constant axes to the same stubs, but Numba tries
an overload registered first before one registered later, literal axis or not: a matrix's reduction is
always this file's (its branching loop made ``xp.max(X, axis=1)`` ~3x NumPy's until stop 42).  ``flip`` along
an axis, ``sum_to`` (the numba helper ``_sum_to``: g summed over the axes broadcasting added) and
``put`` (the numba helper ``_put``: ``x[idx] = v`` with one index per axis), written as in
:mod:`coarsen_nb.lower.numba_xp`: a stub compiled through ``numba.extending.overload``, with NumPy's
values, dtype and shape.

This is the second half of numba_xp's text, not a file of its own in a generated module:
``Backend.prologue`` pastes it after numba_xp's (and numba_xp_broadcast's, numba_xp_along's), and the paste
leaves out this whole ``own-module`` block (this docstring and the imports that follow), so the module's
source reads on from the previous file's last function to this file's first.  Imported on its own (the tests), it takes
numba_xp's names here.  NumPy and Numba only; no ``__future__`` import.
"""

import numba  # noqa: E402, I001

from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001
from coarsen_nb.lower.numba_xp_along import ALONG  # noqa: E402
from coarsen_nb.lower.numba_xp_broadcast import (  # noqa: E402
    _broadcast_lines, _compiled, _element, _loops, _step_lines)

_implements, _omitted, _constant_flag, _keeping_axis, _np, _nt, xp = (
    _base._implements, _base._omitted, _base._constant_flag, _base._keeping_axis, _base._np, _base._nt, _base.xp)
INTERNAL = _base.INTERNAL
# </own-module>


def _along_kernels(name, axis, keep):
    """A float matrix's ``name`` (max, min, argmax) along ``axis``: numba_xp_along's kernels (vector loops in
    the matrix's row-major order), only the one for a literal axis, else both with a test at run time."""
    down, along = ALONG[name, 0], ALONG[name, 1]
    if isinstance(axis, _nt.IntegerLiteral) and axis.literal_value in (0, 1, -1, -2):
        kernel = down if axis.literal_value in (0, -2) else along

        def one_axis(x, axis=None, keepdims=False):
            return kernel(x)
        return _keeping_axis(one_axis) if keep else one_axis

    def either_axis(x, axis=None, keepdims=False):
        return down(x) if axis == 0 or axis == -2 else along(x)
    return _keeping_axis(either_axis) if keep else either_axis


@_implements("argmax", prefer_literal=True)
def _argmax(x, axis=None, keepdims=False):
    if not isinstance(x, _nt.Array):
        return None
    if _omitted(axis):
        if x.ndim == 1 and x.dtype == _nt.float64:
            def flat_row(x, axis=None, keepdims=False):
                return _row_argmax(x)
            return flat_row

        def flat(x, axis=None, keepdims=False):
            return _np.argmax(x)
        return flat
    if x.ndim != 2:
        return None
    keep = _constant_flag(keepdims)
    if keep is None:
        return None                 # (keepdims decides the rank: it must be a constant)
    if x.dtype == _nt.float64:
        return _along_kernels("argmax", axis, keep)

    def along(x, axis=None, keepdims=False):
        rows = axis == 0 or axis == -2
        m = x.shape[1] if rows else x.shape[0]
        n = x.shape[0] if rows else x.shape[1]
        out = xp.zeros(m, dtype=_np.int64)
        for r in range(m):
            best = x[0, r] if rows else x[r, 0]
            at = 0
            if best == best:                    # (NaN is the maximum: its first index is the answer)
                for i in range(1, n):
                    value = x[i, r] if rows else x[r, i]
                    if value != value:
                        at = i
                        break
                    if value > best:
                        best = value
                        at = i
            out[r] = at
        return out

    return _keeping_axis(along) if keep else along


@_implements("sum_to", cache=False)
def _sum_to(g, shape):
    """``sum_to(g, shape)``: the numba helper ``_sum_to`` (g summed over the axes broadcasting added to
    reach it: the leading ones, and those where ``shape`` has 1), one pass over g's elements.  A g smaller
    than ``shape`` (a whole-array sum's adjoint: one value for every element) is spread over it first, as
    the NumPy helper does."""
    if not isinstance(shape, _nt.BaseTuple):
        return None
    k = len(shape)
    if isinstance(g, (_nt.Number, _nt.Boolean)):
        def spread(g, shape):
            return xp.zeros(shape) + g
        return spread
    if not isinstance(g, _nt.Array):
        return None
    rank = max(g.ndim, k)
    lead = rank - k
    # the loop nest over the broadcast of g's shape and ``shape``, in NumPy's row-major order (the order
    # its sum adds in), each point of g added at its point of ``shape``: scalar code, which Numba compiles
    # in milliseconds (its broadcast_shapes, broadcast_to and ndindex took 1-2 s in a fresh process)
    lines = ["def reduce(g, shape):"]
    if g.ndim == k and g.dtype == _nt.float64:
        # (g of the shape already: g itself, as the NumPy helper returns it, not a copy made by adding it into
        # zeros: an elementwise adjoint's every term, 2 ms a term at 10**6; of any layout: an element loop's
        # result over a transposed view is laid out as the view, numba_xp_memory_order, and the copy was a
        # strided pass, transposes 29 -> 33 ms)
        lines += ["    if g.shape == shape:", "        return g"]
    if g.ndim == k == 2 and g.layout == "C":
        # (a matrix summed along its rows, a row-wise max's or sum's adjoint (n, k) -> (n, 1): each row's sum in
        # a register, in the order the nest below adds it, where the nest's ``+=`` into memory was a chain
        # through the store at every element: 4 -> 1 ms at 250000 x 4)
        lines += ["    if shape[0] == g.shape[0] and shape[1] == 1:", "        out = xp.empty(shape)",
                  "        for i0 in range(g.shape[0]):", "            r = 0.0",
                  "            for i1 in range(g.shape[1]):", "                r += g[i0, i1]",
                  "            out[i0, 0] = r", "        return out"]
    lines += _broadcast_lines([("g.shape", g.ndim), ("shape", k)], rank)
    # (a 1-D ``out`` is its own flat view: Numba's ``reshape(-1)`` is compiled only where it reshapes)
    lines += ["    out = xp.zeros(shape)", "    flat = out.reshape(-1)" if k != 1 else "    flat = out"]
    lines += _step_lines("g", g.ndim, "s") + _step_lines("out", k, "t")
    loops, inner = _loops(rank)
    at = "0"
    for a in range(k):
        at = f"({at}) * shape[{a}] + i{lead + a} * t{a}" if a else f"i{lead} * t0"
    lines += loops + [f"{inner}flat[{at}] += {_element('g', g.ndim, rank, 's')}", "    return out"]
    return _compiled(lines, "reduce")


@_implements("flip")
def _flip(x, axis=None):
    if not isinstance(x, _nt.Array) or x.ndim not in (1, 2):
        return None
    if x.ndim == 1:
        def flip_1d(x, axis=None):
            return x[::-1]
        return flip_1d
    if _omitted(axis):
        def flip_both(x, axis=None):
            return x[::-1, ::-1]
        return flip_both

    def flip_2d(x, axis=None):
        return x[::-1, :] if axis == 0 or axis == -2 else x[:, ::-1]
    return flip_2d



def _make_row_extremum(is_max):
    """The maximum (minimum) of a 1-D float array, NaN where it holds one, as NumPy's ``max`` (``min``):
    eight running extrema over interleaved elements and a flag for NaN, branch-free, which LLVM packs
    into vector instructions (10**7 elements: ~7 ms, NumPy's ~12 ms, Numba's ``np.max`` ~58 ms, whose
    loop tests for NaN and branches at every element).  Empty: NumPy's error."""
    empty = f"zero-size array to reduction operation {'maximum' if is_max else 'minimum'} which has no identity"

    def extremum(x):
        n = x.shape[0]
        if n == 0:
            raise ValueError(empty)
        m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = x[0]
        bad = False
        i = 0
        end = n - n % 8
        while i < end:
            v0, v1, v2, v3 = x[i], x[i + 1], x[i + 2], x[i + 3]
            v4, v5, v6, v7 = x[i + 4], x[i + 5], x[i + 6], x[i + 7]
            if is_max:
                m0, m1, m2, m3 = v0 if v0 > m0 else m0, v1 if v1 > m1 else m1, v2 if v2 > m2 else m2, \
                    v3 if v3 > m3 else m3
                m4, m5, m6, m7 = v4 if v4 > m4 else m4, v5 if v5 > m5 else m5, v6 if v6 > m6 else m6, \
                    v7 if v7 > m7 else m7
            else:
                m0, m1, m2, m3 = v0 if v0 < m0 else m0, v1 if v1 < m1 else m1, v2 if v2 < m2 else m2, \
                    v3 if v3 < m3 else m3
                m4, m5, m6, m7 = v4 if v4 < m4 else m4, v5 if v5 < m5 else m5, v6 if v6 < m6 else m6, \
                    v7 if v7 < m7 else m7
            bad |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3) | (v4 != v4) | (v5 != v5) | (v6 != v6) \
                | (v7 != v7)
            i += 8
        m = m0
        for v in (m1, m2, m3, m4, m5, m6, m7):
            m = v if ((v > m) if is_max else (v < m)) else m
        while i < n:
            v = x[i]
            bad |= v != v
            m = v if ((v > m) if is_max else (v < m)) else m
            i += 1
        return _np.nan if bad else m

    # (a name of its own: Numba's disk cache finds a function by its qualified name, and the two closures'
    # would be the same, each then loading the other's machine code)
    extremum.__name__ = extremum.__qualname__ = "_row_max" if is_max else "_row_min"
    return numba.njit(cache=True, **INTERNAL)(extremum)


_row_max = _make_row_extremum(True)
_row_min = _make_row_extremum(False)


def _make_row_pick(is_max):
    """NumPy's ``argmax`` (``argmin``) of a 1-D float array: the first index of its maximum (minimum), of its
    first NaN where it holds one; found as that extremum (``_row_max``: vector instructions) and then the
    first element equal to it, rather than a loop that branches on every element.  Empty: NumPy's error."""
    label = "argmax" if is_max else "argmin"
    empty = f"attempt to get {label} of an empty sequence"

    def pick(x):
        n = x.shape[0]
        if n == 0:
            raise ValueError(empty)
        m = _row_max(x) if is_max else _row_min(x)
        if m != m:
            for i in range(n):
                if x[i] != x[i]:
                    return i
        # blocks of 16 compared without a branch per element, then the block that holds it element by element
        i = 0
        end = n - n % 16
        while i < end:
            hit = 0
            for k in range(16):
                hit |= x[i + k] == m
            if hit:
                break
            i += 16
        while i < n:
            if x[i] == m:
                return i
            i += 1
        return 0

    pick.__name__ = pick.__qualname__ = "_row_" + label     # (see _make_row_extremum)
    return numba.njit(cache=True, **INTERNAL)(pick)


_row_argmax = _make_row_pick(True)
_row_argmin = _make_row_pick(False)


def _make_extremum(name, is_max):
    whole = _np.max if is_max else _np.min
    fast = _row_max if is_max else _row_min

    @_implements(name, prefer_literal=True)
    def _overload(x, axis=None, keepdims=False):
        if not isinstance(x, _nt.Array):
            return None
        if _omitted(axis):
            if x.ndim == 1 and x.dtype == _nt.float64:
                def flat_row(x, axis=None, keepdims=False):
                    return fast(x)
                return flat_row

            def flat(x, axis=None, keepdims=False):
                return whole(x)
            return flat
        keep = _constant_flag(keepdims)
        if x.ndim != 2 or keep is None:
            return None
        if x.dtype == _nt.float64:
            return _along_kernels(name, axis, keep)

        # (the message a constant: formatting it inside the loop would compile Numba's str machinery)
        empty = f"zero-size array to reduction operation {'maximum' if is_max else 'minimum'} which has no identity"

        def along(x, axis=None, keepdims=False):
            rows = axis == 0 or axis == -2
            m = x.shape[1] if rows else x.shape[0]
            n = x.shape[0] if rows else x.shape[1]
            if n == 0:
                raise ValueError(empty)
            out = xp.empty(m)
            for r in range(m):
                best = x[0, r] if rows else x[r, 0]
                for i in range(1, n):
                    v = x[i, r] if rows else x[r, i]
                    if v != v or best != best:      # (NaN propagates, as in NumPy)
                        best = _np.nan
                        break
                    if (v > best) if is_max else (v < best):
                        best = v
                out[r] = best
            return out

        return _keeping_axis(along) if keep else along



_make_extremum("max", True)
_make_extremum("min", False)


@_implements("put", cache=False)
def _put(x, idx, v):
    """``put(x, idx, v)``: the numba helper ``_put``, ``x[idx] = v`` element by element for a tuple idx
    of one index per axis of x, each an integer or an integer array (broadcast together, as NumPy's
    advanced indexing does; Python's negative indices, the last write wins, an index past the end an
    IndexError).  Numba has neither the assignment nor a loop over a tuple of mixed types, so the loop
    is written for these types, as text, and compiled."""
    if not (isinstance(x, _nt.Array) and isinstance(idx, _nt.BaseTuple) and len(idx) == x.ndim
            and all(isinstance(i, _nt.Integer) or (isinstance(i, _nt.Array) and isinstance(i.dtype, _nt.Integer))
                    for i in idx)):
        return None
    arrays = [(f"idx[{a}]", i.ndim, f"j{a}_") for a, i in enumerate(idx) if isinstance(i, _nt.Array)]
    rank = max((ndim for _, ndim, _ in arrays), default=0)
    each = isinstance(v, _nt.Array)
    vdim = v.ndim if each else 0
    # a loop nest over the index arrays' broadcast shape (NumPy's order: the last write wins), each array
    # read at its own point of it (Numba's broadcast_shapes and broadcast_to took ~1 s to compile)
    lines = ["def put(x, idx, v):"] + _broadcast_lines([(f"{a}.shape", ndim) for a, ndim, _ in arrays], rank)
    if vdim:
        lines += [f"    points = ({''.join(f'n{a}, ' for a in range(rank))})"]
        lines += _broadcast_lines([("points", rank), ("v.shape", vdim)], max(rank, vdim))
        lines += [f"    if ({''.join(f'n{a}, ' for a in range(max(rank, vdim)))}) != points:",
                  "        raise ValueError('shape mismatch: value array cannot be broadcast to indexing result')"]
        lines += _step_lines("v", vdim, "s")
    for a, ndim, steps in arrays:
        lines += _step_lines(a, ndim, steps)
    loops, inner = _loops(rank)
    lines += loops
    for a, i in enumerate(idx):
        read = _element(f"idx[{a}]", i.ndim, rank, f"j{a}_") if isinstance(i, _nt.Array) else f"idx[{a}]"
        lines += [f"{inner}t{a} = {read}", f"{inner}if t{a} < 0:", f"{inner}    t{a} += x.shape[{a}]",
                  f"{inner}if t{a} < 0 or t{a} >= x.shape[{a}]:",
                  f"{inner}    raise IndexError('index out of bounds for axis {a}')"]
    value = _element("v", vdim, rank, "s") if each else "v"
    lines += [f"{inner}x[{', '.join(f't{a}' for a in range(len(idx)))}] = {value}",
              "    return x"]
    return _compiled(lines, "put")

"""More of the numba ``xp`` namespace: the array-building and -reshaping functions Numba lacks.

``diff``, ``roll``, ``squeeze`` and ``stack`` with an axis, ``einsum`` with explicit subscripts, and
``diff_vjp`` (the numba helper ``_diff_vjp``, diff's transpose), written as in
:mod:`coarsen_nb.lower.numba_xp`: a stub compiled through ``numba.extending.overload``, with NumPy's
values, dtype and shape.  A function along an axis whose number is known only at run time sees x as
a C-ordered 3-D array ``(before, along, after)`` (the product of the lengths before the axis, its
length, the product after), so one loop nest serves every rank; the result's shape, one length
changed, is ``tuple_setitem`` of x's (a tuple of static length; Numba has no list-to-tuple).

In a generated module this file's text follows numba_xp's (``Backend.prologue``); it is also
importable, for the tests.  NumPy and Numba only; no ``__future__`` import.
"""

import numba as _numba
from numba.cpython.unsafe.tuple import tuple_setitem as _tuple_setitem
from numba.np.numpy_support import as_dtype as _as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple as _to_fixed_tuple

# imported on its own (the tests), the names numba_xp's text defines before this one's in a generated
# module, which leaves the marked lines out (coarsen_nb/backends.py): one namespace, in several files
# <own-module>
from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001
from coarsen_nb.lower import numba_xp_broadcast  # noqa: E402, F401 (its broadcast_to joins xp)

_implements, _omitted, _constant_flag, _np, _nt, xp = (_base._implements, _base._omitted, _base._constant_flag,
                                                       _base._np, _base._nt, _base.xp)
# </own-module>


@_numba.njit
def _axis_of(axis, ndim):
    """axis counted from 0 (a negative one from the end), or a ValueError as NumPy's AxisError."""
    ax = axis + ndim if axis < 0 else axis
    if ax < 0 or ax >= ndim:
        raise ValueError("axis is out of bounds for the array's dimension")
    return ax


@_numba.njit
def _product(shape, lo, hi):
    """The product of shape[lo:hi] (1 for none)."""
    p = 1
    for k in range(lo, hi):
        p *= shape[k]
    return p


def _numeric(x):
    return isinstance(x, _nt.Array) and isinstance(x.dtype, (_nt.Integer, _nt.Float))


@_implements("diff")
def _diff(x, n=1, axis=-1):
    """``diff(x, n=1, axis=-1)``: n passes of ``x[i + 1] - x[i]`` along axis, in x's dtype (n=0: a copy of x;
    n past the length: an empty axis, as NumPy).  Numba's own ``np.diff`` has no axis."""
    if not _numeric(x) or not isinstance(n, (_nt.Integer, _nt.Omitted, int)):
        return None

    def diff(x, n=1, axis=-1):
        ax = _axis_of(axis, x.ndim)
        if n < 0:
            raise ValueError("order must be non-negative")
        c = _np.ascontiguousarray(x)
        pre, m, post = _product(c.shape, 0, ax), c.shape[ax], _product(c.shape, ax + 1, x.ndim)
        w = c.reshape((pre, m, post)).copy()
        for p in range(min(n, m)):
            for a in range(pre):
                for i in range(m - 1 - p):              # (ascending: w[a, i + 1] is still the last pass's)
                    for b in range(post):
                        w[a, i, b] = w[a, i + 1, b] - w[a, i, b]
        k = max(m - n, 0)
        return _np.ascontiguousarray(w[:, :k, :]).reshape(_tuple_setitem(c.shape, ax, k))
    return diff


@_implements("diff_vjp")
def _diff_vjp(g, n, axis):
    """``diff_vjp(g, n, axis)``: the numba helper ``_diff_vjp``, the cotangent of x in ``diff(x, n, axis)``
    from y's cotangent g: n times -diff of g with a zero before and after it along axis, that is
    ``out[i] = g[i - 1] - g[i]`` over one more element (floats, as the zeros make the NumPy helper's)."""
    if not _numeric(g):
        return None

    def diff_vjp(g, n, axis):
        ax = _axis_of(axis, g.ndim)
        c = _np.ascontiguousarray(g)
        pre, m, post = _product(c.shape, 0, ax), c.shape[ax], _product(c.shape, ax + 1, g.ndim)
        w = c.reshape((pre, m, post)).astype(_np.float64)
        for _ in range(n):
            out = xp.empty((pre, m + 1, post))
            for a in range(pre):
                for b in range(post):
                    before = 0.0
                    for i in range(m):
                        out[a, i, b] = before - w[a, i, b]
                        before = w[a, i, b]
                    out[a, m, b] = before
            w = out
            m += 1
        return w.reshape(_tuple_setitem(c.shape, ax, m))
    return diff_vjp


@_implements("roll")
def _roll(x, shift, axis=None):
    """``roll(x, shift, axis=None)``: element i moved to (i + shift) mod the length, along axis or over
    the flattened x (axis None, then reshaped: NumPy's rule), in x's dtype; an integer shift only."""
    if not isinstance(x, _nt.Array) or not isinstance(shift, _nt.Integer):
        return None
    if _omitted(axis):
        def roll_flat(x, shift, axis=None):
            flat = _np.ascontiguousarray(x).ravel()
            size = flat.shape[0]
            out = _np.empty_like(flat)
            for i in range(size):
                out[(i + shift) % size] = flat[i]      # (Python's modulo: never negative)
            return out.reshape(x.shape)
        return roll_flat

    def roll_along(x, shift, axis=None):
        # each (before) block is its m * post elements in row-major order: the last s along the axis
        # (s * post elements) move to its start, the others after them; two contiguous copies per block,
        # with one modulo for the call where an element-wise index would take one per element
        ax = _axis_of(axis, x.ndim)
        c = _np.ascontiguousarray(x)
        pre, m, post = _product(c.shape, 0, ax), c.shape[ax], _product(c.shape, ax + 1, x.ndim)
        v = c.reshape((pre, m * post))
        out = _np.empty_like(v)
        s = shift % m if m > 0 else 0
        head, tail = s * post, (m - s) * post
        for a in range(pre):
            for k in range(tail):
                out[a, head + k] = v[a, k]
            for k in range(head):
                out[a, k] = v[a, tail + k]
        return out.reshape(c.shape)
    return roll_along


@_implements("squeeze")
def _squeeze(x, axis=None):
    """``squeeze(x, axis=A)`` for an integer A (an axis of length 1, else a ValueError): x reshaped
    without it.  Without an axis the result's rank depends on the lengths, unknown when compiling."""
    if not isinstance(x, _nt.Array) or not isinstance(axis, _nt.Integer):
        return None
    rank = x.ndim - 1

    def squeeze(x, axis=None):
        ax = _axis_of(axis, x.ndim)
        if x.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        shape = xp.empty(rank, dtype=_np.int64)
        for k in range(rank):
            shape[k] = x.shape[k if k < ax else k + 1]
        return _np.ascontiguousarray(x).reshape(_to_fixed_tuple(shape, rank))
    return squeeze


@_implements("stack")
def _stack(arrays, axis=0):
    """``stack(arrays, axis=0)`` of a list or tuple of arrays of one shape: a new axis of length
    len(arrays) at axis (counted in the result, as NumPy), a C-ordered array.  Written for a list (Numba's
    ``np.stack`` takes tuples only); a tuple of arrays of different types is Numba's ``np.stack``."""
    if isinstance(arrays, _nt.BaseTuple) and not isinstance(arrays, _nt.UniTuple):
        def from_tuple(arrays, axis=0):
            return _np.stack(arrays, axis)
        return from_tuple
    if not isinstance(arrays, (_nt.List, _nt.UniTuple)) or not isinstance(arrays.dtype, _nt.Array):
        return None
    rank = arrays.dtype.ndim + 1
    dtype = _as_dtype(arrays.dtype.dtype).type

    def stack(arrays, axis=0):
        k = len(arrays)
        if k == 0:
            raise ValueError("need at least one array to stack")
        first = arrays[0].shape
        ax = _axis_of(axis, rank)
        pre, post = _product(first, 0, ax), _product(first, ax, rank - 1)
        out = xp.empty((pre, k, post), dtype=dtype)
        for j in range(k):
            if arrays[j].shape != first:
                raise ValueError("all input arrays must have the same shape")
            v = _np.ascontiguousarray(arrays[j]).reshape((pre, post))
            for a in range(pre):
                for b in range(post):
                    out[a, j, b] = v[a, b]
        shape = xp.empty(rank, dtype=_np.int64)
        for d in range(rank):
            shape[d] = k if d == ax else first[d if d < ax else d - 1]
        return out.reshape(_to_fixed_tuple(shape, rank))
    return stack


def _einsum_source(subscripts, ndims):
    """The text of ``einsum(subscripts, a, b=None, c=None)`` for operands of these ranks: a loop over each
    output letter in the output's order, inside it one over each other letter (summed), the product
    of the operands' elements accumulated; None where the subscripts are not explicit or not theirs."""
    if "->" not in subscripts or "." in subscripts:
        return None
    inputs, output = subscripts.replace(" ", "").split("->")
    inputs = inputs.split(",")
    letters = "".join(inputs)
    if (len(inputs) != len(ndims) or any(len(s) != d for s, d in zip(inputs, ndims, strict=False))
            or not (letters + output).isalpha() or len(set(output)) != len(output)
            or not set(output) <= set(letters)):
        return None
    names = "abc"[:len(inputs)]
    first = {}                          # letter -> (operand, axis) where its length is read
    for name, s in zip(names, inputs, strict=True):
        for axis, letter in enumerate(s):
            first.setdefault(letter, (name, axis))
    summed = [letter for letter in first if letter not in output]
    lines = ["def einsum(subscripts, a, b=None, c=None):"]      # (the typing function's parameters)
    for letter, (name, axis) in first.items():
        lines.append(f"    n_{letter} = {name}.shape[{axis}]")
    for name, s in zip(names, inputs, strict=True):
        for axis, letter in enumerate(s):
            if first[letter] != (name, axis):
                lines += [f"    if {name}.shape[{axis}] != n_{letter}:",
                          f"        raise ValueError('einsum: operands disagree on the length of {letter}')"]
    factors = " * ".join(f"{name}[{', '.join(f'i_{x}' for x in s)}]" if s else f"{name}[()]"
                         for name, s in zip(names, inputs, strict=True))
    order = _memory_order(inputs, output, summed)
    if output and order != list(output) + summed:
        # a summed letter outside an output letter (``i,ij->j``, the adjoint of a matrix-vector product):
        # the loops in the largest operand's memory order, each output element's products added in the same
        # order as the nest below adds them (the summed letters keep their order), so the same values
        lines.append(f"    out = xp.zeros(({''.join(f'n_{x}, ' for x in output)}), dtype=DTYPE)")
        for depth, letter in enumerate(order, start=1):
            lines.append(f"{'    ' * depth}for i_{letter} in range(n_{letter}):")
        lines += [f"{'    ' * (len(order) + 1)}out[{', '.join(f'i_{x}' for x in output)}] += {factors}",
                  "    return out"]
        return "\n".join(lines)
    if output:
        lines.append(f"    out = xp.empty(({''.join(f'n_{x}, ' for x in output)}), dtype=DTYPE)")
    depth = 1
    for letter in output:
        lines.append(f"{'    ' * depth}for i_{letter} in range(n_{letter}):")
        depth += 1
    lines.append(f"{'    ' * depth}acc = DTYPE(0)")
    inner = depth
    for letter in summed:
        lines.append(f"{'    ' * depth}for i_{letter} in range(n_{letter}):")
        depth += 1
    lines.append(f"{'    ' * depth}acc += {factors}")
    if output:                          # (else the sum of everything: a number, as NumPy's)
        lines += [f"{'    ' * inner}out[{', '.join(f'i_{x}' for x in output)}] = acc", "    return out"]
    else:
        lines.append("    return acc")
    return "\n".join(lines)


def _memory_order(inputs, output, summed):
    """The letters' loop order: the output's then the summed ones (a register accumulates each output
    element) where that reads the largest operand in its axes' order already (``ij,j->i``, ``ij,jk->ik``);
    else the largest operand's letters in its axes' order (its elements read in memory order), then the
    others, the summed letters put back in their own order in the places they took, since that order is
    each output element's order of adds."""
    largest = max(inputs, key=len)
    nest = list(output) + summed
    order = list(dict.fromkeys(largest))
    if [x for x in nest if x in order] == order:
        return nest
    order += [x for x in list(output) + summed if x not in order]
    sums = iter(summed)
    return [next(sums) if x in summed else x for x in order]


@_implements("einsum", cache=False, prefer_literal=True)
def _einsum(subscripts, a, b=None, c=None):
    """``einsum('ij,jk->ik', a, b)`` with explicit subscripts, a string constant, and one to three
    operands: a letter not in the output is summed over (also one repeated within an operand: a trace),
    the output's axes in the output's order, NumPy's result dtype.  The loop nest is written for these
    subscripts when compiling (Numba has no einsum)."""
    operands = [x for x in (a, b, c) if not _omitted(x)]
    if not isinstance(subscripts, _nt.StringLiteral) or not all(_numeric(x) for x in operands):
        return None
    source = _einsum_source(subscripts.literal_value, [x.ndim for x in operands])
    if source is None:
        return None
    namespace = {"_np": _np, "xp": xp, "DTYPE": _np.result_type(*[_as_dtype(x.dtype) for x in operands]).type}
    exec(source, namespace)
    return namespace["einsum"]


@_implements("nonzero")
def _nonzero(x):
    """``nonzero(x)`` of a 1-D array: a one-tuple of the indices where x is not zero, in order (how the
    masked branches of the generated code pick their elements).  Numba's own walks x through its
    generic N-d iterator twice (5x NumPy's time); this counts, then fills, without branches."""
    if not (isinstance(x, _nt.Array) and x.ndim == 1):
        return None

    def nonzero_1d(x):
        n = x.shape[0]
        count = 0
        for i in range(n):
            count += x[i] != 0
        # branch-free (a random mask mispredicts half the branches): each index is written, and kept
        # by moving on where x is not zero; the slot past the last is for the writes after it
        out = xp.empty(count + 1, dtype=_np.intp)
        at = 0
        for i in range(n):
            out[at] = i
            at += x[i] != 0
        return (out[:count],)
    return nonzero_1d


@_implements("take")
def _take_along(a, indices, axis=None):
    """``take(a, indices, axis=k)`` of a matrix by a vector of indices, as an element loop: Numba's own
    copies rows by slice assignment, which compiles a formatted shape-mismatch message (str, join, repr:
    a quarter of a cold compile, numba_xp's ``concat``).  Any other form is Numba's ``np.take``."""
    if _omitted(axis):
        def take_flat(a, indices, axis=None):
            return _np.take(a, indices)
        return take_flat
    if not (isinstance(a, _nt.Array) and a.ndim == 2 and isinstance(indices, _nt.Array) and indices.ndim == 1
            and isinstance(indices.dtype, _nt.Integer) and isinstance(axis, _nt.Integer)):
        def take_axis(a, indices, axis=None):
            return _np.take(a, indices, axis)
        return take_axis

    def take_2d(a, indices, axis=None):
        if not -2 <= axis <= 1:
            raise ValueError("axis out of bounds")
        columns = axis == 1 or axis == -1
        n = indices.shape[0]
        m = a.shape[0] if columns else a.shape[1]
        size = a.shape[1] if columns else a.shape[0]
        out = xp.empty((m, n) if columns else (n, m), dtype=a.dtype)
        for k in range(n):
            t = indices[k]
            t = t + size if t < 0 else t
            if t < 0 or t >= size:
                raise IndexError("index out of bounds")
            for i in range(m):
                if columns:
                    out[i, k] = a[i, t]
                else:
                    out[k, i] = a[t, i]
        return out
    return take_2d

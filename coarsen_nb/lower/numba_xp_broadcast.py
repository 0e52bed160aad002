"""More of the numba ``xp`` namespace: broadcasting written as plain loops, because Numba's own is slow to compile.

Numba's ``np.broadcast_shapes`` and ``np.broadcast_to`` (with the ``ascontiguousarray`` a fused loop needs
after it) are generic library code: lists, ``literal_unroll``, a shape message formatted with ``str``.
Compiling them took 0.4-1 s per argument type in a fresh process, and a slice assignment ``b[lo:hi] += v``
compiles Numba's ``raise_with_shape_context`` (its f-string message pulls in the whole ``str`` machinery:
2 s of gmm's 8 s cold compile).  Every generated module that adds an adjoint into a slice, puts through an
index array or sums an adjoint to a leaf's shape paid that again (issue 14's cold bar, 2 s).  Here each is
a loop nest written, as text, for the ranks of its arguments: scalar code, which Numba compiles in
milliseconds.  The values are NumPy's exactly (a copy is a copy; a sum adds in NumPy's row-major order),
and a mismatch is NumPy's ``ValueError`` with a constant message (the loader repeats a raising call on the
NumPy code, whose message the user sees).

``broadcast_shapes`` and ``broadcast_to`` replace Numba's for arrays of the result's rank and for shapes;
``scatter_add`` is the numba helper ``_scatter_add`` (``b[lo + step*k] += v[k]``).  Text compiled by
``exec`` has no file to cache beside, so these overloads are not cached on their own (``cache=False``);
the generated function that calls them is, with them inside.

In a generated module this file's text follows numba_xp's (``Backend.prologue``); it is also importable,
for the tests.  NumPy and Numba only; no ``__future__`` import.
"""

# <own-module>
from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001

_implements, _np, _nt, xp = _base._implements, _base._np, _base._nt, _base.xp
# </own-module>

_MISMATCH = "operands could not be broadcast together"


def _broadcast_lines(shapes, rank, indent="    "):
    """Lines that set ``n0 .. n{rank-1}`` to the broadcast of ``shapes`` (pairs of a shape expression and
    its rank, aligned at the right as NumPy aligns them), raising ValueError where two lengths other than 1
    differ."""
    lines = []
    for axis in range(rank):
        lines.append(f"{indent}n{axis} = 1")
        for shape, ndim in shapes:
            at = axis - (rank - ndim)
            if at < 0:
                continue
            lines += [f"{indent}if {shape}[{at}] != 1:",
                      f"{indent}    if n{axis} != 1 and n{axis} != {shape}[{at}]:",
                      f"{indent}        raise ValueError({_MISMATCH!r})",
                      f"{indent}    n{axis} = {shape}[{at}]"]
    return lines


def _loops(rank, indent="    "):
    """The headers of a loop nest ``i0 .. i{rank-1}`` over ``n0 .. n{rank-1}``, and the indent inside it."""
    lines = [f"{indent}{'    ' * a}for i{a} in range(n{a}):" for a in range(rank)]
    return lines, indent + "    " * rank


def _element(array, ndim, rank, steps):
    """``array``'s element at the nest's point (array aligned at the right; ``steps``: the names that are 0
    on an axis where it has length 1 and 1 elsewhere)."""
    if ndim == 0:
        return f"{array}[()]"
    return f"{array}[{', '.join(f'i{rank - ndim + d} * {steps}{d}' for d in range(ndim))}]"


def _step_lines(array, ndim, steps, indent="    "):
    return [f"{indent}{steps}{d} = 0 if {array}.shape[{d}] == 1 else 1" for d in range(ndim)]


def _compiled(lines, name):
    namespace = {"_np": _np, "xp": xp}
    exec("\n".join(lines), namespace)
    return namespace[name]


@_implements("broadcast_shapes", cache=False)
def _broadcast_shapes(*shapes):
    """``broadcast_shapes(*shapes)`` of tuples of integers: NumPy's shape, or its ValueError."""
    if len(shapes) == 1 and isinstance(shapes[0], (_nt.StarArgTuple, _nt.StarArgUniTuple)):
        shapes = tuple(shapes[0])               # (the shapes as one star-argument tuple's types)
    if not all(isinstance(s, _nt.BaseTuple) for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    lines = ["def broadcast_shapes(*shapes):"]
    lines += _broadcast_lines([(f"shapes[{j}]", len(s)) for j, s in enumerate(shapes)], rank)
    lines.append(f"    return ({''.join(f'n{a}, ' for a in range(rank))})")
    return _compiled(lines, "broadcast_shapes")


def _empty(x, rank):
    """An uninitialized array of ``shape`` with x's dtype: for a 1-D float one, ``xp.empty(n0)``, the call the
    loops that read it make; else with the shape and dtype (numba_xp_fills' intrinsic: nothing compiled apart)."""
    if rank == 1 and x.dtype == _nt.float64:
        return "xp.empty(n0)"
    return "xp.empty(shape, dtype=x.dtype)"


def _copy_lines(name, x, rank, flat=False):
    """``def name(x, shape)``: x (an array of rank ``rank`` or less) broadcast to ``shape`` as a new C-ordered
    array, or x itself where it is a C-contiguous array of that very shape (typed 'C' in both cases);
    ``flat``: as one 1-D array, in row-major order."""
    xdim = x.ndim
    # (a 1-D result is flat already: Numba's ``reshape(-1)`` cost ~0.12 s of a cold compile for nothing)
    result = ".reshape(-1)" if flat and rank != 1 else ""
    lines = [f"def {name}(x, shape):"]
    if xdim == rank:
        # (x itself where its type says C-contiguous: Numba's ascontiguousarray is an implementation of its own
        # to compile, ~0.03 s cold, for a view that is x)
        whole = "x" if x.layout == "C" else "_np.ascontiguousarray(x)"
        lines += ["    if x.shape == shape:", f"        return {whole}{result}"]
    lines += _broadcast_lines([("x.shape", xdim), ("shape", rank)], rank)
    lines += [f"    if ({''.join(f'n{a}, ' for a in range(rank))}) != shape:",
              f"        raise ValueError({_MISMATCH!r})",
              f"    out = {_empty(x, rank)}"]
    lines += _step_lines("x", xdim, "s")
    loops, inner = _loops(rank)
    point = ", ".join(f"i{a}" for a in range(rank)) or "()"
    return lines + loops + [f"{inner}out[{point}] = {_element('x', xdim, rank, 's')}", f"    return out{result}"]


@_implements("flat_as", cache=False)
def _flat_as(x, shape):
    """``flat_as(x, shape)``: the numba helper ``_flat_as``, x's elements in row-major order over ``shape``,
    broadcast where x is smaller, as one C-ordered 1-D array (a view of x where it already has that shape
    and is contiguous): what a fused loop indexes.  A loop nest (Numba's broadcast_to and
    ascontiguousarray took ~1 s to compile)."""
    if not isinstance(shape, _nt.BaseTuple):
        return None
    if isinstance(x, _nt.Array) and x.ndim <= len(shape):
        return _compiled(_copy_lines("flat_as", x, len(shape), flat=True), "flat_as")
    return None


@_implements("broadcast_to", cache=False)
def _broadcast_to(x, shape):
    """``broadcast_to(x, shape)``: for x of the result's rank, x itself when it has that shape and is
    C-contiguous, else a C-ordered copy.  Numba's own (kept for a number or a lower rank) types the view
    'A', and a sum, a copy or an elementwise loop over an 'A' array is strided: summing the ``(n,)``
    array that ``xp.sum(xp.broadcast_to(t, (n,)))`` passes took 3x NumPy's time, ``asarray(...,
    copy=True)`` of one 20x.  The copy is a loop nest (Numba's broadcast_to took ~1 s to compile)."""
    if not isinstance(shape, _nt.BaseTuple):
        return None
    if isinstance(x, _nt.Array) and x.ndim == len(shape) and x.ndim > 0:
        return _compiled(_copy_lines("same_rank", x, len(shape)), "same_rank")
    def numba_own(x, shape):
        return _np.broadcast_to(x, shape)
    return numba_own


@_implements("scatter_add", cache=False)
def _scatter_add(b, lo, n, step, v):
    """``scatter_add(b, lo, n, step, v)``: the numba helper ``_scatter_add``, ``b[lo + step*k] += v[k]`` for
    k < n (the adjoint of ``_take``; v broadcast over the n elements or rows), in place.  In bounds with a
    positive step the NumPy helper adds into the slice, one addition per element, as here; otherwise it adds
    bincount's sums at the indices taken modulo b's length, which this adds up in the same order (from 0,
    index by index) before adding them to b.  An element loop: Numba's slice assignment compiles a
    formatted message (2 s of a cold compile)."""
    if not (isinstance(b, _nt.Array) and b.ndim >= 1 and isinstance(v, (_nt.Array, _nt.Number, _nt.Boolean))):
        return None
    vdim = v.ndim if isinstance(v, _nt.Array) else 0
    rank = b.ndim                       # (a point is k and b's trailing axes; v aligned at the right)
    if vdim > rank:
        return None
    lines = ["def scatter_add(b, lo, n, step, v):", "    if n <= 0:", "        return", "    n0 = n"]
    lines += [f"    n{a} = b.shape[{a}]" for a in range(1, rank)]
    if vdim:
        lines.append(f"    points = ({''.join(f'n{a}, ' for a in range(rank))})")
        lines += _broadcast_lines([("v.shape", vdim), ("points", rank)], rank)
        lines += [f"    if ({''.join(f'n{a}, ' for a in range(rank))}) != points:",
                  f"        raise ValueError({_MISMATCH!r})"]
        lines += _step_lines("v", vdim, "s")
    value = _element("v", vdim, rank, "s") if isinstance(v, _nt.Array) else "v"
    point = "".join(f", i{a}" for a in range(1, rank))
    rows = [f"            {'    ' * a}for i{a + 1} in range(n{a + 1}):" for a in range(rank - 1)]
    inner = "            " + "    " * (rank - 1)
    lines += ["    m = b.shape[0]", "    hi = lo + step * (n - 1)",
              "    if step > 0 and 0 <= lo and hi < m:",
              "        for i0 in range(n):", "            r = lo + step * i0"]
    lines += rows + [f"{inner}b[r{point}] += {value}"]
    if rank > 1:        # (the NumPy helper's bincount takes 1-D weights only: its error, repeated there)
        lines += ["    else:", "        raise ValueError('a scatter of rows out of bounds')"]
    else:
        # (the sums added element by element: ``b += sums`` compiled Numba's array operator, ~0.2 s; ``sums``
        # zeroed by a loop: Numba's ``zeros`` compiles its own implementation and a fill, ~0.1 s more)
        lines += ["    else:", "        sums = xp.empty(m)", "        for i0 in range(m):",
                  "            sums[i0] = 0.0", "        for i0 in range(n):",
                  f"            sums[(lo + step * i0) % m] += {value}", "        for i0 in range(m):",
                  "            b[i0] += sums[i0]"]
    return _compiled(lines, "scatter_add")

"""The maximum, minimum and their first index along one axis of a float matrix, in vector instructions.

``xp.max(X, axis=1)`` of the numba namespace stepped each row with a branch at every element (a test for
NaN, then the compare): ~1.1 ms at 1000 x 1000 against NumPy's ~0.35 ms, and a max's adjoint over axes
(``xp.add_at_first_extremum``) searched each row so again.  These kernels read the matrix in its own
(row-major) order, in loops LLVM vectorizes:

- along a row (``axis=1``, the reduced elements adjacent): the row's extremum stepped with LLVM's
  ``llvm.maximum`` (``llvm.minimum``), a reduction LLVM vectorizes without fast-math (NaN where either
  operand is one, -0.0 below 0.0); where that gives a zero or a NaN, the exact answer settled (below).  The
  first index is then the first element equal to it (the first NaN where it is one).
- down the columns (``axis=0``): every column's running extremum and its first index stepped together, one
  matrix row at a time, with the exact step as selects (``v > best``, a NaN the first time one is seen): no
  column depends on another, so the loop over a row's columns is the vector loop.

Values are the element loop's (``numba_xp_axes``'s ``along``, NumPy's ``max`` and ``argmax``): a NaN anywhere
in a group makes the extremum NaN (the canonical ``nan``, as before) and its first NaN the index; of equal
values the first is kept, so a zero extremum is the group's first zero, sign and all (NumPy's own SIMD loops
pick a zero's sign by lane, which no loop reproduces); an empty reduced axis is NumPy's error, even where
there are no groups.  CPU ms (benchmarks/RESULTS.md, stop 42, branch h-max14): 1000 x 1000, the max along rows
0.33 (NumPy 0.31, the branching loop 1.1), down columns 0.30 (NumPy 0.30), argmax along rows 0.48 (NumPy 0.28:
two passes here, the second over a row still in cache), down columns 0.34 (NumPy 1.2); 125000 x 8, the max
along rows 0.73 (NumPy 6.5).

Pasted into every numba module after numba_xp_broadcast's text (``Backend.prologue``); numba_xp_axes's
run-time-axis forms and numba_xp_reductions' constant axes call these.  Imported on its own (the tests),
it takes numba_xp's names in the lines the paste leaves out.
"""

# <own-module>
import numba  # noqa: E402, I001
import numba.extending  # noqa: E402

from coarsen_nb.lower import numba_xp as _base  # noqa: E402

_np, INTERNAL, xp = _base._np, _base.INTERNAL, _base.xp
# </own-module>


def _llvm_extremum(which):
    """An intrinsic for LLVM's ``llvm.WHICH`` of two float64s (``maximum``/``minimum``)."""
    def intrinsic(typingctx, a, b):
        if not (a == numba.float64 and b == numba.float64):
            return None

        def codegen(context, builder, signature, args):
            from llvmlite import ir

            double = ir.DoubleType()
            fn = builder.module.declare_intrinsic(f"llvm.{which}", [double], ir.FunctionType(double, [double, double]))
            return builder.call(fn, args)

        return numba.float64(a, b), codegen

    intrinsic.__name__ = intrinsic.__qualname__ = f"_llvm_{which}"
    return numba.extending.intrinsic(intrinsic)


_llvm_maximum = _llvm_extremum("maximum")
_llvm_minimum = _llvm_extremum("minimum")


def _empty_message(is_max, pick):
    if pick:
        return f"attempt to get {'argmax' if is_max else 'argmin'} of an empty sequence"
    return f"zero-size array to reduction operation {'maximum' if is_max else 'minimum'} which has no identity"


def _make_along_rows(is_max, pick):
    """Each row's extremum (``pick``: its first index): vector steps of ``llvm.maximum`` (``minimum``), then
    a zero or NaN result settled as the element loop has it (the row's first zero; ``nan``, whose index is
    the first NaN's), and the index as the first element equal to the extremum."""
    empty = _empty_message(is_max, pick)

    def along_rows(x):
        n, k = x.shape
        if k == 0:
            raise ValueError(empty)
        out = xp.empty(n, dtype=_np.int64) if pick else xp.empty(n)
        for o in range(n):
            m = x[o, 0]
            for i in range(k):          # (from 0 again: a trip count of k, which the vector loop's width divides)
                m = _llvm_maximum(m, x[o, i]) if is_max else _llvm_minimum(m, x[o, i])
            if pick:
                # the least index of an element equal to m (a NaN where m is one): a min over the row, no branch
                at = k
                if m != m:
                    for i in range(k):
                        at = min(at, i if x[o, i] != x[o, i] else k)
                else:
                    for i in range(k):
                        at = min(at, i if x[o, i] == m else k)
                out[o] = at
            elif m != m:
                out[o] = _np.nan
            elif m == 0.0:
                at = 0
                while x[o, at] != 0.0:
                    at += 1
                out[o] = x[o, at]
            else:
                out[o] = m
        return out

    # (a name of its own each: Numba's disk cache finds a function by its qualified name)
    along_rows.__name__ = along_rows.__qualname__ = f"_{'arg' if pick else ''}{'max' if is_max else 'min'}_along_rows"
    return numba.njit(cache=True, **INTERNAL)(along_rows)


def _make_add_along_rows(is_max):
    """``b[o, j] += g[o, j]`` (g's length-1 axes read at 0) at each row's first extremum j, found as
    :func:`_make_along_rows`' pick finds it, in one pass over the rows: the adjoint of a max (min) along the
    rows of a matrix without the array of picks and the second loop that read it back (250000 x 4: 5.5 ->
    3 ms; a row of a few classes is as much loop overhead as work).  An empty row picks nothing."""
    def add_along_rows(b, x, g):
        n, k = x.shape
        if k == 0:
            return
        g_rows, g_cols = g.shape[0] > 1, g.shape[1] > 1
        for o in range(n):
            m = x[o, 0]
            for i in range(k):          # (a trip count of k: see along_rows)
                m = _llvm_maximum(m, x[o, i]) if is_max else _llvm_minimum(m, x[o, i])
            at = k
            if m != m:
                for i in range(k):
                    at = min(at, i if x[o, i] != x[o, i] else k)
            else:
                for i in range(k):
                    at = min(at, i if x[o, i] == m else k)
            b[o, at] += g[o if g_rows else 0, at if g_cols else 0]

    add_along_rows.__name__ = add_along_rows.__qualname__ = f"_add_at_{'max' if is_max else 'min'}_along_rows"
    return numba.njit(cache=True, **INTERNAL)(add_along_rows)


def _make_down_columns(is_max, pick):
    """Each column's extremum (``pick``: its first index), the exact step of every column as selects, one
    matrix row at a time: ``v`` replaces the column's best where it is greater (less), or the first time it
    is a NaN (a NaN best is never replaced: its index is the first NaN's, its value ``nan``)."""
    empty = _empty_message(is_max, pick)

    def down_columns(x):
        n, k = x.shape
        if n == 0:
            raise ValueError(empty)
        best = xp.empty(k)
        at = xp.zeros(k, dtype=_np.int64)
        for c in range(k):
            best[c] = x[0, c]
        for i in range(1, n):
            for c in range(k):
                v = x[i, c]
                b = best[c]
                better = ((v > b) if is_max else (v < b)) | ((v != v) & (b == b))
                best[c] = v if better else b
                if pick:
                    at[c] = i if better else at[c]
        if pick:
            return at
        for c in range(k):
            if best[c] != best[c]:
                best[c] = _np.nan
        return best

    down_columns.__name__ = down_columns.__qualname__ = \
        f"_{'arg' if pick else ''}{'max' if is_max else 'min'}_down_columns"
    return numba.njit(cache=True, **INTERNAL)(down_columns)


_max_along_rows, _min_along_rows = _make_along_rows(True, False), _make_along_rows(False, False)
_argmax_along_rows, _argmin_along_rows = _make_along_rows(True, True), _make_along_rows(False, True)
_max_down_columns, _min_down_columns = _make_down_columns(True, False), _make_down_columns(False, False)
_argmax_down_columns, _argmin_down_columns = _make_down_columns(True, True), _make_down_columns(False, True)

#: b plus g at each row's first maximum (sign 1) or minimum (sign -1) of x, in place
ADD_ALONG_ROWS = {1: _make_add_along_rows(True), -1: _make_add_along_rows(False)}

#: the kernels by reduction and the reduced axis (0: down the columns, 1: along the rows)
ALONG = {("max", 0): _max_down_columns, ("max", 1): _max_along_rows,
         ("min", 0): _min_down_columns, ("min", 1): _min_along_rows,
         ("argmax", 0): _argmax_down_columns, ("argmax", 1): _argmax_along_rows,
         ("argmin", 0): _argmin_down_columns, ("argmin", 1): _argmin_along_rows}

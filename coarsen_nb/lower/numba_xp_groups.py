"""The numba namespace's helpers for the adjoints of reductions over axes: ``first_extremum`` (the numba form
of the helper ``_first_extremum``: 1.0 where ``argmax`` (sign 1) or ``argmin`` (-1) picks over the reduced
axes, the element a max's cotangent goes to), ``add_at_first_extremum`` (the cotangent added there in place:
the helper ``_add_at_first_extremum``) and ``prod_except_axes`` (the gradient of ``prod`` over axes).

Each sees an array as groups: the elements that share their index over the kept axes, in C order over the
reduced ones (``_grouped``).  The reductions themselves are :mod:`numba_xp_reductions`, whose text this file's
follows in every numba module and whose row code (``_ROW``: argmax's and argmin's picks) it uses; imported on
its own (the tests), it imports those names, in lines the paste leaves out.
"""

# <own-module>
import numba  # noqa: E402, I001
from numba.np.unsafe.ndarray import to_fixed_tuple as _to_fixed_tuple  # noqa: E402 (numba_xp_arrays' in a module)

from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001
from coarsen_nb.lower.numba_xp_along import ADD_ALONG_ROWS, ALONG  # noqa: E402
from coarsen_nb.lower.numba_xp_reductions import _ROW, _compile  # noqa: E402

_implements, _np, _nt, xp = _base._implements, _base._np, _base._nt, _base.xp
INTERNAL = _base.INTERNAL
# </own-module>


@numba.njit(cache=True, **INTERNAL)
def _is_reduced(d, axes):
    for a in axes:
        if a == d:
            return True
    return False


@numba.njit(cache=True, **INTERNAL)
def _group_of(idx, shape, axes):
    """The element ``idx``'s group (its index over the kept axes) and place in it (its index over
    ``axes``), both in C order: the row and column of the (kept) × (reduced) view."""
    group = 0
    place = 0
    for d in range(len(shape)):
        if _is_reduced(d, axes):
            place = place * shape[d] + idx[d]
        else:
            group = group * shape[d] + idx[d]
    return group, place


@numba.njit(cache=True, **INTERNAL)
def _group_sizes(shape, axes):
    groups = 1
    size = 1
    for d in range(len(shape)):
        if _is_reduced(d, axes):
            size *= shape[d]
        else:
            groups *= shape[d]
    return groups, size


@numba.njit(cache=True, **INTERNAL)
def _grouped(a, axes):
    """a as a (groups) × (group size) matrix: the axes not in ``axes`` pick the row, ``axes`` the column."""
    groups, size = _group_sizes(a.shape, axes)
    out = xp.empty((groups, size), dtype=a.dtype)
    for idx in _np.ndindex(a.shape):
        g, k = _group_of(idx, a.shape, axes)
        out[g, k] = a[idx]
    return out


@numba.njit(cache=True, **INTERNAL)
def _ungrouped(m, a, axes):
    """The inverse of ``_grouped``: m's entries at the elements of an array shaped like ``a``."""
    out = xp.empty(a.shape, dtype=m.dtype)
    for idx in _np.ndindex(a.shape):
        g, k = _group_of(idx, a.shape, axes)
        out[idx] = m[g, k]
    return out


def _axes_tuple(axes):
    return isinstance(axes, _nt.BaseTuple) and all(isinstance(t, _nt.Integer) for t in axes)


def _table_axis(a, axes):
    """A float table reduced over one of its axes (numba_xp_along's kernels find the picks in place)."""
    return a.ndim == 2 and len(axes) == 1 and a.dtype == _nt.float64


def _picks(sign):
    """numba_xp_along's first-index kernels of the literal ``sign``'s extremum: down the columns, along the rows."""
    name = "argmax" if sign.literal_value > 0 else "argmin"
    return ALONG[name, 0], ALONG[name, 1]


def _flat_picks(sign, ndim):
    """A compiled ``flat_picks(a, axes)`` for a float array of ``ndim`` axes: where ``axes`` are its leading or
    its trailing axes (at run time: the helper's axes are a tuple of numbers), (the index in a's C order of
    each group's pick, in the groups' C order; True), found by numba_xp_along's kernels on a's (groups) x
    (group) or (group) x (groups) view, with no grouped copy; (nothing, True) where the groups are empty;
    (nothing, False) for other axes."""
    down, along = _picks(sign)

    def flat_picks(a, axes):
        m = len(axes)
        leading = trailing = True
        inner = 1
        for j in range(m):
            ax = axes[j] % ndim
            leading = leading and ax == j
            trailing = trailing and ax == ndim - m + j
            inner *= a.shape[ax]
        outer = a.size // inner if inner > 0 else 0
        if not (leading or trailing) or inner == 0:
            return xp.zeros(0, dtype=_np.int64), inner == 0
        c = _np.ascontiguousarray(a)
        if trailing:
            at = along(c.reshape((outer, inner)))
            for o in range(outer):
                at[o] += o * inner
        else:
            at = down(c.reshape((inner, outer)))
            for o in range(outer):
                at[o] = at[o] * outer + o
        return at, True
    return numba.njit(**INTERNAL)(flat_picks)


@_implements("first_extremum", cache=False, prefer_literal=True)
def _first_extremum(a, axes, sign):
    """1.0 at the first maximum (``sign`` 1, as ``argmax``) or minimum (-1, ``argmin``) of ``a`` over
    ``axes``, in C order over those axes and NaN first as in ``argmax``; 0.0 elsewhere.  (The axes
    reach the helper ``_first_extremum`` as a run-time tuple, so the groups are found element by
    element rather than by a transposition printed for them; the sign is a number, not the function
    ``xp.argmax``, which as a value would keep the caller out of Numba's disk cache.)  The sign is a literal
    at every call (the rule prints it; the helper passes it on with ``numba.literally``): only its pick is
    printed and compiled, not both with a test at run time."""
    if not (isinstance(a, _nt.Array) and _axes_tuple(axes) and isinstance(sign, _nt.IntegerLiteral)):
        return None
    if _table_axis(a, axes):
        down, along = _picks(sign)

        def pick_in_table(a, axes, sign):
            hit = xp.zeros(a.shape)
            rows = axes[0] % 2 == 1
            if a.shape[1 if rows else 0] > 0:             # (an empty group picks nothing)
                at = along(a) if rows else down(a)
                for grp in range(at.shape[0]):
                    if rows:
                        hit[grp, at[grp]] = 1.0
                    else:
                        hit[at[grp], grp] = 1.0
            return hit
        return pick_in_table
    generic = numba.njit(**INTERNAL)(_first_extremum_by_groups(sign))
    if a.dtype != _nt.float64:
        return generic
    flat_picks = _flat_picks(sign, a.ndim)

    def pick_of_run(a, axes, sign):
        at, found = flat_picks(a, axes)
        if not found:
            return generic(a, axes, sign)
        hit = xp.zeros(a.shape)
        flat = hit.reshape(-1)
        for o in range(at.shape[0]):
            flat[at[o]] = 1.0
        return hit
    return pick_of_run


def _first_extremum_by_groups(sign):
    """first_extremum over any axes: a's groups copied out (``_grouped``), each group's pick argmax's (argmin's)
    row code, the marks put back (``_ungrouped``); an empty group picks nothing."""
    pick = _ROW["argmax" if sign.literal_value > 0 else "argmin"]
    lines = ["m = _grouped(a, axes)", "hit = xp.zeros(m.shape)", "for g in range(m.shape[0]):", "    row = m[g]",
             "    n = m.shape[1]", "    if n > 0:"]
    lines += ["        " + ln for ln in pick.splitlines()]
    lines += ["        hit[g, r] = 1.0", "return _ungrouped(hit, a, axes)"]
    source = "def pick(a, axes, sign):\n" + "\n".join("    " + ln for ln in lines) + "\n"
    return _compile(source, "pick", {"_np": _np, "xp": xp, "_grouped": _grouped, "_ungrouped": _ungrouped})


@_implements("add_at_first_extremum", cache=False, prefer_literal=True)
def _add_at_first_extremum(b, a, axes, g, sign):
    """``b[e] += g[e]`` in place at the element e that ``first_extremum(a, axes, sign)`` marks in each group
    (``g`` broadcast to a's shape): a max's cotangent over axes without the one-hot of a's size.  A g of a's
    rank is broadcast by its indices (a length-1 axis read at 0: the kept cotangent ``(n, 1)`` as it is,
    with no copy of a's size, which ``xp.broadcast_to`` makes); the generic path over other axes reads g
    broadcast."""
    if not (isinstance(b, _nt.Array) and isinstance(a, _nt.Array) and isinstance(g, _nt.Array) and
            _axes_tuple(axes) and isinstance(sign, _nt.IntegerLiteral)):
        return None
    if g.ndim != a.ndim:
        def broadcast_first(b, a, axes, g, sign):
            xp.add_at_first_extremum(b, a, axes, xp.broadcast_to(g, a.shape), sign)
        return broadcast_first
    if _table_axis(a, axes):
        # a table's rows or columns: numba_xp_along's picks, in the table's order (no grouped copy of a, no
        # group computed per element)
        down = _picks(sign)[0]
        add_along = ADD_ALONG_ROWS[sign.literal_value]

        def add_in_table(b, a, axes, g, sign):
            rows = axes[0] % 2 == 1
            if rows:
                add_along(b, a, g)
            elif a.shape[0] > 0:             # (an empty group picks nothing)
                at = down(a)
                for grp in range(at.shape[0]):
                    r = at[grp]
                    b[r, grp] += g[r if g.shape[0] > 1 else 0, grp if g.shape[1] > 1 else 0]
        return add_in_table
    generic = numba.njit(**INTERNAL)(_add_at_first_extremum_by_groups(sign))

    def add_by_groups(b, a, axes, g, sign):
        generic(b, a, axes, xp.broadcast_to(g, a.shape), sign)
    if a.dtype != _nt.float64:
        return add_by_groups
    flat_picks, ndim = _flat_picks(sign, a.ndim), a.ndim

    def add_in_run(b, a, axes, g, sign):
        at, found = flat_picks(a, axes)
        if not found:
            generic(b, a, axes, xp.broadcast_to(g, a.shape), sign)
            return
        pos = xp.empty(ndim, dtype=_np.int64)      # (a pick's index, axis by axis; and g's)
        pos_g = xp.empty(ndim, dtype=_np.int64)
        for o in range(at.shape[0]):
            flat = at[o]
            for d in range(ndim - 1, -1, -1):
                pos[d] = flat % a.shape[d]
                pos_g[d] = pos[d] if g.shape[d] > 1 else 0
                flat //= a.shape[d]
            b[_to_fixed_tuple(pos, ndim)] += g[_to_fixed_tuple(pos_g, ndim)]
    return add_in_run


def _add_at_first_extremum_by_groups(sign):
    """add_at_first_extremum over any axes: a's groups copied out (``_grouped``), each group's pick found by
    argmax's (argmin's) row code, then every element of a visited, added to where it is its group's pick."""
    pick = _ROW["argmax" if sign.literal_value > 0 else "argmin"]
    lines = ["m = _grouped(a, axes)", "at = _np.full(m.shape[0], -1)", "for grp in range(m.shape[0]):",
             "    row = m[grp]", "    n = m.shape[1]", "    if n > 0:"]
    lines += ["        " + ln for ln in pick.splitlines()] + ["        at[grp] = r"]
    lines += ["for idx in _np.ndindex(a.shape):", "    grp, k = _group_of(idx, a.shape, axes)", "    if k == at[grp]:",
              "        b[idx] += g[idx]"]
    source = "def add(b, a, axes, g, sign):\n" + "\n".join("    " + ln for ln in lines) + "\n"
    return _compile(source, "add", {"_np": _np, "xp": xp, "_grouped": _grouped, "_group_of": _group_of})


@_implements("prod_except_axes")
def _prod_except_axes(a, axes):
    """The products, along ``axes``, of all the other elements (the gradient of prod over axes):
    prefix times suffix products in each group, no division (zero-safe), as the NumPy helper."""
    if not (isinstance(a, _nt.Array) and _axes_tuple(axes)):
        return None

    def others(a, axes):
        m = _grouped(a, axes).astype(_np.float64)
        out = xp.empty(m.shape)
        for g in range(m.shape[0]):
            acc = 1.0
            for k in range(m.shape[1]):
                out[g, k] = acc
                acc *= m[g, k]
            acc = 1.0
            for k in range(m.shape[1] - 1, -1, -1):
                out[g, k] *= acc
                acc *= m[g, k]
        return _ungrouped(out, a, axes)
    return others

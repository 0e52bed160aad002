"""A nest's loop over points whose log-sum-exp keeps a row: run a tile of points at a time, the points innermost.

A Gaussian mixture's adjoint nest (``for i: for k:``, :mod:`coarsen_nb.lower.numba_lse_rows`) computes, at
each point, a row of K terms, their maximum, their exponentials, their sum, a logarithm, then the scatters
``b_x[k] += ...``: each a loop over K (8) components, too short for LLVM's vectors and, for the maximum, the
sum and the scatters (ordered float reductions), not vectorizable at all.  XLA computes the same over the
points instead.  Here the loop over the points is taken a tile (``NEST_TILE``) of points at a time, and each
statement of its body becomes a loop over the tile (scalar expansion, then loop distribution):

* a number the body computes at each point (``top``, ``s``, ``lse``, ``inv``) is a tile of numbers,
  ``top[i - tile]``; the row is a (K, NEST_TILE) table, ``row[k, i - tile]``;
* the body's loops over the components run around a loop over the tile (interchanged): ``for k: for i:``,
  each point's maximum and sum taken over k in the same order as before, the loop over the tile one
  elementwise operation on every point (vectorized);
* a scatter ``b_x[k] += v`` of such a loop adds into a lane of a table per point of the tile,
  ``lanes[k, i - tile] += v`` (elementwise: vectorized), and after the tiles each element adds its lanes;
* an array read at the point, ``x[i]``, is read through the tile's view, ``x_tile[i - tile]`` (a vector load
  where ``x[i]``, whose index Numba may wrap around, is a gather); a number the body computes at each point
  but only one arm of a later branch reads is computed in that arm (the gradient's logarithm of a row's
  sum, which only the refill reads);
* the other statements (a branch at one point, the refill of the row where its sum is not positive, an
  accumulator over the points ``acc += lse``) run in a loop over the tile in point order; a value the body
  computes that reads nothing of the point (a test of the shift's sign) is computed once, before.

Every value and every sum but the scatters' is the one the loop over the points computes, in the same order:
bit for bit; each scatter's element receives the same terms in another order (by lanes, then the lanes): to
rounding.  It applies where this is so by construction: the loops over the components have bounds that read
nothing of the point and hold no loop themselves; every array the body writes but its rows is written by ``+=``
alone, at indices of one loop's variables, in one statement group, and read nowhere else; a number
carried from one point to the next (the accumulator) lives in one group; nothing the body computes is read
after the loop.  Otherwise :func:`tiled` answers None and the nest runs as before.
"""

from __future__ import annotations

import dataclasses

from coarsen_nb.lower import lir

# the points of a tile of the rows' passes (numba_rows, numba_row_exps): 16 doubles are two AVX-512 or
# four AVX2 vectors (a hand loop measured 16 best)
TILE = 16
# the points of a nest's tile: LLVM vectorizes a loop over the tile only where it runs 20 times or more
# (below, its runtime tests that the tables do not overlap cost more than they save: every scatter of
# gmm's tile of 16 ran scalar); a (K, 64) row and the scatters' (K, 64) lanes of eight components stay in
# the first-level cache (gmm 10^5, the hand experiment of stop 39: 16 points 4.06 ms, 32 2.54, 64 2.42,
# 128 2.30)
NEST_TILE = 64


def tiled(body, rows: set[str], fresh) -> list[lir.Stmt] | None:
    """``body`` (a nest function's statements) with its loop over the points in tiles (module docstring),
    or None where no loop is of that shape.  ``rows``: the nest's per-point rows (``xp.empty`` of the
    components' count, before the loop); ``fresh``: the function's fresh names."""
    body = list(body)
    for at, loop in enumerate(body):
        if _points_loop(loop, rows):
            made = tile(body[:at], loop, body[at + 1:], rows, fresh)
            if made is not None:
                return made
    return None


def _points_loop(s, rows) -> bool:
    return isinstance(s, lir.For) and isinstance(s.target, lir.Name) and plain_range(s.iter) and \
        any(isinstance(x, lir.For) for x in s.body) and bool(names_used(s.body) & rows)


def plain_range(it) -> bool:
    return isinstance(it, lir.Call) and str(it.func) == "range" and len(it.args) == 2


def tile(before, loop, after, rows, fresh, scalars=False):
    """The loop ``loop`` between ``before`` and ``after`` in tiles (:func:`tiled`), or None; ``rows``: its per-point
    rows.  ``scalars`` (a row contraction's loop, :mod:`coarsen_nb.lower.numba_row_tiles`): a number the
    body uses in one loop over the tile alone stays a number of that loop (not a tile of numbers)."""
    i = loop.target.id
    loop = dataclasses.replace(loop, body=_sunk(loop.body, names_used(before) | names_used(after) | {i}))
    mine = rows & names_used(loop.body)
    # (a row is per point: allocated before, read and written in this loop alone)
    if any(mine & names_used([s]) for s in after) or \
            any(mine & names_used([s]) for s in before if not _allocation(s, mine)):
        return None
    assigned = _assigned(loop.body)
    earlier = _assigned(before)
    carried = assigned & earlier
    if (assigned - carried) & names_used(after) or i in names_used(after):
        return None
    # (invariants: assigned at the loop's top level once, reading nothing the loop assigns, no array, calling
    # nothing but math's functions: computed once before the loop, also where it runs no point, harmlessly)
    # (in order, so that one reading only invariants hoisted before it is hoisted too: ``t2 = max(0, t - n)``)
    hoisted, rest = [], []
    for s in loop.body:
        if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id not in earlier and \
                sum(1 for t in lir.statements(loop.body) if s.target.id in targets_written(t)) == 1 and \
                not (set(lir.names_in(s.value)) & (assigned | {i})) and _pure(s.value):
            hoisted.append(s)
            assigned -= {s.target.id}
        else:
            rest.append(s)
    groups = _groups(rest, i, assigned | {i})
    if groups is None:
        return None
    uses: dict = {}
    for g, (_, stmts) in enumerate(groups):
        for n in names_used(stmts) & assigned:
            uses.setdefault(n, set()).add(g)
    # (a number carried from point to point is added in one group, in point order: not in an interchanged one)
    if any(len(uses.get(n, ())) > 1 or any(groups[g][0] == "components" for g in uses.get(n, ()))
           for n in carried):
        return None
    written = {}
    for g, (_, stmts) in enumerate(groups):
        for t in lir.statements(stmts):
            for target in array_targets(t):
                if target in mine:
                    continue
                if not isinstance(t, lir.AugAssign) or written.get(target, g) != g:
                    return None
                written[target] = g
    for _, stmts in groups:
        for t in lir.statements(stmts):
            reads = [e for x in t.exprs() for e in lir.walk(x)]
            if isinstance(t, lir.AugAssign):
                reads = [e for x in (t.value, *t.target.items) for e in lir.walk(x)] \
                    if isinstance(t.target, lir.Index) else reads
            if any(isinstance(e, lir.Name) and e.id in written for e in reads):
                return None
    # the numbers of each point: those assigned in the loop, of more than one group or at the top level
    top_level = {n for s in rest if not isinstance(s, lir.For) for n in targets_written(s)}
    expanded = sorted(n for n in assigned - carried - _loop_variables(rest)
                      if len(uses.get(n, ())) > 1 or (n in top_level and not scalars))
    tile, stop = (lir.Name(fresh(w)) for w in ("tile", "stop"))
    offset = lir.BinOp("-", lir.Name(i), tile)
    size = lir.Lit(str(NEST_TILE))
    change = {n: lir.Index(lir.Name(n), (offset,)) for n in expanded}
    points = lir.Call(lir.Name("range"), (tile, stop))
    lo, hi = loop.iter.args
    views = _viewed(rest, i, lo, mine | set(written) | _assigned(loop.body), fresh)
    out, lanes, totals = [], [], []
    for kind, stmts in groups:
        stmts = rewrite_per_point(tuple(stmts), change, mine, offset)
        stmts = _views(stmts, i, views, offset)
        if kind == "points":
            out.append(lir.For(loop.target, points, stmts))
            continue
        (inner,) = stmts
        fill, made_lanes, added = _scatters(inner, loop.target, points, offset, fresh, size)
        out.append(fill)
        lanes.extend(made_lanes)
        totals.extend(added)
    cut = [lir.Assign(view, lir.Index(lir.Name(a), (lir.Slice(tile, stop),))) for a, view in views.items()]
    chunks = lir.For(tile, lir.Call(lir.Name("range"), (lo, hi, size)),
                     (lir.Assign(stop, lir.Call(lir.Name("min"), (lir.BinOp("+", tile, size), hi))), *cut, *out))
    made = [lir.Assign(lir.Name(n), _empty(size)) for n in expanded]
    before = [_widened(s, mine, size) for s in before]
    return [*before, *hoisted, *made, *lanes, chunks, *totals, *after]


def _loop_variables(stmts) -> set[str]:
    """The variables of the loops at the top level of ``stmts`` that nothing else there reads or assigns: each
    loop's own (a row contraction's loops over the columns all count with ``j``), not a number of the point."""
    bound = {s.target.id for s in stmts if isinstance(s, lir.For) and isinstance(s.target, lir.Name)}
    for s in stmts:
        if not (isinstance(s, lir.For) and isinstance(s.target, lir.Name)):
            bound -= names_used([s])
    return bound


def _pure(e) -> bool:
    """``e`` reads no array and calls only ``math``'s functions, ``min``, ``max`` or ``abs``."""
    for x in lir.walk(e):
        if isinstance(x, lir.Index):
            return False
        if isinstance(x, lir.Call) and not (str(x.func) in ("min", "max", "abs") or (
                isinstance(x.func, lir.Attr) and str(x.func.value) == "math")):
            return False
    return True


def _groups(stmts, i, assigned):
    """The loop body's statements in groups: ``("components", [for k ...])`` for a loop over the components
    (its bounds read nothing of the point, no loop inside), ``("points", [...])`` for a run of the others."""
    groups: list = []
    for s in stmts:
        if isinstance(s, lir.For) and isinstance(s.target, lir.Name) and \
                not (set(lir.names_in(s.iter)) & assigned) and \
                not any(isinstance(t, (lir.For, lir.While)) for t in lir.statements(s.body)):
            # (an element written at both the point and the component, or at a number the body computes:
            # interchanged, its writes could come in another order)
            for t in lir.statements(s.body):
                if array_targets(t):
                    names = {n for x in t.target.items for n in lir.names_in(x)}
                    if (i in names and s.target.id in names) or names & (assigned - {i, s.target.id}):
                        return None
            groups.append(("components", [s]))
        elif groups and groups[-1][0] == "points" and not _holds_a_loop(s):
            groups[-1][1].append(s)
        else:
            groups.append(("points", [s]))
    return groups


def _holds_a_loop(s) -> bool:
    """A branch with a loop inside (the refill of a row whose sum is not positive, at few points if any)
    starts a loop over the tile of its own: the statements before it then run in a loop without it, which
    LLVM can vectorize (gmm 10^5, hand experiment: 2.42 -> 2.31 ms)."""
    return isinstance(s, lir.If) and any(isinstance(t, (lir.For, lir.While)) for t in lir.statements([s]))


def _scatters(inner, i, points, offset, fresh, size):
    """A loop over the components (``inner``) around a loop over the tile; each scatter ``b[k] += v`` (an
    index that reads neither the point nor the body, one index per array) added into a lane of its own table,
    ``lanes[k - lo, i - tile] += v``, allocated before the tiles and zero; after the tiles each element adds
    its lanes in order: ``b[k] += lanes[k - lo, j]``.  Returns the loop, the tables' allocations and the
    loops that add them.

    The tile's points then add elementwise, no longer in one chain that LLVM may not reorder (an ordered
    float sum never vectorizes): measured on gmm 10^5, 2.8 ms where a number per element (``acc = b[k]``,
    ``acc += v``, ``b[k] = acc``) took 4.1.  Each element receives the same terms, added in another order
    (a lane per point of the tile, then the lanes): equal to the loop over the points to rounding, its
    order of additions that of a sum by blocks.  Where the loop's range is not ``range(lo, hi)`` (or it backwards) the
    scatters add in a number per element, in point order."""
    body = inner.body
    fill, before, after, made, totals = [], [], [], [], []
    sums: dict = {}
    # (an array added to at two indices keeps its ``+=``: the two may be one element)
    at: dict = {}
    for s in body:
        for array in array_targets(s):
            at.setdefault(array, set()).add(str(s.target))
    lo, hi = _span(inner.iter)
    laned = lo is not None
    k = inner.target
    lane = lir.Name(fresh("lane")) if laned else None
    for s in body:
        if isinstance(s, lir.AugAssign) and isinstance(s.target, lir.Index) and \
                len(at[s.target.value.id]) == 1 and \
                not (set(n for x in s.target.items for n in lir.names_in(x)) & (_assigned(body) | {i.id})):
            key = str(s.target)
            if key not in sums:
                sums[key] = lir.Name(fresh("lanes" if laned else "acc"))
                if laned:
                    made.append(lir.Assign(sums[key], lir.Call(lir.Attr(lir.Name("xp"), "zeros"), (lir.Tuple((
                        lir.Call(lir.Name("max"), (lir.Lit("0"), _minus(hi, lo))), size)),))))
                    totals.append(lir.AugAssign(s.target, s.op, lir.Index(sums[key], (_minus(k, lo), lane))))
                else:
                    before.append(lir.Assign(sums[key], s.target))
                    after.append(lir.Assign(s.target, sums[key]))
            into = lir.Index(sums[key], (_minus(k, lo), offset)) if laned else sums[key]
            fill.append(lir.AugAssign(into, s.op, s.value))
        else:
            fill.append(s)
    loop = lir.For(k, inner.iter, (*before, lir.For(i, points, tuple(fill)), *after))
    if totals:
        totals = [lir.For(k, inner.iter, (lir.For(lane, lir.Call(lir.Name("range"), (lir.Lit("0"), size)),
                                                  tuple(totals)),))]
    return loop, made, totals


def _span(it):
    """``(lo, hi)`` of a loop over ``range(lo, hi)`` or over ``range(hi - 1, lo - 1, -1)`` (the order a running
    power's exponent grows in, :mod:`coarsen_nb.lower.numba_rows`), else ``(None, None)``."""
    if plain_range(it):
        return it.args
    if isinstance(it, lir.Call) and str(it.func) == "range" and len(it.args) == 3 and str(it.args[2]) == "-1":
        return _plus_one(it.args[1]), _plus_one(it.args[0])
    return None, None


def _plus_one(e):
    """``e + 1``: a literal's successor, ``x`` for ``x - 1``."""
    if isinstance(e, lir.Lit) and e.code.lstrip("-").isdigit():
        return lir.Lit(str(int(e.code) + 1))
    if isinstance(e, lir.BinOp) and e.op == "-" and isinstance(e.right, lir.Lit) and e.right.code == "1":
        return e.left
    return lir.BinOp("+", e, lir.Lit("1"))


def _minus(a, b):
    """``a - b``, ``a`` where ``b`` is the literal 0."""
    if isinstance(b, lir.Lit) and b.code == "0":
        return a
    return lir.BinOp("-", a, lir.Paren(b) if isinstance(b, lir.BinOp) else b)


def _viewed(stmts, i, lo, written, fresh) -> dict:
    """The arrays the tile reads at the point, ``a[i, ...]`` (or ``a[int(i), ...]``), that it does not write:
    each gets a view of the tile's rows, ``a_tile = a[tile:stop]``, read at ``a_tile[i - tile, ...]``.
    Numba wraps a negative index around, so at ``a[i]`` (``i`` not known to be >= 0) LLVM gathers the
    tile's elements one by one; at ``i - tile`` (from 0) it loads them as a vector (gmm 10^5: 0.4 ms of
    2.8).  Only where the points start at a literal >= 0: the nest's bounds are proved (the unchecked
    twin), so the view holds exactly the rows the points read."""
    if not (isinstance(lo, lir.Lit) and lo.code.isdigit()):
        return {}
    found: dict = {}
    for s in lir.statements(stmts):
        for x in s.exprs():
            for e in lir.walk(x):
                if isinstance(e, lir.Index) and isinstance(e.value, lir.Name) and e.value.id not in written \
                        and is_point_index(e.items[0], i) and e.value.id not in found:
                    found[e.value.id] = lir.Name(fresh(f"{e.value.id}_tile"))
    return found


def is_point_index(e, i) -> bool:
    if isinstance(e, lir.Call) and str(e.func) == "int" and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, lir.Name) and e.id == i


def _views(node, i, views, offset):
    """``node`` with each read ``a[i, ...]`` of an array with a view as ``a_tile[i - tile, ...]``."""
    if not views:
        return node

    def visit(x):
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and x.value.id in views and \
                is_point_index(x.items[0], i):
            return lir.Index(views[x.value.id], (offset, *_views(tuple(x.items[1:]), i, views, offset)))
        return None
    return lir.rewrite(node, visit)


def _sunk(body, keep: set) -> tuple:
    """``body`` with a number computed at each point but read in one arm of one later ``if`` alone computed
    at the top of that arm: the gradient's log-sum-exp reads its logarithm only where it refills a row whose
    sum is not positive, and computed it at every point (gmm 10^5: 0.4 ms of 2.8).  Only an assignment of
    no array read and no call but ``math``'s (nothing it reads is written between, nothing is skipped that
    could raise), of a name assigned once and not in ``keep`` (read before or after the loop)."""
    body = list(body)
    for at, s in enumerate(body):
        if not (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id not in keep
                and _pure(s.value)):
            continue
        n = s.target.id
        readers = [j for j, t in enumerate(body) if j != at and n in names_used([t])]
        if len(readers) != 1 or readers[0] < at or not isinstance(body[readers[0]], lir.If):
            continue
        j = readers[0]
        branch = body[j]
        reads = set(lir.names_in(s.value))
        if n in lir.names_in(branch.test) or any(_assigned([u]) & reads for u in body[at + 1:j]) or \
                sum(1 for t in lir.statements(body) if n in targets_written(t)) != 1:
            continue
        arms = (n in names_used(branch.body), n in names_used(branch.orelse))
        if arms == (True, False):
            body[j] = dataclasses.replace(branch, body=(s, *branch.body))
        elif arms == (False, True):
            body[j] = dataclasses.replace(branch, orelse=(s, *branch.orelse))
        else:
            continue
        del body[at]
        return _sunk(body, keep)
    return tuple(body)


def _empty(size):
    return lir.Call(lir.Attr(lir.Name("xp"), "empty"), (size,))


def _allocation(s, rows) -> bool:
    return isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id in rows


def _widened(s, rows, size):
    """A row's allocation ``xp.empty(K)`` as the (K, TILE) table."""
    if _allocation(s, rows):
        (count,) = s.value.args
        return lir.Assign(s.target, lir.Call(s.value.func, (lir.Tuple((count, size)),)))
    return s


def rewrite_per_point(node, change, rows, offset):
    """``node`` with each per-point number ``n`` read and written as ``n[i - tile]`` and each row
    ``row[k]`` as ``row[k, i - tile]``."""
    def visit(x):
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and x.value.id in rows:
            return lir.Index(x.value, (*rewrite_per_point(tuple(x.items), change, rows, offset), offset))
        if isinstance(x, lir.Name) and x.id in change:
            return change[x.id]
        return None
    return lir.rewrite(node, visit)


def names_used(stmts) -> set[str]:
    """Every name the statements read or assign (the tiled rows' printer asks it too)."""
    out: set = set()
    for s in lir.statements(stmts):
        for e in s.exprs():
            out.update(lir.names_in(e))
        out.update(targets_written(s))
    return out


def targets_written(s) -> set[str]:
    if isinstance(s, (lir.Assign, lir.AugAssign)) and isinstance(s.target, lir.Name):
        return {s.target.id}
    if isinstance(s, lir.Assign) and isinstance(s.target, lir.Tuple):
        return {e.id for e in s.target.elts if isinstance(e, lir.Name)}
    if isinstance(s, lir.For) and isinstance(s.target, lir.Name):
        return {s.target.id}
    return set()


def _assigned(stmts) -> set[str]:
    return {n for s in lir.statements(stmts) for n in targets_written(s)}


def array_targets(s) -> list[str]:
    if isinstance(s, (lir.Assign, lir.AugAssign)) and isinstance(s.target, lir.Index) and \
            isinstance(s.target.value, lir.Name):
        return [s.target.value.id]
    return []

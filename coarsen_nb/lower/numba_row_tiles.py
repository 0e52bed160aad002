"""A row contraction's loop over the rows in tiles: :mod:`coarsen_nb.lower.numba_tiles`' pass on the rows.

A row contraction (:mod:`coarsen_nb.lower.numba_rows`) computes at each row its sums over the columns (inner
loops), a function of them, and its scatters over the columns.  Where the inner loops are short and each step
depends on the last (a Horner polynomial's ``for j: acc += c[j] * pw; pw *= x_i``, nine steps), the row loop
runs one dependent chain at a time and nothing vectorizes (the scatters ``b_c[j] += ...`` are ordered sums).
Over a tile of rows the same steps are elementwise operations on the tile (:func:`numba_tiles.tile`: the row's
numbers as tiles, each loop over the columns around a loop over the tile, the scatters by lanes): horner_fit
10^5, 0.98 -> 0.52 ms a gradient (benchmarks/RESULTS.md, stop 40).  The value's sums over the rows keep their
order (bit for bit); the scatters add the same terms by lanes (to rounding).
"""

from __future__ import annotations

import dataclasses

from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_tiles import (
    NEST_TILE,
    array_targets,
    is_point_index,
    names_used,
    plain_range,
    rewrite_per_point,
    targets_written,
    tile,
)


def tiled_rows(body, fresh) -> list[lir.Stmt] | None:
    """``body`` (a row contraction's loop function, :mod:`coarsen_nb.lower.numba_rows`) with its loop over the
    rows in tiles, as :func:`numba_tiles.tiled` does a nest's: the row's numbers (its running powers, its dot
    products' accumulators) become tiles of numbers, its loops over the columns run around a loop over the tile, each
    an elementwise operation on the tile's rows that LLVM vectorizes, and its scatters add into lanes.  A
    Horner polynomial's row, ``for j: acc += c[j] * pw; pw *= x_i``, is a chain of dependent multiplies and
    adds at each row, nine long, one row at a time; over the tile it is a vector of rows at each step
    (horner_fit 10^5, benchmarks/RESULTS.md stop 40).  None where the loop is not of the shape
    :func:`numba_tiles.tiled` takes, and where the row reads a matrix's row ``X[i, j]``: over the tile that
    is a strided read of a column, where the row's dot product read it contiguously (a logistic potential's
    gradient, 10^5 x 10, measured 2.3 -> 3.1 ms tiled)."""
    body = list(body)
    for at, loop in enumerate(body):
        if isinstance(loop, lir.For) and isinstance(loop.target, lir.Name) and plain_range(loop.iter) and \
                any(isinstance(x, lir.For) for x in loop.body) and not _reads_rows(loop.body, loop.target.id):
            start = loop.iter.args[0]
            if isinstance(start, lir.Lit) and start.code.isdigit():     # (the views read the copies' elements)
                loop = dataclasses.replace(loop, body=_read_through(loop.body, loop.target.id,
                                                                    names_used(body[:at]) | names_used(body[at + 1:])))
            made = tile(body[:at], loop, body[at + 1:], set(), fresh, scalars=True)
            if made is not None:
                return made
    return None


def _reads_rows(stmts, i) -> bool:
    """``stmts`` read an array of two or more dimensions at the point ``i``: ``X[i, j]``."""
    return any(isinstance(e, lir.Index) and len(e.items) > 1 and is_point_index(e.items[0], i)
               for s in lir.statements(stmts) for x in s.exprs() for e in lir.walk(x))


def _read_through(body, i, keep) -> tuple:
    """``body`` without its copies of an element at the point, ``x_i = x[i]`` of an array it does not write:
    each read of ``x_i`` reads ``x[i]`` (then the tile's view, ``numba_tiles._viewed``), where the copy would
    be a tile of numbers stored and loaded again.  Only a name assigned once and not in ``keep``."""
    written = {a for t in lir.statements(body) for a in array_targets(t)}
    change = {}
    for s in body:
        if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and isinstance(s.value, lir.Index) and \
                isinstance(s.value.value, lir.Name) and s.value.value.id not in written and \
                len(s.value.items) == 1 and is_point_index(s.value.items[0], i) and s.target.id not in keep and \
                sum(1 for t in lir.statements(body) if s.target.id in targets_written(t)) == 1:
            change[s.target.id] = s.value
    if not change:
        return tuple(body)
    kept = tuple(s for s in body if not (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name)
                                         and s.target.id in change))
    return rewrite_per_point(kept, change, set(), None)


def passed_scratch(body, params, scratch: str, fresh):
    """``body`` (:func:`tiled_rows`' function) with its tiles and lanes views of one array ``scratch`` that the
    caller allocates and passes, ``(body, size)``; None where a lanes table's size reads a name other than
    ``params`` (the caller computes the size before the call).

    Numba compiles NumPy's ``empty``/``zeros`` anew for each caller and array rank: the tiles' ``xp.empty(64)``
    and the lanes' ``xp.zeros((K, 64))`` cost horner_fit's cold compile ~0.1 s CPU (benchmarks/RESULTS.md,
    stop 40), where the caller's ``xp.zeros((size,))`` is the instance its own ``b_c = xp.zeros(c.shape)``
    compiled already.  The tiles ``t = scratch[a:a + 64]``, each lanes table a flat run of ``K * 64`` read
    by rows (:func:`_by_rows`: the same elements in the same order, so the same sums), zero as the caller's
    ``zeros`` made it.  The steady state holds (horner_fit 10^5: 0.54 ms a gradient either way)."""
    size = lir.Lit(str(NEST_TILE))
    out, flat = [], {}
    fixed, counted = 0, []          # (the offset: a literal, and the lanes tables' sizes before)
    for s in body:
        if not _allocated(s):
            out.append(s)
            continue
        start = _offset(fixed, counted)
        if _call_name(s.value) == "empty":
            fixed += NEST_TILE
        else:
            count = s.value.args[0].elts[0]
            if not set(lir.names_in(count)) <= set(params) | {"max", "min"}:
                return None
            counted.append(lir.BinOp("*", lir.Paren(count) if isinstance(count, lir.BinOp) else count, size))
            flat[s.target.id] = size
        view = lir.Slice(None if _zero(start) else start, _offset(fixed, counted))
        out.append(lir.Assign(s.target, lir.Index(lir.Name(scratch), (view,))))
    if not flat:                    # (no lanes: the caller would compile a zeros of its own for the tiles)
        return None
    return _by_rows(tuple(out), flat, fresh), _offset(fixed, counted)


def _offset(fixed: int, counted: list):
    """``fixed + counted[0] + ...``, the literal first."""
    out = lir.Lit(str(fixed))
    for part in counted:
        out = part if _zero(out) else lir.BinOp("+", out, part)
    return out


def _zero(e) -> bool:
    return isinstance(e, lir.Lit) and e.code == "0"


def _call_name(e) -> str | None:
    if isinstance(e, lir.Call) and isinstance(e.func, lir.Attr) and str(e.func.value) == "xp":
        return e.func.attr
    return None


def _allocated(s) -> bool:
    """``n = xp.empty(64)`` (a tile of numbers) or ``lanes = xp.zeros((max(0, K), 64))`` (a lanes table), as
    :func:`numba_tiles.tile` allocates them before the tiles."""
    if not (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name)):
        return False
    tile_size = str(NEST_TILE)
    if _call_name(s.value) == "empty" and len(s.value.args) == 1:
        return str(s.value.args[0]) == tile_size
    if _call_name(s.value) == "zeros" and len(s.value.args) == 1 and isinstance(s.value.args[0], lir.Tuple):
        elts = s.value.args[0].elts
        return len(elts) == 2 and str(elts[1]) == tile_size
    return False


def _by_rows(node, flat: dict, fresh):
    """``node`` with each flat lanes table read by rows: in a loop over ``k`` that indexes ``lanes[k, j]``, the
    row ``lane = lanes[k * 64:k * 64 + 64]`` first, then ``lane[j]``.  (A flat index ``lanes[k * 64 + j]``
    that Numba cannot tell is not negative wraps around at each element: LLVM no longer vectorizes the
    scatters, horner_fit 10^5 0.54 -> 1.14 ms a gradient.)  Any other index of a table: ``lanes[k * 64 + j]``."""
    def visit(x):
        if isinstance(x, lir.For) and isinstance(x.target, lir.Name):
            k = x.target.id
            rows: dict = {}
            for t in lir.statements(x.body):
                for y in t.exprs():
                    for e in lir.walk(y):
                        if isinstance(e, lir.Index) and isinstance(e.value, lir.Name) and e.value.id in flat and \
                                len(e.items) == 2 and set(lir.names_in(e.items[0])) == {k}:
                            key = (e.value.id, str(e.items[0]))
                            if key not in rows:
                                start = _times(e.items[0], flat[e.value.id])
                                rows[key] = (lir.Name(fresh(f"{e.value.id}_row")), lir.Index(e.value, (lir.Slice(
                                    start, lir.BinOp("+", start, flat[e.value.id])),)))
            body = _rowed(x.body, rows) if rows else x.body
            made = tuple(lir.Assign(name, view) for name, view in rows.values())
            return dataclasses.replace(x, body=(*made, *_by_rows(body, flat, fresh)))
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and x.value.id in flat and len(x.items) == 2:
            k, j = (_by_rows(y, flat, fresh) for y in x.items)
            return lir.Index(x.value, (lir.BinOp("+", _times(k, flat[x.value.id]), j),))
        return None
    return lir.rewrite(node, visit)


def _times(k, size):
    return lir.BinOp("*", lir.Paren(k) if isinstance(k, lir.BinOp) else k, size)


def _rowed(node, rows: dict):
    """``node`` with each ``lanes[k, j]`` of ``rows`` (by the table and the text of ``k``) as ``lane[j]``."""
    def visit(x):
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and len(x.items) == 2 and \
                (x.value.id, str(x.items[0])) in rows:
            return lir.Index(rows[x.value.id, str(x.items[0])][0], (x.items[1],))
        return None
    return lir.rewrite(node, visit)

"""A tiled nest's (K, TILE) tables as flat runs of K·TILE, and its loops over the tile counted from 0.

:func:`numba_tiles.tile` gives each row of a log-sum-exp a table ``row = xp.empty((K, 64))`` and each scatter a
zero lanes table ``lanes = xp.zeros((K, 64))``, read at ``row[k, i - tile]`` in loops ``for i in range(tile,
stop)``.  Numba compiles NumPy's ``empty`` and ``zeros`` anew for each array rank: the 2-D ones, with the
zero fill of a 2-D array, are compiled for these tables alone, ~0.085 s of CPU of gmm's cold compile
(benchmarks/RESULTS.md, stop 42); its 2-D subscripts are more IR to type and lower than flat ones.  Here,
after the tiling:

* a row's or a lanes table is ``xp.empty(K * 64)`` (the 1-D ``empty`` of an integer every nest's per-point
  tables compile), a lanes table zeroed by a loop before the tiles, each element ``[k, j]`` at
  ``[k * 64 + j]``: the same elements, in the same order, so every value and sum is the same bit for bit;
* each loop over the tile runs ``for lane in range(0, stop - tile)`` with ``i - tile`` read as ``lane`` (and
  ``i`` as ``tile + lane``): a flat subscript ``k * 64 + lane`` of a loop variable counted from 0 is one LLVM
  knows is not negative, so Numba's wraparound of a negative index folds away and the loops still vectorize
  (``k * 64 + (i - tile)`` does not: gmm 10^5, 2.4 -> 15 ms a gradient; the same loop at ``lane``: 2.3 ms).

Only the tables :func:`numba_tiles.tile` makes are changed (an allocation ``xp.empty((count, 64))`` or
``xp.zeros((count, 64))`` before the loop over the tiles), and only where every subscript of each is a pair.
"""

from __future__ import annotations

import dataclasses

from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_tiles import NEST_TILE


def flat_tables(body, fresh) -> list[lir.Stmt]:
    """``body`` (a nest function's statements, tiled by :func:`numba_tiles.tiled`) with its 2-D tables flat and
    its loops over the tile counted from 0 (module docstring); ``body`` itself where it holds no tiles."""
    body = list(body)
    tiles = [s for s in body if _tiles_loop(s)]
    if len(tiles) != 1:
        return body
    (loop,) = tiles
    tables = {s.target.id: s for s in body[:body.index(loop)] if _table(s)}
    if not tables or not all(_pairs_only(body, name) for name in tables):
        return body
    size = lir.Lit(str(NEST_TILE))
    lane = lir.Name(fresh("lane"))
    out, zeroed = [], {}
    for s in body:
        if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id in tables:
            count = _times(s.value.args[0].elts[0], size)
            if s.value.func.attr == "zeros":
                zeroed.setdefault(str(count), (count, []))[1].append(s.target)
            s = lir.Assign(s.target, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (count,)))
        elif s is loop:
            out.extend(_zero_fills(zeroed, fresh))
            s = _counted_from_zero(s, lane)
        out.append(_flat_subscripts(s, tables, size))
    return out


def _zero_fills(zeroed: dict, fresh) -> list[lir.Stmt]:
    """A loop that zeroes the lanes tables of each length: ``for j in range(0, K * 64): lanes[j] = 0.0``.  (Not
    ``xp.zeros``: a loop function's ``zeros`` is compiled apart from its caller's, under NumPy's error model,
    ~0.06 s; its ``empty`` of an integer is the one its per-point tables compile.)"""
    fills = []
    for count, tables in zeroed.values():
        j = lir.Name(fresh("j"))
        fills.append(lir.For(j, lir.Call(lir.Name("range"), (lir.Lit("0"), count)),
                             tuple(lir.Assign(lir.Index(t, (j,)), lir.Lit("0.0")) for t in tables)))
    return fills


def _tiles_loop(s) -> bool:
    """``for tile in range(lo, hi, 64): stop = min(tile + 64, hi) ...``, as :func:`numba_tiles.tile` prints it."""
    return isinstance(s, lir.For) and isinstance(s.target, lir.Name) and isinstance(s.iter, lir.Call) and \
        str(s.iter.func) == "range" and len(s.iter.args) == 3 and str(s.iter.args[2]) == str(NEST_TILE) and \
        bool(s.body) and isinstance(s.body[0], lir.Assign) and isinstance(s.body[0].target, lir.Name)


def _table(s) -> bool:
    """``t = xp.empty((count, 64))`` or ``t = xp.zeros((count, 64))``."""
    if not (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and isinstance(s.value, lir.Call)):
        return False
    f = s.value.func
    if not (isinstance(f, lir.Attr) and str(f.value) == "xp" and f.attr in ("empty", "zeros")):
        return False
    args = s.value.args
    return len(args) == 1 and isinstance(args[0], lir.Tuple) and len(args[0].elts) == 2 and \
        str(args[0].elts[1]) == str(NEST_TILE)


def _pairs_only(body, name: str) -> bool:
    """Every read of the table ``name`` but its allocation is a subscript of two indices."""
    bare = []

    def visit(x):
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and x.value.id == name:
            if len(x.items) != 2:
                bare.append(x)
            lir.rewrite(tuple(x.items), visit)
            return x
        if isinstance(x, lir.Name) and x.id == name:
            bare.append(x)
        return None
    for s in body:
        if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id == name:
            continue
        lir.rewrite(s, visit)
    return not bare


def _counted_from_zero(loop, lane):
    """The loop over the tiles with each loop over a tile, ``for i in range(tile, stop)``, as ``for lane in
    range(0, stop - tile)``: ``i - tile`` read as ``lane``, any other read of ``i`` as ``tile + lane``."""
    tile, stop = loop.target, loop.body[0].target

    def visit(x):
        if isinstance(x, lir.For) and isinstance(x.target, lir.Name) and isinstance(x.iter, lir.Call) and \
                str(x.iter.func) == "range" and len(x.iter.args) == 2 and \
                str(x.iter.args[0]) == tile.id and str(x.iter.args[1]) == stop.id:
            i = x.target.id
            offset = str(lir.BinOp("-", lir.Name(i), tile))

            def inner(y):
                if isinstance(y, lir.BinOp) and str(y) == offset:
                    return lane
                if isinstance(y, lir.Name) and y.id == i:
                    return lir.Paren(lir.BinOp("+", tile, lane))
                return None
            span = lir.Call(lir.Name("range"), (lir.Lit("0"), lir.BinOp("-", stop, tile)))
            return lir.For(lane, span, tuple(lir.rewrite(tuple(x.body), visit_and(inner))))
        return None

    def visit_and(inner):
        # (a loop over the tile inside another one's body is its own loop: counted from 0 again)
        def both(y):
            return visit(y) or inner(y)
        return both
    return dataclasses.replace(loop, body=tuple(lir.rewrite(tuple(loop.body), visit)))


def _flat_subscripts(node, tables, size):
    """``node`` with each ``t[k, j]`` of a table ``t`` as ``t[k * 64 + j]``."""
    def visit(x):
        if isinstance(x, lir.Index) and isinstance(x.value, lir.Name) and x.value.id in tables and len(x.items) == 2:
            k, j = (_flat_subscripts(y, tables, size) for y in x.items)
            return lir.Index(x.value, (lir.BinOp("+", _times(k, size), j),))
        return None
    return lir.rewrite(node, visit)


def _times(k, size):
    return lir.BinOp("*", lir.Paren(k) if isinstance(k, lir.BinOp) else k, size)

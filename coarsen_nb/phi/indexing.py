"""Reads in one normal form before lifting: every read of a name, nested reads merged, masks as positions.

Three rewrites of the gated tree, once the types are known (they need the index types):

* **Nested reads with number indices merge**: ``X[i][j]`` is ``X[i, j]``, as NumPy defines it for an
  int ``i``.  The lifter and the sweeps know reads of a *name*; a read of a read would otherwise have
  its cotangent and tangent stop at the inner read.
* **Other nested reads are named first**: ``X[idx][0]`` (a gather, then an element of it) becomes
  ``$r = X[idx]`` then ``$r[0]``, so each read is of a name.  Inside one arm of a conditional expression
  (``a if c else X[m][0]``) the inner read would then run on both arms, and a read can raise (an index out
  of bounds): that form is a CoarsenError asking to name the inner read in its own statement.
* **1-D boolean masks become the positions they select**: NumPy reads ``x[m]`` with a boolean ``m`` as
  the elements where ``m`` holds; read as an index, a boolean array would be taken for the positions 0
  and 1 (silently wrong).  ``x[m]`` is ``x[flatnonzero(m)]``, a gather, which the lifter and the lowering
  know (its adjoint a scatter-add that accumulates repeats).  A mask of more dimensions (``X[X > 0]`` of a
  matrix) stays as it is: an opaque read NumPy computes, whose adjoint adds back through the same mask.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, name_minter
from coarsen_nb.phi.types import T, expr_type


def normalize(g: GatedFunction, types: dict[str, T]) -> tuple[GatedFunction, dict[str, T]]:
    """``g`` with its reads in the normal form above, and ``types`` extended with the new names'."""
    types = dict(types)
    fresh = name_minter(g, "r")

    def expr(e: ir.Expr, out: list, line: int, conditional: bool) -> ir.Expr:
        if isinstance(e, ir.Index):
            index = tuple(_positions(expr(i, out, line, conditional), types) for i in e.index)
            base = expr(e.value, out, line, conditional)
            if isinstance(base, ir.Index):
                if all(not expr_type(i, types).is_array for i in base.index):
                    return ir.Index(base.value, base.index + index)       # X[i][j] is X[i, j]
                if conditional:
                    raise CoarsenError(f"{base}[...]", line or None, hint="read the inner part in a statement of "
                                       "its own first (`rows = X[v > 0]`), then index that",
                                       message="a read of a gather or a masked read inside one arm of a "
                                       "conditional expression")
                name = fresh()
                types[name] = expr_type(base, types)
                out.append(Let(name, base, line))
                base = ir.Name(name)
            return ir.Index(base, index)
        if isinstance(e, ir.Update):
            index = tuple(_positions(expr(i, out, line, conditional), types) for i in e.index)
            return ir.Update(e.array, index, expr(e.value, out, line, conditional))
        if isinstance(e, ir.Tuple):
            return ir.Tuple(tuple(expr(v, out, line, conditional) for v in e.elts))
        if isinstance(e, ir.IfExp):
            return ir.IfExp(expr(e.test, out, line, conditional), expr(e.body, out, line, True),
                            expr(e.orelse, out, line, True))
        if isinstance(e, ir.BoolOp):
            first, *rest = e.values
            return ir.BoolOp(e.op, (expr(first, out, line, conditional),
                                    *(expr(v, out, line, True) for v in rest)))
        if isinstance(e, ir.Gamma):
            return ir.Gamma(expr(e.pred, out, line, conditional), expr(e.if_true, out, line, True),
                            expr(e.if_false, out, line, True))
        return ir.map_children(e, lambda c: expr(c, out, line, conditional))

    def let(n: Let, out: list) -> Let:
        value = expr(n.value, out, n.line, False)
        return n if value == n.value else Let(n.name, value, n.line)

    def region(nodes) -> tuple:
        out: list = []
        for n in nodes:
            if isinstance(n, Let):
                out.append(let(n, out))
            elif isinstance(n, If):
                then, orelse = region(n.then), region(n.orelse)
                gammas = tuple(let(m, out) for m in n.gammas)     # (arms: conditional, nothing is hoisted)
                out.append(If(n.cond, then, orelse, gammas, n.line))
            elif isinstance(n, Loop):
                out.append(Loop(n.label, n.info, n.mus, region(n.header), n.cond, region(n.body), n.etas))
            else:
                out.append(n)
        return tuple(out)

    body = region(g.body)
    return GatedFunction(g.name, g.params, body, g.result, g.source, g.words), types


def _positions(index: ir.Expr, types: dict[str, T]) -> ir.Expr:
    t = expr_type(index, types)
    if t.kind == "bool" and t.ndim == 1:
        return ir.Call("flatnonzero", (index,))
    return index

"""Array literals (``np.array([a, b])``, ``[[a, b], [c, d]]``): forward, VJP and JVP code.

``array_literal(a, b, ...)`` is the 1-D array of its entries; ``array_literal_2d(ncols, a, b, ...)``
the 2-D array of its entries row by row (:mod:`coarsen_nb.frontend.literals` makes both).  Entry k
(row-major) of the cotangent is the k-th entry's cotangent; the tangent is the entries' tangents,
arranged the same way.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import FLOAT64, xp_call

LITERALS = ("array_literal", "array_literal_2d")


def entries(e: ir.Call) -> tuple[ir.Expr, ...]:
    return e.args if e.func == "array_literal" else e.args[1:]


def _num(k: int) -> lir.Lit:
    return lir.Lit(str(k))


def _shaped(e: ir.Call, flat: lir.Expr) -> lir.Expr:
    if e.func == "array_literal":
        return flat
    ncols = e.args[0].value
    return xp_call("reshape", flat, lir.Tuple((_num(len(entries(e)) // ncols), _num(ncols))))


def _numbers(fn: str, codes: list[lir.Expr]) -> lir.List:
    """``[fn(a), fn(b), ...]``: each entry a Python number."""
    return lir.List(tuple(lir.Call(lir.Name(fn), (c,)) for c in codes))


def forward(e: ir.Call, codes: list[lir.Expr], ints: bool) -> lir.Expr:
    """The array, from the entries' ``codes``; an int array where every entry is an int (as NumPy's).

    Each entry is made a Python number first: an entry may be a 0-d array (a CuPy scalar, an array-API
    one), and the array API has no array of nested arrays."""
    if ints:
        return _shaped(e, xp_call("asarray", _numbers("int", codes)))
    return _shaped(e, xp_call("asarray", _numbers("float", codes), dtype=FLOAT64))


def cotangent_entries(e: ir.Call, bar: lir.Expr) -> list[tuple[ir.Expr, lir.Expr]]:
    """(entry, its cotangent) for each entry, from the array's cotangent ``bar``."""
    if e.func == "array_literal":
        return [(x, lir.Index(bar, (_num(k),))) for k, x in enumerate(entries(e))]
    ncols = e.args[0].value
    return [(x, lir.Index(bar, (_num(k // ncols), _num(k % ncols)))) for k, x in enumerate(entries(e))]


def jvp(e: ir.Call, tangents: list[lir.Expr]) -> lir.Expr:
    return _shaped(e, xp_call("asarray", _numbers("float", tangents), dtype=FLOAT64))

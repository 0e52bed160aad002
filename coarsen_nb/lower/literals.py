"""Array literals (``np.array([a, b])``, ``[[a, b], [c, d]]``): forward, VJP and JVP code.

``array_literal(a, b, ...)`` is the 1-D array of its entries; ``array_literal_2d(ncols, a, b, ...)``
the 2-D array of its entries row by row (:mod:`coarsen_nb.frontend.literals` makes both).  Entry k
(row-major) of the cotangent is the k-th entry's cotangent; the tangent is the entries' tangents,
arranged the same way.
"""

from __future__ import annotations

from coarsen_nb import ir

LITERALS = ("array_literal", "array_literal_2d")


def entries(e: ir.Call) -> tuple[ir.Expr, ...]:
    return e.args if e.func == "array_literal" else e.args[1:]


def _shaped(e: ir.Call, flat: str) -> str:
    if e.func == "array_literal":
        return flat
    ncols = e.args[0].value
    return f"xp.reshape({flat}, ({len(entries(e)) // ncols}, {ncols}))"


def forward(e: ir.Call, codes: list[str], ints: bool) -> str:
    """The array, from the entries' ``codes``; an int array where every entry is an int (as NumPy's).

    Each entry is made a Python number first: an entry may be a 0-d array (a CuPy scalar, an array-API
    one), and the array API has no array of nested arrays."""
    number = "int" if ints else "float"
    items = ", ".join(f"{number}({c})" for c in codes)
    return _shaped(e, f"xp.asarray([{items}]{'' if ints else ', dtype=xp.float64'})")


def cotangent_entries(e: ir.Call, bar: str) -> list[tuple[ir.Expr, str]]:
    """(entry, its cotangent) for each entry, from the array's cotangent ``bar``."""
    if e.func == "array_literal":
        return [(x, f"{bar}[{k}]") for k, x in enumerate(entries(e))]
    ncols = e.args[0].value
    return [(x, f"{bar}[{k // ncols}, {k % ncols}]") for k, x in enumerate(entries(e))]


def jvp(e: ir.Call, tangents: list[str]) -> str:
    return _shaped(e, f"xp.asarray([{', '.join(f'float({t})' for t in tangents)}], dtype=xp.float64)")

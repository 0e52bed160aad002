"""List and tuple literals of numbers: ``np.array([a, b * c])``, ``v = [a, b]``, ``np.sum((a, b))``.

A literal of scalar expressions is translated as the 1-D array NumPy makes of it: one opaque step
``array_literal(a, b, ...)`` (VJP: entry k of the cotangent to the k-th element; JVP: the elements'
tangents stacked), and ``[a, b][k]`` with a constant k is the element itself.  A literal of rows of
one length, ``[[a, b], [c, d]]``, is ``array_literal_2d(ncols, a, b, c, d)``: the same, row by row.

A Python list is not an array everywhere, though: ``v * 2`` repeats it, ``v + w`` concatenates,
``math.exp(v)`` raises.  So a literal — or a name a literal is assigned to — may only be used where
a list and its array mean the same: indexed, iterated, ``len``/``sum``/``min``/``max`` of it, or as an
argument of an ``np`` function (which converts it).  Anywhere else it is refused, with the fix
(``np.array([...])`` first).  Ragged or deeper literals and literals inside a subscript (``x[[0, 2]]``)
are refused too.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir

#: Builtins whose value is the same for a list of numbers and for its array.
LIST_SAFE_BUILTINS = ("len", "sum", "min", "max")

_FIX = "make it an array first, `np.array([...])`: on a Python list, operators and math functions " \
       "do not work elementwise (`v * 2` repeats the list, `v + w` joins two lists)"


def list_names(fdef: ast.FunctionDef) -> set[str]:
    """Names that a list or tuple literal is assigned to somewhere in ``fdef`` (``v = [a, b]``)."""
    out = set()
    for node in ast.walk(fdef):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


class LiteralTranslator:
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator` for list and tuple literals."""

    def _e_List(self, node: ast.List) -> ir.Expr:
        return self._array_literal(node, "list")

    def _e_Tuple(self, node: ast.Tuple) -> ir.Expr:
        return self._array_literal(node, "tuple")

    def _array_literal(self, node: ast.List | ast.Tuple, kind: str) -> ir.Expr:
        if not node.elts:
            raise self.unit.error(f"empty {kind}", node, "an array needs its entries: np.zeros(n) makes one of n zeros")
        rows = [e.elts if isinstance(e, (ast.List, ast.Tuple)) else None for e in node.elts]
        if any(r is not None for r in rows):
            if any(r is None or not r or len(r) != len(rows[0]) for r in rows):
                raise self.unit.error(f"ragged {kind} literal", node, "write every row with the same number of "
                                      "entries (a 2-D literal of numbers), or one flat list")
            entries = [e for r in rows for e in r]
        else:
            entries = node.elts
        for e in entries:
            if isinstance(e, ast.Starred):
                raise self.unit.error("*args", e, "write out each entry")
            if isinstance(e, (ast.List, ast.Tuple)):
                raise self.unit.error(f"nested {kind} literal", e, "only 1-D and 2-D literals of numbers are "
                                      "supported: pass a deeper array in as a parameter")
        elts = tuple(self.temp(self.expr(e), "a", e) for e in entries)
        if rows[0] is None:
            return self.temp(ir.Call("array_literal", elts), "p", node)
        return self.temp(ir.Call("array_literal_2d", (ir.Const(len(rows[0])), *elts)), "p", node)

    def literal_element(self, node: ast.Subscript) -> ast.expr | None:
        """``[a, b][k]`` with a constant k: the element's AST (Python's own indexing, negative k too)."""
        if isinstance(node.value, (ast.List, ast.Tuple)) and isinstance(node.slice, ast.Constant) \
                and type(node.slice.value) is int and -len(node.value.elts) <= node.slice.value < len(node.value.elts):
            return node.value.elts[node.slice.value]
        return None

    def is_list(self, node: ast.AST) -> bool:
        """Whether ``node`` is a list/tuple literal, or a name one was assigned to."""
        return isinstance(node, (ast.List, ast.Tuple)) or (isinstance(node, ast.Name) and
                                                            node.id in self.frame.list_names)

    def refuse_list_operands(self, operands, what: str) -> None:
        """A CoarsenError at the first of ``operands`` that is a list: ``what`` does not mean the same on it."""
        for n in operands:
            if self.is_list(n):
                name = f"'{n.id}' (a list)" if isinstance(n, ast.Name) else "a list literal"
                raise self.unit.error(f"list in {what}", n, _FIX, message=f"{name} in {what}")

    def refuse_list_index(self, e: ast.AST) -> None:
        if isinstance(e, (ast.List, ast.Tuple)):
            raise self.unit.error("list of indices", e, "make the positions an array first: x[np.array([0, 2])]")

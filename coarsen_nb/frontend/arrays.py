"""Calls whose arguments are not one array each: ``np.concatenate([x, y ** 2])``, ``np.stack((a, b), axis=1)``,
``x.reshape(n, m)``, ``x.reshape((2, -1))``, ``np.reshape(x, -1)``, ``np.clip(p, 1e-7, None)``.

A list literal is refused as an operand almost everywhere (:mod:`.literals`: a Python list is not an
array under ``*`` or ``+``), but the list of ``np.concatenate`` and ``np.stack`` is only a way of
writing several operands.  So here each element of a list or tuple written in the call becomes an
operand of its own (``concatenate(x, $t)``), and the call always carries its ``axis`` (0 unless
given; the rules of :mod:`coarsen_nb.rules.arrays` spell it).  A list held in a variable is refused:
its length is what the compiled step needs, and a variable hides it.

A reshape's sizes become one shape tuple operand, ``reshape(x, (n, m))``: its length is the rank of
the value (the type pass reads it), its entries may be any int values (``len(x) // 2``, ``-1``).
"""

from __future__ import annotations

import ast
import dataclasses

from coarsen_nb import ir, primitives
from coarsen_nb.frontend.static import static_parameters

#: The primitives translated here rather than as one operand per argument.
SHAPED_CALLS = ("concatenate", "stack", "reshape", "clip")


class ArrayCallTranslator:
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator`: the calls of :data:`SHAPED_CALLS`."""

    def shaped_call(self, name: str, node: ast.Call) -> ir.Expr:
        """``node`` (a call of ``name``, the array first for a reshape method) as its IR call."""
        if name == "reshape":
            return self._reshape(node)
        if name == "clip":
            return self._clip(node)
        prim = primitives.PRIMITIVES[name]
        fn = f"np.{prim.numpy}"
        if not node.args:
            raise self.unit.error(f"{fn}()", node, f"give the arrays as a list: {fn}([x, y])",
                                  message=f"{fn} needs a list of arrays")
        seq = node.args[0]
        if not isinstance(seq, (ast.List, ast.Tuple)):
            raise self.unit.error(f"{fn} of a list held in a variable", seq,
                                  f"write the arrays in the call, {fn}([x, y]): the compiled step needs to "
                                  "know how many there are", message=f"{fn}'s arrays must be written in the call")
        if not seq.elts:
            raise self.unit.error(f"{fn} of an empty list", seq, f"give at least one array: {fn}([x, y])")
        # the compile-time axis, read as though the list were one operand
        static = static_parameters(self.unit, dataclasses.replace(prim, nargs=(1,)), node) or (("axis", 0),)
        operands = []
        for e in seq.elts:
            if isinstance(e, ast.Starred):
                raise self.unit.error("*args", e, "write out each array")
            if self.is_list(e):
                raise self.unit.error(f"list in {fn}", e, f"make it an array first, np.array([...]), or write "
                                      f"its entries as arrays of the {fn}", message=f"a list inside {fn}'s list")
            operands.append(self.temp(self.expr(e), "a", e))
        return self.temp(ir.Call(name, tuple(operands), static), "p", node)

    def _clip(self, node: ast.Call) -> ir.Expr:
        """``np.clip(x, lo, hi)``; a bound written as ``None`` is no bound: ``np.maximum(x, lo)`` or
        ``np.minimum(x, hi)``, as NumPy defines it."""
        if len(node.args) != 3 or node.keywords:
            raise self.unit.error("np.clip", node, "give the array and both bounds by position: np.clip(x, lo, hi) "
                                  "(None for no bound)", message="np.clip takes 3 positional arguments here")
        x, lo, hi = node.args
        none = [isinstance(b, ast.Constant) and b.value is None for b in (lo, hi)]
        if all(none):
            raise self.unit.error("np.clip without bounds", node, "leave the call out: np.clip(x, None, None) is x",
                                  message="np.clip(x, None, None) clips nothing")
        operands = [a for a, n in zip((x, lo, hi), [False, *none], strict=True) if not n]
        args = tuple(self.expr(a) for a in operands)
        return ir.Call("minimum" if none[0] else "maximum" if none[1] else "clip", args)

    def _reshape(self, node: ast.Call) -> ir.Expr:
        where = "reshape" if len(node.args) < 1 else f"{ast.unparse(node.args[0])}.reshape"
        if node.keywords:
            kw = node.keywords[0]
            raise self.unit.error(f"{where}({kw.arg}=...)", kw, "give only the sizes, x.reshape(n, m): the "
                                  "order is always NumPy's default (C, row by row)",
                                  message=f"{where}(..., {kw.arg}=...) is not supported")
        if len(node.args) < 2:
            raise self.unit.error(f"{where}()", node, "give the new shape: x.reshape(n, m) or x.reshape(-1)",
                                  message=f"{where} needs a shape")
        base, sizes = node.args[0], node.args[1:]
        if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
            sizes = sizes[0].elts
        elif len(sizes) == 1 and self.is_list(sizes[0]):
            raise self.unit.error("reshape to a shape held in a variable", sizes[0], "write the sizes in the "
                                  "call: x.reshape(n, m) or x.reshape((n, m))",
                                  message="the shape of a reshape must be written in the call")
        elif len(sizes) == 1 and isinstance(sizes[0], ast.Attribute) and sizes[0].attr == "shape":
            shape = self.temp(self.expr(sizes[0]), "a", sizes[0])        # x.reshape(y.shape)
            return self._reshaped(base, shape, node)
        if not sizes:
            raise self.unit.error(f"{where}(())", node.args[1], "give at least one size: x.reshape(-1)",
                                  message="a reshape to a number is not supported")
        for e in sizes:
            if isinstance(e, (ast.Starred, ast.List, ast.Tuple)):
                raise self.unit.error("a reshape's size", e, "give each size as an int: x.reshape(n, m)",
                                      message=f"{ast.unparse(e)} is not a size")
        shape = ir.Tuple(tuple(self.temp(self.expr(e), "ix", e) for e in sizes))
        return self._reshaped(base, shape, node)

    def _reshaped(self, base: ast.expr, shape: ir.Expr, node: ast.Call) -> ir.Expr:
        self.refuse_list_operands([base], "a reshape")
        value = self.temp(self.expr(base), "a", base)
        return self.temp(ir.Call("reshape", (value, shape)), "p", node)

    # Implemented by ExprTranslator and LiteralTranslator.
    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None) -> ir.Expr:  # pragma: no cover
        raise NotImplementedError

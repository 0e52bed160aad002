"""Which code prints each kind of SymPy expression: the kernel printer's ``_print_<Class>`` methods.

A mixin of :class:`~coarsen_nb.lower.emit.Printer`, whose ``_compute`` dispatches to the method of the first
class in an expression's MRO that has one (as SymPy's printers do), else to :meth:`_print_default` (an
operator or a function of the array namespace, :mod:`.operators`).  The printer itself keeps what is
common to every kind (levels, memoized values, statements); what each kind becomes is here, a symbol's
code the longest of them: a loop index, a temporary, a read of an array's element (a slice, a lane's
rows, a dense nest's block, a gather) or a kernel input.  The methods of the phi forms are in
:mod:`.form_printing`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.dask_printing import points_read
from coarsen_nb.lower.printing import FLAT, Level, int_typed, is_int_literal, lane_rows_read
from coarsen_nb.phi import gammas
from coarsen_nb.symbolic.levels import ELEM


class ExpressionPrinting:
    """One method per kind of expression (see the module docstring)."""

    def _print_Symbol(self, e, lv):
        return self._symbol(e, lv)

    def _print_Number(self, e, lv):         # (integers, rationals, floats, the infinities, NaN)
        return self.number(e)

    _print_Pi = _print_Exp1 = _print_ComplexInfinity = _print_Number

    def _print_BooleanTrue(self, e, lv):
        return lir.Lit("True")

    def _print_BooleanFalse(self, e, lv):
        return lir.Lit("False")

    def _print_Mul(self, e, lv):
        if e.args[0].is_Float and abs(float(e.args[0])) == 1.0 and not int_typed(rest := sp.Mul(*e.args[1:])):
            return self._compute(rest if e.args[0] > 0 else -rest, lv)     # 1.0 * x is x for a float x
        return self._print_default(e, lv)

    def _print_Reduction(self, e, lv):      # (RSum, RProd, RMax, RMin)
        return self._reduce(e, lv)

    def _print_RWrite(self, e, lv):
        return self._write(e, lv)

    def _print_ITE(self, e, lv):
        return self._piecewise(gammas.Gamma((e.args[1], e.args[0]), (e.args[2], True)), lv)

    def _print_Piecewise(self, e, lv):
        return self._piecewise(e, lv)

    def _print_default(self, e, lv):
        if lv.kind in ("mask", "cond") and not self.deps(e) & (self._varying_binders(lv) | {ELEM}):
            # one number for all of an arm's points (a masked arm, or an `if` on a scalar inside an
            # array level): Python's math, not the array namespace, which need not take a Python float
            return self._op(e, lv, False)
        array = lv.kind != "root" and not (lv.kind == "cond")
        return self._op(e, lv, array or self._is_array_level(lv))

    def _symbol(self, s: sp.Symbol, lv: Level) -> lir.Expr:
        for a in lv.ancestors():
            if s in a.index_code:
                return self.bcast(a.index_code[s], a, lv)
        if s in self.temps:
            return self.value(self.temps[s], lv)
        if s in self.deps.ranges:
            raise AssertionError(f"index {s} used outside its loop level")
        if s in self.reads:
            arr, idx = self.reads[s]
            fast = self.affine_slice(idx[0], lv) if len(idx) == 1 else None
            if fast is not None:
                return lir.Call(lir.Name(self.helper('_take')), (lir.expr(arr), *fast))
            rows = self.lane_rows.get(idx[0]) if len(idx) >= 2 and lv.kind == "elem" else None
            if rows is not None and not any(self.deps(i) for i in idx[1:]):
                # z[p, t] over a batched loop's lanes p: the rows first::step of z (a view when in bounds)
                return lane_rows_read(self, arr, rows, self.value(idx[0], lv),
                                      [self.value(i, self.root) for i in idx[1:]])
            if len(idx) == 2 and self._dense_pair(lv) is not None:
                blk = self._block_read(s, *self._dense_pair(lv))
                if blk is not None:     # A[i + c, j + c'] on a dense nest: a block, flattened row by row
                    return self.call("reshape", self.printed(blk), FLAT)
            codes = [self.value(i, lv) for i in idx]
            if not self._is_array_level(lv):
                codes = [c if is_int_literal(c) else lir.Call(lir.Name("int"), (c,)) for c in codes]
                return lir.Index(lir.expr(arr), tuple(codes))
            return points_read(self, lir.expr(arr), codes)
        code, is_array = self.leaf(s)
        code = lir.expr(code)
        if is_array:
            elem = self._ensure_elem(lir.Attr(code, "shape"))
            return self.bcast(code, elem, lv) if lv is not elem else code
        return code

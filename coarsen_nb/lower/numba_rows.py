"""A row contraction under the numba backend as one loop over the rows, as a hand-written Numba gradient.

The array printer computes ``X @ w`` of an SOI (``z_i = sum_j X[i, j] w[j]``) as a product of whole
arrays, the row's value and adjoint on n-sized temporaries (a branch through ``nonzero``/``take``/``put``),
then the adjoint ``g @ X``.  A ``rows`` domain (:func:`coarsen_nb.lower.fusion_domain.rows_domain`) is that
work over an outer index i (the rows) and an inner index j (the columns); here it becomes one loop
function::

    acc_b = 0.0                         # each target that is a sum over the rows
    for i in range(a, b):
        z = 0.0                         # each sum over j in the row's value: an inner loop
        for j in range(c, d):
            z += X[int(i), int(j)] * w[int(j)]
        g = ...                         # the row's scalar code on z (a branch is an ``if``)
        acc_b += g
        for j in range(c, d):           # the scatters over (i, j), added in place
            b_w[int(j)] += X[int(i), int(j)] * g
    return acc_b / n                    # the code around the row sums

Nothing is computed more often than its indices vary: before each loop, the maximal subexpressions that do
not vary over its index are computed by the printer of the loop around it and given to the loop's printer
as computed values (its memo), so the row's value is computed once per row and an invariant once per call.
The printers stop at a branch whose test varies over the loop (nothing leaves an arm that may not be
taken) and at a sum over the loop's index (the inner loops compute those).  Each printer is the NumPy
printer at its root level with the loop indices as scalars (``scalar_points``), as in
:mod:`coarsen_nb.lower.numba_fusion`, whose :class:`_LoopFunction` this extends (parameters, registration,
the error model).  The sums are sequential, where the array code's ``@`` and ``sum`` are BLAS's and
pairwise: they agree to rounding.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.domain import Reduce
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.numba_fusion import _identity, _int, _LoopFunction
from coarsen_nb.phi import forms, gammas

# nodes whose parts are not computed ahead of them: the arms of a branch, short-circuit operands
_GUARDED = (sp.Piecewise, sp.ITE, gammas.AndThen, gammas.OrElse)


class RowLoopFunction(_LoopFunction):
    """The loop function of a ``rows`` domain (see the module docstring)."""

    def _function(self) -> tuple[str, list[str]] | None:
        leaves, reads = self._used()
        codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        i_sym, (j_sym, j_bounds) = self.dom.index, self.dom.inner
        scatters = [t for t in self.targets if t.mode == "scatter"]
        row_sums = [(t, self._row_sum(t)) for t in self.targets if t.mode != "scatter"]
        inner_sums = self._inner_sums()
        i = lir.Name(self.fresh(naming.user_word(str(i_sym)) or "i"))
        j = lir.Name(self.fresh(naming.user_word(str(j_sym)) or "j"))
        outer = self._printer(codes, reads_map, 1, {})
        row = self._loop_printer(codes, reads_map, {i_sym: i.id})
        printers = [outer, row]
        # what varies over nothing: computed once, before the loop over the rows
        row_exprs = [*j_bounds, *(b for r in inner_sums for b in r.args[2:5]), *(r.args[0] for r in inner_sums),
                     *(red.operand for _, red in row_sums), *(t.expr for t in scatters),
                     *(sp.sympify(x) for t in scatters for x in t.index)]
        for e in row_exprs:
            self._hoist(e, outer, row, set())
        a, b, s = (outer.value(x) for x in self.dom.bounds)
        head = list(outer.body)
        outer.body = []
        accs = []
        for t, red in row_sums:
            acc = lir.Name(self.fresh("acc"))
            head.append(lir.Assign(acc, _identity(red)))
            accs.append(acc)
        # the row: its sums over j (each an inner loop), its code, its scatters over j (one inner loop)
        for r in inner_sums:
            acc = lir.Name(self.fresh("acc"))
            row.emit(lir.Assign(acc, _identity(Reduce.of(r, bool(r.args[0].is_integer)))))
            inner = self._loop_printer(codes, reads_map, {i_sym: i.id, j_sym: j.id})
            printers.append(inner)
            self._hoist(r.args[0], row, inner, {j_sym})
            val = inner.value(r.args[0])
            step = lir.AugAssign(acc, "+" if r.kind == "sum" else "*", val)
            row.emit(self._inner_loop(row, j, r.args[2:5], inner.body + [step]))
            row.root.memo[r] = acc
        for (t, red), acc in zip(row_sums, accs, strict=True):
            row.emit(lir.AugAssign(acc, "+", row.value(red.operand)))
        if scatters:
            inner = self._loop_printer(codes, reads_map, {i_sym: i.id, j_sym: j.id})
            printers.append(inner)
            for t in scatters:
                self._hoist(t.expr, row, inner, {j_sym})
                for x in t.index:
                    self._hoist(sp.sympify(x), row, inner, {j_sym})
            adds = []
            for t in scatters:
                val = inner.value(t.expr)
                index = tuple(_int(inner.value(sp.sympify(x))) for x in t.index)
                adds.append(lir.AugAssign(lir.Index(lir.Name(t.target), index), "+", val))
            row.emit(self._inner_loop(row, j, j_bounds, inner.body + adds))
        loop = lir.For(i, lir.Call(lir.Name("range"), (a, b) if str(s) == "1" else (a, b, s)), tuple(row.body))
        returns = []
        for (t, red), acc in zip(row_sums, accs, strict=True):
            outer.root.memo[red.node] = acc.id
            returns.append(outer.value(t.expr))
        body = [*head, loop, *outer.body]
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        loads: set[str] = set()
        for pr in printers:
            loads |= pr.helpers | ({"math"} if pr.uses_math else set())
        if any(red.identity in (sp.oo, -sp.oo) for _, red in row_sums):
            loads.add("math")
        return self._register(params, body, loads), params

    def _used(self):
        """The base's leaves and reads, and those of the inner loop's bounds."""
        saved = self.dom.bounds
        object.__setattr__(self.dom, "bounds", tuple(saved) + tuple(self.dom.inner[1]))
        try:
            return super()._used()
        finally:
            object.__setattr__(self.dom, "bounds", saved)

    def _row_sum(self, t) -> Reduce:
        """The one sum over the rows that the non-scatter target ``t`` holds."""
        (red,) = [n for n in self.body.nodes(t.expr) if isinstance(n, forms.Reduction) and n.args[1] == self.dom.index]
        return Reduce.of(red, bool(self.body.expand(red.args[0]).is_integer))

    def _inner_sums(self) -> list:
        """The sums over the columns in the targets, each after those its operand holds."""
        j = self.dom.inner[0]
        found = []
        for t in self.targets:
            for n in self.body.nodes(t.expr):
                if isinstance(n, forms.Reduction) and n.args[1] == j and n not in found:
                    found.append(n)
        ordered: list = []
        while found:
            ready = [r for r in found if not any(o in self.body.nodes(r.args[0]) for o in found if o != r)]
            ordered.append(ready[0])
            found.remove(ready[0])
        return ordered

    def _loop_printer(self, codes, reads_map, index: dict) -> Printer:
        pr = self._printer(dict(codes), reads_map, 2, index)
        pr.scalar_points = True
        return pr

    def _inner_loop(self, row: Printer, j: lir.Name, bounds, body: list) -> lir.For:
        a, b, s = (row.value(x) for x in bounds)
        return lir.For(j, lir.Call(lir.Name("range"), (a, b) if str(s) == "1" else (a, b, s)), tuple(body))

    def _hoist(self, e, src: Printer, dst: Printer, varying: set) -> None:
        """The maximal subexpressions of ``e`` that vary over none of ``varying`` (and over nothing but the
        loops ``src`` is inside), computed by ``src`` and known to ``dst`` as computed."""
        body = self.body
        seen = set()
        stack = [sp.sympify(e)]
        unbound = {self.dom.index, self.dom.inner[0]} - set(src.root.index_code)
        while stack:
            n = stack.pop()
            if n in seen or n.is_Number or n in dst.root.memo:
                continue
            seen.add(n)
            if isinstance(n, sp.Symbol) and n not in body.temps and n not in body.reads:
                continue        # a leaf or an index: the loop's printer names it
            if not body.deps(n) & (varying | unbound):
                code = src.value(n)
                dst.root.memo[n] = code
                if isinstance(n, sp.Symbol) and n in body.temps:
                    dst.root.memo[body.temps[n]] = code
            elif isinstance(n, sp.Symbol):
                if n in body.temps:
                    stack.append(body.temps[n])
            elif not isinstance(n, (*_GUARDED, forms.Reduction)):
                stack.extend(n.args)

    def _call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        """The call; each row sum it returns is added to (or is) its target; the scatters are in place."""
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        sums = [t for t in self.targets if t.mode != "scatter"]
        if not sums:
            return [lir.ExprStmt(call)]
        outs = [lir.Name(t.target) if t.mode == "new" else lir.Name(self.fresh(f"d_{t.target}")) for t in sums]
        stmts: list[lir.Stmt] = [lir.Assign(outs[0] if len(outs) == 1 else lir.Tuple(tuple(outs), bare=True), call)]
        stmts += [lir.AugAssign(lir.Name(t.target), "+", o) for t, o in zip(sums, outs, strict=True) if t.mode == "add"]
        return stmts

    def _what(self) -> str:
        return f"{'adjoint' if self.tag == 'vjp' else 'forward'}, a row contraction"

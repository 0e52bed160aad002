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
:mod:`coarsen_nb.lower.numba_fusion`, and :class:`~coarsen_nb.lower.numba_loops.LoopFunction` is what this
extends (parameters, registration, the error model).  The sums are sequential, where the array code's ``@``
and ``sum`` are BLAS's and pairwise: they agree to rounding.  A row that calls exp (sigmoid, softplus, exp) runs
its rows in tiles, the exponentials of a tile in one vectorized loop: :mod:`coarsen_nb.lower.numba_row_exps`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.domain import Reduce
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.numba_bounds import UNCHECKED, bounds_guard, checked_call, out_of_bounds
from coarsen_nb.lower.numba_loop_parts import accumulator_start, integer_index
from coarsen_nb.lower.numba_loops import LoopFunction
from coarsen_nb.lower.numba_row_exps import RowExps, exp_value, hook
from coarsen_nb.lower.numba_row_tiles import passed_scratch, tiled_rows
from coarsen_nb.lower.numba_tiles import TILE
from coarsen_nb.phi import forms, gammas

# nodes whose parts are not computed ahead of them: the arms of a branch, short-circuit operands
_GUARDED = (sp.Piecewise, sp.ITE, gammas.AndThen, gammas.OrElse)


class RowLoopFunction(LoopFunction):
    """The loop function of a ``rows`` domain (see the module docstring)."""

    #: the size of the tiles' array the function takes, which its call allocates (None: it takes none)
    scratch_size = None

    def _function(self) -> tuple[str, list[str]] | None:
        leaves, reads = self.used()
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
        outer = self.printer(codes, reads_map, 1, {})
        row = self._loop_printer(codes, reads_map, {i_sym: i.id})
        printers = [outer, row]
        # what varies over nothing: computed once, before the loop over the rows
        row_exprs = [*j_bounds, *(b for r in inner_sums for b in r.args[2:5]), *(r.args[0] for r in inner_sums),
                     *(red.operand for _, red in row_sums), *(t.expr for t in scatters),
                     *(sp.sympify(x) for t in scatters for x in t.index)]
        for e in row_exprs:
            self._hoist(e, outer, row, set())
        invariants = dict(row.root.memo)
        a, b, s = (outer.value(x) for x in self.dom.bounds)
        # each loop variable's (start, stop, step) codes, where they are known before the loop over the rows
        self.spans: dict = {i.id: [(a, b, s)]}
        head = list(outer.body)
        outer.body = []
        accs = []
        for _, red in row_sums:
            acc = lir.Name(self.fresh("acc"))
            head.append(lir.Assign(acc, accumulator_start(red)))
            accs.append(acc)
        # the row: its sums over j (each an inner loop), its code, its scatters over j (one inner loop)
        for r in inner_sums:
            acc = lir.Name(self.fresh("acc"))
            row.emit(lir.Assign(acc, accumulator_start(Reduce.of(r, bool(r.args[0].is_integer)))))
            inner = self._loop_printer(codes, reads_map, {i_sym: i.id, j_sym: j.id})
            printers.append(inner)
            self._hoist(r.args[0], row, inner, {j_sym})
            loop_range, steps = self._powers([r.args[0]], row, inner, j_sym, j.id, r.args[2:5])
            val = inner.value(r.args[0])
            step = lir.AugAssign(acc, "+" if r.kind == "sum" else "*", val)
            row.emit(lir.For(j, loop_range, tuple(inner.body + [step] + steps)))
            row.root.memo[r] = acc
            self._powers_after(row, [red.operand for _, red in row_sums] + [t.expr for t in scatters], j_sym)
        # a row that calls exp: its rows in tiles, the exponentials of a tile in one loop (numba_row_exps)
        exps = RowExps(self.body, [red.operand for _, red in row_sums] + [t.expr for t in scatters], i_sym,
                       j_sym)
        tiled = bool(exps.keys and inner_sums and str(s) == "1" and not self.ends and
                     not any(self.body.expand(r.args[0]).is_integer for r in inner_sums))
        rest = row
        if tiled:
            tile = lir.Name(self.fresh("tile"))
            first, rest = row, self._loop_printer(codes, reads_map, {i_sym: i.id})
            printers.append(rest)
            rest.root.memo.update(invariants)
            at = lir.BinOp("-", i, tile)
            own, stores, loads = [], [], []

            def buffer(code: lir.Expr, node) -> lir.Name:
                # a number of each row of the tile: stored by the first loop, read back by the last
                buf = lir.Name(self.fresh(f"{code.id if isinstance(code, lir.Name) else 'z'}_t"))
                own.append(buf.id)
                stores.append(lir.Assign(lir.Index(buf, (at,)), code))
                name = code if isinstance(code, lir.Name) else lir.Name(self.fresh("z"))
                loads.append(lir.Assign(name, lir.Index(buf, (at,))))
                for n in node:
                    rest.root.memo[n] = name
                return buf

            for r in inner_sums:
                buffer(lir.expr(first.root.memo[r]), [r])
            args = {}
            for x in dict.fromkeys(k[1] for k in exps.keys):
                args[x] = buffer(first.value(exps.shown[x]), exps.names_of(x))
            exp_loop, e_names = [], {}
            for key in exps.keys:
                ex = lir.Name(self.fresh("e"))
                buf = lir.Name(self.fresh("e_t"))
                own.append(buf.id)
                exp_loop.append(lir.Assign(lir.Index(buf, (at,)),
                                           exp_value(key, lir.Index(args[key[1]], (at,)), first.helper("_exp"))))
                loads.append(lir.Assign(ex, lir.Index(buf, (at,))))
                e_names[key] = ex
            rest.scalar_call = hook(exps, e_names, rest.scalar_call)
            for n, key in exps.exps.items():
                for name in exps.names_of(n):
                    rest.root.memo[name] = e_names[key]
            rest.body = list(loads)
        for (_, red), acc in zip(row_sums, accs, strict=True):
            rest.emit(lir.AugAssign(acc, "+", rest.value(red.operand)))
        if scatters:
            inner = self._loop_printer(codes, reads_map, {i_sym: i.id, j_sym: j.id})
            printers.append(inner)
            for t in scatters:
                self._hoist(t.expr, rest, inner, {j_sym})
                for x in t.index:
                    self._hoist(sp.sympify(x), rest, inner, {j_sym})
            loop_range, steps = self._powers([t.expr for t in scatters], rest, inner, j_sym, j.id, j_bounds)
            adds = []
            for t in scatters:
                val = inner.value(t.expr)
                index = tuple(integer_index(inner.value(sp.sympify(x))) for x in t.index)
                adds.append(lir.AugAssign(lir.Index(lir.Name(t.target), index), "+", val))
            rest.emit(lir.For(j, loop_range, tuple(inner.body + adds + steps)))
        if tiled:
            # (a number the last loop does not read is not read back; one nothing reads back is not stored)
            code = rest.body[len(loads):]
            read = _names(code)
            loads = [x for x in loads if x.target.id in read]
            read |= _names(loads) | _names(exp_loop)
            stores = [x for x in stores if x.target.value.id in read]
            own = [b for b in own if b in read]
            head.extend(lir.Assign(lir.Name(b), lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Lit(str(TILE)),)))
                        for b in own)
            rest.body = loads + code
            # for tile in range(a, b, TILE): the tile's rows three times (the module docstring of numba_row_exps)
            rows = lir.Call(lir.Name("range"), (tile, lir.Call(lir.Name("min"), (
                lir.BinOp("+", tile, lir.Lit(str(TILE))), b))))
            loops = [lir.For(i, rows, tuple(first.body + stores)), lir.For(i, rows, tuple(exp_loop))]
            loops += [lir.For(i, rows, tuple(x)) for x in self._last_loops(rest.body, accs, at, head, own)]
            loop = lir.For(tile, lir.Call(lir.Name("range"), (a, b, lir.Lit(str(TILE)))), tuple(loops))
        else:
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
        name = self.register(params, body, loads)
        tests = out_of_bounds(body, set(params), self.spans, frozenset(own) if tiled else frozenset())
        if tests is None:
            return name, params
        # the same loop without Numba's bounds checks (which keep LLVM from vectorizing the inner loops)
        # where every index is in bounds; elsewhere the checked loop, which raises Python's IndexError
        checked = checked_call(name, params)
        at = len(head)
        if not tiled:
            # (and, there, the rows in tiles, the row's loops over the columns vectorized over the tile's rows,
            # their tiles and lanes in one array the caller passes)
            body = tiled_rows(body, self.fresh) or body
            passed = passed_scratch(body, params, scratch := self.fresh("scratch"), self.fresh)
            if passed is not None:
                body, self.scratch_size = passed
                params = [*params, scratch]
        unchecked = [*body[:at], bounds_guard(tests, checked), *body[at:]]
        return self.register(params, unchecked, loads | {name}, "rows_in_bounds", UNCHECKED), params

    def _last_loops(self, body, accs, at, head, own) -> list[list]:
        """The tile's last loop ``body`` as two where it can be: the row's numbers first (no sum over the rows
        in it, so that LLVM can vectorize it over the tile), stored in tiles of float64; then the sums over the
        rows and the scatters, in row order, reading them back.  One loop where a row sum is not a float's, or
        a scatter's bounds read a number of the row."""
        sums = {a.id for a in accs}
        tail = [x for x in body if isinstance(x, lir.For) or (isinstance(x, lir.AugAssign) and
                                                               isinstance(x.target, lir.Name) and x.target.id in sums)]
        numbers = [x for x in body if not any(x is y for y in tail)]
        if not tail or not numbers or any(str(x.value) == "0" for x in head if isinstance(x, lir.Assign)
                                           and isinstance(x.target, lir.Name) and x.target.id in sums):
            return [body]
        made = {n for x in numbers for n in _targets(x)}
        crossing = sorted(made & _names(tail))
        if any(made & {n for e in (x.iter,) for n in lir.names_in(e)} for x in tail if isinstance(x, lir.For)):
            return [body]
        stores, loads = [], []
        for n in crossing:
            buf = lir.Name(self.fresh(f"{n}_t"))
            head.append(lir.Assign(buf, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Lit(str(TILE)),))))
            own.append(buf.id)
            stores.append(lir.Assign(lir.Index(buf, (at,)), lir.Name(n)))
            loads.append(lir.Assign(lir.Name(n), lir.Index(buf, (at,))))
        return [numbers + stores, loads + tail]

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
        pr = self.printer(dict(codes), reads_map, 2, index)
        pr.scalar_points = True
        return pr

    def _powers(self, exprs, row: Printer, inner: Printer, j_sym, j: str, bounds) -> tuple[lir.Call, list[lir.Stmt]]:
        """The inner loop's range, and the steps that end its body: a power ``a ** (c ± j)`` of a base that
        does not vary over j (``PowInt``, a Horner polynomial's ``x_i ** (D - 1 - j)``) is a running product
        (the power at the loop's first j before it, times ``a`` at each step), the loop run in the order in
        which the exponent grows (``PowInt``'s exponent is never negative).  The order of an inner loop
        changes a sum's rounding only."""
        a, b, s = (row.value(x) for x in bounds)
        self.spans.setdefault(j, []).append((a, b, s) if not any(self.body.deps(x) for x in bounds) else None)
        found: dict = {}
        if str(s) == "1":
            for node in self._walk(exprs, j_sym):
                if not isinstance(node, forms.PowInt) or j_sym in self.body.deps(node.args[0]):
                    continue
                m = self.body.expand(node.args[1])
                k = m.coeff(j_sym)
                if k in (1, -1) and j_sym not in (m - k * j_sym).free_symbols and found.get("k", k) == k:
                    found["k"] = k
                    found[node] = (node.args[0], m - k * j_sym)
        k = found.pop("k", 1)
        if k == 1:
            loop_range = lir.Call(lir.Name("range"), (a, b) if str(s) == "1" else (a, b, s))
            first = bounds[0]
        else:
            last, stop = (lir.Lit(str(int(str(x)) - 1)) if str(x).lstrip("-").isdigit()
                          else lir.BinOp("-", x, lir.Lit("1")) for x in (b, a))
            loop_range = lir.Call(lir.Name("range"), (last, stop, lir.Lit("-1")))
            first = bounds[1] - 1
        steps: list[lir.Stmt] = []
        self.ends: list = []
        for node, (base, rest) in found.items():
            pw = lir.Name(self.fresh("pw"))
            base_code = row.value(base)
            # (the exponent at the first j: never negative where the loop runs, and an empty loop uses no power)
            # (x ** 0 is 1.0 for every x, nan and inf too: no power where the loop starts from the 0th)
            first_power = row.value(sp.Max(0, rest + k * first))
            power = lir.Call(lir.Name(row.helper("_ipow")), (base_code, first_power))
            one = lir.Lit("1.0")
            nonzero = lir.Compare("!=", first_power, lir.Lit("0"))
            start = one if str(first_power) == "0" else lir.IfExp(power, nonzero, one)
            row.emit(lir.Assign(pw, start))
            inner.root.memo[node] = pw.id
            steps.append(lir.AugAssign(pw, "*", base_code))
            # (the power one step past the loop's last j, which pw holds after a loop that ran)
            self.ends.append((base, self.body.expand(rest + k * (bounds[1] if k == 1 else bounds[0] - 1)), pw,
                              lir.Compare(">", b, a)))
        return loop_range, steps

    def _powers_after(self, row: Printer, exprs, j_sym) -> None:
        """A power of the row (not varying over j) that a running power of the loop just printed reaches one
        step past its last j (Horner's ``x_i ** D`` beside its table of ``x_i ** (D - 1 - j)``): read from
        the running power after the loop where the loop ran, computed by ``_ipow`` where it did not.  The
        running product and ``_ipow``'s squaring agree to rounding."""
        if not self.ends:
            return
        seen, stack = set(), [sp.sympify(e) for e in exprs]
        while stack:
            n = stack.pop()
            if n in seen or n in row.root.memo:
                continue
            seen.add(n)
            if isinstance(n, sp.Symbol):
                if n in self.body.temps:
                    stack.append(self.body.temps[n])
                continue
            if isinstance(n, forms.PowInt) and j_sym not in self.body.deps(n):
                for base, past, pw, ran in self.ends:
                    if n.args[0] == base and self.body.expand(n.args[1]) == past:
                        end = lir.Name(self.fresh("pw_end"))
                        power = lir.Call(lir.Name(row.helper("_ipow")), (row.value(base), row.value(n.args[1])))
                        row.emit(lir.Assign(end, lir.IfExp(pw, ran, power)))
                        row.root.memo[n] = end.id
                        break
                continue
            if not isinstance(n, (*_GUARDED, forms.Reduction)):
                stack.extend(n.args)

    def _walk(self, exprs, j_sym):
        """The nodes of ``exprs`` an inner loop computes at each j (temps expanded; not inside a branch's arm
        or a sum, nor what the row computes)."""
        seen, stack = set(), [sp.sympify(e) for e in exprs]
        while stack:
            n = stack.pop()
            if n in seen or j_sym not in self.body.deps(n):
                continue
            seen.add(n)
            yield n
            if isinstance(n, sp.Symbol):
                if n in self.body.temps:
                    stack.append(self.body.temps[n])
            elif not isinstance(n, (*_GUARDED, forms.Reduction)):
                stack.extend(n.args)

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
        """The call; each row sum it returns is added to (or is) its target; the scatters are in place.  Where
        the function takes the tiles' array (:func:`numba_row_tiles.passed_scratch`), it is allocated here."""
        size = self.scratch_size
        if size is None:
            return self.results_call(name, params)
        scratch = self.fresh("scratch")
        alloc = lir.Assign(lir.Name(scratch), lir.Call(lir.Attr(lir.Name("xp"), "zeros"), (lir.Tuple((size,)),)))
        return [alloc, *self.results_call(name, [*params[:-1], scratch])]

    def _what(self) -> str:
        return f"{'adjoint' if self.tag == 'vjp' else 'forward'}, a row contraction"


def _names(stmts) -> set[str]:
    """The names that the statements ``stmts`` read or write."""
    return {n for st in lir.statements(stmts) for e in st.exprs() for n in lir.names_in(e)}


def _targets(stmt) -> set[str]:
    """The names the statement ``stmt`` (and the statements in it) assigns."""
    out = set()
    for st in lir.statements([stmt]):
        target = getattr(st, "target", None)
        if isinstance(target, lir.Name):
            out.add(target.id)
    return out

"""The numba backend's loop nests: the parts of an SOI that run over several loop indices, as compiled nests.

A double loop the phi-calculus keeps as sums (``e += f(i, j)`` over ``j in range(i + 1, n)`` inside
``i in range(n)``: a nested Σ) or whose adjoint scatters over two indices (``b_px[i, j + 1] += g(i, j)``)
matches none of the one-loop domains of :mod:`coarsen_nb.lower.numba_fusion`, and the NumPy printer runs it
over n × n index arrays (a triangle through a mask).  Under Numba the cheapest form is the user's own loop
nest, with nothing stored: here each such part becomes one function of the module, a ``nest`` domain:

* a target that is a number (the value, or a scalar adjoint ``b_a += ...``) whose reductions nest over the
  loops: each reduction an accumulator set before its loop, the code that reads an inner one placed after
  the inner loop, inside the outer one; reductions of one level that read each other in turn (a
  log-sum-exp is its maximum, then the sum of the shifted exponentials: ``phi.logsumexp.lowered``);
* scatters ``b_x[i(.), j(.)] += g(i, j)`` that vary over the same loops: one nest, every scatter added in
  its innermost body (the loops run in sequence, so two scatters to one element add up as the user's loop
  adds them), each reduction their values read computed once at the outermost loop it can be (a
  softmax's log-sum-exp at each i, before the loop over j).

Nothing is computed more often than it varies: the costly values of an inner loop alone (``exp(-2*log_s[k])``
inside ``for i: for k:``) are tables filled once before the nest; a value an inner loop would compute at each
point but that varies over the outer loops only is computed once before it (never out of a branch, never an
array read: a read a loop guards may be out of bounds before it); a scatter whose value is zero outside a
branch (times the seed or a parameter) is added inside the branch, so the points outside do no work; and a
log-sum-exp over a loop of fixed range keeps a row of its terms, from which its softmax is read
(:mod:`coarsen_nb.lower.numba_lse_rows`: one exponential per point of that loop, not three).  In the
unchecked twin, a loop over points with such a row runs a tile of points at a time, the points innermost
(:mod:`coarsen_nb.lower.numba_tiles`); an arg-extremum loop at the outermost level computes its values by
chunks into a buffer, then scans it (``_arg_chunks``): both vectorize where the loop as written does not.

The ranges nest as the user's loops did (an inner range may read the outer indices: triangles); a
``Piecewise`` is a real ``if`` at each point, as in every fused loop; Σ, Π, max and min (NumPy's: a NaN
wins).  Not taken (array code as before): a target varying over the elements of an array (``ELEM``), the
nodes no single pass computes (``fusion_domain.NOT_ONE_PASS``, but for the log-sum-exp) and the scans.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, lir_exprs, lir_passes, numba_extrema
from coarsen_nb.lower.lir_sinking import sink_into_branches
from coarsen_nb.lower.nest_analysis import (
    arg_point,
    computed_inside,
    costly_inner_values,
    guarded_contribution,
    loop_invariants,
    maximal_reductions,
    nest_order,
)
from coarsen_nb.lower.numba_bounds import UNCHECKED, bounds_guard, checked_call, loop_spans, out_of_bounds
from coarsen_nb.lower.numba_flat_tiles import flat_tables
from coarsen_nb.lower.numba_loop_parts import Block, integer_index, minus
from coarsen_nb.lower.numba_loops import LoopFunction
from coarsen_nb.lower.numba_lse_rows import RowLogSumExp
from coarsen_nb.lower.numba_tiles import tiled
from coarsen_nb.lower.numba_trig import CHUNK
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.phi import forms

_START = {"sum": lir.Lit("0.0"), "prod": lir.Lit("1.0"),
          "max": lir.Unary("-", lir.Attr(lir.Name("math"), "inf")), "min": lir.Attr(lir.Name("math"), "inf")}


class NestLoops(RowLogSumExp, LoopFunction):
    """The loop function of one ``nest`` domain (see the module docstring)."""

    def _call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        return self.results_call(name, params)

    def _function(self) -> tuple[str, list[str]] | None:
        exprs = [e for t in self.targets for e in [t.expr, *map(sp.sympify, t.index)]]
        loops = {n.args[1] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.Reduction)}
        loops |= {n.args[2] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.LogSumExp)}
        loops |= {k for e in exprs for k in self.body.deps(e)}
        leaves, reads = self.used([x for k in sorted(loops, key=str) for x in self.body.deps.ranges[k]])
        self.codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([self.codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        self.reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        self.loads: set[str] = set()
        self.tables: list = []
        self.points: dict = {}      # (indicator, loops' variables around) -> its arg-extremum's and value's variables
        known: dict = {}
        self.rows, self.softmaxes = {}, []
        self.chunked: list = []     # (the buffer, the variable, the point found, its range) of each chunked arg loop
        block = Block(self._point({}, known))
        self._fill_tables(block, exprs)
        self.make_rows(block, exprs)
        scatters = [t for t in self.targets if t.mode == "scatter"]
        if scatters:
            chain = nest_order(self.body, frozenset().union(*(
                self.body.deps(e) for t in scatters for e in [t.expr, *map(sp.sympify, t.index)])))
            self._scatter_nest(chain, {}, block, known, scatters)
        returns = []
        for t in self.targets:
            if t.mode != "scatter":
                for r in maximal_reductions(self.body, t.expr):
                    self._ensure(r, {}, block, known)
                returns.append(block.pr.value(t.expr))
        body = block.done()
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        self._note(block.pr)
        # (a value computed once before a loop that the loop's printer then did not ask for)
        body = list(lir_passes.drop_dead_assignments(tuple(body)))
        # (a reduction only one arm of the tail's choice reads, computed in that arm: lir_sinking)
        body = sink_into_branches(body)
        name = self.register(params, body, self.loads)
        own = frozenset(t.id for t in [*(t for _, _, t, _ in self.tables), *(r for r, _ in self.rows.values()),
                                       *(values for values, *_ in self.chunked)])
        spans = loop_spans(body, set(params))
        for _, var, at, span in self.chunked:
            # (a chunked arg loop's variable runs over its range, and the point it finds is one of them:
            # read only where it was found, ``at >= 0``)
            if all(set(lir_exprs.names_in(b)) <= set(params) | {"max", "min", "int"} for b in span):
                spans[var.id] = spans[at.id] = [span]
        tests = out_of_bounds(body, set(params), spans, own)
        if tests is None:
            return name, params
        # (the same nest without bounds checks where the tests before it find every subscript in bounds)
        checked = checked_call(name, params)
        # (and, there, the loop over the points in tiles where a row is per point: numba_tiles)
        # (its tables flat, its loops over a tile counted from 0: no 2-D allocation compiled, numba_flat_tiles)
        made = tiled(body, {r.id for r, _ in self.rows.values()}, self.fresh)
        body = body if made is None else flat_tables(made, self.fresh)
        unchecked = [bounds_guard(tests, checked), *body]
        return self.register(params, unchecked, self.loads | {name}, "nest_in_bounds", UNCHECKED), params

    # -- printing ------------------------------------------------------------------------------

    def _point(self, index: dict, known: dict):
        """A printer of one point of the loops in ``index`` (binder -> loop variable), which reads the
        reductions ``known`` there (node -> the accumulator's name)."""
        pr = self.printer(self.codes, self.reads_map, 2 + len(index), {k: v.id for k, v in index.items()})
        pr.scalar_points = True
        pr.root.memo.update(known)
        for node, k, table, lo in self.tables:
            if k in index:
                pr.root.memo[node] = lir.Index(table, (minus(index[k], lo),))
        pr.root.memo.update(self.softmax_reads(index))
        return pr

    def _fill_tables(self, block, exprs) -> None:
        """Tables of the costly values that vary over an inner loop alone (``exp(-2*log_sigma[k])`` inside
        ``for i: for k:``): computed once per point of that loop before the nest, then read in it, as the
        NumPy printer computes them once at their own level.  Only values every point computes (not under a
        branch: a branch not taken may guard a read out of bounds) of a loop whose range is fixed."""
        binders = {k for e in exprs for k in self.body.deps(e)}
        binders |= {n.args[1] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.Reduction)}
        binders |= {n.args[2] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.LogSumExp)}
        found: dict = {}
        for e in exprs:
            for n in costly_inner_values(self.body, e, binders):
                found.setdefault(n, None)
        by_loop: dict = {}
        for n in found:
            by_loop.setdefault(next(iter(self.body.deps(n))), []).append(n)
        for k, nodes in sorted(by_loop.items(), key=lambda kv: str(kv[0])):
            var, rng = self._range(k, block.pr)
            lo = rng.args[0]
            count = lir.Call(lir.Name("max"), (lir.Lit("0"), minus(rng.args[1], lo)))
            fill = self._point({k: var}, {})
            stores, made = [], []
            for n in sorted(nodes, key=str):
                table = lir.Name(self.fresh("table"))
                made.append(lir.Assign(table, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (count,))))
                stores.append(lir.Assign(lir.Index(table, (minus(var, lo),)), fill.value(n)))
                self.tables.append((n, k, table, lo))
            self._note(fill)
            block.add(made + [lir.For(var, rng, tuple(list(fill.body) + stores))])

    def _note(self, pr) -> None:
        self.loads |= pr.helpers | ({"math"} if pr.uses_math else set())

    def _range(self, k, pr) -> tuple[lir.Name, lir.Expr]:
        a, b, s = (pr.value(x) for x in self.body.deps.ranges[k])
        step = self.body.deps.ranges[k][2]
        word = pr.words.get(k)          # (the user's loop variable)
        name = self.fresh(word if isinstance(word, str) and word.isidentifier() else "k")
        return lir.Name(name), lir.Call(lir.Name("range"), (a, b) if sp.sympify(step) == 1 else (a, b, s))

    def _ensure(self, node, index: dict, block, known: dict) -> None:
        """Compute ``node`` (a reduction or a log-sum-exp) at a point of the loops ``index`` into ``block``,
        after the reductions of the same level it reads; ``known`` and the block's printer then read it."""
        if node in known:
            return
        if node in self.rows:
            self.lse_by_row(node, index, block, known)
            return
        level = frozenset(index)
        for r in maximal_reductions(self.body, computed_inside(node)):
            if self.body.deps(r) <= level:
                self._ensure(r, index, block, known)
        if isinstance(node, forms.LogSumExp):
            code = block.pr.value(computed_inside(node))
            name = lir.Name(self.fresh("lse"))
            block.pr.emit(lir.Assign(name, code))
            known[node] = block.pr.root.memo[node] = name.id
            return
        point = arg_point(self.body, node)
        if point is not None:
            self._at_point(node, point, index, block, known)
            return
        hot = self._arg_of(node)
        if hot is not None:
            # the maximum is the value at its arg-maximum, which the adjoint needs too: one loop finds both
            # (NumPy's max: a NaN anywhere is the result, which the arg loop keeps as its best; -inf if empty)
            at, best = self._arg_loop(hot, index, block, known)
            acc = lir.Name(self.fresh("acc"))
            block.add([lir.Assign(acc, best),
                       lir.If(lir.Compare("<", at, lir.Lit("0")), (lir.Assign(acc, _START[node.kind]),))])
            self.loads.add("math")
            known[node] = block.pr.root.memo[node] = acc.id
            return
        k = node.args[1]
        acc = lir.Name(self.fresh("acc"))
        hoisted = self._hoisted(block, known, [node.args[0]], level)

        def loop() -> lir.For:
            """The loop over k that steps ``acc``, with variables of its own."""
            var, rng = self._range(k, block.pr)
            inner_index, inner_known = {**index, k: var}, dict(hoisted)
            inner = Block(self._point(inner_index, inner_known))
            for r in maximal_reductions(self.body, node.args[0]):
                self._ensure(r, inner_index, inner, inner_known)
            step = self._accumulate(node.kind, acc, inner.pr.value(node.args[0]))
            self._note(inner.pr)
            return lir.For(var, rng, tuple(inner.done() + step))

        start = _START[node.kind]
        if node.kind in ("max", "min") and not maximal_reductions(self.body, node.args[0]):
            # (in vector instructions, the exact loop again only for a NaN or a zero: numba_extrema; only where
            # the loop reduces nothing inside, which a second printing would not compute again)
            self.loads |= {"math", numba_extrema.NAMES[node.kind]}
            block.add([lir.Assign(acc, start),
                       *numba_extrema.vectorized(self.writer, loop(), acc, start, node.kind, again=loop())])
        else:
            if node.kind in ("max", "min"):
                self.loads.add("math")
            block.add([lir.Assign(acc, start), loop()])
        known[node] = block.pr.root.memo[node] = acc.id

    def _at_point(self, node, point, index: dict, block, known: dict) -> None:
        """Σ_k [k = argmax g]·h(k) (a maximum's adjoint) as h at that one point: one loop finds the first
        arg-maximum (NumPy's ``argmax``: the first of equal values, the first NaN), then h is computed there
        alone (0 over an empty range), not at every point times a zero."""
        hot, h = point
        k = hot.args[1]
        at, _ = self._arg_loop(hot, index, block, known)
        acc = lir.Name(self.fresh("acc"))
        there = self._point({**index, k: at}, known)
        value = there.value(h)
        self._note(there)
        block.add([lir.Assign(acc, lir.Lit("0.0")),
                   lir.If(lir.Compare(">=", at, lir.Lit("0")), tuple(list(there.body) + [lir.Assign(acc, value)]))])
        known[node] = block.pr.root.memo[node] = acc.id

    def _arg_loop(self, hot, index: dict, block, known: dict) -> tuple[lir.Name, lir.Name]:
        """The variables ``(at, best)`` of the loop that finds the first arg-extremum of the indicator ``hot``
        (NumPy's ``argmax``: the first of equal values, the first NaN; ``at`` -1 over an empty range) and the
        value there, written into ``block`` once per indicator and loops around."""
        # (keyed by the loops' variables, not only their indices: a second nest over the same rows, ``for i2``,
        # read the first nest's ``at``, its last row's, at every row -- a per-row min's d/da was wrong)
        key = (hot, frozenset(index.items()))
        if key not in self.points:
            k = hot.args[1]
            var, rng = self._range(k, block.pr)
            at, best, v = (lir.Name(self.fresh(w)) for w in ("at", "best", "v"))
            scan = Block(self._point({**index, k: var}, known))
            g = scan.pr.value(hot.args[0])
            better = lir.Compare(">" if hot.args[5] > 0 else "<", v, best)
            nan_first = lir.BoolOp("and", (lir.Compare("!=", v, v), lir.Compare("==", best, best)))
            test = lir.BoolOp("or", (lir.Compare("<", at, lir.Lit("0")), better, nan_first))
            start = [lir.Assign(at, lir.Lit("-1")), lir.Assign(best, lir.Lit("0.0"))]
            if index or len(rng.args) != 2:
                body = scan.done() + [lir.Assign(v, g), lir.If(test, (lir.Assign(best, v), lir.Assign(at, var)))]
                block.add(start + [lir.For(var, rng, tuple(body))])
            else:
                block.add(start + self._arg_chunks(var, rng.args, scan.done(), g, v, test, at, best, block))
            self._note(scan.pr)
            self.points[key] = (at, best)
        return self.points[key]

    def _arg_chunks(self, var, bounds, body, g, v, test, at, best, block) -> list[lir.Stmt]:
        """The arg-extremum loop of the nest's outermost level over ``range(*bounds)`` in chunks: each chunk's
        values g computed into a buffer, then scanned in order.  The scan's test (NaN-aware, keeping the
        first) keeps a loop from vectorizing; the values alone are plain arithmetic that LLVM vectorizes
        (in the unchecked twin), so the points are computed a vector at a time and the scan is one
        comparison each: the same values scanned in the same order, the same point and value, bit for bit.
        (segment_distance's gradient at 10^5 points: 452 -> 203 us in a timing script; a vectorizable
        maximum first and a second pass for its point measured 244 us.)  An arg loop inside another loop
        (a few points at each outer one) is left as one loop."""
        lo, hi = (b if is_atom_code(b) else self._named(block, b, w) for b, w in zip(bounds, ("lo", "hi"), strict=True))
        values, chunk, stop, j = (lir.Name(self.fresh(w)) for w in ("values", "chunk", "stop", "j"))
        size = lir.Lit(str(CHUNK))
        fill = lir.For(var, lir.Call(lir.Name("range"), (chunk, stop)),
                       (*body, lir.Assign(lir.Index(values, (lir.BinOp("-", var, chunk),)), g)))
        scan = lir.For(j, lir.Call(lir.Name("range"), (chunk, stop)), (
            lir.Assign(v, lir.Index(values, (lir.BinOp("-", j, chunk),))),
            lir.If(test, (lir.Assign(best, v), lir.Assign(at, j)))))
        chunks = lir.For(chunk, lir.Call(lir.Name("range"), (lo, hi, size)), (
            lir.Assign(stop, lir.Call(lir.Name("min"), (lir.BinOp("+", chunk, size), hi))), fill, scan))
        self.chunked.append((values, var, at, (lo, hi, lir.Lit("1"))))
        return [lir.Assign(values, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (size,))), chunks]

    def _arg_of(self, node):
        """The arg-extremum indicator the targets hold over the same values and range as the maximum (minimum)
        ``node``, where one loop may compute both (no reduction inside its values); else None."""
        if not isinstance(node, forms.Reduction) or node.kind not in ("max", "min") or \
                maximal_reductions(self.body, node.args[0]):
            return None
        sign = 1 if node.kind == "max" else -1
        for t in self.dom.targets:
            for n in self.body.nodes(t.expr):
                if isinstance(n, forms.ArgOneHot) and n.args[:5] == node.args[:5] and \
                        (n.args[5] > 0) == (sign > 0):
                    return n
        return None

    def _hoisted(self, block, known: dict, exprs, level: frozenset) -> dict:
        """``known`` and the values of ``exprs`` that an inner loop would compute at every point but that
        vary over the loops ``level`` only (a softmax's shift ``max(m, log(c))`` inside the loop over k):
        computed once, here, by ``block``'s printer."""
        inner = dict(known)
        for e in exprs:
            for n in loop_invariants(self.body, e, level):
                if n not in inner:
                    code = block.pr.value(n)
                    if not is_atom_code(code):
                        name = lir.Name(self.fresh("t"))
                        block.pr.emit(lir.Assign(name, code))
                        code = name
                    inner[n] = code
        return inner

    def _accumulate(self, kind: str, acc: lir.Name, val: lir.Expr) -> list[lir.Stmt]:
        """One step of a reduction into ``acc``; NumPy's max/min, where a NaN anywhere is the result (its last
        statement :func:`numba_extrema.exact_step`, which :func:`numba_extrema.vectorized` makes fast)."""
        if kind in ("sum", "prod"):
            return [lir.AugAssign(acc, "+" if kind == "sum" else "*", val)]
        term = lir.Name(self.fresh("v"))
        return [lir.Assign(term, val), numba_extrema.exact_step(acc, term, kind)]

    def _scatter_nest(self, chain, index: dict, block, known: dict, scatters) -> None:
        """The loops of ``chain`` (outermost first) around the scatters, added in the innermost body; each
        reduction the scatters read computed at the outermost level it can be."""
        level = frozenset(index)
        for t in scatters:
            for e in [t.expr, *map(sp.sympify, t.index)]:
                for r in maximal_reductions(self.body, e):
                    if self.body.deps(r) <= level:
                        self._ensure(r, index, block, known)
        if not chain:
            guarded: dict = {}
            adds = []
            for t in scatters:
                found = guarded_contribution(self.body, t.expr)
                if found is not None:
                    guarded.setdefault(found[0], []).append((t, found[1]))
                    continue
                at = tuple(integer_index(block.pr.value(sp.sympify(x))) for x in t.index)
                adds.append(lir.AugAssign(lir.Index(lir.Name(t.target), at), "+", block.pr.value(t.expr)))
            block.add(adds)
            for cond, items in guarded.items():
                # (a contribution that is 0 outside a branch is added inside it: at the points where the
                # branch is not taken there is nothing to add, as in the user's loop)
                test = block.pr.value(cond)
                arm = self._point(index, dict(block.pr.root.memo))
                stmts = []
                for t, value in items:
                    at = tuple(integer_index(arm.value(sp.sympify(x))) for x in t.index)
                    stmts.append(lir.AugAssign(lir.Index(lir.Name(t.target), at), "+", arm.value(value)))
                self._note(arm)
                block.add([lir.If(test, tuple(list(arm.body) + stmts))])
            return
        k, *rest = chain
        var, rng = self._range(k, block.pr)
        inner_index = {**index, k: var}
        inner_known = self._hoisted(block, known, [e for t in scatters for e in [t.expr, *map(sp.sympify, t.index)]],
                                    level)
        inner = Block(self._point(inner_index, inner_known))
        self._scatter_nest(rest, inner_index, inner, inner_known, scatters)
        self._note(inner.pr)
        block.add([lir.For(var, rng, tuple(inner.done()))])

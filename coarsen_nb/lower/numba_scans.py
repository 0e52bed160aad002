"""The numba backend's scans: an SOI whose loop carries a linear recurrence, as sequential compiled loops.

The phi-calculus lifts a loop state that the same iteration reads to its value at every step
(:class:`~coarsen_nb.phi.scans.LinScan`, v_k = the state before step k of v <- a_k*v + b_k), and its
adjoint to the reverse recurrence (:class:`~coarsen_nb.phi.scans.LinCostate`, u_k = w_{k+1} + a_{k+1}*u_{k+1}).
The NumPy printer has no loop to put them in, so it prints each as a doubling scan over whole arrays
(``_lin_scan``), and then the elementwise work and the sums around them one array at a time.  Under Numba
a scan is cheapest as what it is, a sequential loop: here every target of such an SOI (its value, or the
sums and scatters of its adjoint) is computed in one pass over k, each state carried in a scalar:

* without a costate (the forward): one loop in k's order, the sums accumulated and the scatters written
  as it goes, each state updated after the step has read it;
* with a costate (the adjoint): a loop in k's order that stores each state at every k (the one array of
  the function), then one loop in reverse order that carries the costates, accumulates the sums and
  writes the scatters, as a hand-written reverse sweep does.  The sums of the forward states alone are
  added up in the forward pass; the reverse pass may read them (asian_option's branch on a path's average,
  inside its adjoint's sums), and what it reads that varies over no step is computed once between the passes.
  A costly value of a step that the reverse pass reads again (an ``exp``) is stored beside the states; an
  exponential of the step's data alone (``exp(sigma*z[p, k])``, no state) is computed ahead of the forward
  pass, in a loop that only stores it, with the helper ``_exp`` (LLVM vectorizes it, not libm's ``math.exp``),
  and both passes read it back.  The stored rows are one array (the function runs once per path of a
  Monte Carlo loop), handed over by the caller where its length reads the parameters alone, which a reverse
  sweep then allocates once before its loop (:mod:`coarsen_nb.lower.scratch`); the values around the passes
  are Python numbers, no 0-d arrays.  Where tests before the passes prove every subscript in bounds (a number
  parameter may be one: the path p) the adjoint runs without Numba's bounds checks
  (:mod:`coarsen_nb.lower.numba_bounds`).  asian_option's gradient at 10⁴ paths: 3.7 → 2.8 ms (RESULTS.md,
  stop 38), 3.2 → 2.8 ms on a loaded machine (stop 39).

The new states of a step are all computed before any is stored, so a scan that reads another scan (or a
costate that reads another costate) reads the values of the same step.  What this does not take
(:func:`~coarsen_nb.lower.numba_scan_domain.scan_domain` refuses it; the fuser then goes on as before, array
code for the scans): a scan's range whose step is not 1, ranges that differ, a target that varies over
another index or holds a scan outside a sum, a reduction other than a sum, other nested sums, a coefficient
or an initial value that reads a costate, and the nodes no single pass computes
(``fusion_domain.NOT_ONE_PASS``: array writes, gathers of an adjoint array, segment products).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, lir_exprs, lir_passes, naming
from coarsen_nb.lower.nest_analysis import loop_invariants
from coarsen_nb.lower.numba_bounds import UNCHECKED, bounds_guard, checked_call, out_of_bounds
from coarsen_nb.lower.numba_loop_parts import integer_index, minus, paren
from coarsen_nb.lower.numba_loops import LoopFunction
from coarsen_nb.lower.numba_scan_domain import forward_sum
from coarsen_nb.lower.numba_scan_peel import last_step_peeled
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.lower.scratch import scratch_allocation
from coarsen_nb.phi import forms
from coarsen_nb.phi.scans import LinCostate, LinScan


class ScanLoops(LoopFunction):
    """The loop function of one ``scan`` domain (see the module docstring)."""

    _scratch = None                 # (the parameter, rows, count) of the scratch array the caller hands over

    def _call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        if self._scratch is None:
            return self.results_call(name, params)
        given, rows, count = self._scratch
        # the caller's own name for it, noted so that a loop around the call may allocate it once
        mine = self.fresh("scratch")
        note = getattr(self.writer, "note_scratch", None)
        if note is not None:
            note(mine)
        return [scratch_allocation(mine, rows, count),
                *self.results_call(name, [mine if p == given else p for p in params])]

    def _function(self) -> tuple[str, list[str]] | None:
        leaves, reads = self.used()
        codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        k = self.dom.index
        outer = self.printer(codes, reads_map, 1, {})
        # (every target but a scatter varies over no index, and the sums are float accumulators: the values
        # around the passes are Python numbers, as in them, with no 0-d array to cast an integer one to float)
        outer.scalar_points = True
        lo, hi, _ = (outer.value(x) for x in self.dom.bounds)
        states = self._states()
        scans = [n for n in states if isinstance(n, LinScan)]
        costates = [n for n in states if isinstance(n, LinCostate)]
        sums = self._sums()
        head: list[lir.Stmt] = []
        carried = {n: lir.Name(self.fresh(self._word(outer, n))) for n in states}
        for n in scans:
            head.append(lir.Assign(carried[n], _float(outer.value(n.args[6]))))
        accs = {n: lir.Name(self.fresh("acc")) for n in sums}
        head += [lir.Assign(acc, lir.Lit("0.0")) for acc in accs.values()]
        loops: list[lir.Stmt] = []
        i = lir.Name(self.fresh("k"))
        forward = self.printer(codes, reads_map, 2, {k: i.id})
        forward.scalar_points = True
        for n in scans:
            forward.root.memo[n] = carried[n]
        steps = []
        if costates:
            stored = {n: lir.Name(self.fresh(f"{carried[n].id}_at")) for n in scans}
            count = lir.Call(lir.Name("max"), (lir.Lit("0"), minus(hi, lo)))
            steps += [lir.Assign(lir.Index(stored[n], (minus(i, lo),)), carried[n]) for n in scans]
            # the sums of the forward states alone, added up in the forward pass (the reverse one reads them)
            ahead = {n: acc for n, acc in accs.items() if forward_sum(self.body, n)}
            steps += [lir.AugAssign(acc, "+", forward.value(n.args[0])) for n, acc in ahead.items()]
            late = [n for n in accs if n not in ahead]
            reverse_exprs = ([n.args[0] for n in late] + [a for n in costates for a in n.args[:2]] +
                             [t.expr for t in self.targets if t.mode == "scatter"])
            kept = self._kept(forward, reverse_exprs, set(states) | set(accs))
            kept_at = {e: lir.Name(self.fresh(f"{name.id}_at")) for e, name in kept.items()}
            head += self._tape(count, [*stored.values(), *kept_at.values()], params)
            early = [e for e in kept if self._early(e, set(states) | set(accs))]
            if early:
                loops.append(self._early_loop(codes, reads_map, i, lo, hi, early, kept_at))
                forward.body = _read_back(forward.body, {kept[e].id: lir.Index(kept_at[e], (minus(i, lo),))
                                                         for e in early})
            steps += [lir.Assign(lir.Index(kept_at[e], (minus(i, lo),)), kept[e]) for e in kept if e not in early]
            steps += self._updates(forward, scans, carried)
            loops.append(lir.For(i, lir.Call(lir.Name("range"), (lo, hi)), tuple(forward.body + steps)))
            backward = self.printer(codes, reads_map, 2, {k: i.id})
            backward.scalar_points = True
            reads_at = [lir.Assign(carried[n], lir.Index(stored[n], (minus(i, lo),))) for n in scans]
            reads_at += [lir.Assign(kept[e], lir.Index(kept_at[e], (minus(i, lo),))) for e in kept]
            for e, name in kept.items():
                backward.root.memo[e] = name
            for n in states:
                backward.root.memo[n] = carried[n]
            for n, acc in ahead.items():
                backward.root.memo[n] = acc
            between = self._hoisted(codes, reads_map, ahead, backward, reverse_exprs)
            loops += between.body
            head += [lir.Assign(carried[n], lir.Lit("0.0")) for n in costates]
            work = self._work(backward, {n: acc for n, acc in accs.items() if n not in ahead})
            work += self._updates(backward, costates, carried)
            back = lir.Call(lir.Name("range"), (minus(hi, lir.Lit("1")), minus(lo, lir.Lit("1")), lir.Lit("-1")))
            # (the first step's own quantities tested in the last iteration only: numba_scan_peel)
            loops += last_step_peeled(lir.For(i, back, tuple(reads_at + backward.body + work)), lo)
        else:
            work = self._work(forward, accs)
            work += self._updates(forward, scans, carried)
            loops.append(lir.For(i, lir.Call(lir.Name("range"), (lo, hi)), tuple(forward.body + work)))
        pre = list(outer.body)
        outer.body = []
        for n, acc in accs.items():
            outer.root.memo[n] = acc.id
        returns = [outer.value(t.expr) for t in self.targets if t.mode != "scatter"]
        body = [*pre, *head, *loops, *outer.body]
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        printers = (outer, forward) + ((backward, between) if costates else ()) + self._early_printers
        loads = set().union(*(p.helpers for p in printers))
        if any(p.uses_math for p in printers):
            loads.add("math")
        if self._early_printers:
            # (the forward's reads of the exponentials stored ahead leave its temporaries that computed them dead)
            body = list(lir_passes.drop_dead_assignments(tuple(body)))
            loads.add("_exp")
        name = self.register(params, body, loads)
        numbers = {codes[s] for s in leaves if not self.body.leaves[s][2]}
        # (an adjoint's only: a forward scan's call is narrowed to the results the caller reads, the gradient's
        # loop counter alone, which lir_liveness does only for a function that returns once, at its end)
        checks = self._bounds_tests(body, params, numbers, lo, hi) if costates else None
        if not checks:
            return name, params
        checked = checked_call(name, params)
        return self.register(params, [bounds_guard(checks, checked), *body], loads | {name},
                             "scan_in_bounds", UNCHECKED), params

    _early_printers: tuple = ()
    _own: set = frozenset()         # the arrays the function allocates itself (the forward pass's stored rows)

    def _tape(self, count: lir.Expr, rows: list[lir.Name], params: list[str]) -> list[lir.Stmt]:
        """The arrays the forward pass stores each step's values in, ``count`` each: the rows of one array
        (``tape = xp.empty((2, n))``, ``s_at = tape[0]``), since the function runs once per path of a Monte
        Carlo loop, where each allocation cost more than a step.  Where ``count`` reads the parameters alone,
        the array is a parameter too, a scratch array its caller allocates (:mod:`coarsen_nb.lower.scratch`:
        a loop of calls shares one), and the function allocates its own only where that one is too short."""
        self._own = {row.id for row in rows}
        self._scratch = None
        if set(lir_exprs.names_in(count)) <= set(params) | _BUILTINS:
            given = self.fresh("scratch")
            self._scratch = (given, len(rows), count)
            params.append(given)
            tape = lir.Name(self.fresh("tape"))
            self._own.add(tape.id)
            fits = lir.Compare(">=", lir.Index(lir.Attr(lir.Name(given), "shape"), (lir.Lit("1"),)), count)
            own = scratch_allocation(tape.id, len(rows), count).value
            return [lir.Assign(tape, lir.IfExp(lir.Name(given), fits, own)),
                    *(lir.Assign(row, lir.Index(tape, (lir.Lit(str(j)),))) for j, row in enumerate(rows))]
        if len(rows) == 1:
            return [lir.Assign(rows[0], lir.Call(lir.Attr(lir.Name("xp"), "empty"), (count,)))]
        tape = lir.Name(self.fresh("tape"))
        self._own.add(tape.id)
        shape = lir.Tuple((lir.Lit(str(len(rows))), count))
        return [lir.Assign(tape, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (shape,))),
                *(lir.Assign(row, lir.Index(tape, (lir.Lit(str(j)),))) for j, row in enumerate(rows))]

    def _early(self, e, states: set) -> bool:
        """Whether the kept value ``e`` (see :meth:`_kept`) is an exponential that reads no state and no sum:
        its values at every step are then computed ahead of the forward pass, in a loop that only stores
        them, with the helper ``_exp`` (arithmetic LLVM vectorizes; libm's ``math.exp`` it cannot), and the
        forward pass reads them back.  Each step's ``exp`` was most of a Monte Carlo path's work
        (asian_option: 50 steps a path, two passes over them)."""
        value = self.body.temps.get(e, e) if isinstance(e, sp.Symbol) else e
        return isinstance(value, sp.exp) and not any(
            n in states or isinstance(n, (LinScan, LinCostate, forms.Reduction, forms.ElemSum))
            for n in self.body.nodes(e))

    def _early_loop(self, codes, reads_map, i: lir.Name, lo, hi, early: list, kept_at: dict) -> lir.For:
        """The loop that stores the exponentials ``early`` at every step, ahead of the forward pass."""
        pr = self.printer(codes, reads_map, 2, {self.dom.index: i.id})
        pr.scalar_points = True
        stores = []
        for e in early:
            value = self.body.temps.get(e, e) if isinstance(e, sp.Symbol) else e
            stores.append(lir.Assign(lir.Index(kept_at[e], (minus(i, lo),)),
                                     lir.Call(lir.Name("_exp"), (pr.value(value.args[0]),))))
        self._early_printers = (pr,)
        return lir.For(i, lir.Call(lir.Name("range"), (lo, hi)), tuple(pr.body + stores))

    def _bounds_tests(self, body, params: list[str], numbers: set[str], lo, hi) -> list[lir.Expr] | None:
        """The tests before the passes that prove every subscript in bounds (:mod:`coarsen_nb.lower.numba_bounds`:
        then the function runs without Numba's bounds checks, a compare and a branch a read), or None.  Every
        pass runs over k in [lo, hi) (the reverse one backwards); the arrays the function allocates itself
        (the stored rows) are in bounds by construction; a number parameter (``numbers``) may be a subscript
        (the path p of ``z[int(p), int(k)]``)."""
        loops = [s for s in lir.statements(body) if isinstance(s, lir.For)]
        if not loops or any(not isinstance(s.target, lir.Name) or s.target.id != loops[0].target.id for s in loops):
            return None
        if not set(lir_exprs.names_in(lo)) | set(lir_exprs.names_in(hi)) <= set(params) | _BUILTINS:
            return None
        return out_of_bounds(body, set(params), {loops[0].target.id: [(lo, hi, lir.Lit("1"))]},
                             frozenset(self._own), frozenset(numbers))

    def _kept(self, forward, exprs, states) -> dict:
        """The costly values of a step (``exp``, ``log``, a fractional power) that the forward pass computed
        at its top level and the reverse pass reads again (``exprs``), each -> its name in the forward pass:
        they are stored at every step beside the states and read back, not computed twice (asian_option's
        ``exp(sigma*z[p, t])``).  Only what varies over the step and calls a float function."""
        top = {s.target.id for s in forward.body if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name)}
        wanted = set().union(*(self.body.nodes(e) for e in exprs)) if exprs else set()
        kept = {}
        for e, code in forward.root.memo.items():
            value = self.body.temps.get(e, e) if isinstance(e, sp.Symbol) else e
            if e in wanted and e not in states and isinstance(code, lir.Name) and code.id in top and \
                    self.dom.index in self.body.deps(e) and _float_function(value):
                kept[e] = code
        return dict(sorted(kept.items(), key=lambda item: item[1].id))

    def _hoisted(self, codes, reads_map, ahead: dict, backward, exprs):
        """The printer of the statements between the two passes (its ``body``), computing what the reverse
        pass reads at every step (in ``exprs``) but that varies over no step (a branch on the forward sums,
        asian_option's payoff in the money), each once; ``backward``'s printer then reads their names."""
        between = self.printer(codes, reads_map, 1, {})
        between.scalar_points = True
        for n, acc in ahead.items():
            between.root.memo[n] = acc
        for e in exprs:
            for n in loop_invariants(self.body, e, frozenset()):
                # (not what reads a scan's state at a step, but for the sums of the forward pass)
                if n in backward.root.memo or any(isinstance(m, (LinScan, LinCostate))
                                                  for m in self.body.nodes(n, stops=ahead)):
                    continue
                code = between.value(n)
                if not is_atom_code(code):
                    name = lir.Name(self.fresh("t"))
                    between.emit(lir.Assign(name, code))
                    code = name
                backward.root.memo[n] = code
        return between

    def _states(self) -> list:
        """The scans and costates the targets read, in the order first found (stable for printing)."""
        seen: dict = {}
        for t in self.targets:
            for n in self.body.nodes(t.expr):
                if isinstance(n, (LinScan, LinCostate)):
                    seen.setdefault(n, None)
        return sorted(seen, key=str)

    def _sums(self) -> list:
        seen: dict = {}
        for t in self.targets:
            for n in self.body.nodes(t.expr):
                if isinstance(n, forms.Reduction):
                    seen.setdefault(n, None)
        return sorted(seen, key=str)

    def _word(self, pr, n) -> str:
        """The carried state's name: the user's variable the scan is the value of (``s``), else ``v``/``u``."""
        word = naming.printer_word(pr, n)
        return word if word and word.isidentifier() else ("v" if isinstance(n, LinScan) else "u")

    def _work(self, pr, accs: dict) -> list[lir.Stmt]:
        """One step's sums and scatters at the loop index (their temporaries go to ``pr.body``)."""
        out: list[lir.Stmt] = []
        for n, acc in accs.items():
            out.append(lir.AugAssign(acc, "+", pr.value(n.args[0])))
        for t in self.targets:
            if t.mode == "scatter":
                index = tuple(integer_index(pr.value(sp.sympify(x))) for x in t.index)
                out.append(lir.AugAssign(lir.Index(lir.Name(t.target), index), "+", pr.value(t.expr)))
        return out

    def _updates(self, pr, states, carried) -> list[lir.Stmt]:
        """Each state's next value (a scan's v <- a*v + b, a costate's u <- w + a*u), all computed before
        any is stored, so that one state reading another reads this step's."""
        news = [(carried[n], _affine(pr.value(n.args[0]), carried[n], pr.value(n.args[1]), *n.args[:2]))
                for n in states]
        if len(news) == 1:
            ((v, step),) = news
            return [lir.Assign(v, step)]
        fresh = [lir.Name(self.fresh(f"{v.id}_next")) for v, _ in news]
        return ([lir.Assign(f, step) for f, (_, step) in zip(fresh, news, strict=True)] +
                [lir.Assign(v, f) for f, (v, _) in zip(fresh, news, strict=True)])


_BUILTINS = frozenset({"max", "min", "int"})


def _read_back(body, reads: dict) -> list:
    """``body`` with each assignment of a name in ``reads`` (name -> the stored value's load) replaced by
    the load: the forward pass reads what the loop ahead of it stored."""
    return [lir.Assign(s.target, reads[s.target.id]) if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name)
            and s.target.id in reads else s for s in body]


def _affine(a_code: lir.Expr, v: lir.Name, b_code: lir.Expr, a, b) -> lir.Expr:
    """``a*v + b``, printed simply where a is 1 or b is 0."""
    term = v if a == 1 else lir.BinOp("*", paren(a_code), v)
    return term if b == 0 else lir.BinOp("+", term, paren(b_code))


def _float(e: lir.Expr) -> lir.Expr:
    """A carried state starts as a float (NumPy's scans of a float array are floats)."""
    return lir.Call(lir.Name("float"), (e,))


_FLOAT_FUNCTIONS = (sp.exp, sp.log, sp.sin, sp.cos, sp.tan, sp.sinh, sp.cosh, sp.tanh, sp.asin, sp.acos, sp.atan,
                    sp.atan2, sp.erf, sp.erfc)


def _float_function(e) -> bool:
    """``e`` calls a function whose value is a float and costs more than a store and a load: an elementary
    function, or a power whose exponent is not an integer."""
    return isinstance(e, _FLOAT_FUNCTIONS) or (isinstance(e, sp.Pow) and not e.exp.is_Integer)

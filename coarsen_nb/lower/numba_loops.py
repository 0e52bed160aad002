"""The loop function of one fused domain of the numba backend: its parameters, its records, its call.

:mod:`coarsen_nb.lower.numba_fusion` groups an SOI's targets by domain; each group becomes one function of the
generated module built here (a :class:`~coarsen_nb.lower.lir.FunctionDef` of the domain's statements: the
flattening or the bounds, the accumulator, one ``For``, the code after it), printed once into the module's
helpers and compiled with NumPy's error model (``_jit_loop``).  :mod:`coarsen_nb.lower.numba_scans` builds the
loops of a ``scan`` domain on the same parts (what the loop reads, its printers, its registration, its call).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, naming, numba_builtin_calls, numba_extrema
from coarsen_nb.lower.domain import Domain, arrays_read
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.fusion_domain import Body
from coarsen_nb.lower.helpers import Helper
from coarsen_nb.lower.numba_bounds import UNCHECKED, bounds_guard, checked_call, loop_spans, out_of_bounds
from coarsen_nb.lower.numba_loop_parts import accumulator_start, integer_index, minus
from coarsen_nb.lower.numba_peel import first_iteration
from coarsen_nb.lower.numba_reciprocals import shared_reciprocals
from coarsen_nb.lower.numba_threads import THREADED, threadable, threaded
from coarsen_nb.lower.numba_trig import HELPERS as TRIG_HELPERS
from coarsen_nb.lower.numba_trig import KINDS as TRIG_KINDS
from coarsen_nb.lower.numba_trig import FastTrig, buffered_steps
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.symbolic.levels import ELEM

DECORATOR = "@_jit_loop"


class LoopFunction:
    """One loop function of the module for one fusable domain: its parameters, its records (a
    ``lir.FunctionDef``, printed once into the module's helpers), its call."""

    def __init__(self, writer, kernel, body: Body, dom: Domain, tag: str):
        self.writer, self.kernel, self.body, self.dom = writer, kernel, body, dom
        self.targets = list(dom.targets)
        self.kind = dom.kind
        self.tag = tag
        self.fresh = writer.names.fresh
        self.function: lir.FunctionDef | None = None       # the loop function, once built
        # an element loop's contribution whose stored value is an earlier target's: its position -> that
        # target's (one array, returned once, read by both contributions: ``shares_output``)
        self.same_output: dict[int, int] = {}
        # the one array an element loop reads in its memory order, once flattened so (``_flatten``), or None
        self.memory_order_of: lir.Name | None = None

    # -- what the loop reads ------------------------------------------------------------------

    def used(self, extra=()):
        """The leaves (scalars, whole arrays) and the read arrays the group's expressions use (and ``extra``:
        more expressions its loops read, such as the ranges of a nest)."""
        exprs = [t.expr for t in self.targets] + [sp.sympify(i) for t in self.targets for i in t.index]
        exprs += list(self.dom.bounds or ()) + list(self.dom.inner[1] if self.dom.inner else ()) + list(extra)
        leaves, reads = [], []
        for e in exprs:
            for n in self.body.nodes(e):
                if isinstance(n, sp.Symbol):
                    if n in self.body.reads:
                        arr = self.body.names(self.body.reads[n][0])
                        if arr not in reads:
                            reads.append(arr)
                    elif n in self.body.leaves and n not in leaves:
                        leaves.append(n)
        return sorted(leaves, key=str), reads

    # -- the function ----------------------------------------------------------------------------

    def build(self) -> list[lir.Stmt] | None:
        # the function's temporaries are its own: named afresh, so that the same SOI printed in two
        # functions of the module (the forward, and inside NAME_grad) is the same text, one function
        names = self.writer.names
        outside, names.local = names.local, set()
        try:
            made = self._function()
        finally:
            names.local = outside
        return None if made is None else self._call(*made)

    def _function(self) -> tuple[str, list[str]] | None:
        """The loop function's name and parameters, its source (printed from its records) registered among
        the module's helpers."""
        leaves, reads = self.used()
        codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        # the arrays whose broadcast shape the loop runs over: an elementwise output's, a sum's operand's
        arrays = self.dom.arrays
        if self.kind == "elemsum" and arrays_read(self.body, self.targets[0].expr, outside=self.dom.reduce.node):
            return None         # an array beside the sum: the result is not one number
        if self.kind in ("reduce", "scatter", "loop", "fill") and \
                any(ELEM in self.body.deps(t.expr) for t in self.targets):
            return None
        reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        # statements before the loop (the bounds; after a reduction, the code around it): scalar code
        outer = self.printer(codes, reads_map, 1, {})
        loop_leaves = dict(codes)
        head: list[lir.Stmt] = []
        loads: set[str] = set()     # the helpers (and math) its own lines use; the printers note theirs
        elementwise = self.dom.elementwise
        if elementwise:
            if not arrays:
                return None
            shape, flats, i, count = self._flatten(head, loop_leaves, leaves, codes)
            loop_range: tuple[lir.Expr, ...] = (count,)
            if self.memory_order_of is None:
                loads |= {"_flat_as"} | ({"_broadcast_shape"} if len(flats) > 1 else set())
        else:
            a, b, s = (outer.value(x) for x in self.dom.bounds)
            i = lir.Name(self.fresh(naming.user_word(str(self.dom.index)) or "k"))
            loop_range = (a, b) if str(s) == "1" else (a, b, s)
        powers, inverses = shared_reciprocals([t.expr for t in self.targets], self.body.temps)
        divide = (lambda e: e.xreplace(powers) if isinstance(e, sp.Basic) else e) if powers else (lambda e: e)
        inner = self.printer(loop_leaves, reads_map, 2, {} if elementwise else {self.dom.index: i.id},
                             divide if powers else None, inverses)
        inner.scalar_points = True
        # a loop that only stores, or one float sum over a range of step 1: cos and sin vectorized (numba_trig);
        # float sums and scatters at the iteration over a range of step 1: exp, log and erf too (the sums' terms
        # in buffers, ``chunked``)
        summed = self.kind == "reduce" and self.dom.reduce.kind == "sum" and \
            not self.dom.reduce.integer and len(self.targets) == 1 and len(loop_range) <= 2
        chunked = summed or (self.kind == "loop" and len(loop_range) <= 2 and not self.writer.backend.parallel and all(
            red is None or (red.kind == "sum" and not red.integer) for red in self.dom.reduces))
        trig = FastTrig(self.fresh, trig=self.kind in TRIG_KINDS or summed, whole=chunked) \
            if self.kind in TRIG_KINDS or chunked else None
        if trig is not None:
            inner.scalar_call = trig.call
        pre = list(outer.body)
        outer.body = []
        out: list[lir.Stmt] = []
        returns: list[lir.Expr] = []
        accs: dict = {}
        decorator = DECORATOR
        reduces = self.dom.reduces if self.kind == "loop" else (self.dom.reduce,)

        def steps(pr: Printer, settle=lambda e: e) -> list[lir.Stmt]:
            """One iteration's scatters and accumulations, printed by ``pr`` (its body: the values they read)."""
            made: list[lir.Stmt] = []
            done: set = set()
            for t, red in zip(self.targets, reduces, strict=True):
                if red is None:         # (a scatter of a loop domain, added in place at its index)
                    index = tuple(integer_index(pr.value(sp.sympify(x))) for x in t.index)
                    made.append(lir.AugAssign(lir.Index(lir.Name(t.target), index), "+", pr.value(settle(t.expr))))
                    continue
                if red.node in done:
                    continue
                done.add(red.node)
                if red.node not in accs:
                    acc = accs[red.node] = lir.Name(self.fresh("acc"))
                    head.append(lir.Assign(acc, accumulator_start(red)))
                    if red.kind in ("max", "min"):
                        loads.add("math")       # (the identity is math's infinity)
                made += self._accumulate(accs[red.node], pr.value(settle(red.operand)), red.kind)
                outer.root.memo[red.node] = accs[red.node].id
            return made

        if self.dom.reduce is not None or self.kind == "loop":
            out = steps(inner, divide)
            returns += [outer.value(t.expr) for t, red in zip(self.targets, reduces, strict=True) if red is not None]
        else:
            self.same_output = {}
            first_storing: dict = {}        # a printed value (of one iteration's names) -> the first target storing it
            for k, t in enumerate(self.targets):
                val = inner.value(divide(t.expr))
                if t.mode == "scatter":
                    index = tuple(integer_index(inner.value(sp.sympify(x))) for x in t.index)
                    out.append(lir.AugAssign(lir.Index(lir.Name(t.target), index), "+", val))
                elif self.shares_output(t) and val in first_storing:
                    self.same_output[k] = first_storing[val]
                else:
                    if self.shares_output(t):
                        first_storing[val] = k
                    buf = lir.Name(self.fresh(t.target))
                    # (a fill's array: the length of its range(0, n), as the zeros it stands for)
                    size = lir.Call(lir.Name("max"), (lir.Lit("0"), loop_range[1])) if self.kind == "fill" else count
                    head.append(lir.Assign(buf, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (size,))))
                    out.append(lir.Assign(lir.Index(buf, (i,)), val))
                    memory = self.memory_order_of
                    returns.append(buf if self.kind == "fill" else
                                   lir.Call(lir.Attr(lir.Name("xp"), "memory_shaped"), (buf, memory))
                                   if memory is not None else lir.Call(lir.Attr(buf, "reshape"), (shape,)))
        iterable = lir.Call(lir.Name("range"), loop_range)
        checks = None
        if trig is not None and trig.used and chunked:
            # (a sum's chunks vectorize only without bounds checks: tests before the loop decide, as for a nest;
            # where there are none, or a step cannot wait for its chunk, the sum keeps libm's calls)
            plain = [lir.For(i, iterable, tuple(inner.body + out))]
            checks = out_of_bounds(plain, set(params), loop_spans(plain, set(params)))
            if checks is None or not buffered_steps(out, inner.body):
                checks = None
                trig.used = False
                inner.body = trig.plain(inner.body)
                inner.helpers -= TRIG_HELPERS
                loads.add("math")
        if trig is not None and trig.used and chunked:
            loops = trig.summed(i, loop_range, inner.body, out, accumulator_start(self.dom.reduce) if summed else None)
            loads.add("math")
        elif trig is not None and trig.used:
            loops = trig.loops(i, iterable, inner.body, out)
            loads.add("math")           # (libm's cos and sin for the far elements)
        else:
            loops = [lir.For(i, iterable, tuple(inner.body + out))]
            peel = None if elementwise or self.kind == "fill" or self.writer.backend.parallel else \
                first_iteration(self, loop_range)
            if peel is not None:
                # the branches on `k == first` decided in the other iterations: their loop without them
                decide, first, rest = peel
                # (its own reciprocals: the settled divisors are other expressions)
                later_powers, later_inverses = shared_reciprocals(
                    [decide(t.expr) for t in self.targets], {k: decide(v) for k, v in self.body.temps.items()})

                def settle(e):
                    e = decide(e)
                    return e.xreplace(later_powers) if later_powers and isinstance(e, sp.Basic) else e

                later = self.printer(loop_leaves, reads_map, 2, {self.dom.index: i.id}, settle, later_inverses)
                later.scalar_points = True
                if self.dom.reduce is not None or self.kind == "loop":
                    made = steps(later, settle)
                else:
                    made = [lir.AugAssign(lir.Index(lir.Name(t.target),
                                                    tuple(integer_index(later.value(sp.sympify(x))) for x in t.index)),
                                          "+", later.value(settle(t.expr))) for t in self.targets]
                loops = [lir.For(i, lir.Call(lir.Name("range"), first), tuple(inner.body + out)),
                         lir.For(i, lir.Call(lir.Name("range"), rest), tuple(later.body + made))]
                inner.helpers |= later.helpers
                inner.uses_math = inner.uses_math or later.uses_math
            elif self._vectorized_extremum():
                # a max/min in vector instructions, then the exact loop only for a NaN or a zero (numba_extrema)
                red = self.dom.reduce
                loads.add(numba_extrema.NAMES[red.kind])
                loops = numba_extrema.vectorized(self.writer, loops[0], accs[red.node], accumulator_start(red),
                                                 red.kind)
            if peel is None and self.writer.backend.parallel and len(loop_range) <= 2 and \
                    threadable(loops[0], {acc.id for acc in accs.values()}, after=outer.body):
                trips = loop_range[0] if len(loop_range) == 1 else minus(*reversed(loop_range))
                loops = [threaded(loops[0], trips)]
                decorator = THREADED        # (parallel=True: its iterations on threads, numba_threads.py)
        body = [*pre, *head, *loops, *outer.body]
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        loads |= outer.helpers | inner.helpers | ({"math"} if outer.uses_math or inner.uses_math else set())
        name = self.register(params, body, loads, decorator=decorator)
        if not checks:
            return name, params
        checked = checked_call(name, params)
        return self.register(params, [bounds_guard(checks, checked), *body], loads | {name},
                             f"{self.kind}_in_bounds", UNCHECKED), params

    def _flatten(self, head: list, loop_leaves: dict, leaves, codes):
        """The statements that flatten the domain's arrays to its broadcast shape (into ``head``), each array
        leaf read at the loop index (``loop_leaves``): the shape's, the flat arrays', index's and count's names."""
        distinct = list(dict.fromkeys(self.dom.arrays))
        self.memory_order_of = None
        if self._in_memory_order(distinct):
            # (one matrix, maybe a transposed view: read and written in its memory order, numba_xp_memory_order)
            (a,) = distinct
            self.memory_order_of = lir.Name(a)
            flat = lir.Name(self.fresh(f"flat_{a}"))
            head.append(lir.Assign(flat, lir.Call(lir.Attr(lir.Name("xp"), "memory_flat"), (lir.Name(a),))))
            i, count = lir.Name(self.fresh("i")), lir.Name(self.fresh("n"))
            head.append(lir.Assign(count, lir.Index(lir.Attr(flat, "shape"), (lir.Lit("0"),))))
            for s in leaves:
                if self.body.leaves[s][2]:
                    loop_leaves[s] = lir.Index(flat, (i,))
            return None, {a: flat.id}, i, count
        shape = lir.Name(self.fresh("shape"))
        shapes = [lir.Attr(lir.Name(a), "shape") for a in distinct]
        head.append(lir.Assign(shape, shapes[0] if len(distinct) == 1 else
                               lir.Call(lir.Name("_broadcast_shape"), tuple(shapes))))
        flats = {}
        for a in distinct:
            flats[a] = self.fresh(f"flat_{a}")
            head.append(lir.Assign(lir.Name(flats[a]), lir.Call(lir.Name("_flat_as"), (lir.Name(a), shape))))
        i = lir.Name(self.fresh("i"))
        count = lir.Name(self.fresh("n"))
        head.append(lir.Assign(count, lir.Index(lir.Attr(lir.Name(flats[distinct[0]]), "shape"), (lir.Lit("0"),))))
        for s in leaves:
            if self.body.leaves[s][2]:
                loop_leaves[s] = lir.Index(lir.Name(flats[codes[s]]), (i,))      # (the element at the index)
        return shape, flats, i, count

    def _in_memory_order(self, distinct: list[str]) -> bool:
        """Whether the element loop runs in its array's memory order (:mod:`coarsen_nb.lower.numba_xp_memory_order`):
        it reads one array, of two axes or more by the plan, and only stores results (no scatter, no sum, whose
        order of adds is NumPy's row-major one)."""
        if self.kind != "elem" or len(distinct) != 1 or any(t.mode == "scatter" for t in self.targets):
            return False
        # (the printed name's SSA value, or the primal of the adjoint or tangent it names: its type in the plan)
        values = [key.split("\0")[-1] for key, printed in self.writer.names.map.items() if printed == distinct[0]]
        types = [self.writer.plan.types.get(v) for v in values]
        return bool(types) and all(t is not None and t.ndim >= 2 for t in types)

    def shares_output(self, t) -> bool:
        """Whether target ``t`` may share its array with another target of the loop that stores the same value
        (periodic_laplacian_2d's four ``0.5 * U``, the adjoints of its four rolls: one array written, not four):
        an element loop's contribution to an adjoint (``d = f(...)``, ``b += d``), which its call only reads.
        Not a new value (the SOI's output, which the code after it owns), and never an adjoint's first
        contribution that takes the zeros' place (``numba_fusion`` does not claim a shared one)."""
        return self.kind == "elem" and t.mode == "add"

    def shared_targets(self) -> set[str]:
        """The targets whose output array is another's (and those others): none may become its adjoint."""
        pairs = self.same_output.items()
        return {self.targets[k].target for pair in pairs for k in pair}

    def _vectorized_extremum(self) -> bool:
        """Whether the loop is one max/min whose steps may be LLVM's vectorized ``llvm.maximum`` (``minimum``),
        the exact loop run again only for a NaN or a zero (:mod:`~coarsen_nb.lower.numba_extrema`): a single
        reduction, nothing else in its loop to repeat, not on threads (whose loop is a sum of its own)."""
        return self.kind == "reduce" and self.dom.reduce.kind in numba_extrema.NAMES and \
            len(self.targets) == 1 and not self.writer.backend.parallel

    def _accumulate(self, acc: lir.Name, val: lir.Expr, kind: str | None = None) -> list[lir.Stmt]:
        """The loop body's step of the reduction (``kind``, by default the domain's) into ``acc``: NumPy's
        max/min, where a NaN anywhere is the result (its last statement :func:`numba_extrema.exact_step`,
        which :func:`numba_extrema.vectorized` makes the fast step of a max/min loop)."""
        kind = kind or self.dom.reduce.kind
        if kind in ("sum", "prod"):
            return [lir.AugAssign(acc, "+" if kind == "sum" else "*", val)]
        stmts: list[lir.Stmt] = []
        term = val
        if not is_atom_code(val):
            term = lir.Name(self.fresh("v"))
            stmts.append(lir.Assign(term, val))
        return [*stmts, numba_extrema.exact_step(acc, term, kind)]

    def _call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        """The caller's statements: the call, and what it gives to the SOI's outputs."""
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        if self.kind == "scatter":
            return [lir.ExprStmt(call)]
        if self.kind == "loop":
            return self.results_call(name, params)
        if self.dom.reduce is not None:
            (t,) = self.targets
            target = lir.Name(t.target)
            return [lir.AugAssign(target, "+", call) if t.mode == "add" else lir.Assign(target, call)]
        # a contribution to an adjoint is computed fresh, then added (the adjoint may be a scalar or
        # an array of another shape, which NumPy's ``+=`` broadcasts)
        outs: list[lir.Name] = []
        for k, t in enumerate(self.targets):
            outs.append(outs[self.same_output[k]] if k in self.same_output else
                        lir.Name(t.target) if t.mode == "new" else lir.Name(self.fresh(f"d_{t.target}")))
        returned = [o for k, o in enumerate(outs) if k not in self.same_output]
        stmts: list[lir.Stmt] = [lir.Assign(returned[0] if len(returned) == 1 else
                                            lir.Tuple(tuple(returned), bare=True), call)]
        for t, o in zip(self.targets, outs, strict=True):
            if t.mode == "add" and t.sum_to is not None:
                self.writer.helpers.add("_sum_to")
                shape = lir.Attr(lir.Name(self.body.leaves[t.sum_to][0]), "shape")
                stmts.append(lir.AugAssign(lir.Name(t.target), "+", lir.Call(lir.Name("_sum_to"), (o, shape))))
            elif t.mode == "add":
                stmts.append(lir.AugAssign(lir.Name(t.target), "+", o))
        return stmts

    def results_call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        """The caller's statements for a function that returns every target that is not a scatter (in
        order) and writes the scatters in place: the ``_call`` of the ``scan`` and ``nest`` loops."""
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        results = [t for t in self.targets if t.mode != "scatter"]
        if not results:
            return [lir.ExprStmt(call)]
        if len(results) == 1:
            (t,) = results
            target = lir.Name(t.target)
            return [lir.AugAssign(target, "+", call) if t.mode == "add" else lir.Assign(target, call)]
        outs = [lir.Name(t.target) if t.mode == "new" else lir.Name(self.fresh(f"d_{t.target}")) for t in results]
        stmts: list[lir.Stmt] = [lir.Assign(lir.Tuple(tuple(outs), bare=True), call)]
        return stmts + [lir.AugAssign(lir.Name(t.target), "+", o)
                        for t, o in zip(results, outs, strict=True) if t.mode == "add"]

    def register(self, params, body: list[lir.Stmt], loads: set[str], kind: str | None = None,
                 decorator: str = DECORATOR) -> str:
        """The loop function's name, its source in the module's helpers: ``_soi3_vjp_scatter``; the same
        SOI printed again (the forward inside ``NAME_grad``) shares the function when its text is the same.
        ``loads``: the helpers it calls, which the module then defines too, and ``math`` where it uses it.
        The function is a :class:`~coarsen_nb.lower.lir.FunctionDef` printed here; its decorator is the
        module writer's to print (``helper_decorators``), as for every helper it places."""
        base = f"_soi{self.kernel.index}_{self.tag}_{kind or self.kind}"
        doc = f"SOI {self.kernel.index}{self._where()}, {self._what()}: one loop."
        body = numba_builtin_calls.without_builtin_calls(tuple(body))
        n = 1
        while True:
            name = base if n == 1 else f"{base}_{n}"
            function = lir.FunctionDef(name, tuple(params), tuple(body), doc)
            source = "\n".join(lir.print_body((function,), 0)) + "\n"
            known = self.writer.helper_table.get(name)
            if known is None or known.source == source:
                break
            n += 1
        self.function = function
        self.writer.helpers.add(name)
        self.writer.helper_table[name] = Helper(name, source, frozenset(loads),
                                                writes=any(t.mode == "scatter" for t in self.targets),
                                                record=function)
        self.writer.helper_decorators[name] = decorator
        return name

    def printer(self, leaves: dict, reads: dict, indent: int, index: dict, settle=None, extra=None) -> Printer:
        """A printer of the loop's code; ``settle`` rewrites what it prints (the branches the iterations after a
        peeled first know the answer of: :mod:`~coarsen_nb.lower.numba_peel`; the shared divisors as powers of
        their reciprocals: :mod:`~coarsen_nb.lower.numba_reciprocals`), ``extra`` the temporaries it adds."""
        arrays = {s for s in self.body.leaves if self.body.leaves[s][2]}

        def leaf(s):
            code = leaves[s]
            return code, s in arrays and isinstance(code, str) and code == self.body.leaves[s][0]

        temps, exprs = dict(self.body.temps), [t.expr for t in self.targets]
        if settle is not None:
            temps, exprs = {k: settle(v) for k, v in temps.items()}, [settle(e) for e in exprs]
        temps.update(extra or {})
        pr = Printer("xp", leaf, reads, temps, indent=indent, names=self.writer.names, exprs=exprs)
        # NumPy's error model (``_jit_loop``) already divides and raises to powers as IEEE 754 does; a forward
        # over the user's loops checks their divisions as Python does (an element loop is the user's array code)
        pr.ieee = False
        pr.checked_division = self.tag == "fwd" and self.kind not in ("elem", "elemsum")
        pr.words = naming.kernel_words(self.kernel, self.writer.plan.words, pr.deps.ranges)
        if settle is not None:          # (the user's names for the values the settled branches leave)
            pr.words = {**{settle(e): w for e, w in pr.words.items()}, **pr.words}
        for k, code in index.items():
            pr.root.index_code[k] = lir.Name(code)      # (the loop's index variable)
        return pr

    def _where(self) -> str:
        k = self.kernel
        return f" (line{'s' if len(k.lines) > 1 else ''} {', '.join(map(str, k.lines))})" if k.lines else ""

    def _what(self) -> str:
        part = "adjoint" if self.tag == "vjp" else "forward"
        return {"elem": f"{part} over the elements", "elemsum": f"{part}, a sum over the elements",
                "reduce": f"{part}, the {self.dom.reduce.kind if self.kind == 'reduce' else 'sum'} over its loop",
                "scatter": f"{part}, the scatters of its loop",
                "fill": f"{part}, the arrays its loop fills",
                "loop": f"{part}, the sums and scatters of its loop",
                "scan": f"{part}, the recurrences of its loop in sequence",
                "nest": f"{part}, over its nested loops"}[self.kind]

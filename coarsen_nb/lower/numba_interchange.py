"""Loop interchange for numba: a time loop over whole arrays run as each element's steps on numbers.

A user who integrates a batch (``theta, omega = theta + dt * omega, omega + dt * alpha`` inside ``for _ in
range(n_steps)``) writes the time loop outside and the elements inside, as NumPy needs.  Run so (the
module writer's :mod:`~coarsen_nb.lower.iterated`), every step makes new arrays and the VJP's tape holds a
whole array per state per step (pendulum_batch at 10^5 x 1000: 1.6 GB).  When every element's steps are
independent of the other elements', the order of the two loops may be swapped: per element, all the steps
on numbers, and the VJP's tape is ``n_steps`` numbers per state, reused from element to element.

**Which loops**: :func:`~coarsen_nb.lower.interchange_analysis.interchangeable` decides, from the plan
alone (elementwise SOIs over array states of one rank and invariant numbers, a trip count on numbers).

**Which run**: the states' first values must have one shape, which only the call knows, so the entry
function tests it (``_interchange_L``) and runs today's loop otherwise (a broadcast state: a ``(1,)``
array beside an ``(n,)`` one).  The forward and the reverse sweep read the same flag.

**The VJP: forward mode where the directions are few, else reverse mode.**  Forward mode
(:mod:`coarsen_nb.lower.numba_interchange_tangents`) carries, per element, one tangent per input the loop
is differentiated by (the array states' first values, the invariant numbers): one pass, no tape, the J
arrays contracted with the η adjoints after the code after the loop has run its adjoint.  Reverse mode (here)
runs each element's steps into a tape of numbers (arrays where the trip count has a bound before the loop,
else a list) and back; but the VJP's forward sweep has already run every element once for the η values
the code after the loop reads, so it runs the steps twice.  pendulum_batch (two directions, θ0 and
damping, as the hand-written Numba loop carries) at 10^4 x 1000, one process, loaded machine: reverse mode
1.8-2.1x the hand-written loop, forward mode 0.7-1.1x.  Past ``MOST_TANGENTS`` directions reverse mode runs.

In reverse mode, what an SOI's adjoint sums over elements (an invariant's ``b_damping += Σ_i ...``,
``sum_to`` a number) is added per element, when the contribution is linear in those sums
(:func:`~coarsen_nb.lower.interchange_analysis.per_element`); anything else keeps today's loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.helpers import Helper
from coarsen_nb.lower.interchange_analysis import Interchange, interchangeable, one_shape, per_element
from coarsen_nb.lower.numba_interchange_tangents import MOST_TANGENTS, Tangents
from coarsen_nb.lower.numba_loops import DECORATOR
from coarsen_nb.lower.numba_tape import trip_bound
from coarsen_nb.lower.printing import xp_call
from coarsen_nb.plan import IterStep
from coarsen_nb.symbolic.diff import vjp as kernel_vjp

# the dtype of each kind of state's tape array (an array state's elements are floats)
_DTYPES = {"float": "float64", "int": "int64", "bool": "bool_"}


def interchange_for(writer, s: IterStep, reverse: bool) -> InterchangedLoop | None:
    """Loop ``s`` interchanged for ``writer`` (``reverse``: its adjoint too, for the VJP's sweeps), or None:
    today's loop.  (``Backend.load_interchange``'s entry point, asked by both sweeps alike.)"""
    plan = interchangeable(s, writer.plan.types)
    if plan is None:
        return None
    made = InterchangedLoop(writer, s, plan)
    if reverse:
        tangents = Tangents(made)
        if len(tangents.directions) <= MOST_TANGENTS:
            made.tangents = tangents
        elif made.own_names(made._reverse_function) is None:
            return None
    return made


class InterchangedLoop:
    """The loop functions of one interchanged loop, for the module writer ``writer``: ``forward`` the call
    computing its η outputs, ``reverse`` the call adding its adjoints; None where an SOI's adjoint does not
    split into elements."""

    def __init__(self, writer, s: IterStep, plan: Interchange):
        self.w, self.s, self.plan = writer, s, plan
        self.label = writer.loop_word(s)
        self.flag = lir.Name(f"_interchange_{self.label}")
        # forward mode for the VJP (numba_interchange_tangents), where the directions are few; else reverse
        self.tangents: Tangents | None = None

    # -- the run-time test ------------------------------------------------------------------------

    @property
    def always(self) -> bool:
        """Whether every call runs the interchanged loop: one array state, or array states whose first values
        have one shape by construction (``interchange_analysis.one_shape``): no test, no today's loop beside
        it (which Numba would prune as dead, leaving its tape list untyped)."""
        inits = [init.id for n, init, _ in self.s.mus if n in self.plan.arrays]
        return len(inits) == 1 or one_shape(self.w.plan.steps, inits)

    def test(self) -> lir.Stmt:
        """``_interchange_L = a_init.shape == b_init.shape and ...``."""
        inits = [self.w.expr(init) for n, init, _ in self.s.mus if n in self.plan.arrays]
        tests = [lir.Compare("==", lir.Attr(inits[0], "shape"), lir.Attr(x, "shape")) for x in inits[1:]]
        return lir.Assign(self.flag, tests[0] if len(tests) == 1 else lir.BoolOp("and", tuple(tests)))

    # -- the forward --------------------------------------------------------------------------------

    def forward(self, tape: bool = False) -> list[lir.Stmt]:
        """The call that sets the loop's η outputs: each element's steps in turn (``tape``: for the VJP, with
        their tangents where it runs in forward mode)."""
        if tape and self.tangents is not None:
            return self.tangents.forward()
        name, params = self.own_names(self._forward_function)
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        return [lir.Assign(_tuple([self.w._name(out) for out, _ in self.s.etas], target=True), call)]

    def _forward_function(self) -> tuple[str, list[str]]:
        params = self.params()
        body, flats, i, n, shape = self.head()
        outs = {mu: lir.Name(self.w.names.fresh(f"out_{self.w.py(mu)}")) for _, mu in self.s.etas}
        body += [lir.Assign(o, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (n,))) for o in outs.values()]
        loads: set[str] = set()
        steps = self.start(flats, i) + [self.steps(loads)]
        steps += [lir.Assign(lir.Index(o, (i,)), lir.Name(self.w.py(mu))) for mu, o in outs.items()]
        body.append(lir.For(i, lir.Call(lir.Name("range"), (n,)), tuple(steps)))
        body.append(lir.Return(_tuple([lir.Call(lir.Attr(o, "reshape"), (shape,)) for o in outs.values()])))
        return self.register("fwd", params, body, loads), params

    def own_names(self, build):
        """``build()`` with the loop function's temporaries named afresh (its own scope), so that the
        same loop printed in two entry functions is the same text, one function."""
        names = self.w.names
        outside, names.local = names.local, set()
        try:
            return build()
        finally:
            names.local = outside

    # -- the reverse -------------------------------------------------------------------------------

    def reverse(self) -> list[lir.Stmt] | None:
        """The call that adds the loop's adjoints (its array states' first values, its invariant numbers,
        its number states' first values): per element, the steps into a tape of numbers, then back over
        it.  None where an SOI's adjoint does not split into elements."""
        if self.tangents is not None:
            return self.tangents.reverse()
        made = self.own_names(self._reverse_function)
        if made is None:
            return None
        name, params, added = made
        if not added:
            return []
        got = [lir.Name(self.w.names.fresh(f"d_{self.w.names.bar(x)}")) for x in added]
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        return [lir.Assign(_tuple(got, target=True), call)] + \
            [lir.AugAssign(lir.Name(self.w.names.bar(x)), "+", g) for x, g in zip(added, got, strict=True)]

    def _reverse_function(self):
        w, s = self.w, self.s
        fresh = w.names.fresh
        seeds = {mu: w.names.bar(out) for out, mu in s.etas if mu in w.active}
        body, flats, i, n, shape = self.head(extra=list(seeds.values()))
        loads: set[str] = set()
        active = [(m, init, nxt) for m, init, nxt in s.mus if m in w.active]
        outs = {init.id: lir.Name(fresh(f"out_{w.names.bar(init.id)}")) for m, init, _ in active
                if m in self.plan.arrays and init.id in w.active}
        sums = [x for x in self.plan.invariants if x in w.active]
        sums += [init.id for m, init, _ in active if m not in self.plan.arrays and isinstance(init, ir.Name)
                 and init.id in w.active and init.id not in sums]
        body += [lir.Assign(o, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (n,))) for o in outs.values()]
        body += [lir.Assign(lir.Name(w.names.bar(x)), lir.Lit("0.0")) for x in sums]
        tape = self._tape(body)
        per: list[lir.Stmt] = [tape.clear()]
        per += self.start(flats, i) + [self.steps(loads, push=tape.push())]
        per += [lir.Assign(lir.Name(w.names.bar(m)), lir.Index(flats[seeds[m]], (i,)) if m in seeds else lir.Lit("0.0"))
                for m, _, _ in active]
        step = self._step_back(active, loads)
        if step is None:
            return None
        k = lir.Name(fresh("k"))
        back = lir.Call(lir.Name("range"), (lir.BinOp("-", tape.length(), lir.Lit("1")), lir.Lit("-1"), lir.Lit("-1")))
        per.append(lir.For(k, back, (*tape.read(k), *step)))
        per += [lir.Assign(lir.Index(outs[init.id], (i,)), lir.Name(w.names.bar(m))) for m, init, _ in active
                if isinstance(init, ir.Name) and init.id in outs]
        per += [lir.AugAssign(lir.Name(w.names.bar(init.id)), "+", lir.Name(w.names.bar(m))) for m, init, _ in active
                if isinstance(init, ir.Name) and init.id in sums]
        body.append(lir.For(i, lir.Call(lir.Name("range"), (n,)), tuple(per)))
        results = [lir.Call(lir.Attr(o, "reshape"), (shape,)) for o in outs.values()]
        results += [lir.Name(w.names.bar(x)) for x in sums]
        if not results:
            return "", [], []
        body.append(lir.Return(_tuple(results)))
        params = self.params(bars=list(seeds.values()))
        return self.register("vjp", params, body, loads), params, list(outs) + sums

    def _step_back(self, active, loads: set) -> list[lir.Stmt] | None:
        """One step back over an element's tape entry: its SOIs forward (the values their adjoints read),
        the carried adjoints of the next state, then each SOI's adjoint in reverse order."""
        w = self.w
        printers, adjoints = [], []
        # (an output only the next state reads is not needed going back: LLVM keeps a libm call it feeds)
        read = {n for k in self.plan.kernels for n in k.inputs}
        for k in self.plan.kernels:
            outs = {o.name: sp.Symbol("bar:" + o.name, real=True) for o in k.outputs if o.name in w.active}
            v = kernel_vjp(k, w.active, outs) if outs and set(k.inputs) & w.active else None
            leaves = {b: (w.names.bar(name), False) for name, b in outs.items()}
            pr = self.printer(k, leaves, dict(v.temps) if v is not None else {})
            for o in k.outputs:
                if o.name in read:
                    pr.assign(w.py(o.name), o.symbol)
            adds = []
            if v is not None:
                for name, e in v.scalars + v.arrays:
                    each = per_element(e, pr.temps, set(k.arrays) | {b for b in outs.values()})
                    if each is None or v.scatters:
                        return None
                    adds.append((name, each))
            printers.append(pr)
            adjoints.append(adds)
        steps: list[lir.Stmt] = []
        for pr in printers:
            steps += self.taken(pr, set())
        defined = {o.name for k in self.plan.kernels for o in k.outputs if o.name in w.active}
        carried = []
        for m, _, _ in active:
            c = lir.Name(w.names.fresh("carry"))
            carried.append(c)
            steps.append(lir.Assign(c, lir.Name(w.names.bar(m))))
        zeroed = sorted(defined | {m for m, _, _ in active})
        steps += [lir.Assign(lir.Name(w.names.bar(x)), lir.Lit("0.0")) for x in zeroed]
        for (_, _, nxt), c in zip(active, carried, strict=True):
            if isinstance(nxt, ir.Name) and nxt.id in w.active:
                steps.append(lir.AugAssign(lir.Name(w.names.bar(nxt.id)), "+", c))
        for pr, adds in reversed(list(zip(printers, adjoints, strict=True))):
            pr.body = []
            pr.ieee = True
            for name, e in adds:
                value = pr.value(e)
                steps += pr.body
                pr.body = []
                steps.append(lir.AugAssign(lir.Name(w.names.bar(name)), "+", value))
            loads |= pr.helpers | ({"math"} if pr.uses_math else set())
        return steps

    # -- pieces ----------------------------------------------------------------------------------------

    def params(self, bars=()) -> list[str]:
        inits = [self.w.py(init.id) for _, init, _ in self.s.mus if isinstance(init, ir.Name)]
        return list(dict.fromkeys(list(bars) + [self.w.py(n) for n in self.plan.invariants] + inits))

    def head(self, extra=()):
        """The flattening of the array states' first values (and ``extra`` arrays of their shape)."""
        fresh = self.w.names.fresh
        first = next(init for n, init, _ in self.s.mus if n in self.plan.arrays)
        shape = lir.Name(fresh("shape"))
        body: list[lir.Stmt] = [lir.Assign(shape, lir.Attr(self.w.expr(first), "shape"))]
        flats = {}
        for n, init, _ in self.s.mus:
            if n in self.plan.arrays:
                flats[n] = lir.Name(fresh(f"flat_{self.w.py(init.id)}"))
                body.append(lir.Assign(flats[n], _flat(self.w.expr(init), shape)))
        for a in extra:
            flats[a] = lir.Name(fresh(f"flat_{a}"))
            body.append(lir.Assign(flats[a], _flat(lir.Name(a), shape)))
        i, n = lir.Name(fresh("i")), lir.Name(fresh("n"))
        body.append(lir.Assign(n, lir.Index(lir.Attr(flats[self.plan.arrays[0]], "shape"), (lir.Lit("0"),))))
        return body, flats, i, n, shape

    def start(self, flats, i) -> list[lir.Stmt]:
        """An element's first state: the numbers as they are, the arrays' elements."""
        names = [lir.Name(self.w.py(n)) for n, _, _ in self.s.mus]
        values = [lir.Index(flats[n], (i,)) if n in self.plan.arrays else self.w.expr(init)
                  for n, init, _ in self.s.mus]
        return [lir.Assign(_tuple(names, target=True), _tuple(values))]

    def _tape(self, body: list) -> _Tape:
        """The element's tape, made once for all the elements (its allocation appended to ``body``): an array
        per state where the trip count has a bound before the loop (``numba_tape.trip_bound``; the counter
        not stored), else a list of state tuples.  (A list was 1.7x slower on pendulum_batch.)"""
        fresh, w = self.w.names.fresh, self.w
        states = [w.py(m) for m, _, _ in self.s.mus]
        bound = trip_bound(w, self.s)
        if bound is None:
            tape = lir.Name(fresh("tape"))
            body.append(lir.Assign(tape, lir.List(())))
            return _Tape(states, None, tape)
        capacity, counter, start = bound
        count = lir.Name(fresh("count"))
        arrays = {}
        for m, _, _ in self.s.mus:
            if m != counter:
                kind = "float" if m in self.plan.arrays else w.plan.types[m].kind
                arrays[w.py(m)] = lir.Name(fresh(f"tape_{w.py(m)}"))
                body.append(lir.Assign(arrays[w.py(m)], xp_call("empty", capacity,
                                                               dtype=lir.Attr(lir.Name("xp"), _DTYPES[kind]))))
        return _Tape(states, count, None, arrays, (w.py(counter), start))

    def steps(self, loads: set, push=None, tangents=None) -> lir.Stmt:
        """One element's steps: the header's SOIs, the test, ``push`` (the state onto the tape, or None),
        the body's SOIs, the next state; ``tangents`` (``numba_interchange_tangents.Tangents``) adds each
        SOI's tangents after its values, and the tangent state to the next state."""
        steps: list[lir.Stmt] = []
        header = len(self.s.header)
        for j, k in enumerate(self.plan.kernels):
            if j == header:
                steps.append(lir.If(lir.Unary("not", self.w._name(self.s.cond)), (lir.Break(),)))
                steps += push or []
            pr = self.printer(k, {}, {})
            for o in k.outputs:
                pr.assign(self.w.py(o.name), o.symbol)
            steps += self.taken(pr, loads)
            if tangents is not None:
                steps += tangents.kernel(k, loads)
        if header == len(self.plan.kernels):
            steps.append(lir.If(lir.Unary("not", self.w._name(self.s.cond)), (lir.Break(),)))
        names = [lir.Name(self.w.py(n)) for n, _, _ in self.s.mus]
        values = [self.w.expr(x) for _, _, x in self.s.mus]
        if tangents is not None:
            names, values = names + tangents.state_names(), values + tangents.next_values()
        steps.append(lir.Assign(_tuple(names, target=True), _tuple(values)))
        return lir.While(lir.Lit("True"), tuple(steps))

    def printer(self, k, leaves: dict, temps: dict) -> Printer:
        """A printer of kernel ``k`` on numbers: every leaf a Python number of the loop function."""
        codes = {s: (self.w.py(n), False) for s, n in list(k.scalars.items()) + list(k.arrays.items())}
        codes.update(leaves)
        pr = Printer("xp", lambda s: codes[s], {}, {**dict(k.body), **temps}, indent=2,
                     names=self.w.names, exprs=[o.symbol for o in k.outputs])
        pr.scalar_points = True
        pr.words = naming.kernel_words(k, self.w.plan.words, pr.deps.ranges)
        return pr

    def taken(self, pr: Printer, loads: set) -> list[lir.Stmt]:
        loads |= pr.helpers | ({"math"} if pr.uses_math else set())
        return list(pr.body)

    def register(self, tag: str, params, body, loads) -> str:
        loads = set(loads) | {"_flat_as"}
        name = f"_loop_{self.label}_{tag}_elems"
        if tag == "contract":
            doc = f"The loop at line {self.s.line}, its adjoints from its tangents: Σ_η b_η·J per element."
        else:
            what = {"fwd": "forward", "vjp": "adjoint", "jvp": "forward with tangents"}[tag]
            doc = f"The loop at line {self.s.line}, {what}, interchanged: each element's steps on numbers."
        function = lir.FunctionDef(name, tuple(params), tuple(body), doc)
        source = "\n".join(lir.print_body((function,), 0)) + "\n"
        self.w.helpers.add(name)
        self.w.helpers |= {h for h in loads if h != "math"}
        if "math" in loads:
            self.w.shared.uses_math = True
        self.w.helper_table[name] = Helper(name, source, frozenset(loads))
        self.w.helper_decorators[name] = DECORATOR
        return name


@dataclass(frozen=True)
class _Tape:
    """One element's tape: arrays (``count`` entries so far, the counter recomputed) or a list of tuples."""

    states: list                    # the states' Python names
    count: lir.Name | None          # arrays: the entries so far
    items: lir.Name | None = None   # a list: its name
    arrays: dict | None = None      # arrays: state name -> its array
    counter: tuple | None = None    # arrays: (counter's name, its start)

    def clear(self) -> lir.Stmt:
        if self.items is not None:
            return lir.ExprStmt(lir.Call(lir.Attr(self.items, "clear"), ()))
        return lir.Assign(self.count, lir.Lit("0"))

    def push(self) -> list[lir.Stmt]:
        if self.items is not None:
            state = lir.Tuple(tuple(lir.Name(n) for n in self.states))
            return [lir.ExprStmt(lir.Call(lir.Attr(self.items, "append"), (state,)))]
        return [lir.Assign(lir.Index(a, (self.count,)), lir.Name(n)) for n, a in self.arrays.items()] + \
            [lir.AugAssign(self.count, "+", lir.Lit("1"))]

    def length(self) -> lir.Expr:
        return lir.Call(lir.Name("len"), (self.items,)) if self.items is not None else self.count

    def read(self, k: lir.Name) -> list[lir.Stmt]:
        if self.items is not None:
            return [lir.Assign(_tuple([lir.Name(n) for n in self.states], target=True), lir.Index(self.items, (k,)))]
        out = [lir.Assign(lir.Name(n), lir.Index(a, (k,))) for n, a in self.arrays.items()]
        if self.counter is not None:
            name, start = self.counter
            out.append(lir.Assign(lir.Name(name), lir.BinOp("+", start, k)))
        return out


def _flat(x: lir.Expr, shape: lir.Expr) -> lir.Expr:
    return lir.Call(lir.Name("_flat_as"), (x, shape))


def _tuple(items: list, target: bool = False) -> lir.Expr:
    if len(items) == 1 and not target:
        return items[0]
    if len(items) == 1:
        return items[0]
    return lir.Tuple(tuple(items), bare=True)

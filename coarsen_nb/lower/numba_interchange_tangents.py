"""Forward mode for an interchanged loop (:mod:`coarsen_nb.lower.numba_interchange`): each element carries
the tangents of its states along one direction per input, and the VJP contracts them with the η adjoints.

Why forward mode when the inputs are few: an element's reverse mode costs a forward sweep into its tape,
then a sweep back; and the VJP's forward sweep must already run every element once for the η values the
code after the loop reads (the SOI after pendulum_batch's loop), so reverse mode runs each element's steps
twice.  Forward mode runs them once, with one tangent per direction beside each state: the directions are
the loop's inputs per element (each array state's first value: the element's own, so one direction covers
all the elements) and the invariant numbers it is differentiated by.  pendulum_batch has two (θ0, damping),
as the hand-written Numba loop carries.  Past :data:`MOST_TANGENTS` directions reverse mode is cheaper.

Per element, direction ``j`` of input ``x``: the tangent of a state starts at 1 where it starts from ``x``,
else 0; an invariant's tangent is 1 in its own direction, else 0 (substituted, so SymPy drops the terms);
each SOI's tangents are :func:`coarsen_nb.symbolic.jvp.jvp`'s, printed on numbers.  The loop function
returns the η values and ``J[η][j]``, an array per pair; the reverse sweep adds ``Σ_η b_η · J[η][j]`` to
``b_x`` (summed over the elements where ``x`` is a number).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import xp_call
from coarsen_nb.symbolic.jvp import jvp

#: the most directions an interchanged loop carries in forward mode (each costs about a tangent sweep;
#: reverse mode costs about two forward sweeps and one back, plus the tape)
MOST_TANGENTS = 4


class Tangents:
    """The forward-mode parts of interchanged loop ``loop`` (an ``InterchangedLoop``)."""

    def __init__(self, loop):
        self.loop, self.w, self.s = loop, loop.w, loop.s
        w = self.w
        floats = {n for n, t in w.plan.types.items() if t.kind == "float"}
        self.active = w.active & floats
        # the directions: the loop's inputs it is differentiated by (SSA names), and which are numbers
        self.directions = [init.id for _, init, _ in self.s.mus if isinstance(init, ir.Name) and init.id in self.active]
        self.directions += [x for x in loop.plan.invariants if x in self.active and x not in self.directions]
        self.numbers = {x for x in self.directions if not w.plan.types[x].is_array}
        self.mus = [m for m, _, _ in self.s.mus if m in self.active]
        self._names: dict = {}

    def name(self, j: int, ssa: str) -> lir.Name:
        """The local variable of ``ssa``'s tangent in direction ``j``."""
        key = (j, ssa)
        if key not in self._names:
            self._names[key] = self.w.names.fresh(f"d{j}_{self.w.py(ssa)}")
        return lir.Name(self._names[key])

    def tangent(self, j: int, ssa: str) -> lir.Expr:
        """``ssa``'s tangent in direction ``j``: 1 or 0 for an input from outside the loop, else its variable."""
        if ssa in self.loop.plan.invariants or ssa not in self.active:
            return lir.Lit("1.0" if ssa == self.directions[j] else "0.0")
        return self.name(j, ssa)

    def start(self) -> list[lir.Stmt]:
        """An element's first tangents: 1 for the state that starts from the direction's input."""
        inits = {m: init.id for m, init, _ in self.s.mus if isinstance(init, ir.Name)}
        return [lir.Assign(self.name(j, m), lir.Lit("1.0" if inits.get(m) == x else "0.0"))
                for j, x in enumerate(self.directions) for m in self.mus]

    def kernel(self, k, loads: set) -> list[lir.Stmt]:
        """Kernel ``k``'s tangents in every direction (after its values)."""
        outs = [o.name for o in k.outputs if o.name in self.active]
        if not outs:
            return []
        v = jvp(k, self.active)
        known = dict(v.outputs)
        out: list[lir.Stmt] = []
        for j in range(len(self.directions)):
            leaves, subs = {}, {}
            for d, name in v.tangent_leaves.items():
                code = self.tangent(j, name)
                if isinstance(code, lir.Lit):
                    subs[d] = sp.Integer(1 if code.code == "1.0" else 0)
                else:
                    leaves[d] = (code.id, False)
            temps = {t: e.xreplace(subs) for t, e in v.temps.items()}
            pr = self.loop.printer(k, leaves, temps)
            pr.ieee = True
            for o in outs:
                target = self.name(j, o).id
                if o in known:
                    pr.assign(target, known[o].xreplace(subs))
                else:
                    pr.emit(lir.Assign(lir.Name(target), lir.Lit("0.0")))
            out += self.loop.taken(pr, loads)
        return out

    def state_names(self) -> list[lir.Expr]:
        return [self.name(j, m) for j in range(len(self.directions)) for m in self.mus]

    def next_values(self) -> list[lir.Expr]:
        nxt = {m: x for m, _, x in self.s.mus}
        return [self.tangent(j, nxt[m].id) if isinstance(nxt[m], ir.Name) else lir.Lit("0.0")
                for j in range(len(self.directions)) for m in self.mus]

    # -- the loop function and its calls ---------------------------------------------------------------

    def jacobians(self) -> dict:
        """(η output, direction) -> the caller's name of ``J[η][j]``."""
        label = self.loop.label
        return {(out, j): f"_jac_{label}_{j}_{self.w.py(out)}" for out, mu in self.s.etas if mu in self.active
                for j in range(len(self.directions))}

    def function(self) -> tuple[str, list[str]]:
        """The loop function: per element, the steps with their tangents; returns the η values, then the
        ``J`` arrays in :meth:`jacobians`' order."""
        loop, w = self.loop, self.w
        params = loop.params()
        body, flats, i, n, shape = loop.head()
        outs = {mu: lir.Name(w.names.fresh(f"out_{w.py(mu)}")) for _, mu in self.s.etas}
        etas = dict(self.s.etas)
        jacs = {key: lir.Name(w.names.fresh(f"jac_{key[1]}_{w.py(etas[key[0]])}")) for key in self.jacobians()}
        body += [lir.Assign(o, xp_call("empty", n)) for o in list(outs.values()) + list(jacs.values())]
        loads: set[str] = set()
        steps = loop.start(flats, i) + self.start() + [loop.steps(loads, tangents=self)]
        steps += [lir.Assign(lir.Index(o, (i,)), lir.Name(w.py(mu))) for mu, o in outs.items()]
        steps += [lir.Assign(lir.Index(a, (i,)), self.tangent(j, etas[out])) for (out, j), a in jacs.items()]
        body.append(lir.For(i, lir.Call(lir.Name("range"), (n,)), tuple(steps)))
        results = [lir.Call(lir.Attr(o, "reshape"), (shape,)) for o in list(outs.values()) + list(jacs.values())]
        body.append(lir.Return(lir.Tuple(tuple(results), bare=True) if len(results) > 1 else results[0]))
        return loop.register("jvp", params, body, loads), params

    def forward(self) -> list[lir.Stmt]:
        """The VJP's forward sweep: the η values and the ``J`` arrays, by the loop function."""
        name, params = self.loop.own_names(self.function)
        targets = [self.w._name(out) for out, _ in self.s.etas] + [lir.Name(a) for a in self.jacobians().values()]
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        return [lir.Assign(lir.Tuple(tuple(targets), bare=True) if len(targets) > 1 else targets[0], call)]

    def reverse(self) -> list[lir.Stmt]:
        """``b_x += Σ_η b_η · J[η][j]`` for each direction ``x`` (summed over the elements for a number): one
        loop function over the elements (:meth:`contraction`), or array code where an η is a number."""
        w = self.w
        jacs = self.jacobians()
        terms = self._terms()
        if not terms:
            return []
        if all(w.is_array(eta) for eta, mu in self.s.etas if mu in self.active):
            name, params = self.loop.own_names(lambda: self.contraction(terms))
            added = list(terms)
            got = [lir.Name(w.names.fresh(f"d_{w.names.bar(x)}")) for x in added]
            call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
            out: list[lir.Stmt] = [lir.Assign(got[0] if len(got) == 1 else lir.Tuple(tuple(got), bare=True), call)]
            for x, g in zip(added, got, strict=True):
                add = lir.AugAssign(lir.Name(w.names.bar(x)), "+", g)
                if x not in self.numbers:
                    w.claim_fresh_contribution(x, add, out[0])
                out.append(add)
            return out
        out = []
        for x, pairs in terms.items():
            products = [lir.BinOp("*", lir.Name(w.names.bar(eta)), lir.Name(jacs[(eta, j)])) for eta, j in pairs]
            total = _added(products)
            out.append(lir.AugAssign(lir.Name(w.names.bar(x)), "+",
                                     xp_call("sum", total) if x in self.numbers else total))
        return out

    def _terms(self) -> dict:
        """direction's input -> the (η, j) pairs of its contraction, in the η outputs' order."""
        jacs = self.jacobians()
        terms = {}
        for j, x in enumerate(self.directions):
            pairs = [(eta, j) for eta, mu in self.s.etas if mu in self.active and (eta, j) in jacs]
            if pairs:
                terms[x] = pairs
        return terms

    def contraction(self, terms: dict) -> tuple[str, list[str]]:
        """The VJP's loop function after the code after the loop has run its adjoint: per element, each array
        direction's ``Σ_η b_η[i] · J[η][j][i]`` stored and each number direction's added up, in one pass over
        the elements (as array code it was an array expression per direction and NumPy's ``sum``: each a
        compilation of its own under Numba).  The sums are sequential, NumPy's pairwise: equal to rounding."""
        w = self.w
        jacs = self.jacobians()
        bars = list(dict.fromkeys(w.names.bar(eta) for pairs in terms.values() for eta, _ in pairs))
        used = list(dict.fromkeys(jacs[key] for pairs in terms.values() for key in pairs))
        params = bars + used
        fresh = w.names.fresh
        shape = lir.Name(fresh("shape"))
        body: list[lir.Stmt] = [lir.Assign(shape, lir.Attr(lir.Name(used[0]), "shape"))]
        flats = {}
        for a in params:
            flats[a] = lir.Name(fresh(f"flat{a}" if a.startswith("_") else f"flat_{a}"))
            body.append(lir.Assign(flats[a], lir.Call(lir.Name("_flat_as"), (lir.Name(a), shape))))
        i, n = lir.Name(fresh("i")), lir.Name(fresh("n"))
        body.append(lir.Assign(n, lir.Index(lir.Attr(flats[used[0]], "shape"), (lir.Lit("0"),))))
        results, steps = [], []
        for x, pairs in terms.items():
            total = _added([lir.BinOp("*", lir.Index(flats[w.names.bar(eta)], (i,)),
                                      lir.Index(flats[jacs[(eta, j)]], (i,))) for eta, j in pairs])
            if x in self.numbers:
                acc = lir.Name(fresh(f"acc_{w.names.bar(x)}"))
                body.append(lir.Assign(acc, lir.Lit("0.0")))
                steps.append(lir.AugAssign(acc, "+", total))
                results.append(acc)
            else:
                o = lir.Name(fresh(f"out_{w.names.bar(x)}"))
                body.append(lir.Assign(o, xp_call("empty", n)))
                steps.append(lir.Assign(lir.Index(o, (i,)), total))
                results.append(lir.Call(lir.Attr(o, "reshape"), (shape,)))
        body.append(lir.For(i, lir.Call(lir.Name("range"), (n,)), tuple(steps)))
        body.append(lir.Return(lir.Tuple(tuple(results), bare=True) if len(results) > 1 else results[0]))
        return self.loop.register("contract", params, body, set()), params


def _added(terms: list) -> lir.Expr:
    total = terms[0]
    for t in terms[1:]:
        total = lir.BinOp("+", total, t)
    return total

"""Loop μs → closed forms (the phi-calculus for loops).

A ``for k in range(a, b, s)`` loop without an early exit is lifted without
unrolling: its body is lifted once to SymPy with k as a symbol, each μ's
``next`` is matched against the classes below, and each η becomes a closed
form over the index range (a reduction node of :mod:`.forms`).  The body's
size — never the trip count — decides the size of the result.

=========  ==============================  ======================================
class      μ: v ← ...                      η: v_N =
=========  ==============================  ======================================
counter    k + s                           (the index k itself inside the body)
sum        v + g(k)                        init + Σ_k g(k)
product    v · g(k)                        init · Π_k g(k)
max / min  max(v, g(k)), γ(g > v, g, v)     max(init, max_k g(k))
linear C6  a·v + b   (a, b invariant)      aᴺ·init + Σ_p b·a^{N-1-p}
linear C7  a·v + b(k) (a invariant)        aᴺ·init + Σ_p b(k_p)·a^{N-1-p}
linear C8  a(k)·v + b(k)                    init·Π_k a(k) + Σ_k b(k)·Π_{j>k} a(j)   (RLin)
power C9   a·v**b (a, b invariant)         a^{(bᴺ-1)/(b-1)}·init^{bᴺ}  (see _power_closed_form)
lse pair   s·e^{m-a} + 1 | s + e^{a-m}     exp(L − m_N), L a LogSumExp (.online_lse)
write      update(v, [i(k)], g(k))         init with [i(k)] = g(k) for every k
=========  ==============================  ======================================

g, a, b must not depend on any μ of the loop (other than through k) — except a μ of
the sum, product or linear class read by the others in the same iteration (a prefix
sum, ``s = a*s + x[i]; total += s*s``) and the element ``y[k - s]`` that the previous
iteration wrote (``y[i] = a*y[i-1] + b``): :mod:`.scans` replaces such a state by its
value at every step (a ``LinScan``), and the readers then fall into the classes above.  Inner
loops nest: an inner closed form is a reduction whose bounds may depend on the
outer k (triangular loops).  A loop that fits none of these (a nonlinear
recurrence, an early exit, C8 in a triangular nest) is left to be iterated with a
symbolic body — :class:`~coarsen_nb.plan.IterStep`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import online_lse, scans
from coarsen_nb.phi.gammas import gamma
from coarsen_nb.phi.gate import If, Let, Loop
from coarsen_nb.phi.guards import guard_invariant_failures
from coarsen_nb.phi.recurrence_classes import ElementWrite, classify, depends_on, extremum
from coarsen_nb.phi.symbols import NotSymbolic, to_sympy


def closed_form(lifter, kb, loop: Loop) -> bool:
    """Lift ``loop`` into the open kernel ``kb`` as closed forms; False (kb unchanged) if it has none."""
    snap = kb.snapshot()
    try:
        hoisted: list[Let] = []
        guarded = guard_invariant_failures(loop, hoisted)
        outer = _Scope(kb)
        for let in hoisted:        # the guarded divisors, one scalar each before the loop
            kb.env[let.name] = kb.temp(let.name, to_sympy(let.value, outer.lookup, outer.index))
        env = _lift_loop(lifter, kb, guarded, outer)
    except NotSymbolic:
        kb.restore(snap)
        return False
    for name, expr in env.items():
        kb.define(name, expr, loop.line, materialize=False)
    kb.lines.append(loop.line)
    return True


class _Scope:
    """Name lookup inside nested loop bodies: local values first, then the enclosing scope."""

    def __init__(self, kb, parent: _Scope | None = None, invariant_arrays: bool = True):
        self.kb = kb
        self.parent = parent
        self.env: dict[str, object] = {}
        self.local: set[str] = set()   # names defined in this loop (not invariant)
        self.lagged: set[str] = set()  # μs that hold the previous iteration's value
        self.binders: set = set(parent.binders) if parent else set()   # indices of enclosing loops
        self.lagged_reads: scans.LaggedReads | None = None   # reads of this loop's array μs

    def lookup(self, name: str):
        if name in self.env:
            v = self.env[name]
            if isinstance(v, ElementWrite):
                raise NotSymbolic("array being written")
            return v
        return self.parent.lookup(name) if self.parent else self.kb.input(name)

    def defined_here(self, name: str) -> bool:
        s = self
        while s is not None:
            if name in s.local:
                return True
            s = s.parent
        return False

    def index(self, array: str, idx: tuple):
        if self.lagged_reads is not None:
            array = scans.before_write(self.env.get(array), array, idx, self.lagged_reads)
            if array in self.lagged_reads.arrays:
                return self.lagged_reads.read(array, idx)    # resolved after the body (.scans)
        if self.defined_here(array):
            raise NotSymbolic("read of an array that the loop changes")
        return self.kb.index_read(array, idx)


def _lift_loop(lifter, kb, loop: Loop, outer: _Scope) -> dict[str, sp.Basic]:
    """The closed forms of ``loop``'s ηs, as {eta name: expression} in ``outer``'s terms."""
    info = loop.info
    if info.kind != "range" or info.early_exit:
        raise NotSymbolic("not a counted loop")
    start, stop, step = (to_sympy(e, outer.lookup, outer.index) for e in (info.start, info.stop, info.step))
    if not step.is_Integer:
        raise NotSymbolic("symbolic step")
    k = sp.Symbol(info.counter, integer=True)
    scope = _Scope(kb, outer)
    scope.env[info.counter] = k
    scope.binders.add(k)
    triangular = bool(set().union(*(sp.sympify(b).free_symbols for b in (start, stop, step))) & outer.binders)
    states: dict[str, sp.Symbol] = {}
    for m in loop.mus:
        scope.local.add(m.name)
        if m.name != info.counter:
            states[m.name] = sp.Symbol("μ:" + m.name, real=True)
            scope.env[m.name] = states[m.name]
    nested = triangular or bool(outer.binders)
    if not nested:
        scope.lagged_reads = scans.LaggedReads({m.name for m in loop.mus if m.name != info.counter
                                                and kb.lifter.types.get(m.name) is not None
                                                and kb.lifter.types[m.name].is_array})
    _body(lifter, kb, loop.body, scope)
    result: dict[str, sp.Basic] = {}
    etas = {e.value.value.id: e.name for e in loop.etas}
    trip = sp.Max(0, sp.ceiling((stop - start) / step))
    if scope.lagged_reads is not None:
        scans.resolve_lagged_elements(kb, scope.lagged_reads, scope.env, loop.mus, states, outer, k,
                                      (start, stop, step), trip)
    _resolve_lagged(kb, loop, scope, states, outer, k, (start, stop, step), trip, etas, result)
    for name, v in scope.env.items():       # the body's values by the user's names (for generated code)
        if isinstance(v, sp.Expr) and not v.is_Number:
            kb.named.setdefault(v, name)
    updates: dict = {}      # μ name -> (next value, init)
    for m in loop.mus:
        if m.name in scope.lagged:
            continue
        if m.name == info.counter:
            if m.name in etas:
                raise NotSymbolic("counter used after the loop")
            continue
        nxt = m.value.next
        if not isinstance(nxt, ir.Name):
            raise NotSymbolic("constant μ")
        value = scope.env.get(nxt.id) if nxt.id in scope.env else outer.lookup(nxt.id)
        init = None if isinstance(m.value.init, ir.Undef) else to_sympy(m.value.init, outer.lookup, outer.index)
        updates[m.name] = (value, init)
    scans.read_states(kb, states, updates, k, (start, stop, step), nested)
    streaming = _streaming_lse(kb, states, updates)
    closed: dict = {}
    for name in sorted(updates, key=lambda n: n in streaming):     # a streaming sum after its maximum
        value, init = updates[name]
        if name in streaming:
            mname, a = streaming[name]
            eta = online_lse.closed_form(kb, name, a, init, updates[mname][1], closed[mname], k,
                                         (start, stop, step))
        else:
            eta = classify(lifter, kb, name, states, value, init, k, (start, stop, step), trip, triangular,
                            outer.binders)
        closed[name] = eta
        if name in etas:
            result[etas[name]] = eta
        # a μ whose value is only used inside the loop (an accumulator nobody reads) needs no η
    return result


def _streaming_lse(kb, states, updates) -> dict:
    """{s: (m, a)} for the μ pairs that run the streaming log-sum-exp (see :mod:`.online_lse`)."""
    out: dict = {}

    def branches(v):
        return isinstance(v, sp.Piecewise) and len(v.args) == 2

    for mname, (vm, init_m) in updates.items():
        if init_m is None or not branches(vm) or states[mname] not in (vm.args[0].expr, vm.args[1].expr):
            continue
        partners = [n for n, (vs, init_s) in updates.items()
                    if n != mname and n not in out and init_s is not None and branches(vs) and vs.has(sp.exp)
                    and [c for _, c in vs.args] == [c for _, c in vm.args]]
        if not partners:
            continue    # cheap tests first: the extremum test expands the predicate
        ext = extremum(vm, states[mname])
        if ext is None or ext[0] != "max" or depends_on(kb, ext[1], set(states.values())):
            continue
        for sname in partners:
            if online_lse.pair(vm, updates[sname][0], states[mname], states[sname], ext[1]):
                out[sname] = (mname, ext[1])
    return out


def _resolve_lagged(kb, loop, scope, states, outer, k, rng, trip, etas, result) -> None:
    """μs whose ``next`` reads no state hold the previous iteration's value of a body expression:
    v_k = init at the first iteration, else g(k - step).  Substituting that form makes the
    loops that carry "the previous element" (y_prev = y[i]) closed forms too."""
    start, stop, step = rng
    subst: dict = {}
    for m in loop.mus:
        if m.name == loop.info.counter or not isinstance(m.value.next, ir.Name):
            continue
        nxt = scope.env.get(m.value.next.id)
        if nxt is None or isinstance(nxt, ElementWrite) or not isinstance(nxt, sp.Expr):
            continue
        if depends_on(kb, nxt, set(states.values())) or isinstance(m.value.init, ir.Undef):
            continue
        if kb.lifter.types.get(m.name) is None or kb.lifter.types[m.name].is_array:
            continue
        init = to_sympy(m.value.init, outer.lookup, outer.index)
        prev = _shift(kb, nxt, k, step)
        subst[states[m.name]] = gamma(sp.Eq(k, start), init, prev)
        scope.lagged.add(m.name)
        if m.name in etas:
            last = start + (trip - 1) * step
            result[etas[m.name]] = gamma(sp.Gt(trip, 0), _at(kb, nxt, k, last), init)
    if not subst:
        return
    for name, v in list(scope.env.items()):
        if isinstance(v, sp.Basic):
            scope.env[name] = v.xreplace(subst)
        elif isinstance(v, ElementWrite):
            scope.env[name] = ElementWrite(v.base, tuple(sp.sympify(i).xreplace(subst) for i in v.index),
                                     v.value.xreplace(subst))


def _shift(kb, e, k, step):
    """``e`` one iteration earlier: k -> k - step, reads re-indexed (no temps may depend on k)."""
    return _at(kb, e, k, k - step)


def _at(kb, e, k, value):
    """``e`` with loop index ``k`` set to ``value`` (reads re-indexed)."""
    temps = {s for s, _ in kb.body}
    sub: dict = {}
    for s in e.free_symbols:
        if s in temps and depends_on(kb, s, k):
            raise NotSymbolic("a nested loop's value cannot be shifted")
        for r in list(kb.reads.values()):
            if r.symbol == s and any(k in sp.sympify(i).free_symbols for i in r.index):
                idx = tuple(sp.sympify(i).subs(k, value) for i in r.index)
                sub[s] = kb.read(r.array, idx)
    sub[k] = value
    return e.xreplace(sub)


def _body(lifter, kb, nodes, scope: _Scope) -> None:
    for n in nodes:
        if isinstance(n, Let):
            scope.local.add(n.name)
            v = n.value
            if isinstance(v, ir.Update) and isinstance(v.array, ir.Name):
                idx = tuple(to_sympy(i, scope.lookup, scope.index) for i in v.index)
                val = to_sympy(v.value, scope.lookup, scope.index)
                scope.env[n.name] = ElementWrite(v.array.id, idx, val)
                continue
            if lifter.is_opaque(n):
                raise NotSymbolic("opaque step in the loop body")
            scope.env[n.name] = to_sympy(v, scope.lookup, scope.index)
        elif isinstance(n, If):
            if not lifter.is_pure_branch(n):
                raise NotSymbolic("impure branch")
            _body(lifter, kb, n.then, scope)
            _body(lifter, kb, n.orelse, scope)
            for gm in n.gammas:
                scope.local.add(gm.name)
                g = gm.value
                a, b = g.if_true, g.if_false
                wa = isinstance(a, ir.Name) and isinstance(scope.env.get(a.id), ElementWrite)
                wb = isinstance(b, ir.Name) and isinstance(scope.env.get(b.id), ElementWrite)
                if wa or wb:
                    raise NotSymbolic("conditional array write")
                scope.env[gm.name] = to_sympy(g, scope.lookup, scope.index)
        else:
            inner = _Scope(kb, scope)
            env = _lift_loop(lifter, kb, n, inner)
            for name, expr in env.items():
                scope.local.add(name)
                scope.env[name] = expr


__all__ = ["closed_form", "gamma"]

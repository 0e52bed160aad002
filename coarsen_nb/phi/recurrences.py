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

g, a, b must not depend on any μ of the loop (other than through k).  Inner
loops nest: an inner closed form is a reduction whose bounds may depend on the
outer k (triangular loops).  A loop that fits none of these (a nonlinear
recurrence, an early exit, C8 in a triangular nest) is left to be iterated with a
symbolic body — :class:`~coarsen_nb.plan.IterStep`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import online_lse
from coarsen_nb.phi.forms import Gamma, PowInt, RLin, RMax, RMin, RProd, RSum, RWrite
from coarsen_nb.phi.gate import If, Let, Loop
from coarsen_nb.phi.guards import guard_invariant_failures
from coarsen_nb.phi.symbols import NotSymbolic, gamma, to_sympy


class _Write:
    """The lifted ``update(array, [idx], value)`` of a body, until its μ is classified."""

    def __init__(self, base: str, index: tuple, value: sp.Basic):
        self.base, self.index, self.value = base, index, value


def closed_form(lifter, kb, loop: Loop) -> bool:
    """Lift ``loop`` into the open kernel ``kb`` as closed forms; False (kb unchanged) if it has none."""
    snap = kb.snapshot()
    try:
        env = _lift_loop(lifter, kb, guard_invariant_failures(loop), _Scope(kb))
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

    def lookup(self, name: str):
        if name in self.env:
            v = self.env[name]
            if isinstance(v, _Write):
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
    _body(lifter, kb, loop.body, scope)
    result: dict[str, sp.Basic] = {}
    etas = {e.value.value.id: e.name for e in loop.etas}
    trip = sp.Max(0, sp.ceiling((stop - start) / step))
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
    streaming = _streaming_lse(kb, states, updates)
    closed: dict = {}
    for name in sorted(updates, key=lambda n: n in streaming):     # a streaming sum after its maximum
        value, init = updates[name]
        if name in streaming:
            mname, a = streaming[name]
            eta = online_lse.closed_form(kb, name, a, init, updates[mname][1], closed[mname], k,
                                         (start, stop, step))
        else:
            eta = _classify(lifter, kb, name, states, value, init, k, (start, stop, step), trip, triangular,
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
        ext = _extremum(vm, states[mname])
        if ext is None or ext[0] != "max" or _depends_on(kb, ext[1], set(states.values())):
            continue
        for sname in partners:
            if online_lse.pair(vm, updates[sname][0], states[mname], states[sname], ext[1]):
                out[sname] = (mname, ext[1])
    return out


def hoist_sum(lifter, kb, g, k, rng):
    """Σ_k g with g = Σ_t m_t(v) · h_t(k): hoist each Σ_k h_t out of the enclosing iterated loop.

    Inside a loop that runs iteration by iteration (BGDHyperOpt's descent), a
    sum over the records whose summand is a polynomial in the loop's variables
    (w, b) factors into loop-invariant sums (Σ x², Σ x, Σ x·y) computed once
    before the loop, turning O(K·M) work into O(M + K).  Returns the factored
    expression, or None when the sum does not factor this way.
    """
    ctx = lifter.hoist_stack[-1] if lifter.hoist_stack else None
    if ctx is None:
        return None
    start, stop, step = rng
    variant = {s for s, name in kb.scalars.items() if name in ctx.loop_defined}
    bounds_syms = set().union(*(sp.sympify(b).free_symbols for b in rng))
    temps = {t for t, _ in kb.body}
    if (bounds_syms & (variant | temps)) or (g.free_symbols & temps) or g.has(sp.Piecewise):
        return None
    if any(name in ctx.loop_defined for s, name in kb.scalars.items() if s in bounds_syms):
        return None
    gens = sorted(g.free_symbols & variant, key=str)
    try:
        terms = sp.Poly(sp.expand(g), *gens).terms() if gens else [((), g)]
    except sp.PolynomialError:
        return None
    if len(terms) > 8:
        return None
    reads = {r.symbol: r for r in kb.reads.values()}
    arrays = set(kb.arrays)
    total = sp.Integer(0)
    for monom, coeff in terms:
        if coeff.free_symbols & (variant | arrays):
            return None
        for sym in coeff.free_symbols:
            # a read of an array the loop writes, or at an index the loop moves (x[k] of the loop's k),
            # is not invariant
            if sym in reads and (reads[sym].array in ctx.loop_defined or any(
                    sp.sympify(i).free_symbols & (variant | temps) for i in reads[sym].index)):
                return None
        name = ctx.sum_of(coeff, k, rng, kb, reads)
        term = kb.input(name)
        for gen, power in zip(gens, monom, strict=True):
            term = term * gen ** power
        total += term
    return total


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
        if nxt is None or isinstance(nxt, _Write) or not isinstance(nxt, sp.Expr):
            continue
        if _depends_on(kb, nxt, set(states.values())) or isinstance(m.value.init, ir.Undef):
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
        elif isinstance(v, _Write):
            scope.env[name] = _Write(v.base, tuple(sp.sympify(i).xreplace(subst) for i in v.index),
                                     v.value.xreplace(subst))


def _shift(kb, e, k, step):
    """``e`` one iteration earlier: k -> k - step, reads re-indexed (no temps may depend on k)."""
    return _at(kb, e, k, k - step)


def _at(kb, e, k, value):
    """``e`` with loop index ``k`` set to ``value`` (reads re-indexed)."""
    temps = {s for s, _ in kb.body}
    sub: dict = {}
    for s in e.free_symbols:
        if s in temps and _depends_on(kb, s, k):
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
                scope.env[n.name] = _Write(v.array.id, idx, val)
                continue
            if lifter._opaque(n):
                raise NotSymbolic("opaque step in the loop body")
            scope.env[n.name] = to_sympy(v, scope.lookup, scope.index)
        elif isinstance(n, If):
            if not lifter._pure(n):
                raise NotSymbolic("impure branch")
            _body(lifter, kb, n.then, scope)
            _body(lifter, kb, n.orelse, scope)
            for gm in n.gammas:
                scope.local.add(gm.name)
                g = gm.value
                a, b = g.if_true, g.if_false
                wa = isinstance(a, ir.Name) and isinstance(scope.env.get(a.id), _Write)
                wb = isinstance(b, ir.Name) and isinstance(scope.env.get(b.id), _Write)
                if wa or wb:
                    raise NotSymbolic("conditional array write")
                scope.env[gm.name] = to_sympy(g, scope.lookup, scope.index)
        else:
            inner = _Scope(kb, scope)
            env = _lift_loop(lifter, kb, n, inner)
            for name, expr in env.items():
                scope.local.add(name)
                scope.env[name] = expr


def _strip(expr, v, op: str):
    """``g`` with ``expr == v op g`` (distributing over Piecewise, F2), or None."""
    if isinstance(expr, sp.Piecewise):
        parts = []
        for e, c in expr.args:
            g = _strip(e, v, op)
            if g is None:
                return None
            parts.append((g, c))
        return Gamma(*parts)
    if expr == v:
        return sp.Integer(0) if op == "+" else sp.Integer(1)
    if op == "+" and isinstance(expr, sp.Add) and v in expr.args:
        return expr - v
    if op == "*" and isinstance(expr, sp.Mul) and v in expr.args:
        return expr / v
    return None


def _classify(lifter, kb, name, states, value, init, k, rng, trip, triangular=False, binders=frozenset()):
    v = states[name]
    others = set(states.values())
    start, stop, step = rng
    if isinstance(value, _Write):
        if value.base != name:
            raise NotSymbolic("write into another array")
        if any(_depends_on(kb, i, others) for i in value.index) or _depends_on(kb, value.value, others):
            raise NotSymbolic("write depends on loop state")
        if init is None:
            raise NotSymbolic("write into an undefined array")
        g = kb.temp(f"g:{name}", value.value)
        return kb.temp(f"w:{name}", RWrite(init, g, k, start, stop, step, *value.index))
    if init is None:
        raise NotSymbolic("accumulator without an initial value")
    if isinstance(value, sp.logic.boolalg.Boolean) and not isinstance(value, sp.Expr):
        raise NotSymbolic("boolean state")
    if _elementwise(kb, value):
        raise NotSymbolic("array-valued accumulator")
    # sum, product
    for op, node in (("+", RSum), ("*", RProd)):
        if op == "*" and triangular:
            continue    # segmented products of a triangular nest are iterated (see lower.nests)
        g = _strip(value, v, op)
        if g is not None and not _depends_on(kb, g, others):
            if op == "+":
                hoisted = None if _depends_on(kb, g, set(binders)) or triangular else \
                    hoist_sum(lifter, kb, g, k, rng)
                if hoisted is not None:
                    return init + hoisted
            gs = kb.temp(f"g:{name}", g)
            red = kb.temp(f"{node.kind}:{name}", node(gs, k, start, stop, step))
            return init + red if op == "+" else init * red
    # max / min: Max(v, g) or γ(g > v, g, v)
    ext = None if triangular else _extremum(value, v)
    if ext is not None:
        kind, g = ext
        if not _depends_on(kb, g, others):
            gs = kb.temp(f"g:{name}", g)
            node = RMax if kind == "max" else RMin
            red = kb.temp(f"{kind}:{name}", node(gs, k, start, stop, step))
            # Python's max(m, g) keeps m on a tie, and so does `if g > m: m = g`
            return gamma(init >= red, init, red) if kind == "max" else gamma(init <= red, init, red)
    # linear with an invariant coefficient: v <- a*v + b(k)   (C6, C7)
    expanded = sp.expand(value) if not value.has(sp.Piecewise) else value
    if expanded.is_polynomial(v) and sp.degree(expanded, v) == 1:
        a = expanded.coeff(v, 1)
        b = expanded.coeff(v, 0)
        if not _depends_on(kb, a, others) and not _depends_on(kb, b, others) and not _depends_on(kb, a, k):
            p = (k - start) / step
            bs = kb.temp(f"b:{name}", b * PowInt(a, trip - 1 - p))
            red = kb.temp(f"sum:{name}", RSum(bs, k, start, stop, step))
            return PowInt(a, trip) * init + red
        if not triangular and not _depends_on(kb, a, others) and not _depends_on(kb, b, others) \
                and all(_nests(kb, c, k, binders) for c in (a, b)):
            # C8: the coefficient varies with k
            at = kb.temp(f"a:{name}", a)
            bt = kb.temp(f"b:{name}", b)
            prod = kb.temp(f"prod:{name}", RProd(at, k, start, stop, step))
            return init * prod + kb.temp(f"lin:{name}", RLin(at, bt, k, start, stop, step))
    power = _power(value, v)
    if power is not None:
        a, b = power
        if not (_depends_on(kb, a, others | {k}) or _depends_on(kb, b, others | {k})):
            return _power_closed_form(kb, name, a, b, init, k, rng, trip)
    raise NotSymbolic("no closed form")


def _nests(kb, c, k, binders) -> bool:
    """Whether a C8 coefficient ``c`` inside enclosing closed-form loops (``binders``) varies over
    all of them, or over none of them and not over k.  Otherwise its adjoint (which holds at every
    (outer, k) point) is summed over an outer index inside k's level, where the suffix products and
    the states would be evaluated with the indices the other way round: correct (see
    ``lower.nests.NestPrinting._segments``) but recomputed per point, so such a loop is iterated instead."""
    if not binders:
        return True
    if all(_depends_on(kb, c, j) for j in binders):
        return True
    return not _depends_on(kb, c, set(binders) | {k})


def _power(value, v):
    """(a, b) if ``value`` is a·v**b with a, b free of v (C9), else None."""
    if isinstance(value, sp.Pow) and value.base == v:
        a, p = sp.Integer(1), value
    elif isinstance(value, sp.Mul):
        powers = [f for f in value.args if isinstance(f, sp.Pow) and f.base == v]
        if len(powers) != 1:
            return None
        p = powers[0]
        a = value / p
    else:
        return None
    if v in a.free_symbols or v in p.exp.free_symbols:
        return None
    return a, p.exp


def _power_closed_form(kb, name, a, b, init, k, rng, trip):
    """v_N of v ← a·v**b (C9): a^S·init^{bᴺ} with S = Σ_{p<N} bᵖ = (bᴺ − 1)/(b − 1).

    Domain.  For an integer b both exponents are integers, so the form holds for
    every sign of a and init; with a literal b ≥ 2 they are non-negative and
    :class:`PowInt` keeps the derivative finite at a = 0 or init = 0.  For any
    other b (a symbol, a fraction) the form holds wherever the loop stays real:
    for positive a and init with every b, and for negative ones only when b is
    integral at run time — then bᴺ and S are integral floats and ``**`` of a
    negative base is exact; where it is not, the loop itself leaves the reals
    (Python gives a complex number) and so does the form.

    For a b that is not a literal, S is the sum Σ_{p<N} bᵖ itself (one array
    reduction, not unrolled): the quotient is 0/0 at b = 1, and a Piecewise on
    b = 1 would give the wrong ∂/∂b there.  N = 0 is its own case (S = 0, and
    ∂/∂a of a^S would divide by a = 0).

    Limit: when bᴺ passes the float range (N ≳ 1000 for b = 2) the integer
    exponent does not convert to a float and the derivative raises
    OverflowError (the loop would give 0, ±1 or ±inf); a literal trip count
    that large is left to be iterated.
    """
    start, stop, step = rng
    if b.is_Float and b == int(b):
        b = sp.Integer(int(b))
    if b.is_Integer and b in (0, 1):
        raise NotSymbolic("degenerate power recurrence")  # lagged or product forms, never here
    if b.is_Integer and sp.sympify(trip).is_Integer and abs(b) ** trip > 2 ** 53:
        # the exponents would not fit a float: v is 0, ±1 or ±inf long before; let the loop run
        raise NotSymbolic("power recurrence exponent beyond float range")
    if b.is_Integer and b >= 2:
        return _pow_int(a, (b ** trip - 1) / (b - 1)) * PowInt(init, b ** trip)
    if b.is_Integer:
        s = (b ** trip - 1) / (b - 1)
    else:
        s = kb.temp(f"sum:{name}", RSum(kb.temp(f"g:{name}", PowInt(b, (k - start) / step)), k, start, stop, step))
    return Gamma((init, sp.Eq(trip, 0)), ((a ** s if a != 1 else 1) * init ** (b ** trip), True))


def _pow_int(a, m):
    return sp.Integer(1) if a == 1 else PowInt(a, m)


def _extremum(value, v):
    """("max"|"min", g) if ``value`` is max(v, g) or min(v, g) written as a γ, else None."""
    if not (isinstance(value, sp.Piecewise) and len(value.args) == 2):
        return None
    (first, c), (second, _) = value.args
    if v not in (first, second) or first == second:
        return None
    g = second if first == v else first
    if not isinstance(c, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan, sp.LessThan)):
        return None
    diff = sp.expand(c.lhs - c.rhs)
    if diff == sp.expand(first - second):
        lhs_is_first = True
    elif diff == sp.expand(second - first):
        lhs_is_first = False
    else:
        return None
    greater = c.rel_op in (">", ">=")
    # cond true  <=>  first > second  (when greater and lhs is first, or not greater and lhs is second)
    first_wins_when_larger = greater == lhs_is_first
    return ("max" if first_wins_when_larger else "min"), g


def _elementwise(kb, e) -> bool:
    return bool(e.free_symbols & set(kb.arrays))


def _depends_on(kb, e, k) -> bool:
    """Whether ``e`` varies with ``k`` — a loop index or a set of state symbols — directly,
    through a read's index, or through a temp of the kernel."""
    reads = {r.symbol: r for r in kb.reads.values()}
    temps = dict(kb.body)
    seen: set = set()
    targets = set(k) if isinstance(k, (set, frozenset)) else {k}

    def dep(x) -> bool:
        for s in x.free_symbols:
            if s in targets:
                return True
            if s in seen:
                continue
            seen.add(s)
            if s in reads and any(targets & sp.sympify(i).free_symbols for i in reads[s].index):
                return True
            if s in temps and dep(temps[s]):
                return True
        return False

    return dep(sp.sympify(e))


__all__ = ["closed_form", "gamma"]

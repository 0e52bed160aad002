"""The classes of a loop μ's recurrence (the table in :mod:`coarsen_nb.phi.recurrences`), each with its closed form.

:func:`classify` matches one μ's lifted ``next`` value against sum, product,
max/min, linear (C6–C8), power (C9) and element write, and returns the η's
closed form as reduction nodes of :mod:`.forms`, or raises ``NotSymbolic``
when none fits (the loop is then iterated).  A sum whose body does not depend
on the enclosing iterated loop is hoisted before it (:func:`hoist_sum`).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi.forms import PowInt, RLin, RMax, RMin, RProd, RSum, RWrite
from coarsen_nb.phi.gammas import Gamma, as_written, gamma
from coarsen_nb.phi.symbols import NotSymbolic


class ElementWrite:
    """The lifted ``update(array, [idx], value)`` of a body, until its μ is classified."""

    def __init__(self, base: str, index: tuple, value: sp.Basic):
        self.base, self.index, self.value = base, index, value


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


def strip_term(expr, v, op: str):
    """``g`` with ``expr == v op g`` (distributing over Piecewise, F2), or None."""
    if isinstance(expr, sp.Piecewise):
        parts = []
        for e, c in expr.args:
            g = strip_term(e, v, op)
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


def classify(lifter, kb, name, states, value, init, k, rng, trip, triangular=False, binders=frozenset()):
    v = states[name]
    others = set(states.values())
    start, stop, step = rng
    if isinstance(value, ElementWrite):
        if value.base != name:
            raise NotSymbolic("write into another array")
        if any(depends_on(kb, i, others) for i in value.index) or depends_on(kb, value.value, others):
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
            continue    # segmented products of a triangular nest are iterated (see lower.segment_printing)
        g = strip_term(value, v, op)
        if g is not None and not depends_on(kb, g, others):
            if op == "+":
                hoisted = None if depends_on(kb, g, set(binders)) or triangular else \
                    hoist_sum(lifter, kb, g, k, rng)
                if hoisted is not None:
                    return init + hoisted
            gs = kb.temp(f"g:{name}", g)
            red = kb.temp(f"{node.kind}:{name}", node(gs, k, start, stop, step))
            return init + red if op == "+" else init * red
    # max / min: Max(v, g) or γ(g > v, g, v)
    ext = None if triangular else extremum(value, v)
    if ext is not None:
        kind, g, skips = ext
        if not depends_on(kb, g, others):
            gs = kb.temp(f"g:{name}", g)
            node = RMax if kind == "max" else RMin
            red = kb.temp(f"{kind}:{name}", node(gs, k, start, stop, step))
            if skips:
                red = kb.temp(f"{kind}:{name}:nan", nan_skipping(kb, name, kind, node, red, g, k, rng))
                # a NaN start stays: no term is above (below) a NaN, as in the loop
                return gamma(red > init, red, init) if kind == "max" else gamma(red < init, red, init)
            # Python's max(m, g) keeps m on a tie, and so does `if g > m: m = g`
            return gamma(init >= red, init, red) if kind == "max" else gamma(init <= red, init, red)
    # linear with an invariant coefficient: v <- a*v + b(k)   (C6, C7)
    expanded = sp.expand(value) if not value.has(sp.Piecewise) else value
    if expanded.is_polynomial(v) and sp.degree(expanded, v) == 1:
        a = expanded.coeff(v, 1)
        b = expanded.coeff(v, 0)
        if not depends_on(kb, a, others) and not depends_on(kb, b, others) and not depends_on(kb, a, k):
            p = (k - start) / step
            bs = kb.temp(f"b:{name}", b * PowInt(a, trip - 1 - p))
            red = kb.temp(f"sum:{name}", RSum(bs, k, start, stop, step))
            return PowInt(a, trip) * init + red
        if not triangular and not depends_on(kb, a, others) and not depends_on(kb, b, others) \
                and all(_nests(kb, c, k, binders) for c in (a, b)):
            # C8: the coefficient varies with k
            at = kb.temp(f"a:{name}", a)
            bt = kb.temp(f"b:{name}", b)
            prod = kb.temp(f"prod:{name}", RProd(at, k, start, stop, step))
            return init * prod + kb.temp(f"lin:{name}", RLin(at, bt, k, start, stop, step))
    power = _power(value, v)
    if power is not None:
        a, b = power
        if not (depends_on(kb, a, others | {k}) or depends_on(kb, b, others | {k})):
            return _power_closed_form(kb, name, a, b, init, k, rng, trip)
    raise NotSymbolic("no closed form")


def _nests(kb, c, k, binders) -> bool:
    """Whether a C8 coefficient ``c`` inside enclosing closed-form loops (``binders``) varies over
    all of them, or over none of them and not over k.  Otherwise its adjoint (which holds at every
    (outer, k) point) is summed over an outer index inside k's level, where the suffix products and
    the states would be evaluated with the indices the other way round: correct (see
    ``lower.segment_printing.SegmentPrinting._segments``) but recomputed per point, so such a loop is
    iterated instead."""
    if not binders:
        return True
    if all(depends_on(kb, c, j) for j in binders):
        return True
    return not depends_on(kb, c, set(binders) | {k})


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


def nan_skipping(kb, name, kind, node, red, g, k, rng):
    """The loop's extremum where a NaN term never wins (``if g > m: m = g`` is false for a NaN g, so the loop
    steps over it), at no cost to NaN-free data: the namespace's reduction ``red`` (NaN-propagating) as it is,
    and only where it is a NaN (one scalar test) the reduction again over γ(g > -inf, g, -inf), a NaN term the
    reduction's identity.  The printers print a scalar γ as a branch: the slow arm runs only for a NaN."""
    bound = -sp.oo if kind == "max" else sp.oo
    keeps = sp.StrictGreaterThan(g, bound, evaluate=False) if kind == "max" else \
        sp.StrictLessThan(g, bound, evaluate=False)
    skipping = kb.temp(f"g:{name}:nan", gamma(keeps, g, bound))
    slow = kb.temp(f"{kind}:{name}:skipping", node(skipping, k, *rng))
    return gamma(sp.Eq(red, red, evaluate=False), red, slow)


def extremum(value, v):
    """("max"|"min", g, skips) if ``value`` is max(v, g) or min(v, g) written as a γ, else None.  ``skips``: v is
    the γ's false arm (``if g > m: m = g``), so a NaN g never replaces v and a NaN v stays (every comparison
    with a NaN is false)."""
    if not (isinstance(value, sp.Piecewise) and len(value.args) == 2):
        return None
    (first, c), (second, _) = value.args
    if v not in (first, second) or first == second:
        return None
    g = second if first == v else first
    if not isinstance(c, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan, sp.LessThan)):
        c = _unfolded(c, first, second)
        if c is None:
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
    return ("max" if first_wins_when_larger else "min"), g, second == v


def _unfolded(c, first, second):
    """The relation between ``first`` and ``second`` that ``c`` is the folded form of, or None.

    When ``g`` is itself a γ (``max(m, min(max(t, 0.0), 1.0))``, a clamp), the predicate ``m >= g`` of
    ``max(m, g)`` holds a γ, and :class:`~coarsen_nb.phi.gammas.Gamma` folds it into an ITE over g's
    conditions; the relation as written is found again by folding each candidate the same way.
    """
    for rel in (sp.GreaterThan, sp.StrictGreaterThan, sp.LessThan, sp.StrictLessThan):
        for lhs, rhs in ((first, second), (second, first)):
            candidate = rel(lhs, rhs, evaluate=False)
            if as_written(candidate) == c:
                return candidate
    return None


def _elementwise(kb, e) -> bool:
    return bool(e.free_symbols & set(kb.arrays))


def depends_on(kb, e, k) -> bool:
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


"""Derivatives of one SOI: its VJP (reverse) and JVP (forward), symbolically.

Inside a kernel the derivative is symbolic: SymPy differentiates each temp's
expression (``Piecewise`` included — C2: the derivative distributes into γ),
and the chain rule runs over the kernel's temps, so a value used many times
is differentiated once (no swell).  The phi-calculus rules for the loop
forms are explicit:

=================  ========================================================
form               reverse rule (adjoint ``b`` of the form given)
=================  ========================================================
Σ_k g              b(g_k) = b                  (broadcast over k)
Π_k g              b(g_k) = b · Π_{l≠k} g_l     (prefix/suffix products: zero-safe)
max_k g, min_k g   b(g_k) = b · [k = argmax]
write(v, [i_k], g) b(g_k) = b[i_k];  b(v) = b with zeros at the i_k
logsumexp(c; g)    b(g_k) = b · exp(g_k − L);  b(c) = b · exp(−L)    (L the form's value)
RLin(a, g) (C8)    b(g_k) = b · Π_{j>k} a_j;  b(a_k) = b · v_k · Π_{j>k} a_j  (v_k: LinState, a scan)
scan v_k (a, g)    b(g_k) = u_k;  b(a_k) = v_k · u_k;  b(init) = Σ_k b_k Π_{j<k} a_j = (b + a·u)_start
                   (u: the costate, a reverse scan of b with the same a; phi.scans)
x[i(k)] (a read)   b(x)[i(k)] += b(read)        (a scatter)
=================  ========================================================

A contribution that varies over loop indices its target does not vary over
is summed over them (:meth:`~coarsen_nb.symbolic.levels.Deps.reduce_to`).
The result is again a set of SymPy expressions over the same kernel, which
the printer lowers with the same machinery as the forward code (so forward
values are shared with the derivative through CSE).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from coarsen_nb.phi import forms, gammas, scans
from coarsen_nb.plan import Kernel
from coarsen_nb.symbolic.levels import ELEM, Deps


@dataclass
class KernelVJP:
    """Adjoint contributions of one kernel to its inputs.

    ``scalars``/``arrays``: (SSA name, expression) to add to that input's
    adjoint; ``scatters``: (array SSA name, index expressions, expression)
    to add at those indices over the expression's level.
    """

    temps: dict
    reads: dict
    scalars: list = field(default_factory=list)
    arrays: list = field(default_factory=list)
    scatters: list = field(default_factory=list)

    def exprs(self) -> dict[str, sp.Expr]:
        """Each contribution as one expression (temps inlined), for display."""
        sub: dict = {}
        for s, e in self.temps.items():
            sub[s] = e.xreplace(sub)
        out = {}
        for name, e in self.scalars + self.arrays:
            out[name] = e.xreplace(sub)
        for name, idx, e, _ in self.scatters:
            key = f"{name}[{', '.join(map(str, idx))}]"
            out[key] = e.xreplace(sub)
        return out


def kernel_deps(kernel: Kernel, temps: dict, reads: dict, extra_arrays=()) -> Deps:
    arrays = set(kernel.arrays) | set(extra_arrays)
    return Deps(temps, reads, lambda s: s in arrays)


def active_symbols(kernel: Kernel, active: set[str]) -> set:
    """Symbols of ``kernel`` whose value depends on an active (differentiated) input."""
    act = {s for s, n in list(kernel.scalars.items()) + list(kernel.arrays.items()) if n in active}
    act |= {r.symbol for r in kernel.reads if r.array in active}
    for s, e in kernel.body:
        if e.free_symbols & act or any(isinstance(a, sp.Symbol) and a in act for a in e.atoms(sp.Symbol)):
            act.add(s)
    return act


def vjp(kernel: Kernel, active: set[str], out_bars: dict) -> KernelVJP:
    """The VJP of ``kernel``: ``out_bars`` maps output names to adjoint symbols (leaves).

    An array contribution keeps the broadcast shape of the output it comes from, and is summed to its
    input's shape at the end (``SumTo``).  Outputs of different shapes (a ``(n, 1)`` maximum passed on
    beside ``exp(L - m)``, ``(n, k)``) must not be added before that sum, or the smaller one's part
    would count once per element it is broadcast over: the outputs are swept in groups of the same
    shape (:func:`_shape_groups`), each summed to its inputs' shapes, and the groups then added."""
    temps = dict(kernel.body)
    reads = {r.symbol: (r.array, r.index) for r in kernel.reads}
    act = active_symbols(kernel, active)
    deps = kernel_deps(kernel, temps, reads, _array_bars(kernel, temps, reads, out_bars))
    out_temps = dict(temps)
    broadcasts = len(set(kernel.arrays.values())) > 1     # arrays of different shapes may meet
    groups = _shape_groups(kernel, temps) if broadcasts else [list(kernel.outputs)]
    seeds = [[(o.symbol, out_bars[o.name]) for o in outputs if o.name in out_bars and o.symbol in act]
             for outputs in groups]
    # A whole-array sum inside a kernel whose arrays broadcast (np.sum(m * m) beside np.sum(exp(X - m)))
    # sums its operand over the operand's own points: its operand is swept as a group of its own, like an
    # output of another shape (the sweep defers it), so its part is summed to the inputs' shapes alone.
    bars = []
    while seeds:
        deferred: list = []
        k = len(bars)
        bars.append(_sweep(kernel, seeds.pop(0), act, deps, out_temps, "" if k == 0 else f"@{k}",
                           deferred if broadcasts else None))
        seeds += [[seed] for seed in deferred]
    out = KernelVJP(out_temps, reads)
    deps.temps = out_temps
    for s, name in kernel.scalars.items():
        parts = [p for bar in bars for p in bar.pop(s, [])]
        if parts and name in active:
            out.scalars.append((name, _finish(s, parts, out_temps)))
    for s, name in kernel.arrays.items():
        if name not in active:
            continue
        totals = [_finish(s if k == 0 else sp.Symbol(f"{s.name}@{k}", real=True), bar.pop(s), out_temps)
                  for k, bar in enumerate(bars) if s in bar]
        if totals:
            out.arrays.append((name, sp.Add(*(forms.SumTo(b, s) for b in totals)) if broadcasts else totals[0]))
    for r in kernel.reads:
        parts = [p for bar in bars for p in bar.pop(r.symbol, [])]
        if parts and r.array in active:
            # one scatter per level: parts at different levels must not be added before scattering
            by_level: dict = {}
            for part, level in parts:
                by_level.setdefault(level, []).append(part)
            for k, (level, level_parts) in enumerate(by_level.items()):
                sym = r.symbol if k == 0 else sp.Symbol(f"{r.symbol.name}@{k}", real=True)
                out.scatters.append((r.array, r.index, _finish(sym, level_parts, out_temps), level))
    return out


def _shape_groups(kernel: Kernel, temps: dict) -> list[list]:
    """The kernel's outputs grouped by the array inputs their values read (through the temps): those
    that read the same arrays broadcast them to the same shape."""
    memo: dict = {}

    def arrays_of(sym) -> frozenset:
        if sym not in memo:
            memo[sym] = frozenset()     # (a temp's expression never reads itself)
            e = temps.get(sym)
            memo[sym] = frozenset({sym}) if sym in kernel.arrays else frozenset().union(
                *(arrays_of(a) for a in e.free_symbols)) if e is not None else frozenset()
        return memo[sym]

    groups: dict = {}
    for o in kernel.outputs:
        groups.setdefault(arrays_of(o.symbol), []).append(o)
    return list(groups.values()) or [[]]


def _sweep(kernel: Kernel, seeds, act, deps, out_temps: dict, suffix: str, deferred: list | None) -> dict:
    """The reverse sweep over the kernel's temps from ``seeds`` (symbol, its adjoint): each input symbol's
    contributions (for a read, with its level).  ``suffix`` names the adjoint temps of this sweep.  With
    ``deferred`` (a list), a whole-array sum's operand is not swept here: ``(operand, adjoint)`` joins the
    list, to be swept as a group of its own."""
    read_syms = {r.symbol for r in kernel.reads}
    broadcasts = len(set(kernel.arrays.values())) > 1
    bar: dict = {}

    def add(u, c, level=frozenset()) -> None:
        """Add contribution ``c``, which holds at every point of ``level`` (and of its own deps)."""
        if c == 0:
            return
        level = frozenset(level) | deps(c)
        if u in read_syms:
            # A read's adjoint is scattered at the contribution's own level: the
            # scatter sums over the loops the index does not mention.
            bar.setdefault(u, []).append((c, level))
            return
        bar.setdefault(u, []).append(deps.reduce_to(c, deps(u), level))

    for symbol, adjoint in seeds:
        add(symbol, adjoint, deps(symbol))
    for t, e in reversed(kernel.body):
        if t not in bar:
            continue
        total = sp.Add(*bar.pop(t))
        if total.is_Number:
            b = total       # a constant adjoint (the gradient's unit seed) folds into the products
        else:
            b = sp.Symbol(f"b:{t.name}{suffix}", real=True)
            out_temps[b] = total
            deps.cache.pop(b, None)
            deps.temps = out_temps
        if isinstance(e, forms.RWrite) and len(set(kernel.arrays.values())) > 1:
            # an array the kernel wrote (a slice, x[1:2]) that NumPy broadcast against larger ones: its
            # elements' adjoints are the sums over the broadcast axes, before they reach what it read
            b = forms.SumTo(b, t)
        if deferred is not None and isinstance(e, forms.ElemSum) and e.args[0] in act:
            deferred.append((e.args[0], b))
            continue
        # (where every array has one shape, the elementwise level's is every element's: nothing to hold)
        deps.held_at = t if broadcasts and ELEM in deps(t) else None
        _rule(e, b, act, add, deps, deps(t))
        deps.held_at = None
    return bar


def _is_array_out(kernel: Kernel, name: str) -> bool:
    t = kernel.types.get(name)
    return bool(t is not None and t.is_array)


def _array_bars(kernel: Kernel, temps: dict, reads: dict, out_bars: dict) -> list:
    """The adjoint symbols of the outputs that are arrays: typed so, or (the kernel builder records no types)
    computed element by element.  A number's share of every element (``Deps.reduce_to``) must not mistake
    an array's adjoint for one number (``np.sum(b_u)`` would become ``np.sum(zeros_like(u) + b_u)``)."""
    elementwise = kernel_deps(kernel, temps, reads)
    symbols = {o.name: o.symbol for o in kernel.outputs}
    return [b for n, b in out_bars.items() if _is_array_out(kernel, n) or (
        n in symbols and isinstance(b, sp.Symbol) and ELEM in elementwise(symbols[n]))]


def _finish(sym, parts, temps) -> sp.Expr:
    b = sp.Symbol(f"b:{sym.name}", real=True)
    temps[b] = sp.Add(*parts)
    return b


def _rule(e, b, act, add, deps, level) -> None:
    """Add the contributions of temp ``e`` (with adjoint ``b``, at ``level``) to its operands."""
    if isinstance(e, forms.Reduction):
        body, k, lo, hi, st = e.args
        if e.kind == "sum":
            weight = b
        elif e.kind == "prod":
            weight = b * forms.ProdExcept(body, k, lo, hi, st)
        else:
            weight = b * forms.ArgOneHot(body, k, lo, hi, st, sp.Integer(1 if e.kind == "max" else -1))
        deps.scan(weight)
        # the summand lives at every point of k's range, even where it does not mention k
        _chain(body, weight, act, add, deps(body) | deps(k))
        return
    if isinstance(e, forms.ElemSum):
        # np.sum(g) of an elementwise g: every point's g gets the sum's adjoint
        body = e.args[0]
        if _reads_a_write(body, deps.temps):
            # an array the segment wrote reaches the sum (np.sum(y * c), y written in a loop), and the
            # write's rule gathers its adjoint element by element: one value at each point of the summand
            b = forms.BroadcastLike(b, body)
        _chain(body, b, act, add, deps(body) | {ELEM})
        return
    if isinstance(e, forms.LogSumExp):
        # L = log(c + Σ_k exp(g_k)):  ∂L/∂g_k = exp(g_k − L) (the softmax, ≤ 1),  ∂L/∂c = exp(−L)
        c, g, k, lo, hi, st = e.args
        w = b * sp.exp(g - e)
        deps.scan(w)
        _chain(g, w, act, add, deps(g) | deps(k))
        _chain(c, b * sp.exp(-e), act, add, level)
        return
    if isinstance(e, forms.RLin):
        # v_N = Σ_k g_k Π_{j>k} a_j:  ∂/∂g_k = Π_{j>k} a_j,  ∂/∂a_k = v_k · Π_{j>k} a_j
        a, g, k, lo, hi, st = e.args
        sfx = b * forms.ProdAfter(a, k, lo, hi, st)
        deps.scan(sfx)
        _chain(g, sfx, act, add, deps(g) | deps(k))
        if (a.free_symbols & act):
            wa = sfx * forms.LinState(a, g, k, lo, hi, st)
            deps.scan(wa)
            _chain(a, wa, act, add, deps(a) | deps(k))
        return
    if isinstance(e, scans.LinScan):
        # v_k, the state before step k:  ∂/∂g_k = u_k,  ∂/∂a_k = v_k·u_k,  ∂/∂init = Π_{j<k} a_j  (summed over k)
        a, g, k, lo, hi, st, init = e.args
        u = scans.LinCostate(a, b, k, lo, hi, st)
        deps.scan(u)
        _chain(g, u, act, add, deps(g) | deps(k))
        if a.free_symbols & act:
            _chain(a, e * u, act, add, deps(a) | deps(k))
        if init.free_symbols & act:
            # Σ_k b_k Π_{j<k} a_j = b + a·u at the first step (no prefix product: it underflows slowly)
            w = b if a == 1 else gammas.Gamma((b + a * u, sp.Eq(k, lo)), (sp.Integer(0), True))
            deps.scan(w)
            _chain(init, w, act, add, deps(w) | deps(k))
        return
    if isinstance(e, forms.RWrite):
        init, body, k, lo, hi, st, *idx = e.args
        if init in act:
            add(init, forms.Unwritten(b, k, lo, hi, st, *idx), level)
        _chain(body, forms.Gather(b, *idx), act, add, deps(body) | deps(k))
        return
    skipping = nan_skipping_extremum(e, deps.temps)
    if skipping is not None:
        body, k, lo, hi, st = skipping.args
        weight = b * forms.ArgOneHot(body, k, lo, hi, st, sp.Integer(1 if skipping.kind == "max" else -1))
        deps.scan(weight)
        # through the terms only: the test red == red says which arm, its derivative is none
        _chain(body, weight, act - set(e.free_symbols), add, deps(body) | deps(k))
        return
    _chain(e, b, act, add, level)


def nan_skipping_extremum(e, temps: dict):
    """The one reduction ``e`` stands for where it is a loop's NaN-skipping max (min),
    γ(red == red, red, red') of :func:`coarsen_nb.phi.recurrence_classes.nan_skipping`, else None.

    Its adjoint is one one-hot, at the extremum of the terms where a NaN never wins: the reduction over
    γ(red == red, g, γ(g > -inf, g, -inf)), a scalar test around the terms, so on NaN-free data the one-hot is
    the namespace's argmax of g (nothing else computed), and only where red is a NaN the NaN-skipping one."""
    if not (isinstance(e, sp.Piecewise) and len(e.args) == 2):
        return None
    (fast, test), (slow, _) = e.args
    if not (isinstance(test, sp.Eq) and test.args == (fast, fast)):
        return None
    red, red_skipping = temps.get(fast), temps.get(slow)
    if not (isinstance(red, (forms.RMax, forms.RMin)) and type(red_skipping) is type(red)
            and red.args[1:] == red_skipping.args[1:]):
        return None
    terms, skipping_terms = (temps.get(t, t) for t in (red.args[0], red_skipping.args[0]))
    return type(red)(gammas.gamma(test, terms, skipping_terms), *red.args[1:])


def _reads_a_write(e, temps: dict, seen=None) -> bool:
    """Whether ``e`` reads, through the kernel's temps, an array the kernel wrote (an RWrite)."""
    seen = set() if seen is None else seen
    for s in e.free_symbols - seen:
        seen.add(s)
        v = temps.get(s)
        if isinstance(v, forms.RWrite) or (v is not None and _reads_a_write(v, temps, seen)):
            return True
    return False


def _chain(e, weight, act, add, level) -> None:
    """Contributions ``weight · ∂e/∂u`` for every active symbol u of ``e``, holding at ``level``."""
    for u in sorted(e.free_symbols & act, key=str):
        d = tidy(derivative(e, u))
        if d != 0:
            add(u, weight * d, level)


class _Power(sp.Function):
    """``x**y`` while differentiating with respect to a symbol in ``y``: ∂/∂y is ``x**y · log x``
    for x > 0, **0 at x = 0** (0**y is 0 for every y > 0: the one-sided derivative, JAX's
    convention) and NaN for x < 0 (no real power), where SymPy's ``log(x)`` would make the printed
    code call ``math.log(0)`` and stop with a domain error."""

    def fdiff(self, argindex=1):
        x, y = self.args
        if argindex == 1:
            return y * sp.Pow(x, y - 1)
        return sp.Pow(x, y) * sp.Piecewise((sp.log(x), x > 0), (0, sp.Eq(x, 0)), (sp.nan, True))


def derivative(e, u):
    """``∂e/∂u`` by SymPy, with powers whose exponent involves ``u`` differentiated as :class:`_Power`."""
    powers = {p: _Power(*p.args) for p in e.atoms(sp.Pow) if u in p.exp.free_symbols
              and p.base.is_positive is not True and not p.base.is_Number}
    if not powers:
        return sp.diff(e, u)
    d = sp.diff(e.xreplace(powers), u)
    return d.xreplace({v: k for k, v in powers.items()})


def tidy(d):
    """N·t**N/t → N·t**(N-1): SymPy's derivative of a symbolic power divides by the base,
    which is a 0/0 at t = 0 (Horner at the origin, C6 with a zero multiplier)."""
    if any(isinstance(p, sp.Pow) and not p.exp.is_Number for p in d.atoms(sp.Pow)):
        return sp.powsimp(d, deep=True)
    return d

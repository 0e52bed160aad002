"""Forward-mode derivative (JVP) of one SOI, symbolically.

The tangent of each temp is Σ_u ∂e/∂u · u̇ over its active operands (SymPy
differentiates; ``Piecewise`` distributes, C2).  The loop forms follow the
phi-calculus rules:

================  ==============================================
form              tangent
================  ==============================================
Σ_k g             Σ_k ġ
Π_k g             Σ_k ġ_k · Π_{l≠k} g_l        (zero-safe)
max_k g           Σ_k ġ_k · [k = argmax]
write(v, i, g)    write(v̇, i, ġ)
logsumexp(c; g)   Σ_k ġ_k·exp(g_k − L) + ċ·exp(−L)
RLin(a, g) (C8)   RLin(a, ȧ·v_k + ġ)   (the same recurrence driven by the tangents; v_k: LinState)
scan v_k (a, g)   scan(a, ȧ·v_k + ġ, init̄̇)   (phi.scans)
x[i(k)]           ẋ[i(k)]  (a read of the tangent array)
================  ==============================================
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb.phi import forms, scans
from coarsen_nb.plan import Kernel
from coarsen_nb.symbolic.diff import active_symbols, derivative, nan_skipping_extremum, tidy


@dataclass
class KernelJVP:
    temps: dict                 # forward temps + tangent temps
    reads: dict                 # extra reads of tangent arrays: symbol -> (array SSA name, index)
    tangent_leaves: dict        # tangent leaf symbol -> input SSA name
    outputs: list               # (output SSA name, tangent expression)
    zero_leaves: dict           # tangent leaf symbol -> SSA name of an inactive array (tangent zero)


def jvp(kernel: Kernel, active: set[str]) -> KernelJVP:
    """Tangents of ``kernel``'s active outputs in terms of tangent leaves of its active inputs."""
    act = active_symbols(kernel, active)
    dot: dict = {}
    leaves: dict = {}
    reads: dict = {}
    for s, name in list(kernel.scalars.items()) + list(kernel.arrays.items()):
        if name in active:
            d = sp.Symbol(f"d:{s.name}", real=True)
            dot[s] = d
            leaves[d] = name
    for r in kernel.reads:
        if r.array in active:
            d = sp.Symbol(f"d:{r.symbol.name}", real=True)
            dot[r.symbol] = d
            reads[d] = (r.array, r.index)
    temps = dict(kernel.body)
    zeros: dict = {}
    for t, e in kernel.body:
        if isinstance(e, forms.RWrite) and e.args[0] not in dot and t in act:
            # an inactive array written with active values: its tangent starts at zero
            init = e.args[0]
            d = sp.Symbol(f"d:{init.name}", real=True)
            dot[init] = d
            zeros[d] = kernel.arrays.get(init) or kernel.scalars.get(init)
    for t, e in kernel.body:
        if t not in act:
            continue
        skipping = nan_skipping_extremum(e, temps)
        if skipping is not None:
            # one reduction's tangent, through its terms (the test red == red has none)
            te = _tangent(skipping, {u: d for u, d in dot.items() if u not in e.free_symbols}, act)
        else:
            te = _tangent(e, dot, act)
        if te is None or te == 0:
            continue
        dt = sp.Symbol(f"d:{t.name}", real=True)
        temps[dt] = te
        dot[t] = dt
    outs = [(o.name, dot[o.symbol]) for o in kernel.outputs if o.name in active and o.symbol in dot]
    return KernelJVP(temps, reads, leaves, outs, zeros)


def _tangent(e, dot: dict, act: set):
    if isinstance(e, forms.Reduction):
        body, k, lo, hi, st = e.args
        gdot = _tangent(body, dot, act) if not isinstance(body, sp.Symbol) else dot.get(body)
        if gdot is None or gdot == 0:
            return None
        if e.kind == "sum":
            return forms.RSum(gdot, k, lo, hi, st)
        if e.kind == "prod":
            return forms.RSum(gdot * forms.ProdExcept(body, k, lo, hi, st), k, lo, hi, st)
        sign = sp.Integer(1 if e.kind == "max" else -1)
        return forms.RSum(gdot * forms.ArgOneHot(body, k, lo, hi, st, sign), k, lo, hi, st)
    if isinstance(e, forms.ElemSum):
        body = e.args[0]
        gdot = _tangent(body, dot, act) if not isinstance(body, sp.Symbol) else dot.get(body)
        return None if gdot is None or gdot == 0 else forms.ElemSum(gdot)
    if isinstance(e, forms.LogSumExp):
        c, g, k, lo, hi, st = e.args
        gdot, cdot = _tangent(g, dot, act), _tangent(c, dot, act)
        out = sp.Integer(0)
        if gdot is not None and gdot != 0:
            out += forms.RSum(gdot * sp.exp(g - e), k, lo, hi, st)
        if cdot is not None and cdot != 0:
            out += cdot * sp.exp(-e)
        return out
    if isinstance(e, forms.RLin):
        a, g, k, lo, hi, st = e.args
        adot = dot.get(a) if isinstance(a, sp.Symbol) else _tangent(a, dot, act)
        gdot = dot.get(g) if isinstance(g, sp.Symbol) else _tangent(g, dot, act)
        drive = (gdot or sp.Integer(0)) + (adot * forms.LinState(a, g, k, lo, hi, st) if adot else 0)
        return None if drive == 0 else forms.RLin(a, drive, k, lo, hi, st)
    if isinstance(e, scans.LinScan):
        a, g, k, lo, hi, st, init = e.args
        adot, gdot, idot = (dot.get(x) if isinstance(x, sp.Symbol) else _tangent(x, dot, act) for x in (a, g, init))
        drive = (gdot or sp.Integer(0)) + (adot * e if adot else 0)
        if drive == 0 and not idot:
            return None
        return scans.LinScan(a, drive, k, lo, hi, st, idot or sp.Integer(0))
    if isinstance(e, forms.RWrite):
        init, body, k, lo, hi, st, *idx = e.args
        gdot = dot.get(body) if isinstance(body, sp.Symbol) else _tangent(body, dot, act)
        idot = dot.get(init)
        if gdot is None and idot is None:
            return None
        return forms.RWrite(idot, gdot if gdot is not None else sp.Integer(0), k, lo, hi, st, *idx)
    total = sp.Integer(0)
    for u in sorted(e.free_symbols & set(dot), key=str):
        if u not in act and u not in dot:
            continue
        d = tidy(derivative(e, u))
        if d != 0:
            total += d * dot[u]
    return total

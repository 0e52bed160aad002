"""One reciprocal per divisor a fused loop's iteration divides by more than once.

A derivative's terms share denominators: Black-Scholes' adjoint divides by ``σ√τ`` in ``d1``, by ``√π σ`` in
two vegas, by ``√π √τ σ²`` and ``√π S √τ σ`` in others, nine divisions an element where the hand-written loop
takes two.  A division costs several multiplications' throughput (``divsd``: about 4-5 cycles against
0.5-1), and Numba's loop body computes each as it is printed (no fast-math: LLVM may not rewrite ``a/(b*c)``).

Here the loop's expressions (its targets and the temporaries they read) have every power ``b**e`` of a negative
exponent, ``b`` a value of the iteration or a constant like ``π`` (not a number), read by two or more terms, rewritten
as a power of one new temporary ``inv_b = 1 / b**-u`` (``u`` the exponent nearest zero among them; each ``e`` a
whole multiple of it): the iteration divides by ``b`` once and multiplies after -- where that leaves fewer
divisions an iteration (a constant's reciprocal is folded by the compiler: none).  Each product then rounds
differently from its quotient, by a few units in the last place (black_scholes' gradient: 5e-15 of its
largest element); no fast-math flag is involved and NaN and infinity go through as IEEE 754 says (``x·(1/0)``
is ``x/0``'s infinity, ``0·(1/0)`` its NaN).
"""

from __future__ import annotations

from collections import Counter

import sympy as sp


def shared_reciprocals(exprs, temps: dict) -> tuple[dict, dict]:
    """``(powers, temps)`` for the expressions ``exprs`` of a loop body whose temporaries are ``temps`` (a symbol
    -> its expression, expanded where read): ``powers`` maps each power to rewrite to a power of its
    reciprocal temporary (a symbol), the second dict that symbol to ``1 / b**-u``.  Both empty where sharing
    would not divide fewer times: a product divides once however many divisors it has, so a reciprocal
    saves only the products left with no other divisor (brachistochrone's ``2 dy / (s (v' + v))`` and
    ``√2 √-gy s / (y (v' + v)²)`` share ``v' + v`` but divide by ``s`` and ``y`` anyway)."""
    sites: list[tuple] = []          # each division the body makes: the bases it divides by
    exponents: dict = {}
    for x in _nodes(exprs, temps):
        divisors = [p for p in x.args if _divisor(p)]
        for p in divisors:
            exponents.setdefault(p.base, set()).add(p.exp)
        if isinstance(x, sp.Mul) and divisors:
            sites.append(tuple(p.base for p in divisors))
        else:
            sites += [(p.base,) for p in divisors]
    uses = Counter(b for site in sites for b in site)
    shared = {b for b, n in uses.items() if n >= 2 and all((e / max(exponents[b])).is_Integer for e in exponents[b])}
    after = sum(1 for b in shared if b.free_symbols) + sum(1 for site in sites if not set(site) <= shared)
    if not shared or after >= len(sites):
        return {}, {}
    powers: dict = {}
    made: dict = {}
    for base in sorted(shared, key=str):
        unit = max(exponents[base])                  # (the negative exponent nearest zero)
        inv = sp.Symbol(f"inv:{base}")
        # 1 / b**-u: the root a term reads as it is (√τ) is the one the reciprocal divides by, computed once
        made[inv] = sp.Pow(sp.Pow(base, -unit), -1, evaluate=False)
        for e in exponents[base]:
            powers[sp.Pow(base, e)] = inv if e == unit else sp.Pow(inv, e / unit)
    return powers, made


def _nodes(exprs, temps: dict) -> list:
    """Every node the expressions reach, each once, the temporaries they read expanded."""
    seen: set = set()
    out: list = []
    stack = [e for e in exprs if isinstance(e, sp.Basic)]
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        out.append(x)
        if isinstance(x, sp.Symbol) and x in temps and isinstance(temps[x], sp.Basic):
            stack.append(temps[x])
        stack.extend(x.args)
    return out


def _divisor(a) -> bool:
    return isinstance(a, sp.Pow) and a.exp.is_Rational and a.exp.is_negative and not a.base.is_Number

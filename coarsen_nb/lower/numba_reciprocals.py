"""One reciprocal per divisor a fused loop's iteration divides by more than once.

A derivative's terms share denominators: Black-Scholes' adjoint divides by ``σ√τ`` in ``d1``, by ``√π σ`` in
two vegas, by ``√π √τ σ²`` and ``√π S √τ σ`` in others, nine divisions an element where the hand-written loop
takes two.  A division costs several multiplications' throughput (``divsd``: about 4-5 cycles against
0.5-1), and Numba's loop body computes each as it is printed (no fast-math: LLVM may not rewrite ``a/(b*c)``).

Here the loop's expressions (its targets and the temporaries they read) have every power ``b**e`` of a negative
exponent, ``b`` a value of the iteration or a constant like ``π`` (not a number), read by two or more terms, rewritten
as a power of one new temporary ``inv_b = b**u`` (``u`` the exponent nearest zero among them; each ``e`` a
whole multiple of it): the iteration divides by ``b`` once and multiplies after.  Each product then rounds
differently from its quotient, by a few units in the last place (black_scholes' gradient: 5e-15 of its
largest element); no fast-math flag is involved and NaN and infinity go through as IEEE 754 says (``x·(1/0)``
is ``x/0``'s infinity, ``0·(1/0)`` its NaN).
"""

from __future__ import annotations

from collections import Counter

import sympy as sp


def shared_reciprocals(body, exprs) -> tuple[dict, dict]:
    """``(powers, temps)`` for the expressions ``exprs`` of a loop over :class:`~coarsen_nb.lower.fusion_domain.
    Body` ``body``: ``powers`` maps each power to rewrite to a power of its reciprocal temporary (a symbol),
    ``temps`` that symbol to ``b**u``.  Both empty where no divisor is shared."""
    seen: set = set()
    uses: Counter = Counter()
    exponents: dict = {}
    for e in exprs:
        for x in body.nodes(e):
            if x in seen or not isinstance(x, sp.Basic):
                continue
            seen.add(x)
            for a in x.args:
                if _divisor(a):
                    uses[a.base] += 1
                    exponents.setdefault(a.base, set()).add(a.exp)
    powers: dict = {}
    temps: dict = {}
    for base, count in uses.items():
        if count < 2:
            continue
        unit = max(exponents[base])                  # (the negative exponent nearest zero)
        if not all((e / unit).is_Integer for e in exponents[base]):
            continue
        inv = sp.Symbol(f"inv:{base}")
        # 1 / b**-u: the root a term reads as it is (√τ) is the one the reciprocal divides by, computed once
        temps[inv] = sp.Pow(sp.Pow(base, -unit), -1, evaluate=False)
        for e in exponents[base]:
            powers[sp.Pow(base, e)] = inv if e == unit else sp.Pow(inv, e / unit)
    return powers, temps


def _divisor(a) -> bool:
    return isinstance(a, sp.Pow) and a.exp.is_Rational and a.exp.is_negative and not a.base.is_Number

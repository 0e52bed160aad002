"""The streaming log-sum-exp loop as a closed form.

The overflow-safe way to write log Σ exp(a_k) in one pass keeps a running
maximum m and a sum s scaled by it::

    if a > m:
        s = s * exp(m - a) + 1.0
        m = a
    else:
        s += exp(a - m)

Each μ alone has no closed form for s (its update reads m), so the loop was
iterated point by point.  Together they keep one invariant, s·e^m =
s₀·e^{m₀} + Σ_{j<k} e^{a_j}, checked here symbolically on both branches; so
after the loop m_N = max(m₀, max a) (the max form) and

    s_N = exp(L − m_N),   L = log(s₀·e^{m₀} + Σ_k e^{a_k})  (a LogSumExp)

and the usual ``m + log(s)`` simplifies to L.  The derivative follows from
the forms: the softmax of L and the arg-max of m_N.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi.forms import LogSumExp


def pair(value_m, value_s, m, s, a) -> bool:
    """Whether μ updates ``value_m`` (a max of state ``m`` and ``a``) and ``value_s`` of state ``s``
    are the streaming log-sum-exp: the same predicate, and s·e^m gains e^a on both branches."""
    if not (isinstance(value_m, sp.Piecewise) and isinstance(value_s, sp.Piecewise)):
        return False
    if len(value_m.args) != 2 or len(value_s.args) != 2:
        return False
    want = s * sp.exp(m) + sp.exp(a)
    for (em, cm), (es, cs) in zip(value_m.args, value_s.args, strict=True):
        if cm != cs:
            return False
        d = sp.expand(es * sp.exp(em) - want)
        if d != 0 and sp.simplify(d) != 0:
            return False
    return True


def closed_form(kb, name, a, init_s, init_m, eta_m, k, rng):
    """s_N = exp(L − m_N) with L = log(s₀·e^{m₀} + Σ_k e^{a_k})."""
    start, stop, step = rng
    lse = kb.temp(f"lse:{name}", LogSumExp(init_s * sp.exp(init_m), a, k, start, stop, step))
    return sp.exp(lse - eta_m)

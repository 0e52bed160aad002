"""log(c + Σ_k exp(g_k)) → :class:`~coarsen_nb.phi.forms.LogSumExp`, and its max-shifted lowering.

(The same pass writes log(1 + exp(z)) as a guarded :class:`~coarsen_nb.phi.elementary.Softplus` where
lifting could not see it whole: its sum a temp of the kernel, on its own line or kept for reuse.)

A loop that sums exponentials and takes the log afterwards (a partition
function, a mixture's likelihood, a softmax's normalizer) lifts to
``log(c + sum(exp(g)))`` across two kernel temps.  Evaluated as written it
overflows as soon as some g_k passes ~709, and its derivative
exp(g_k)/Σ exp(g) is inf/inf there.  Recognized as one form, it is lowered
with the usual shift m = max(max_k g_k, log c):

    L = m + log(c·e^{-m} + Σ_k e^{g_k - m})

and differentiated as the softmax exp(g_k − L) (:mod:`coarsen_nb.symbolic.diff`),
whose terms are at most 1.  The recognition runs once per finished kernel,
so the lifted text shows ``logsumexp(...)`` and every later stage sees it.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from coarsen_nb.phi import elementary, forms, gammas


def recognize(body: list) -> list:
    """``body`` ([(symbol, expr)]) with each log(c + Σ_k exp(g_k)) written as a LogSumExp."""
    temps = dict(body)

    def resolve(x):
        return temps.get(x, x) if isinstance(x, sp.Symbol) else x

    def summed_exp(t):
        """(g, k, start, stop, step) if ``t`` is Σ_k exp(g_k), else None."""
        red = resolve(t)
        if not (isinstance(red, forms.RSum)):
            return None
        inner = resolve(red.args[0])
        scale = sp.Integer(1)
        if isinstance(inner, sp.Mul):     # SymPy pulls constants out: exp(2x - 1) = e⁻¹·exp(2x)
            exps = [f for f in inner.args if isinstance(f, sp.exp)]
            scale = inner / exps[0] if len(exps) == 1 else sp.Integer(-1)
            if not (scale.is_positive and scale.is_Number):
                return None
            inner = exps[0]
        if not isinstance(inner, sp.exp):
            return None
        g = inner.args[0] if scale == 1 else inner.args[0] + sp.log(scale)
        return (g, *red.args[1:5])

    def softplus(node):
        """Softplus(z) if ``node`` is log(1 + exp(z)) or log1p(exp(z)), read through temps (the sum on
        its own line, or its own SOI), else None."""
        arg = resolve(node.args[0])
        if isinstance(node, sp.log):
            if not (isinstance(arg, sp.Add) and len(arg.args) == 2 and any(elementary.is_one(t) for t in arg.args)):
                return None
            arg = resolve(arg.args[1] if elementary.is_one(arg.args[0]) else arg.args[0])
        return elementary.Softplus(arg.args[0]) if isinstance(arg, sp.exp) else None

    def rule(node):
        guarded = softplus(node)
        if guarded is not None:
            return guarded
        arg = node.args[0]
        if isinstance(node, elementary.Log1p):
            terms = [sp.Integer(1), arg]
        else:
            terms = list(arg.args) if isinstance(arg, sp.Add) else [arg]
        for i, t in enumerate(terms):
            found = summed_exp(t)
            if found is None:
                continue
            g, k, lo, hi, st = found
            c = sp.Add(*(terms[:i] + terms[i + 1:]))
            if k in c.free_symbols:
                continue
            return forms.LogSumExp(c, g, k, lo, hi, st)
        return node

    out = []
    for s, e in body:
        if isinstance(e, sp.Basic) and e.has(sp.log, elementary.Log1p):
            e = e.replace(lambda n: isinstance(n, (sp.log, elementary.Log1p)), rule)
            # each form its own temp: SymPy must never differentiate through its arguments
            for j, form in enumerate(sorted(e.atoms(forms.LogSumExp), key=str)):
                if form == e:
                    break
                t = sp.Symbol(f"lse{j + 1}:{s.name}", real=True)
                out.append((t, form))
                e = e.xreplace({form: t})
        out.append((s, e))
    return out


#: how many log-sum-exps :func:`lowered` and :func:`shift` remember (a kernel has a few, asked for dozens of times)
_REMEMBERED = 256


@lru_cache(maxsize=_REMEMBERED)
def lowered(e: forms.LogSumExp) -> sp.Expr:
    """The max-shifted expression of ``e`` in nodes the printer knows (RMax, RSum, γ).

    m = max(max_k g_k, log c) for c > 0, so c·e^{-m} = e^{min(0, log c - max g)} ≤ 1
    too (written with min, since SymPy would turn e^{log c - m} back into c·e^{-m});
    c = 0 contributes nothing (0·e^{-m} could be 0·inf); a negative c (outside
    what a sum of exponentials needs) is kept as c·e^{-m}.
    """
    g, k, lo, hi, st = e.args[1:]
    m, rest = shift(e)
    return m + sp.log(rest + forms.RSum(sp.exp(g - m), k, lo, hi, st))


@lru_cache(maxsize=_REMEMBERED)
def shift(e: forms.LogSumExp) -> tuple[sp.Expr, sp.Expr]:
    """``(m, r)`` of :func:`lowered`'s L = m + log(r + Σ_k e^{g_k - m}): the shift m, read from the maximum
    ``RMax(g, k, ...)``, and r = c·e^{-m} (a printer that computes the sum its own way needs them apart).

    Remembered, as :func:`lowered` is: a pure function of an immutable SymPy expression, which the nest
    analysis and the printers of one kernel ask for dozens of times (gmm: 76 calls, 4 expressions,
    0.1 s of SymPy's ``Max``/``Min``/``exp`` simplification each time)."""
    c, g, k, lo, hi, st = e.args
    top = forms.RMax(g, k, lo, hi, st)
    if c == 0:
        return top, sp.Integer(0)
    if c.is_positive:
        return sp.Max(top, sp.log(c)), sp.exp(sp.Min(0, sp.log(c) - top))
    m = gammas.Gamma((sp.Max(top, sp.log(c)), c > 0), (top, True))
    rest = gammas.Gamma((sp.exp(sp.Min(0, sp.log(c) - top)), c > 0), (sp.Integer(0), sp.Eq(c, 0)),
                        (c * sp.exp(-top), True))
    return m, rest

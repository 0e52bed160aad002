"""An SOI's adjoint under the numba fuser reads the log-sum-exps and reductions its forward already computed.

The NumPy backend prints an SOI's adjoint with the printer that printed its forward, so a value both need (a
log-sum-exp ``L`` and its softmax ``exp(g_k - L)``) is computed once and read twice.  The numba fuser builds
each part of an adjoint as a loop function of its own from the symbolic VJP, so the adjoint computed ``L``
again: gmm's ``log_norm`` over the K logits was a second nest with a row of K terms, their maximum, their
exponentials, their sum and a refill (its compile 0.15 s of a cold gradient's ~1.8 s), where the forward had
just assigned it to ``log_norm``.

:func:`read_forward_values` makes such an output a *leaf* of the adjoint: its value in the VJP's expressions is
replaced by the output's symbol, which the fused loops read as a parameter (the forward's variable).  Only a
number (not an array) whose value is a :class:`~coarsen_nb.phi.forms.LogSumExp` or a
:class:`~coarsen_nb.phi.forms.Reduction` (what a loop computes; a cheaper value is as cheap to compute again)
that the adjoint's expressions hold (a sum's adjoint does not read the sum: the kernel is left as it is),
and only an output the function has computed and still holds where the adjoint runs
(``ReverseSweep.forward_numbers``: an SOI at the top level of the function, not inside a loop or a branch, and,
in ``NAME_grad``, one a later step reads).  The value read is the one the forward computed from the same inputs:
the adjoint's numbers equal the recomputation's to rounding (``exp(g - L)`` where the row's softmax was
``exp(g - top) / total``, and ``L = top + log(total)``).
"""

from __future__ import annotations

import dataclasses

from coarsen_nb.phi import forms

#: the values worth reading rather than computing again: what a loop computes
_LOOP_VALUES = (forms.LogSumExp, forms.Reduction)


def read_forward_values(kernel, v, leaves: dict, computed: dict[str, str]):
    """``(kernel, v, leaves)`` for the adjoint of ``kernel`` (``v`` its VJP, ``leaves`` the adjoint's extra
    leaves, symbol -> (code, is array)) with each output of ``computed`` (SSA name -> the Python name holding
    it; numbers alone) whose value is a loop's read from that name instead (module docstring)."""
    values = dict(kernel.body)
    # (what the adjoint itself computes: its own temps and contributions, not the forward's temps it carries)
    adjoint = [e for s, e in v.temps.items() if s not in values] + [e for _, e in v.scalars + v.arrays] + \
        [sc[2] for sc in v.scatters]
    known: dict = {}        # the output's symbol -> (its value, the Python name holding it)
    for o in kernel.outputs:
        e = values.get(o.symbol)
        if o.name in computed and isinstance(e, _LOOP_VALUES) and \
                any(hasattr(x, "has") and x.has(e) for x in adjoint):
            known[o.symbol] = (e, computed[o.name])
    if not known:
        return kernel, v, leaves
    swap = {e: s for s, (e, _) in known.items()}

    def read(e):
        return e.xreplace(swap) if hasattr(e, "xreplace") else e

    body = [(s, read(e)) for s, e in kernel.body if s not in known]
    kernel = dataclasses.replace(kernel, body=body)
    v = dataclasses.replace(
        v, temps={s: read(e) for s, e in v.temps.items() if s not in known},
        scalars=[(n, read(e)) for n, e in v.scalars], arrays=[(n, read(e)) for n, e in v.arrays],
        scatters=[(sc[0], sc[1], read(sc[2]), *sc[3:]) for sc in v.scatters])
    return kernel, v, {**leaves, **{s: (code, False) for s, (_, code) in known.items()}}

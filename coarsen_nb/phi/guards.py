"""Guarding a closed form's loop-invariant operations that can fail by the loop being non-empty.

The transform over a gated loop that :mod:`coarsen_nb.phi.partial`'s predicates call for (see its
docstring: Python evaluates a loop body only when the loop runs).  It is apart from those predicates
because it builds gated nodes (:mod:`coarsen_nb.phi.gate`), and gate's loop-invariant code motion
asks the predicates: predicates ← gate ← this transform, no cycle.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.phi.gate import If, Let, Loop, defined_in
from coarsen_nb.phi.partial import fails_invariantly


def guard_invariant_failures(loop):
    """``loop`` (a counted :class:`~coarsen_nb.phi.gate.Loop`) with every operation of its body that can
    fail on loop-invariant operands wrapped as ``e if start < stop else 1.0`` (``>`` for a negative
    step; of a division, only its divisor), inner loops first.  A closed form computes such an ``e``
    once outside its sum; wrapped, it computes it only when the loop runs — as Python does.  The γ's
    derivative is a γ too, so the reverse sweep does not evaluate it either.  A loop without such an
    operation comes back unchanged."""

    info = loop.info
    if info.kind != "range" or not isinstance(info.step, ir.Const):
        return loop
    variant = defined_in(loop)
    nonempty = ir.Compare("<" if info.step.value > 0 else ">", info.start, info.stop)

    def expr(e: ir.Expr) -> ir.Expr:
        if fails_invariantly(e, variant) and isinstance(e, ir.BinOp) and e.op in ("/", "//", "%"):
            # only the divisor: `x[k] / (d if n > 0 else 1.0)` keeps the quotient an elementwise one
            return ir.BinOp(e.op, expr(e.left), ir.IfExp(nonempty, e.right, ir.Const(1.0)))
        if fails_invariantly(e, variant):
            return ir.IfExp(nonempty, e, ir.Const(1.0))
        return ir.map_children(e, expr)

    def region(nodes) -> tuple:
        out = []
        for n in nodes:
            if isinstance(n, Let):
                n = Let(n.name, expr(n.value), n.line) if not isinstance(n.value, ir.Update) else n
            elif isinstance(n, If):
                n = If(n.cond, region(n.then), region(n.orelse), n.gammas, n.line)
            else:
                n = guard_invariant_failures(n)
                n = Loop(n.label, n.info, n.mus, region(n.header), n.cond, region(n.body), n.etas)
            out.append(n)
        return tuple(out)

    return Loop(loop.label, info, loop.mus, region(loop.header), loop.cond, region(loop.body), loop.etas)


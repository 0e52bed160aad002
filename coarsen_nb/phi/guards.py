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


def guard_invariant_failures(loop, hoisted: list | None = None):
    """``loop`` (a counted :class:`~coarsen_nb.phi.gate.Loop`) with every operation of its body that can
    fail on loop-invariant operands wrapped as ``e if start < stop else 1.0`` (``>`` for a negative
    step; of a division, only its divisor), inner loops first.  A closed form computes such an ``e``
    once outside its sum; wrapped, it computes it only when the loop runs — as Python does.  The γ's
    derivative is a γ too, so the reverse sweep does not evaluate it either.  A loop without such an
    operation comes back unchanged.

    With ``hoisted`` (a list), a guarded divisor of this loop's own body (not of an inner loop's, whose
    guard may vary with this loop's index) is not written inline but appended there as
    ``Let(name, d if start < stop else 1.0)``, and the body divides by ``name``.  The caller computes
    those once before the loop, as one scalar each.  Selecting a divisor cannot fail, so this is
    safe wherever the division sits; and the division's quotient stays a plain ``x / name``.  Inline,
    the γ inside ``x / d`` reaches every predicate that compares the quotient (a clamp of it), and
    SymPy distributes it there into two copies of each predicate, one per arm of the guard."""

    info = loop.info
    if info.kind != "range" or not isinstance(info.step, ir.Const):
        return loop
    variant = defined_in(loop)
    nonempty = ir.Compare("<" if info.step.value > 0 else ">", info.start, info.stop)

    def guarded_divisor(d: ir.Expr) -> ir.Expr:
        g = ir.IfExp(nonempty, d, ir.Const(1.0))
        if hoisted is None:
            return g
        for let in hoisted:
            if let.value == g:
                return ir.Name(let.name)
        base = d.id if isinstance(d, ir.Name) else "divisor"
        hoisted.append(Let(f"{base}:nonempty{len(hoisted) + 1}", g, info.line))
        return ir.Name(hoisted[-1].name)

    def expr(e: ir.Expr) -> ir.Expr:
        if fails_invariantly(e, variant) and isinstance(e, ir.BinOp) and e.op in ("/", "//", "%"):
            # only the divisor: `x[k] / (d if n > 0 else 1.0)` keeps the quotient an elementwise one
            return ir.BinOp(e.op, expr(e.left), guarded_divisor(e.right))
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


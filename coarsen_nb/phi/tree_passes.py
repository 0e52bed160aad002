"""The passes over a gated tree between gating and lifting: the ηs nobody reads dropped, loop invariants hoisted.

:func:`~coarsen_nb.phi.gate.gate` gives every value of a loop an η (its value after the loop) and leaves
each Let where the user wrote it.  Before the lifter sees the tree (``hoist_invariants(prune_etas(
gate(ssa)))`` in :mod:`coarsen_nb.runtime`), the ηs that nothing reads are dropped, so that only the
values used after a loop are its results, and the Lets of a loop body that read nothing
the loop defines move before the loop, so that a loop with such a step (``len(x)``, ``dot`` of
invariants) can still have a closed form.  Both keep the tree's post-condition
(:func:`~coarsen_nb.phi.gate.verify_tree`).
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, defined_in, names_read
from coarsen_nb.phi.partial import cannot_raise


def prune_etas(g: GatedFunction) -> GatedFunction:
    """Drop η definitions nobody reads (every loop value got one by default)."""
    used = set(ir.names_used(g.result)) | set(names_read(g.body))

    def strip(nodes) -> tuple:
        out = []
        for n in nodes:
            if isinstance(n, If):
                n = If(n.cond, strip(n.then), strip(n.orelse), n.gammas, n.line)
            elif isinstance(n, Loop):
                n = Loop(n.label, n.info, n.mus, n.header, n.cond, strip(n.body),
                         tuple(e for e in n.etas if e.name in used))
            out.append(n)
        return tuple(out)

    return GatedFunction(g.name, g.params, strip(g.body), g.result, g.source, g.words)


def hoist_invariants(g: GatedFunction) -> GatedFunction:
    """Loop-invariant code motion: move Lets whose operands are all defined outside
    a loop (``len(x)``, ``x.shape``, ``dot`` of invariants, ...) to just before it.

    It lets a loop with such a step in its body still have a closed form, and
    saves the work per iteration.  Every IR value is pure, but a hoisted Let
    also runs when the loop runs zero times, so only a Let that cannot raise is
    moved (:mod:`coarsen_nb.phi.partial`): ``math.sqrt(a - 2.0)`` in the body of
    a loop that never runs must not raise the ValueError Python never raises.
    """
    shapes = {n.name for n in _all_lets(g.body) if isinstance(n.value, ir.Attr) and n.value.attr == "shape"}

    def region(nodes) -> tuple:
        out: list = []
        for n in nodes:
            if isinstance(n, If):
                out.append(If(n.cond, region(n.then), region(n.orelse), n.gammas, n.line))
            elif isinstance(n, Loop):
                body = region(n.body)
                header = n.header
                inner = defined_in(n)
                moved: list = []
                changed = True
                while changed:
                    changed = False
                    keep = []
                    for m in body:
                        if isinstance(m, Let) and not (set(ir.names_used(m.value)) & inner) and \
                                cannot_raise(m.value, shapes):
                            moved.append(m)
                            inner.discard(m.name)
                            changed = True
                        else:
                            keep.append(m)
                    body = keep
                out += moved
                out.append(Loop(n.label, n.info, n.mus, header, n.cond, tuple(body), n.etas))
            else:
                out.append(n)
        return tuple(out)

    return GatedFunction(g.name, g.params, region(g.body), g.result, g.source, g.words)


def _all_lets(nodes) -> list[Let]:
    """Every Let of the region ``nodes``, at any depth."""
    out: list[Let] = []
    for n in nodes:
        if isinstance(n, Let):
            out.append(n)
        elif isinstance(n, If):
            out += _all_lets(n.then) + _all_lets(n.orelse)
        else:
            out += _all_lets(n.header) + _all_lets(n.body)
    return out

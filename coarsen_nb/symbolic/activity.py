"""Activity analysis: which SSA values of a plan depend on a differentiated parameter.

The lowering (both sweeps), the SOI report and the tests ask it; it reads only
the plan and the SOIs' symbolic bodies, so it sits with the differentiation and
not in :mod:`coarsen_nb.lower` (which :mod:`coarsen_nb.soi` must not import).
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.plan import CondStep, KernelStep, Plan, PrimStep
from coarsen_nb.rules.table import PRIMITIVES
from coarsen_nb.symbolic.diff import active_symbols


def active_names(plan: Plan, wrt: tuple[str, ...]) -> set[str]:
    """SSA values that depend on a differentiated parameter (activity analysis)."""
    active = set(wrt)

    def float_typed(name: str) -> bool:
        t = plan.types.get(name)
        return t is not None and t.kind in ("float", "tuple")

    def walk(steps) -> bool:
        changed = False
        for s in steps:
            if isinstance(s, KernelStep):
                if set(s.kernel.inputs) & active:
                    varying = active_symbols(s.kernel, active)
                    for o in s.kernel.outputs:
                        if float_typed(o.name) and o.name not in active and o.symbol in varying:
                            active.add(o.name)
                            changed = True
            elif isinstance(s, PrimStep):
                if differentiable_prim(s.expr) and set(ir.names_used(s.expr)) & active and float_typed(s.name) \
                        and s.name not in active:
                    active.add(s.name)
                    changed = True
            elif isinstance(s, CondStep):
                changed |= walk(s.then) | walk(s.orelse)
                for name, a, b in s.gammas:
                    if (set(ir.names_used(a)) | set(ir.names_used(b))) & active and float_typed(name) \
                            and name not in active:
                        active.add(name)
                        changed = True
            else:
                for name, init, nxt in s.mus:
                    if (set(ir.names_used(init)) | set(ir.names_used(nxt))) & active and float_typed(name) \
                            and name not in active:
                        active.add(name)
                        changed = True
                changed |= walk(s.header) | walk(s.body)
                for out, mu in s.etas:
                    if mu in active and out not in active:
                        active.add(out)
                        changed = True
        return changed

    while walk(plan.steps):
        pass
    return active


def differentiable_prim(e: ir.Expr) -> bool:
    """Whether an opaque step can carry a derivative (constructors, shapes and lengths cannot).

    Both sweeps ask it (the VJP in :mod:`coarsen_nb.lower.module`, the JVP in
    :mod:`coarsen_nb.lower.tangent`), and the activity analysis below.
    """
    if isinstance(e, ir.Call):
        p = PRIMITIVES.get(e.func)          # the registration's fact (a bound check carries its value's)
        return p is None or p.differentiable
    return not isinstance(e, ir.Attr)

"""Reuse-centric SOI selection: the knobs and what they mean.

Selection is split between the lifter and one pure pass.  The lifter (:mod:`coarsen_nb.phi.lift`)
finds the *runs* — what can share one SOI, which is only known once a loop or a branch has been lifted —
and lifts each run once; the size cap is then a pure pass over the run's numbers
(:func:`coarsen_nb.soi.partition.partition`), which never lifts anything:

* a straight-line value joins the open SOI, which grows up to the size
  cap **L** (``max_soi`` operations); when a value would take it past L,
  the run is split after the value read most often inside it (that value
  is materialized once instead of inlined into each user), growing restarts
  after the cut, and neighbouring pieces are merged again while the merged
  SOI has at most L operations;
* a value read more than **R** times (``reuse``) stays a named temp of its
  SOI — materialized once — instead of being substituted into its users, so
  its derivative is taken once (no swell, no reuse deprivation);
* an opaque primitive (``dot``, array reductions, gathers of rows, writes
  outside closed-form loops), a real branch and an iterated loop are SOI
  boundaries;
* ``L = 1`` is operator-level AD, ``per_block`` keeps SOIs inside one basic
  block (no φ crossed), ``L = R = ∞`` makes every region one SOI.

This module numbers the SOIs of a plan and says which setting a knob
combination means.
"""

from __future__ import annotations

import math

from coarsen_nb import ir
from coarsen_nb.frontend.unbound import is_bound_check
from coarsen_nb.plan import CondStep, IterStep, KernelStep, Plan, PrimStep, names_read

#: The defaults, chosen by the (L, R) grid benchmark on kernels/ (see README).  R = 1: a value read
#: twice is computed once; in scalar loops SymPy's CSE does not always find the inlined copies again
#: (bgd_hyperopt recomputed lr*g/m for w - dw and |dw|: 1.4x slower at R = 2).
DEFAULT_MAX_SOI = None
DEFAULT_REUSE = 1


def mode_of(max_soi, per_block: bool) -> str:
    """The lifting mode a knob setting selects."""
    if max_soi == 1:
        return "operator"
    return "block" if per_block else "phi"


def number_kernels(plan: Plan) -> None:
    """Give every SOI of ``plan`` its index, in program order (1, 2, ...)."""
    for k, kern in enumerate(plan.kernels(), start=1):
        kern.index = k


def describe(max_soi, reuse, per_block: bool) -> str:
    """A one-line description of a selection, for reports and widgets."""
    mode = mode_of(max_soi, per_block)
    if mode == "operator":
        return "L = 1 (operator-level AD)"
    if mode == "block":
        return "per-block (SOIs never cross a φ)"
    cap = "∞" if max_soi is None or max_soi == math.inf else str(max_soi)
    r = "∞" if reuse is None or reuse == math.inf else str(reuse)
    return f"L = {cap}, R = {r}"


def prune(plan: Plan) -> Plan:
    """Drop SOI outputs and opaque steps whose values nothing reads (e.g. a loop counter's start
    once the loop became a closed form), so the generated code has no dead assignments."""
    while True:
        used = names_read(plan.steps) | set(ir.names_used(plan.result))
        changed = False

        def walk(steps, used=used) -> tuple:
            nonlocal changed
            out = []
            for s in steps:
                if isinstance(s, KernelStep):
                    outs = tuple(o for o in s.kernel.outputs if o.name in used)
                    if len(outs) != len(s.kernel.outputs):
                        changed = True
                        s.kernel.outputs = outs
                    if outs:
                        out.append(s)
                elif isinstance(s, PrimStep):
                    if s.name in used or is_bound_check(s.expr):     # Python raises at an unused read too
                        out.append(s)
                    else:
                        changed = True
                elif isinstance(s, CondStep):
                    out.append(CondStep(s.cond, walk(s.then), walk(s.orelse), s.gammas, s.line))
                else:
                    out.append(IterStep(s.label, s.mus, walk(s.header), s.cond, walk(s.body), s.etas, s.line,
                                        s.note))
            return tuple(out)

        plan.steps = walk(plan.steps)
        if not changed:
            return plan

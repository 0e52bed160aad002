"""Reuse-centric SOI selection: the knobs and what they mean.

The selection itself happens while lifting (:mod:`coarsen_nb.phi.lift`), in
one bottom-up pass over the region tree, because whether a loop or a branch
can join its neighbours is only known once it has been lifted:

* a straight-line value joins the open SOI; the SOI is closed when it
  reaches the size cap **L** (``max_soi`` operations);
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

from coarsen_nb.plan import Plan

#: The defaults, chosen by the (L, R) grid benchmark on kernels/ (see README).
DEFAULT_MAX_SOI = None
DEFAULT_REUSE = 2


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

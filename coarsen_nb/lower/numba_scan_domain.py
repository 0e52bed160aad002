"""Which targets of an SOI one numba ``scan`` pass computes: the ``scan`` domain (:func:`scan_domain`).

:mod:`coarsen_nb.lower.numba_scans` prints an SOI whose loop carries a linear recurrence as sequential loops
(a forward pass in k's order; for an adjoint, a reverse pass carrying the costates).  This is the test before
it, apart from the printing: every scan, costate and sum over one loop index k and its whole range (step 1),
each target a sum or a scatter at k, each state's coefficients read only this step's data, and the sums
nested only where the forward pass completes the inner one before the reverse pass reads it
(:func:`forward_sum`: asian_option's branch on a path's average).  Where it fails the fuser goes on as
before, array code for the scans.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower.domain import Domain, Target
from coarsen_nb.lower.fusion_domain import NOT_ONE_PASS, Body
from coarsen_nb.lower.nest_analysis import nodes_outside_reductions
from coarsen_nb.phi import forms
from coarsen_nb.phi.scans import LinCostate, LinScan


def scan_domain(body: Body, targets: list[Target]) -> Domain | None:
    """The ``scan`` domain of all of ``targets``: one loop index k, every scan and sum over k's whole range
    (step 1); None where one of them does not fit (see the module docstring)."""
    nodes = [n for t in targets for n in body.nodes(t.expr)]
    nodes += [n for t in targets for i in t.index for n in body.nodes(sp.sympify(i))]
    states = {n for n in nodes if isinstance(n, (LinScan, LinCostate))}
    if not states or any(isinstance(n, NOT_ONE_PASS) for n in nodes):
        return None
    ranges = {(n.args[2], *n.args[3:6]) for n in states}
    sums = {n for n in nodes if isinstance(n, (forms.Reduction, forms.ElemSum))}
    ranges |= {tuple(n.args[1:5]) for n in sums if isinstance(n, forms.Reduction)}
    if len(ranges) != 1 or any(not isinstance(n, forms.Reduction) or n.kind != "sum" for n in sums):
        return None
    ((k, *bounds),) = ranges
    if sp.sympify(bounds[2]) != 1 or any(k in body.deps(b) for b in bounds):
        return None
    costates = {n for n in states if isinstance(n, LinCostate)}
    for n in sums:
        inner = [m for m in body.nodes(n.args[0]) if isinstance(m, (forms.Reduction, forms.ElemSum)) and m != n]
        # a sum inside a sum (or a costate) is computed in the forward pass, and read by the reverse one:
        # a sum of the forward states alone, one level (asian_option's payoff branch on the path's average)
        if inner and (not costates or not all(forward_sum(body, m) for m in inner)):
            return None
        if body.deps(n.args[0]) - {k}:
            return None
    for t in targets:
        if t.mode == "scatter":
            # (a sequential loop adds each step's contribution in turn: any index of k will do)
            varies = body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index))
            if varies - {k} or (t.level is not None and set(t.level) != {k}):
                return None
            if any(n in states or isinstance(n, forms.Reduction) for i in t.index for n in body.nodes(sp.sympify(i))):
                return None
            if any(isinstance(n, forms.Reduction) and not (costates and forward_sum(body, n))
                   for n in body.nodes(t.expr)):
                return None                     # a sum inside a scatter's value: not one pass (but for the
                                                # reverse pass's scatters, a sum the forward pass completes)
        elif body.deps(t.expr) or any(n in states for n in nodes_outside_reductions(body, t.expr)):
            return None                         # a target varying over k, or a state outside the sums
    for n in states:
        a, b = n.args[:2]
        init = n.args[6] if isinstance(n, LinScan) else sp.Integer(0)
        if k in body.deps(init) or any(isinstance(m, (LinScan, LinCostate, forms.Reduction))
                                       for m in body.nodes(init)):
            return None
        if body.deps(a) - {k} or body.deps(b) - {k}:
            return None
        read = {m for m in body.nodes(a) + body.nodes(b) if m in states and m != n}
        if isinstance(n, LinScan) and read & costates:
            return None                         # a forward state reading a costate: not one forward pass
        if isinstance(n, LinScan) and any(isinstance(m, forms.Reduction) for m in body.nodes(a) + body.nodes(b)):
            return None                         # a forward state reading a sum, complete only after the pass
        if isinstance(n, LinCostate) and any(isinstance(m, forms.Reduction) and not forward_sum(body, m)
                                             for m in body.nodes(a) + body.nodes(b)):
            return None                         # a costate reading a sum the reverse pass is still adding
        if any(m in costates for m in body.nodes(a)):
            return None
    return Domain("scan", tuple(targets), index=k, bounds=tuple(bounds))


def forward_sum(body: Body, n) -> bool:
    """Whether the sum ``n`` is computed in the forward pass of an adjoint's scan: a sum over k of the forward
    states (no costate) and no other sum in it."""
    return isinstance(n, forms.Reduction) and not any(
        isinstance(m, (LinCostate, forms.Reduction, forms.ElemSum)) for m in body.nodes(n.args[0]) if m != n)

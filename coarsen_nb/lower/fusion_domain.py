"""Which targets of an SOI vary over one loop domain: the analysis every fuser shares.

A target is a value an SOI produces (an output, or an adjoint contribution of its VJP, added in place or
scattered); :class:`Body` is what the targets of one SOI see (its temps, element reads and leaves);
:func:`domain` is the one domain a set of targets shares (a :class:`~coarsen_nb.lower.domain.Domain`
record: the elements, the loop index of one reduction, or the loop index of scatters),
or None; :func:`rows_domain` is the row contraction one target of the numba fuser may be (a ``rows``
domain, which the CuPy fuser does not schedule).  The CuPy fuser (:mod:`coarsen_nb.lower.fusion`) makes one kernel
per domain, the numba fuser (:mod:`coarsen_nb.lower.numba_fusion`) one compiled loop.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower.domain import Domain, Reduce, Target, arrays_read, loop_nesting
from coarsen_nb.phi import forms, scans
from coarsen_nb.symbolic.levels import ELEM, Deps

# Nodes a fused kernel cannot express in one pass: they need another level of
# the domain (segment products, arg-extrema, writes, gathers); and the scans, which only a sequential
# loop runs (``lower/numba_scans.py``).
NOT_ONE_PASS = (forms.RWrite, forms.ProdExcept, forms.ArgOneHot, forms.Gather, forms.Unwritten, forms.RLin,
                forms.ProdAfter, forms.LinState, forms.LogSumExp)
_UNFUSABLE = NOT_ONE_PASS + scans.SCAN_FORMS


class Body:
    """The temps, reads and leaves one fused kernel sees."""

    def __init__(self, kernel, names, extra_leaves=None, extra_temps=None):
        self.kernel = kernel
        self.names = names
        self.temps = dict(kernel.body)
        self.temps.update(extra_temps or {})
        self.reads = {r.symbol: (r.array, r.index) for r in kernel.reads}
        # leaf symbol -> (python code, SSA name or None, is_array, T or None)
        self.leaves: dict = {}
        for s, n in kernel.scalars.items():
            self.leaves[s] = (names(n), n, False, kernel.types.get(n))
        for s, n in kernel.arrays.items():
            self.leaves[s] = (names(n), n, True, kernel.types.get(n))
        for s, (code, is_array) in (extra_leaves or {}).items():
            self.leaves[s] = (code, None, is_array, None)
        arrays = {s for s, v in self.leaves.items() if v[2]}
        self.deps = Deps(self.temps, self.reads, lambda s: s in arrays)

    def nodes(self, e, outside=None, stops=()):
        """Every node reachable from ``e``, temps expanded (each temp visited once); ``outside``: not
        the node ``outside`` or what is under it; ``stops``: nor those nodes or what is under them."""
        seen, out, stack = set(), [], [sp.sympify(e)]
        while stack:
            x = stack.pop()
            if x in seen or x == outside or x in stops:
                continue
            seen.add(x)
            out.append(x)
            if isinstance(x, sp.Symbol) and x in self.temps:
                stack.append(self.temps[x])
            elif isinstance(x, sp.Symbol) and x in self.reads:
                stack.extend(sp.sympify(i) for i in self.reads[x][1])
            else:
                stack.extend(x.args)
        return out

    def expand(self, e):
        """``e`` with every temp substituted (for loop bounds printed in Python)."""
        e = sp.sympify(e)
        for _ in range(100):
            f = e.xreplace({s: self.temps[s] for s in e.free_symbols if s in self.temps})
            if f == e:
                return e
            e = f
        raise RecursionError("temps do not terminate")


def domain(body: Body, targets: list[Target], point_gathers: bool = False) -> Domain | None:
    """The one domain all targets share: their elements (``elem``, or ``elemsum`` for one target holding one
    ``ElemSum``), the loop of a single-reduction target (``reduce``) or the loop index of scatters
    (``scatter``); None if none fits.  ``point_gathers``: a :func:`point_gather` is one read at the loop's
    point, not a level of its own (the numba fuser's loops read it as ``b[k]``; the CuPy fuser does not)."""
    targets = tuple(targets)
    reductions, binders = set(), set()
    for t in targets:
        for n in body.nodes(t.expr):
            if isinstance(n, _UNFUSABLE) and not (point_gathers and point_gather(body, n)):
                return None
            if isinstance(n, (forms.Reduction, forms.ElemSum)):
                reductions.add(n)
        binders |= body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index))
    if reductions:
        if len(targets) != 1 or len(reductions) != 1 or targets[0].mode == "scatter":
            return None
        (red,) = reductions
        inner = [n for n in body.nodes(red.args[0]) if isinstance(n, (forms.Reduction, forms.ElemSum))]
        if inner:
            return None                     # nested reductions: more than one level
        if isinstance(red, forms.ElemSum):
            if body.deps(red.args[0]) - {ELEM}:
                return None
            return Domain("elemsum", targets, arrays_read(body, red.args[0]),
                          reduce=Reduce.of(red, _integer(body, red.args[0])))
        k = red.args[1]
        if body.deps(red.args[0]) - {k} or any(body.deps(b) for b in red.args[2:5]):
            return None
        if binders - {k}:
            return None
        return Domain("reduce", targets, index=k, bounds=tuple(red.args[2:5]),
                      reduce=Reduce.of(red, _integer(body, red.args[0])))
    if any(t.mode == "scatter" for t in targets):
        if not all(t.mode == "scatter" for t in targets) or len(binders) != 1:
            return None
        (k,) = binders
        if any(t.level is not None and set(t.level) != {k} for t in targets):
            return None
        if k not in body.deps.ranges:
            return None
        return Domain("scatter", targets, index=k, bounds=tuple(body.deps.ranges[k]))
    if binders != {ELEM}:
        return None
    return Domain("elem", targets, arrays_read(body, *(t.expr for t in targets)))


def point_gather(body: Body, node) -> bool:
    """Whether ``node`` is ``Gather(b, i(k), ...)`` of a whole array leaf ``b`` at indices of loop indices alone
    (the adjoint of a write ``w[k + 1] = g`` read back at the write's point, gmm's ``b_log_w[k]``): one
    element per point of the loop, as a read ``x[k + 1]`` is."""
    if not isinstance(node, forms.Gather):
        return False
    array = node.args[0]
    while isinstance(array, sp.Symbol) and array in body.temps:
        array = body.temps[array]
    leaf = body.leaves.get(array)
    return leaf is not None and leaf[2] and all(body.deps(sp.sympify(i)) <= set(body.deps.ranges)
                                                and not any(isinstance(n, _UNFUSABLE + (forms.Reduction,))
                                                            for n in body.nodes(i)) for i in node.args[1:])


def _integer(body: Body, e) -> bool:
    """Whether the reduced value ``e`` is an integer (NumPy then sums integers): one temp looked through."""
    e = body.temps.get(e, e) if isinstance(e, sp.Symbol) else e
    return bool(e.is_integer)


def rows_domain(body: Body, target: Target) -> Domain | None:
    """The row contraction ``target`` is, as a ``rows`` domain (outer index i, inner index j), or None.

    Either a scatter over two loop indices, ``b_w[j] += X[i, j] * g_i`` (the adjoint of ``X @ w``), or a
    value that holds one sum over i (``b_b += sum_i g_i``); in both the row's value ``g_i`` may hold sums
    (or products) over j of code that varies over i and j alone (``z_i = sum_j X[i, j] w[j]``), one level
    deep.  i's bounds vary over nothing, j's at most over i.  (The numba fuser asks this of a target
    :func:`domain` finds no domain for.)"""
    nodes = body.nodes(target.expr)
    if any(isinstance(n, _UNFUSABLE + (forms.ElemSum, forms.SumTo)) for n in nodes):
        return None
    reductions = [n for n in nodes if isinstance(n, forms.Reduction)]
    ranges = body.deps.ranges
    if target.mode == "scatter":
        binders = body.deps(target.expr).union(*(body.deps(sp.sympify(x)) for x in target.index))
        if ELEM in binders or len(binders) != 2 or not binders <= set(ranges):
            return None
        # the outer loop first: the sums' index is the inner one; else as the printer nests levels
        i, j = loop_nesting(body.deps, binders, inner={r.args[1] for r in reductions})
        if target.level is not None and set(target.level) != {i, j}:
            return None
        inner, bounds = reductions, tuple(ranges[i])
    else:
        outer = [r for r in reductions if any(isinstance(n, forms.Reduction) for n in body.nodes(r.args[0]))]
        if len(outer) != 1 or outer[0].kind != "sum" or body.deps(target.expr):
            return None
        (red,) = outer
        i, bounds = red.args[1], tuple(red.args[2:5])
        under = set(body.nodes(red.args[0]))
        inner = [r for r in reductions if r != red]
        if body.deps(red.args[0]) - {i} or not set(inner) <= under or not inner:
            return None
        j = inner[0].args[1]
        if j not in ranges:
            return None
    for r in inner:
        if r.args[1] != j or r.kind not in ("sum", "prod") or body.deps(r.args[0]) - {i, j} or \
                any(isinstance(n, forms.Reduction) for n in body.nodes(r.args[0])) or \
                any(body.deps(b) - {i} for b in r.args[2:5]):
            return None
    if i == j or any(body.deps(b) for b in bounds) or any(body.deps(b) - {i} for b in ranges[j]):
        return None
    return Domain("rows", (target,), index=i, bounds=bounds, inner=(j, tuple(ranges[j])))

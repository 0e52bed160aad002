"""The index-domain node: over which indices one fused piece of an SOI runs, what it computes there, and how
it reduces (issue 13, step 6 of ``notes/lowered-ir.md``).

An SOI's targets (its outputs, or its VJP's adjoint contributions) that vary over one domain are one piece of
work: "over the domain D, compute the targets, reduce with R".  :func:`coarsen_nb.lower.fusion_domain.domain`
finds D; this record says it, once, so that each printer *schedules* the same node its own way (the CuPy
fuser as one kernel, the numba fuser as one loop) instead of re-deriving the loop's index, bounds, arrays
and reduction from a tuple.  The kinds:

``elem``     the elements of the broadcast shape of the arrays ``arrays``; each target written per element;
``elemsum``  the same elements, summed (``ElemSum``): one target, the code around the sum in it;
``reduce``   a loop index ``index`` over ``range(*bounds)``, one ``RSum``/``RProd``/``RMax``/``RMin``;
``scatter``  a loop index over its range, every target a scatter ``b_x[i(k)] += g(k)``;
``loop``     a loop index over its range, each target a scatter or one reduction over the index (``reduces``:
             each target's, None for a scatter): the work of several ``reduce`` and ``scatter`` domains over
             the same loop in one pass (black_scholes's adjoint: the sum into ``b_r`` and the scatters);
``fill``     a loop index over ``range(0, n, 1)``, each target a new float array of length ``n`` that a write
             ``w[k] = g(k)`` fills whole (:func:`coarsen_nb.lower.trivial.whole_fills`): ``g`` stored at each k
             (gmm's ``log_w[k] = logits[k] - log_norm - log_sigma[k] - c``);
``scan``     a loop index whose steps carry linear recurrences (``LinScan``, and the reverse ``LinCostate``):
             its targets sums over the index and scatters ``b_x[k] += g(k)``, computed in sequential passes
             (:mod:`coarsen_nb.lower.numba_scans`);
``nest``     several nested loop indices (their ranges, as the loops of the source, in the SOI): number
             targets whose sums nest over them, or scatters varying over all of them
             (:mod:`coarsen_nb.lower.numba_nests`); no one index, so ``index`` and ``bounds`` are None;
``rows``     a loop index ``index`` (the rows) over ``range(*bounds)`` with an inner index ``inner``
             ``(j, (a, b, s))`` (the columns): a row contraction, the matrix–vector product ``X @ w``
             (sums over j inside a row's value) and its adjoint ``g @ X`` (scatters ``b_w[j] += ...`` over
             i and j), each target a scatter over (i, j) or one sum over i of such a row value.

The NumPy printer's *levels* (the points a value is an array over, :class:`~coarsen_nb.lower.printing.Level`)
are domains too, of the kinds of :data:`LEVEL_KINDS`, built by :func:`loop_level`; their values are printed at
them as the printer meets them, so their ``targets`` are empty.  ``over`` are the indices the enclosing points
vary over (outermost first; ``ELEM``: the elements) and ``outer`` the kind of those points (``root``, ``cond``:
the points of a scalar branch, ``elem``, or a level kind):

``range``    a loop index ``index`` over ``range(*bounds)`` at one point (the root, or inside a scalar
             ``if``): the index is ``arange(a, b, s)``;
``rect``     the same loop at each point of the enclosing points, its bounds varying over none of them (a
             rectangular nest: every point has the same count of the index, a ``repeat``/``tile`` table);
``segment``  the same loop at each point, its bounds varying over them (a triangular nest: one segment of
             the index per point, of its own length, a segmented reduction back);
``mask``     the enclosing points where the predicate ``where`` holds (a branch's arm, evaluated on its own
             points only: an index array of them, operands gathered with ``take``, results put back);
``point``    the one point of the loop ``index`` over ``range(*bounds)`` where ``where``, an ``ArgOneHot``,
             is 1 (a maximum's adjoint is its summand there: the argmax, at most one point per loop).

The record prints as text (``str``: ``over k in range(0, n): sum of x[k]**2  ->  s = sum``), and
:func:`verify` checks what every builder of one must leave (the tests run it on the domains of the corpus).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb.phi import forms
from coarsen_nb.symbolic.levels import ELEM

LEVEL_KINDS = ("range", "rect", "segment", "mask", "point")
KINDS = ("elem", "elemsum", "reduce", "scatter", "loop", "fill", "rows", "scan", "nest") + LEVEL_KINDS
_IDENTITY = {"sum": sp.Integer(0), "prod": sp.Integer(1), "max": -sp.oo, "min": sp.oo}


@dataclass
class Target:
    """One value a fused piece produces.

    ``mode``: ``"new"`` (a fresh output named ``target``), ``"add"``
    (``target += expr``, in place) or ``"scatter"`` (``target[index] += expr``).
    """

    target: str
    expr: sp.Expr
    mode: str = "new"
    index: tuple = ()
    level: object = None       # scatters: the loop indices the contribution varies over (diff's level)
    dtype: str = "float64"
    # ``add`` only: the array leaf whose shape the contribution is summed to before it is added (the
    # adjoint's ``SumTo(expr, x)``: ``target += _sum_to(expr, x.shape)``), or None
    sum_to: sp.Symbol | None = None

    def __str__(self) -> str:
        if self.mode == "scatter":
            return f"{self.target}[{', '.join(map(str, self.index))}] += {self.expr}"
        if self.sum_to is not None:
            return f"{self.target} += sum_to({self.expr}, {self.sum_to}.shape)"
        return f"{self.target} {'+=' if self.mode == 'add' else '='} {self.expr}"

    def whole(self) -> Target:
        """The target as the adjoint wrote it: its ``SumTo`` back in the expression (for a printer that
        computes the contribution as array code)."""
        if self.sum_to is None:
            return self
        return Target(self.target, forms.SumTo(self.expr, self.sum_to), self.mode, self.index, self.level,
                      self.dtype)


@dataclass(frozen=True)
class Reduce:
    """The one reduction of a domain: ``kind`` (``sum``/``prod``/``max``/``min``), its SymPy ``node``
    (an ``RSum``... over the loop index, or an ``ElemSum`` over the elements), the ``identity`` an
    accumulator starts from, and whether the operand is ``integer`` (NumPy then sums integers)."""

    kind: str
    node: sp.Expr
    identity: sp.Expr
    integer: bool = False

    @property
    def operand(self) -> sp.Expr:
        return self.node.args[0]

    @classmethod
    def of(cls, node, integer: bool = False) -> Reduce:
        kind = "sum" if isinstance(node, forms.ElemSum) else node.kind
        return cls(kind, node, _IDENTITY[kind], integer)


@dataclass(frozen=True, eq=False)
class Domain:
    """Over which indices ``targets`` are computed (see the module docstring for the kinds).

    ``arrays``: the codes of the whole arrays whose broadcast shape an elementwise domain runs over (sorted;
    an ``elemsum``'s: its operand's); ``index`` and ``bounds`` (SymPy ``(a, b, s)``, not depending on the
    index): a loop domain's; ``reduce``: the reduction, if any; ``inner``: a ``rows`` domain's inner index and
    its bounds ``(j, (a, b, s))`` (the bounds may depend on ``index``, never the other way).
    """

    kind: str
    targets: tuple[Target, ...]
    arrays: tuple[str, ...] = ()
    index: sp.Symbol | None = None
    bounds: tuple | None = None
    reduce: Reduce | None = None
    inner: tuple | None = None
    reduces: tuple = ()         # a ``loop`` domain's: each target's reduction, None for a scatter
    over: tuple = ()            # a level's: the indices its enclosing points vary over, outermost first
    outer: str | None = None    # a level's: the kind of its enclosing points (root, cond, elem, a level kind)
    where: sp.Basic | None = None   # a ``mask``'s predicate, a ``point``'s ``ArgOneHot``

    @property
    def elementwise(self) -> bool:
        """Over the elements of arrays (a flat pass), not over a loop index."""
        return self.kind in ("elem", "elemsum")

    def with_targets(self, targets) -> Domain:
        """The same domain computing ``targets`` (a fuser's group of targets that each have this domain)."""
        return Domain(self.kind, tuple(targets), self.arrays, self.index, self.bounds, self.reduce, self.inner,
                      self.reduces, self.over, self.outer, self.where)

    @property
    def segmented(self) -> bool:
        """A level whose points are numbered per enclosing point (``rect``, ``segment``): a value of the
        enclosing points is indexed by the segment map to be one at these."""
        return self.kind in ("rect", "segment")

    def __str__(self) -> str:
        if self.kind == "mask":
            return f"over the {self.outer} points (over {', '.join(map(str, self.over))}) where {self.where}"
        if self.elementwise:
            head = f"over the elements of {', '.join(self.arrays) or '(no array)'}"
        elif self.kind == "nest":            # (no one index: the loops are the targets' nested sums)
            head = "over nested loops"
        else:
            a, b, s = self.bounds
            head = f"over {self.index} in range({a}, {b}{'' if s == 1 else f', {s}'})"
            if self.inner is not None:
                j, (a, b, s) = self.inner
                head += f", {j} in range({a}, {b}{'' if s == 1 else f', {s}'})"
        if self.kind in LEVEL_KINDS:
            return head + _level_text(self)
        if self.reduce is not None:
            (t,) = self.targets
            around = t.expr.xreplace({self.reduce.node: sp.Symbol(self.reduce.kind)})
            return (f"{head}: {self.reduce.kind} of {self.reduce.operand}  ->  "
                    f"{Target(t.target, around, t.mode)}")
        lines = [str(t) for t in self.targets]
        return f"{head}: {lines[0]}" if len(lines) == 1 else "\n    ".join([f"{head}:", *lines])


def verify(dom: Domain, body) -> None:
    """Check the invariants of ``dom`` against the SOI ``body`` (a ``fusion_domain.Body``) it was built from:
    a known kind and some targets; one reduction at most, and then one target holding it whose operand
    holds no other, over the elements or over the loop index alone; a loop domain's bounds free of its
    index; a scatter domain's targets all scatters over its one index; an elementwise domain's arrays
    those its targets (its sum's operand) read.  Raises ``AssertionError`` naming the first offence."""
    if dom.kind not in KINDS:
        raise AssertionError(f"unknown domain kind {dom.kind!r}")
    if dom.kind in LEVEL_KINDS:
        _verify_level(dom, body)
        return
    if not dom.targets:
        raise AssertionError(f"a domain computes nothing: {dom.kind}")
    reducing = dom.kind in ("reduce", "elemsum")
    if (dom.reduce is not None) != reducing:
        raise AssertionError(f"a {dom.kind} domain {'without' if reducing else 'with'} a reduction")
    if dom.kind == "nest":
        for t in dom.targets:
            if t.mode != "scatter" and body.deps(t.expr):
                raise AssertionError(f"nest target {t} is not a number")
        return
    if dom.elementwise != (dom.index is None and dom.bounds is None):
        raise AssertionError(f"a {dom.kind} domain {'with' if dom.elementwise else 'without'} a loop index")
    if not dom.elementwise:
        if len(dom.bounds) != 3 or any(dom.index in body.deps(b) or dom.index in sp.sympify(b).free_symbols
                                       for b in dom.bounds):
            raise AssertionError(f"the bounds {dom.bounds} of the loop over {dom.index} depend on it")
    if (dom.inner is not None) != (dom.kind == "rows"):
        raise AssertionError(f"a {dom.kind} domain {'without' if dom.kind == 'rows' else 'with'} an inner index")
    if dom.kind == "rows":
        _verify_rows(dom, body)
    if reducing:
        _verify_reduction(dom, body)
    if dom.kind == "loop":
        _verify_loop(dom, body)
    if dom.kind == "scatter":
        if dom.bounds != tuple(body.deps.ranges.get(dom.index, ())):
            raise AssertionError(f"scatter bounds {dom.bounds} are not the range of {dom.index}")
        for t in dom.targets:
            if t.mode != "scatter":
                raise AssertionError(f"a scatter domain computes a non-scatter: {t}")
            if t.level is not None and set(t.level) != {dom.index}:
                raise AssertionError(f"scatter {t} varies over {t.level}, not {dom.index}")
            if body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index)) - {dom.index}:
                raise AssertionError(f"scatter {t} varies over more than {dom.index}")
    elif dom.kind == "fill":
        if str(dom.bounds[0]) != "0" or str(dom.bounds[2]) != "1":
            raise AssertionError(f"a fill over {dom.bounds}, not range(0, n)")
        for t in dom.targets:
            if t.mode != "new" or body.deps(t.expr) - {dom.index}:
                raise AssertionError(f"fill target {t} is not a new value at {dom.index}")
    elif dom.kind == "scan":
        for t in dom.targets:
            varies = body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index))
            if varies - ({dom.index} if t.mode == "scatter" else set()):
                raise AssertionError(f"scan target {t} varies over {varies}")
    elif dom.kind not in ("rows", "loop") and any(t.mode == "scatter" for t in dom.targets):
        raise AssertionError(f"a scatter in a {dom.kind} domain")
    if dom.kind == "elem":
        for t in dom.targets:
            if body.deps(t.expr) - {ELEM}:
                raise AssertionError(f"{t} varies over more than the elements")
    if dom.elementwise:
        exprs = [dom.reduce.operand] if dom.kind == "elemsum" else [t.expr for t in dom.targets]
        if dom.arrays != arrays_read(body, *exprs):
            raise AssertionError(f"the arrays {dom.arrays} are not those read: {arrays_read(body, *exprs)}")


def loop_nesting(deps, binders, inner=()) -> list:
    """The loop indices ``binders`` outermost first, as every printer nests their loops: a loop whose range
    reads another's inside it (``nest_depth``), then the loop made later outside (the lifted inner loops
    were made first); the indices of ``inner`` (a row contraction's sums) innermost.  The NumPy printer's
    levels (``Printer.level_for``), the numba nests (``nest_analysis.nest_order``) and the row contractions
    (``fusion_domain.rows_domain``) take their nesting from here.  ``deps``: the SOI's ``Deps``."""
    order = list(deps.ranges)
    return sorted(binders, key=lambda b: (b in inner, deps.nest_depth(b), -order.index(b)))


def loop_level(deps, index, bounds, outer: str, over) -> Domain:
    """The level of the loop ``index`` over ``range(*bounds)`` opened under points of kind ``outer`` that vary
    over the indices ``over`` (outermost first): one loop at one point (``range``: under the root, or points
    that vary over no index, as a scalar branch's arm there), a rectangular nest (``rect``: the bounds ``a``,
    ``b`` vary over none of ``over``) or a segment per point (``segment``).  ``deps(e)``: the indices ``e``
    varies over.  The one place the NumPy printer's loop levels are decided (``Printer._child`` prints what
    it says).

    A scalar branch's arm inside an array level (``c if v < a else v + i`` in a loop over i, v invariant:
    ``cond`` points that vary over i) has that level's points: a loop opened there runs at each of them, as
    under the array level itself (it was one loop at one point, which the printer reduced as segments of
    no segment map: an internal error)."""
    bounds, over = tuple(bounds), tuple(over)
    if outer == "root" or not over:
        kind = "range"
    else:
        kind = "segment" if (deps(bounds[0]) | deps(bounds[1])) & set(over) else "rect"
    return Domain(kind, (), index=index, bounds=bounds, over=over, outer=outer)


def masked_level(outer: str, over, where) -> Domain:
    """The points of kind ``outer`` (varying over ``over``, outermost first) where the predicate ``where``
    holds: a branch's arm (``Printer._point_level`` prints it as an index array of those points)."""
    return Domain("mask", (), over=tuple(over), outer=outer, where=where)


def arg_point(hot, outer: str, over) -> Domain:
    """The one point of the loop of the ``ArgOneHot`` ``hot`` where it is 1, among the points of that loop's
    level (of kind ``outer``, varying over ``over``): a maximum's adjoint evaluated there alone
    (``Printer._at_arg_extremum``)."""
    return Domain("point", (), index=hot.args[1], bounds=tuple(hot.args[2:5]), over=tuple(over), outer=outer,
                  where=hot)


def _level_text(dom: Domain) -> str:
    over = ", ".join(map(str, dom.over))
    if dom.kind == "point":
        return f" at its one point where {dom.where.args[0]} is {'largest' if dom.where.args[5] > 0 else 'smallest'}"
    if dom.kind == "rect":
        return f" at each point over {over}"
    if dom.kind == "segment":
        return f", a segment at each point over {over}"
    return "" if dom.outer == "root" else f" at one point ({dom.outer})"


def _verify_level(dom: Domain, body) -> None:
    """A level (``body``: anything with the SOI's ``deps``, the printer): no targets (its values are printed
    at it); a loop's bounds free of its index, which no enclosing point varies over; the kind the bounds and
    the enclosing points say (:func:`loop_level`)."""
    if dom.targets or dom.reduce is not None:
        raise AssertionError(f"a {dom.kind} level with targets or a reduction: its values are printed at it")
    if dom.kind == "mask":
        if dom.index is not None or dom.bounds is not None or not isinstance(dom.where, sp.Basic):
            raise AssertionError(f"a mask level with a loop index, or without its predicate: {dom}")
        if not dom.over or dom.outer in (None, "root", "cond"):
            raise AssertionError(f"a mask level under {dom.outer} points over {dom.over}: "
                                 "a branch on one point is an if")
        return
    if dom.kind == "point":
        hot = dom.where
        if not isinstance(hot, forms.ArgOneHot) or tuple(hot.args[1:5]) != (dom.index, *(dom.bounds or ())):
            raise AssertionError(f"a point level that is not its loop's arg-extremum: {hot}")
        if not dom.over or dom.over[-1] != dom.index or dom.outer not in ("range", "rect", "segment"):
            raise AssertionError(f"a point level not among the points of its loop {dom.index}: {dom.outer}, {dom.over}")
        return
    if dom.index is None or len(dom.bounds or ()) != 3 or dom.index in dom.over:
        raise AssertionError(f"a {dom.kind} level without its own loop index and bounds: {dom}")
    varies = body.deps(dom.bounds[0]) | body.deps(dom.bounds[1])
    if dom.index in varies | body.deps(dom.bounds[2]):
        raise AssertionError(f"the bounds {dom.bounds} of the loop over {dom.index} depend on it")
    if dom.outer is None:
        raise AssertionError(f"a {dom.kind} level not under any points")
    one_point = dom.outer in ("root", "cond") or not dom.over
    if (dom.kind == "range") != one_point:
        raise AssertionError(f"a {dom.kind} level under {dom.outer} points over ({', '.join(map(str, dom.over))})")
    if dom.kind != "range" and (dom.kind == "segment") != bool(varies & set(dom.over)):
        raise AssertionError(f"a {dom.kind} level whose bounds {dom.bounds} vary over {varies & set(dom.over)}")


def _verify_loop(dom: Domain, body) -> None:
    if len(dom.reduces) != len(dom.targets) or not any(r is not None for r in dom.reduces):
        raise AssertionError(f"a loop domain's reductions do not match its targets: {dom.reduces}")
    for t, red in zip(dom.targets, dom.reduces, strict=True):
        if (red is None) != (t.mode == "scatter"):
            raise AssertionError(f"loop target {t} is {'not ' if red is None else ''}a scatter but has "
                                 f"{'no ' if red is None else ''}reduction")
        if red is None:
            if body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index)) - {dom.index}:
                raise AssertionError(f"scatter {t} varies over more than {dom.index}")
            continue
        _verify_reduction(Domain("reduce", (t,), index=dom.index, bounds=dom.bounds, reduce=red), body)


def _verify_reduction(dom: Domain, body) -> None:
    red = dom.reduce
    if len(dom.targets) != 1 or dom.targets[0].mode == "scatter":
        raise AssertionError(f"a reduction domain computes one new or added target: {len(dom.targets)}")
    nodes = body.nodes(dom.targets[0].expr)
    if red.node not in nodes:
        raise AssertionError(f"the target {dom.targets[0]} does not hold the reduction {red.node}")
    found = [n for n in nodes if isinstance(n, (forms.Reduction, forms.ElemSum))]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} reductions in one domain: {found}")
    if red != Reduce.of(red.node, red.integer):
        raise AssertionError(f"the reduction's kind or identity is not its node's: {red}")
    if dom.kind == "elemsum":
        if not isinstance(red.node, forms.ElemSum) or body.deps(red.operand) - {ELEM}:
            raise AssertionError(f"an elemsum domain's sum is not over the elements: {red.node}")
    elif isinstance(red.node, forms.ElemSum) or (dom.index, *dom.bounds) != tuple(red.node.args[1:5]):
        raise AssertionError(f"the loop over {dom.index} is not the reduction's: {red.node}")
    elif body.deps(red.operand) - {dom.index}:
        raise AssertionError(f"the operand of {red.node} varies over more than {dom.index}")


def _verify_rows(dom: Domain, body) -> None:
    i, (j, bounds) = dom.index, dom.inner
    if i == j or any(j in body.deps(b) for b in bounds + dom.bounds) or any(body.deps(b) for b in dom.bounds):
        raise AssertionError(f"the rows {i} and columns {j} of {dom} are not an outer and an inner loop")
    for t in dom.targets:
        if t.mode == "scatter":
            binders = body.deps(t.expr).union(*(body.deps(sp.sympify(x)) for x in t.index))
            if binders != {i, j}:
                raise AssertionError(f"the scatter {t} varies over {binders}, not the rows and columns {i}, {j}")
        elif body.deps(t.expr):
            raise AssertionError(f"the row sum {t} varies over {body.deps(t.expr)}")
        for r in (n for n in body.nodes(t.expr) if isinstance(n, forms.Reduction)):
            inside = [n for n in body.nodes(r.args[0]) if isinstance(n, forms.Reduction)]
            if r.args[1] == j and not inside:
                continue
            if r.args[1] != i or t.mode == "scatter" or body.deps(r.args[0]) - {i}:
                raise AssertionError(f"{r} in {t} is neither a sum over the columns {j} nor a target's over the rows")


def arrays_read(body, *exprs, outside=None) -> tuple[str, ...]:
    """The codes of the whole arrays (leaves) that ``exprs`` read elementwise, sorted (``outside``: not
    under that node, the sum an elementwise sum's code is around)."""
    return tuple(sorted({body.leaves[n][0] for e in exprs for n in body.nodes(e, outside)
                         if isinstance(n, sp.Symbol) and n in body.leaves and body.leaves[n][2]}))

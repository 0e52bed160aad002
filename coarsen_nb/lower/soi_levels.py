"""The NumPy printer's levels decided before printing: a walk of an SOI's values that opens the level domains
(:mod:`coarsen_nb.lower.domain`: ``range``, ``rect``, ``segment``, ``mask``, ``point``), chooses the branches'
schedules and the reductions' (:mod:`~coarsen_nb.lower.reduction_schedules`) that the printer then prints
(issue 13, ``notes/lowered-ir.md``: "State of step 6").  The printer walks each request of a writer before
printing it (``LevelPrinting._request``) and takes every level and choice from the :class:`Points` (a miss
is :class:`UndecidedLevel`, a bug).

Why a walk and not a formula per node: a level is decided by the points its node is computed at, and those
are the node's *natural* points (``Printer.natural``: up past every loop level whose index the node does not
read, never past a branch's arm) under the points of whatever reads it first.  So the walk follows the
printer's order of evaluation: a value computed once per level and above (its memo, here a set of nodes), a
reduction's loop opened under its natural points (``domain.loop_level``), a branch scheduled by
:mod:`~coarsen_nb.lower.branch_domains` (a real ``if``: its arms on ``cond`` points; one ``where``: every arm
on every point; masked arms: each on a ``mask`` level, ``domain.masked_level``), an arg-extremum's sum at its
one ``point`` (``domain.arg_point``).  The points themselves are :class:`Points` (no code, no names).

The dense nests' matrix–vector products (``Printer.rect_sum``) are decided here: they open the inner loop
again under the root (the vector ``h`` over j) and compute the body's factors at the outer loop or that
one.  ``tests/level_domains.py --pre-pass`` compares a fresh walk of a printer's requests with what it printed.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from coarsen_nb.lower import branch_domains
from coarsen_nb.lower.branch_domains import BranchChoice
from coarsen_nb.lower.dask_printing import nan_test_choice
from coarsen_nb.lower.domain import Domain, arg_point, loop_level, loop_nesting, masked_level
from coarsen_nb.lower.printing import Nest, common_coefficient, int_typed, signed_terms
from coarsen_nb.lower.reduction_schedules import ArgPoint, DenseTerm, DenseWalk, Schedule, arg_factors, unaliased
from coarsen_nb.phi import forms, gammas, logsumexp, scans
from coarsen_nb.symbolic.levels import ELEM


class UndecidedLevel(AssertionError):
    """The printer asked for a level the walk did not open, or one unlike it: the walk and the printer
    disagree (a bug)."""


class Points(Nest):
    """A level of the walk: the points values are arrays over (as ``printing.Level``, without code)."""

    def __init__(self, parent: Points | None, kind: str, binder=None, domain: Domain | None = None):
        self.parent, self.kind, self.binder, self.domain = parent, kind, binder, domain
        self.memo: set = set()          # the nodes computed at these points
        self.children: dict = {}        # (k, a, b, s) -> the loop level opened here
        # the levels opened here, by what the printer knows them by, in the order they were opened: a loop by
        # ``(k, a, b, s)``, a masked arm's points by ``("mask", where)``, an arg-extremum's point by
        # ``("point", hot)``, a scalar branch's arm or ``else`` by ``"cond"``; and the choice of each branch
        # computed here (a ``branch_domains.BranchChoice``) by ``("branch", clauses)`` (an ``and``/``or``:
        # ``("branch", e)``)
        self.opened: dict = {}
        # what is decided here for the printer to print: a reduction over this loop level -> its Schedule; a
        # dense nest's product asked for by the adjoint, (expr, need_matrix) -> its DenseTerm (None: no nest)
        self.schedules: dict = {}
        self.products: dict = {}

    def open(self, key, decided):
        self.opened.setdefault(key, []).append(decided)
        return decided

    def schedule(self, e) -> Schedule:
        """The schedule decided for the reduction ``e`` over this loop level (a miss raises)."""
        if e not in self.schedules:
            raise UndecidedLevel(f"the pre-pass decided no schedule for {e} over {self.binders}")
        return self.schedules[e]

    def product(self, e, need_matrix: bool) -> DenseTerm | None:
        """The dense nest's product ``e`` asked for at this level (``rect_product``; a miss raises)."""
        if (e, need_matrix) not in self.products:
            raise UndecidedLevel(f"the pre-pass decided no dense product {e} over {self.binders}")
        return self.products[(e, need_matrix)]

    def decided(self, key, nth: int = 0) -> Points:
        """The ``nth`` level (or branch choice) decided here as ``key``: what the printer prints for it.  One the
        walk did not decide is a bug of the walk (it no longer follows the printer), never one to decide now."""
        try:
            return self.opened[key][nth]
        except (KeyError, IndexError):
            raise UndecidedLevel(f"the pre-pass opened no level {key!r} (#{nth}) under {self.binders}") from None


class LevelWalk(DenseWalk):
    """The walk over one printer's values.  ``soi``: anything with the SOI's ``deps``, ``temps``, ``reads``,
    ``resolved`` and ``leaf`` (``leaf(s)[1]``: whether an input ``s`` is an array), as the printer has."""

    def __init__(self, soi):
        self.soi, self.deps, self.temps = soi, soi.deps, soi.temps
        self.root = Points(None, "root")
        self.elem: Points | None = None
        self.domains: list[Domain] = []
        self._masks: dict = {}

    # -- levels, as Printer.level_for / _child / natural ------------------------------------------------

    def level_for(self, binders) -> Points:
        if ELEM in binders:
            return self.elem_points()
        lv = self.root
        for k in loop_nesting(self.deps, [b for b in binders if b in self.deps.ranges]):
            lv = self.child(lv, k, *self.deps.ranges[k])
        return lv

    def elem_points(self) -> Points:
        if self.elem is None:
            self.elem = Points(self.root, "elem", binder=ELEM)
        return self.elem

    def child(self, lv: Points, k, a, b, s) -> Points:
        key = (k, a, b, s)
        if key not in lv.children:
            for x in (a, b, s):
                self.value(x, lv)
            dom = loop_level(self.deps, k, (a, b, s), lv.kind if lv.domain is None else lv.domain.kind, lv.binders)
            self.domains.append(dom)
            lv.children[key] = lv.open(key, Points(lv, "range", binder=k, domain=dom))
        return lv.children[key]

    def natural(self, e, ctx: Points) -> Points:
        d = self.deps(e)
        if isinstance(e, (forms.RWrite, forms.Unwritten)):
            d = d - {ELEM}
        lv = ctx
        while True:
            if lv.kind in ("range", "elem") and lv.binder not in d:
                lv = lv.parent
            elif lv.kind == "mask" and lv.domain.kind == "point" and not d & (self._varying(lv) | {ELEM}):
                lv = lv.parent
            else:
                return lv

    @staticmethod
    def _varying(lv: Points) -> set:
        return {a.binder for a in lv.ancestors() if a.binder is not None}

    # -- values, as Printer.value ----------------------------------------------------------------------

    def value(self, e, ctx: Points | None = None) -> None:
        ctx = ctx or self.root
        e = sp.sympify(e)
        if ctx is self.root and ELEM in self.deps(e):
            ctx = self.elem_points()
        nat = self.natural(e, ctx)
        d = self.deps(e)
        for lv in nat.ancestors():
            if e in lv.memo:
                if d and lv is not ctx and ctx.kind == "mask":
                    ctx.memo.add(e)         # (gathered once per arm's points)
                return
            if lv.binder is not None and lv.binder in d:
                break
        self._compute(e, nat)
        nat.memo.add(e)

    def _compute(self, e, lv: Points) -> None:
        if isinstance(e, sp.Symbol):
            return self._symbol(e, lv)
        if isinstance(e, forms.Reduction):
            return self._reduce(e, lv)
        if isinstance(e, forms.RWrite):
            init, body, k, a, b, s, *idx = e.args
            child = self.child(lv, k, a, b, s)
            self.value(body, child)
            for i in idx:
                self.value(i, child)
            return self.value(init, lv)
        if isinstance(e, forms.Unwritten):
            body, k, a, b, s, *idx = e.args
            child = self.child(lv, k, a, b, s)
            self.value(body, self.root)
            for i in idx:
                self.value(i, child)
            return None
        if isinstance(e, forms.ElemSum):
            return self.value(e.args[0], lv if self.elem is None else self.elem)
        if isinstance(e, forms.LogSumExp):
            self.value(forms.RMax(*e.args[1:]), lv)
            return self.value(logsumexp.lowered(e), lv)
        if isinstance(e, forms.RLin):
            a, b, k, lo, hi, st = e.args
            return self._reduce(forms.RSum(b * forms.ProdAfter(a, k, lo, hi, st), k, lo, hi, st), lv)
        if isinstance(e, forms.Gather):
            self.value(e.args[0], self.root)
            for i in e.args[1:]:
                self.value(i, lv)
            return None
        if isinstance(e, scans.SCAN_FORMS):
            return self._scan(e, lv)
        if isinstance(e, (sp.Piecewise, sp.ITE)):
            if isinstance(e, sp.ITE):
                e = gammas.Gamma((e.args[1], e.args[0]), (e.args[2], True))
            return self._piecewise(list(e.args), lv)
        if isinstance(e, (gammas.AndThen, gammas.OrElse)):
            return self._short_circuit(e, lv)
        if isinstance(e, sp.Add):
            return self._add(e, lv)
        if isinstance(e, sp.Mul) and e.args[0].is_Float and abs(float(e.args[0])) == 1.0 \
                and not int_typed(rest := sp.Mul(*e.args[1:])):
            # as Printer._print_Mul: 1.0 * x is x computed here, not x's value (not memoized: a branch in x
            # printed elsewhere too is decided twice)
            return self._compute(rest if e.args[0] > 0 else -rest, lv)
        if isinstance(e, sp.Mul):
            return self._mul(e, lv)
        for a in e.args:
            if isinstance(a, sp.Basic):
                self.value(a, lv)
        return None

    def _mul(self, e: sp.Mul, lv: Points) -> None:
        """A product's values as ``OperatorPrinting._mul`` computes them: ``-(a*b)`` as the value ``a*b``, a
        factor ``y**-1`` as ``y`` (a division), ``y**-k`` as ``y**k``.  Where the printer's memo holds a value
        a loop writer put there (``printing.Level.memo``), the walk then stops where the printer stops: walked
        as factors, ``y**-1`` known to the memo hid ``y``, which the printer divides by and computes (a branch
        in ``y``, decided by no walk: ``UndecidedLevel``); ``a*b`` known hid nothing, and the walk went into
        ``a`` and ``b``, which a later request then found walked but the printer had never computed."""
        if e.args[0] == -1:
            return self.value(-e, lv)
        for f in e.args:
            if isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                self.value(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp), lv)
            else:
                self.value(f, lv)
        return None

    def _add(self, e: sp.Add, lv: Points) -> None:
        """A sum's terms in the order ``OperatorPrinting._op`` prints them: ``c * (a - b)`` for ``c*a - c*b``,
        else the negated terms last, each as its negation.  The order matters: the scalar branches of one
        level take its ``cond`` levels in the order they are opened (``Points.decided``), so a branch in a
        term printed first must be walked first."""
        common = common_coefficient(e)
        if common is not None:
            return self.value(common[1], lv)
        for _, x in signed_terms(e):
            self.value(x, lv)
        return None

    def _symbol(self, s, lv: Points) -> None:
        if s in self.temps:
            return self.value(self.temps[s], lv)
        if s in self.deps.ranges or any(a.binder == s for a in lv.ancestors()):
            return None
        if s in self.soi.reads:
            for i in self.soi.reads[s][1]:
                self.value(i, lv)
            return None
        if self.soi.leaf(s)[1]:
            self.elem_points()
        return None

    def _reduce(self, e, lv: Points) -> None:
        body, k, a, b, s = e.args
        child = self.child(lv, k, a, b, s)
        terms = self._rect_sum(body, child) if e.kind == "sum" else ()
        point = None
        if not (terms and all(t.ok for t in terms)) and e.kind == "sum" and not lv.array():
            point = self._arg_extremum(body, child, (k, a, b, s))
        child.schedules[e] = schedule = Schedule(terms, point)
        if not schedule.dense and point is None:
            self.value(body, child)

    def _arg_extremum(self, body, child: Points, rng) -> ArgPoint | None:
        factors = arg_factors(body, self.temps)
        hot = next((f for f in factors if isinstance(f, forms.ArgOneHot) and tuple(f.args[1:5]) == tuple(rng)),
                   None)
        if hot is None:
            return None
        key = ("arg-point", hot, id(child))
        if key not in self._masks:
            self.value(hot.args[0], child)
            dom = arg_point(hot, child.points_kind, child.binders)
            self.domains.append(dom)
            self._masks[key] = child.open(("point", hot), Points(child, "mask", domain=dom))
        point = self._masks[key]
        varying = {rng[0]} | self._varying(child)
        picked = ArgPoint(hot, sp.Mul(*(f for f in factors if f is not hot and self.deps(f) & varying)),
                          sp.Mul(*(f for f in factors if f is not hot and not self.deps(f) & varying)))
        self.value(picked.at_point, point)
        self.value(picked.outside, child.parent)
        return picked

    def arg_scatter(self, e, lv: Points) -> None:
        """As ``Printer.arg_scatter``: whether the adjoint ``e`` scattered over the top-level loop ``lv`` is a
        product with the one-hot of its first arg-extremum, kept at ``lv`` as ``("scatter", e)`` (its
        ``ArgPoint``, the point opened; None: scattered on every point)."""
        picked = None
        if lv.kind == "range" and lv.parent is self.root and not self.deps(e) & {ELEM}:
            picked = self._arg_extremum(unaliased(e, self.temps), lv, (lv.binder, *self.deps.ranges[lv.binder]))
        lv.schedules[("scatter", e)] = picked

    def _scan(self, e, lv: Points) -> None:
        k = e.args[2]
        at = next((a for a in lv.ancestors() if a.kind == "range" and a.binder == k), None)
        if at is None:
            at = self.child(self.root, k, *e.args[3:6])
        if at is not lv:
            return self.value(e, at)
        a, b = e.args[:2]
        self.value(a, lv)
        self.value(b, lv)
        self.value(e.args[6] if isinstance(e, scans.LinScan) else sp.Integer(0), self.root)
        return None

    # -- branches, as BranchPrinting ---------------------------------------------------------------------

    def _piecewise(self, clauses, lv: Points) -> None:
        varying = self._varying(lv) | {ELEM}
        wholes = tuple(x for x in self._arm_nodes(clauses, lambda x: isinstance(x, (forms.RWrite, forms.Unwritten)))
                       if ELEM in self.deps(x) and not self.deps(x) & (varying - {ELEM}))
        if branch_domains.scalar_branch(clauses, self.deps, lv.array(), varying):
            # (an `if` inside an array level: a whole array an arm reads is computed before it, at the root, as
            # the user's program computed it; inside the arm it would be a write nested in the array level)
            wholes = wholes if lv.array() else ()
            for x in wholes:
                self.value(x, lv)
            lv.open(("branch", tuple(clauses)), BranchChoice("cond", wholes=wholes))
            return self._scalar_piecewise(clauses, lv)
        for _, cond in clauses[:-1]:
            if cond != sp.true:
                self.value(cond, lv)
        loops = {a.binder for a in lv.ancestors() if a.kind == "range"}
        first = tuple(x for x in self._arm_nodes(clauses, lambda x: isinstance(x, scans.SCAN_FORMS))
                      if x.args[2] in loops)
        for x in first + wholes:
            self.value(x, lv)
        choice = branch_domains.array_choice(clauses, self.soi,
                                             lambda e: any(e in up.memo for up in lv.ancestors()))
        choice = dataclasses.replace(choice, scans=first, wholes=wholes)
        lv.open(("branch", tuple(clauses)), choice)
        if choice.kind != "mask":
            last = next((k for k, (_, c) in enumerate(clauses) if c == sp.true), len(clauses) - 1)
            for x, _ in clauses[:last + 1]:
                self.value(x, lv)
            return None
        seen: tuple = ()
        for k, (expr, cond) in enumerate(clauses):
            last = k == len(clauses) - 1 or cond == sp.true
            if k == choice.base:
                self.value(expr, lv)
            elif k != choice.base and not (last and not seen):
                key = (id(lv), seen, None if last else cond)
                if key not in self._masks:
                    where = sp.And(*(sp.Not(c) for c in seen), sp.true if last else cond)
                    self._masks[key] = self._mask(lv, where)
                self.value(expr, self._masks[key])
            elif last:
                self.value(expr, lv)
            if last:
                break
            seen = (*seen, cond)
        return None

    def _mask(self, lv: Points, where) -> Points:
        dom = masked_level(lv.points_kind, lv.binders, where)
        self.domains.append(dom)
        return lv.open(("mask", where), Points(lv, "mask", domain=dom))

    def _scalar_piecewise(self, clauses, lv: Points) -> None:
        if clauses[0][1] == sp.true or len(clauses) == 1:
            return self.value(clauses[0][0], lv)
        if getattr(self.soi, "where_choices", False) and nan_test_choice(clauses, self.soi.resolved):
            # (Dask's where of a loop extremum's NaN test: its test, then both arms, at this level)
            for x in (clauses[0][1], clauses[0][0], clauses[1][0]):
                self.value(x, lv)
            return None
        cond_lv = lv
        for k, (expr, cond) in enumerate(clauses):
            if cond == sp.true or k == len(clauses) - 1:
                return self.value(expr, self._cond(cond_lv))
            self.value(cond, cond_lv)
            self.value(expr, self._cond(cond_lv))
            cond_lv = self._cond(cond_lv)
        return None

    @staticmethod
    def _cond(lv: Points) -> Points:
        return lv.open("cond", Points(lv, "cond"))

    def _short_circuit(self, e, lv: Points) -> None:
        is_and = isinstance(e, gammas.AndThen)
        self.value(e.args[0], lv)
        scalar = branch_domains.scalar_short_circuit(e, self.deps, lv.array(), self._varying(lv) | {ELEM})
        lv.open(("branch", e), BranchChoice("cond" if scalar else "mask"))
        if scalar:
            for a in e.args[1:]:
                self.value(a, self._cond(lv))
            return None
        for i, a in enumerate(e.args[1:], 1):
            before = e.func(*e.args[:i])
            self.value(a, self._mask(lv, before if is_and else sp.Not(before)))
        return None

    def _arm_nodes(self, clauses, found):
        return branch_domains.arm_nodes(clauses, self.temps, found)


def soi_levels(soi, entries) -> list[Domain]:
    """The level domains the NumPy printer opens for the values ``entries`` (each ``(expr, binders)``: a value
    printed at the level of those loop indices, ``()`` the root; ``expr`` None: the level alone, as
    ``Printer.level_for`` opens it for a scatter; ``(expr, binders, "rect_product")``: the dense-nest product
    an adjoint's scatter asks for, without its matrix; ``(expr, binders, "arg_scatter")``: a scatter's
    arg-extremum point, ``Printer.arg_scatter``), in the order the walk opens them."""
    walk = LevelWalk(soi)
    for e, binders, *how in entries:
        lv = walk.level_for(binders)
        if how == ["rect_product"]:
            walk.rect_product(e, lv, need_matrix=False)
        elif how == ["arg_scatter"]:
            walk.arg_scatter(e, lv)
        elif e is not None:
            walk.value(e, lv)
    return walk.domains

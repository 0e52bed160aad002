"""Branches in printed code: masked arms that never evaluate the branch not taken, one
``where`` for cheap total arms, a real ``if`` for a scalar predicate, and short-circuit
``and``/``or``.  A mixin of :class:`~coarsen_nb.lower.emit.Printer`.

Values and statements are records of the lowered IR (:mod:`coarsen_nb.lower.lir`); an ``if`` collects its
arms' statements with ``Printer.block()``.
"""

from __future__ import annotations

import math

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.dask_printing import nan_test_choice
from coarsen_nb.lower.lir import Assign, BinOp, Call, Index, Lit, Name, Paren, Tuple, Unary
from coarsen_nb.lower.printing import FLAT, Level, int_typed, is_atom_code, length
from coarsen_nb.phi import gammas
from coarsen_nb.phi.gammas import is_boolean
from coarsen_nb.symbolic.levels import ELEM


class BranchPrinting:
    """Branches of the :class:`~coarsen_nb.lower.emit.Printer`."""

    #: a scalar choice between two atoms (names or numbers) is printed ``choice = xp.where(t2, a, b)``, not as
    #: an ``if``: set by the module writer from ``Backend.where_choices`` (the dask backend: a Python ``if``
    #: on a reduced value computes it while the graph is being built; ``where`` of both arms keeps it lazy)
    where_choices = False

    def _piecewise(self, e: sp.Piecewise, lv: Level) -> lir.Expr:
        clauses = list(e.args)
        # the choice the pre-pass made (branch_domains: from the SOI and what is computed before the branch)
        choice = self._decided(lv, ("branch", tuple(clauses)))
        if choice.kind == "cond":
            # the predicate is one value for the whole level: a real `if` (after the whole arrays its arms read)
            self._whole_arrays_first(choice.wholes, lv)
            return self._scalar_piecewise(clauses, lv)
        for _, cond in clauses[:-1]:
            if cond != sp.true:
                self.value(cond, lv)        # on every point either way; an arm may be among its values
        for x in choice.scans:
            self.value(x, lv)               # a scan needs every point (the loop runs its update on each)
        self._whole_arrays_first(choice.wholes, lv)
        if choice.kind == "where":
            return self._where(clauses, lv)
        if choice.kind == "constant_where":
            return self._constant_where(clauses, lv)
        out = Name(self.fresh("choice"))
        size = self._size(lv)
        integer = all(getattr(c[0], "is_integer", False) for c in clauses)
        boolean = all(is_boolean(c[0]) for c in clauses)
        base = choice.base
        if base is None:
            dtype = {"dtype": self.dtype("bool")} if boolean else {"dtype": self.dtype("int64")} if integer else {}
            self.emit(Assign(out, self.call("empty", size, **dtype)))
        else:
            self.emit(Assign(out, self._full_buffer(clauses[base][0], lv, size)))
        remaining = None
        seen: tuple = ()
        for k, (expr, cond) in enumerate(clauses):
            last = k == len(clauses) - 1 or cond == sp.true
            if last and remaining is None:
                if k != base:
                    self.emit(Assign(Index(out, (Lit("..."),)), self.value(expr, lv)))
                break
            if last and k == base:
                break
            # A branch with the same predicate as an earlier one (the adjoint's Piecewise mirrors
            # the forward's) reuses its mask and its masked level: gathered operands are shared.
            key = (lv.id, seen, None if last else cond)
            if key in self._masks:
                mname, nxt, sub = self._masks[key]
            else:
                if last:
                    mname, nxt = Name(self.fresh("m")), None
                    self.emit(Assign(mname, Unary("~", remaining)))
                else:
                    c_code = self.value(cond, lv)
                    if str(c_code) in ("True", "False"):
                        c_code = self.call("full", size, c_code)
                    mname = Name(self.fresh("m"))
                    if remaining is not None:
                        self.emit(Assign(mname, BinOp("&", Unary("~", remaining), Paren(c_code))))
                        nxt = Name(self.fresh("m"))
                        self.emit(Assign(nxt, BinOp("|", remaining, mname)))
                    else:
                        mask = self.call("asarray", c_code, dtype=self.dtype("bool"))
                        if self.broadcast and lv.points.kind == "elem":
                            # np.where(x[:, None] > 0, A, 0.0): a predicate of fewer axes than its arms
                            mask = self.call("broadcast_to", mask, size)
                        self.emit(Assign(mname, mask))
                        nxt = mname
                sub = None
            if k != base:
                if sub is None:
                    # (the points of this arm: its predicate, and none of the earlier arms')
                    where = sp.And(*(sp.Not(c) for c in seen), sp.true if last else cond)
                    sub = self._point_level(lv, mname, where)
                self._masked_assign(out, expr, sub)
            self._masks[key] = (mname, nxt, sub)
            if last:
                break
            remaining = nxt
            seen = (*seen, cond)
        return out

    def _whole_arrays_first(self, wholes, lv: Level) -> None:
        """Compute before the masked arms the whole arrays their points read (``wholes``, found by the
        pre-pass; ``np.where(c, u, x[::-1])``: the slice is an array written element by element, an RWrite),
        and keep each as a value of ``lv``'s points, so that an arm gathers its own points from it.  Inside an
        arm it could not be made (it is one array over all points, not a value per masked point); nor inside a
        scalar ``if``'s arm at an array level (a write nested in the level: ``u[:2] = b`` before
        ``if a > 0.3: v = x * a else: v = np.sin(u)``)."""
        for x in wholes:
            if x not in lv.memo:
                lv.memo[x] = self.value(x, lv)

    def _point_level(self, lv: Level, mask: lir.Expr, where) -> Level:
        """The points of ``lv`` where ``mask`` (the code of the predicate ``where``) holds, as an index array:
        operands are gathered with ``take`` and results put back by index (NumPy's boolean indexing is
        several times slower).  Elementwise values may have any shape: their points are numbered in the
        flattened array."""
        points = self._decided(lv, ("mask", where))
        idx = Name(self.fresh("ix"))
        if points.domain.outer == "elem":
            mask = self.call("reshape", mask, FLAT)
        self.emit(Assign(idx, Index(self.call("nonzero", mask), (Lit("0"),))))
        return self._mirrored(Level(lv, "mask", mask=idx, size=length(idx), domain=points.domain), points)

    def _cond_level(self, lv: Level) -> Level:
        """The points of ``lv`` inside a scalar ``if``'s arm or ``else`` (the same points: a statement structure)."""
        return self._mirrored(Level(lv, "cond"), self._decided(lv, "cond"))

    def _full_buffer(self, expr, lv: Level, size: lir.Expr) -> lir.Expr:
        """A new float array holding ``expr`` at every point of ``lv`` (written to later)."""
        e = self.resolved(expr)
        if e.is_Number:
            v = float(e)
            # nan (the IEEE arm of a power's guard) and ±inf have no literal: spell them as the namespace's
            fill = Lit(repr(v)) if math.isfinite(v) else self.dtype("nan") if math.isnan(v) else \
                Unary("-", self.dtype("inf")) if v < 0 else self.dtype("inf")
            return self.call("full", size, fill)
        varies = self.deps(e) & (self._varying_binders(lv) | {ELEM})
        if isinstance(e, (sp.Add, sp.Mul, sp.Pow)) and varies and self.natural(e, lv) is lv and not int_typed(e):
            code = lir.expr(self._compute(e, lv))      # a new array (not the memo's: it is written to)
            if not is_atom_code(code):
                return code
        return self._filled(self.value(expr, lv), size if lv.points.kind == "elem" else Tuple((size,)), "float64")

    def _filled(self, code: lir.Expr, shape: lir.Expr, dtype: str) -> lir.Expr:
        """``xp.asarray(xp.broadcast_to(xp.asarray(code, dtype=xp.<dtype>), shape), copy=True)``: a new
        array of ``shape`` holding ``code`` (a value of fewer points) at every point."""
        whole = self.call("broadcast_to", self.call("asarray", code, dtype=self.dtype(dtype)), shape)
        return self.call("asarray", whole, copy=Lit("True"))

    def _where(self, clauses, lv: Level) -> lir.Expr:
        """``where(p1, a1, where(p2, a2, a3))``: every arm on every point (see ``branch_domains.cheap_arms``)."""
        # The array API's where wants an array condition, at most one scalar arm, and one kind of
        # number (NumPy promotes; the standard does not): the (float) result gets float arms.
        last, conds = self._where_conditions(clauses, lv)
        exprs = [x for x, _ in clauses[:last + 1]]
        codes = self._floats(exprs, [self.value(x, lv) for x in exprs], force=True)
        code = codes[-1]
        if not self.deps(exprs[-1]):
            code = self.call("asarray", code, dtype=self.dtype("float64"))
        for cond, arm in reversed(list(zip(conds, codes[:-1], strict=True))):
            code = self.call("where", cond, arm, code)
        return code

    def _where_conditions(self, clauses, lv: Level) -> tuple[int, list[lir.Expr]]:
        """The index of the last arm a ``where`` chain needs (the first ``True`` clause), and the codes of
        the conditions before it, each an array (the array API's ``where`` takes no Python bool)."""
        last = next((k for k, (_, c) in enumerate(clauses) if c == sp.true), len(clauses) - 1)
        conds = [self.value(cond, lv) for _, cond in clauses[:last]]
        return last, [c if self.deps(cond) else self.call("asarray", c)
                      for c, (_, cond) in zip(conds, clauses, strict=False)]

    def _constant_where(self, clauses, lv: Level) -> lir.Expr:
        """An integer or truth-valued choice among numbers (an indicator: the derivative of ``np.where(c,
        x, 0)`` or of ``max``, a count's increment), or among cheap truth values (a clamp's predicate
        ``t >= 0 ? t <= 1 : True``): ``where(p1, 1, where(p2, 2, 0))``, of the arms' own kind.  Numbers
        cannot fail on another branch's points, nor can cheap arms, so no arm needs its own points."""
        last, conds = self._where_conditions(clauses, lv)
        codes = [self.value(x, lv) for x, _ in clauses[:last + 1]]
        kind = self.dtype("bool" if is_boolean(clauses[0][0]) else "int64")
        code = self.call("asarray", codes[-1], dtype=kind)   # (the array API's where takes one scalar arm)
        for cond, arm in reversed(list(zip(conds, codes[:-1], strict=True))):
            code = self.call("where", cond, arm, code)
        return code

    def _masked_assign(self, out: Name, expr, sub: Level) -> None:
        with self.block() as body:
            code = self.value(expr, sub)
            at = Tuple((sub.mask,))
            if sub.domain.outer == "elem":
                put = Call(Name(self.helper("_put")), (self.call("reshape", out, FLAT), at, code))
                self.emit(Assign(out, self.call("reshape", put, lir.Attr(out, "shape"))))
            else:
                self.emit(Assign(out, Call(Name(self.helper('_put')), (out, at, code))))
        self.emit(lir.If(sub.size, tuple(body)))

    def _scalar_piecewise(self, clauses, lv: Level) -> lir.Expr:
        """A real ``if``; a later clause's predicate is computed in the ``else`` of the earlier
        ones (nested), so it is only evaluated where Python would evaluate it."""
        out = Name(self.fresh("choice"))
        floating = not all(int_typed(self.resolved(x)) for x, _ in clauses)

        varying = self._varying_binders(lv) | {ELEM}
        arrays = any(self.deps(x) & varying for x, _ in clauses)     # the value is an array of lv's points

        def arm(expr, cond_lv: Level) -> lir.Expr:
            return shaped(expr, self.value(expr, self._cond_level(cond_lv)))

        def shaped(expr, code: lir.Expr) -> lir.Expr:
            # at an array level an arm may be a plain number (b in `i if p else b`): an array of the
            # level's points either way (later code indexes it by segment or gathers from it)
            if not self._is_array_level(lv):
                return code
            code = self.call("asarray", code, dtype=self.dtype("float64")) if floating else self.call("asarray", code)
            if arrays and not self.deps(expr) & varying:
                shape = self._size(lv) if lv.points.kind == "elem" else Tuple((self._size(lv),))
                code = self.call("broadcast_to", code, shape)
            return code

        def choose(k: int, cond_lv: Level) -> None:       # clauses[k:], inside the else of those before
            expr, cond = clauses[k]
            if cond == sp.true or k == len(clauses) - 1:
                self.emit(Assign(out, arm(expr, cond_lv)))
                return
            c = self.value(cond, cond_lv)
            with self.block() as then:
                self.emit(Assign(out, arm(expr, cond_lv)))
            with self.block() as orelse:
                choose(k + 1, self._cond_level(cond_lv))
            self.emit(lir.If(c, tuple(then), tuple(orelse)))

        if clauses[0][1] == sp.true or len(clauses) == 1:
            return self.value(clauses[0][0], lv)
        if self.where_choices and nan_test_choice(clauses, self.resolved):
            # (a loop extremum's NaN test under Dask: both arms at this level, where the reduction's terms are
            # already, then where; the test is not computed while the graph is built: dask_printing)
            (fast, test), (slow, _) = clauses
            c = self.value(test, lv)
            codes = [shaped(x, self.value(x, lv)) for x in (fast, slow)]
            self.emit(Assign(out, self.call("where", c, *codes)))
            return out
        if not self.where_choices:
            choose(0, lv)
            return out
        with self.block() as body:
            choose(0, lv)
        chain = _where_chain(body[-1], out, self.call) if body and isinstance(body[-1], lir.If) else None
        for s in body if chain is None else body[:-1]:      # (the first predicate's statements, either way)
            self.emit(s)
        if chain is not None:
            self.emit(Assign(out, chain))
        return out

    def _short_circuit(self, e, lv: Level) -> lir.Expr:
        is_and = isinstance(e, gammas.AndThen)
        if self._decided(lv, ("branch", e)).kind == "cond":
            # one truth value for the whole level (also inside a masked arm): Python's own and/or
            out = Name(self.fresh("b"))
            first = self.value(e.args[0], lv)
            self.emit(Assign(out, Call(Name("bool"), (first,))))
            for a in e.args[1:]:
                with self.block() as then:
                    self.emit(Assign(out, Call(Name("bool"), (self.value(a, self._cond_level(lv)),))))
                self.emit(lir.If(out if is_and else Unary("not", out), tuple(then)))
            return out
        out = Name(self.fresh("b"))
        first = self.value(e.args[0], lv)
        # an elementwise level's size is its shape already (as in the arms of a Piecewise above)
        shape = self._size(lv) if lv.points.kind == "elem" else Tuple((self._size(lv),))
        self.emit(Assign(out, self._filled(first, shape, "bool")))
        for i, a in enumerate(e.args[1:], 1):
            sel = Name(self.fresh("m"))
            self.emit(Assign(sel, self.call("asarray", out, copy=Lit("True")) if is_and else Unary("~", out)))
            # (the points where the operands before ``a`` leave the value undecided)
            before = e.func(*e.args[:i])
            self._masked_assign(out, a, self._point_level(lv, sel, before if is_and else sp.Not(before)))
        return out


def _where_chain(stmt: lir.If, out: Name, call) -> lir.Expr | None:
    """``where(t2, a, where(t3, b, c))`` for the ``if`` that :meth:`BranchPrinting._scalar_piecewise`
    printed, where each arm is one assignment of an atom to ``out`` and each ``else`` is that or another such
    ``if`` alone (a later predicate computed by statements of its own is left to the ``if``: it runs only
    where Python would run it); None where the ``if`` is not of that form.  Evaluating an atom cannot fail,
    so evaluating both arms is safe."""
    def atom(block) -> lir.Expr | None:
        if len(block) == 1 and isinstance(block[0], Assign) and block[0].target == out \
                and is_atom_code(block[0].value):
            return block[0].value
        return None

    then = atom(stmt.body)
    if then is None:
        return None
    orelse = atom(stmt.orelse)
    if orelse is None and len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], lir.If):
        orelse = _where_chain(stmt.orelse[0], out, call)
    return None if orelse is None else call("where", stmt.test, then, orelse)

"""The loop levels of a reduction and the reduction back: the :class:`~coarsen_nb.lower.emit.Printer`'s
``_child`` opens the level of ``k in range(a, b, s)`` under a level (an index array, with a segment map
below the root), ``_reduce`` sums (or multiplies, maximizes, minimizes) a body over it back to the parent
level.  A mixin of the Printer; it builds lowered-IR records (:mod:`coarsen_nb.lower.lir`).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, naming, trivial
from coarsen_nb.lower.printing import Level, is_int_literal, length, positive, trip_count
from coarsen_nb.lower.soi_levels import UndecidedLevel


class LevelPrinting:
    """Loop levels and reductions of the :class:`~coarsen_nb.lower.emit.Printer`.

    The levels are decided before they are printed: each request of a writer (a value at a level, a level,
    a dense nest's product: ``value``, ``level_for``, ``rect_product`` called from outside the printer) is
    walked first by the printer's :class:`~coarsen_nb.lower.soi_levels.LevelWalk` (``_request``), which opens
    every level its printing will open; the printer then takes each level's domain from the walk's
    :class:`~coarsen_nb.lower.soi_levels.Points` (``_decided``) and checks the level it prints against them
    (``_mirrored``).  The walk keeps its memo across requests, as the printer keeps its own."""

    def _request(self, decide, print_):
        """``print_()``, a writer's request, after ``decide()`` has walked it; a request made while printing
        another (the printer's own recursion) was walked with it."""
        if self._printing:
            return print_()
        decide()
        self._printing = True
        try:
            return print_()
        finally:
            self._printing = False

    @staticmethod
    def _decided(parent: Level, key):
        """The pre-pass's points of the next level the printer opens under ``parent`` as ``key`` (see
        ``soi_levels.Points.decided``: a miss raises)."""
        nth = parent.taken.get(key, 0)
        parent.taken[key] = nth + 1
        return parent.mirror.decided(key, nth)

    @staticmethod
    def _mirrored(level: Level, points) -> Level:
        """``level``, now printed, checked against the pre-pass's ``points`` it was decided by: the same kind,
        index, domain and parent (so the same enclosing points)."""
        parent = None if level.parent is None else level.parent.mirror
        if (level.kind, level.binder, level.domain) != (points.kind, points.binder, points.domain) \
                or points.parent is not parent:
            raise UndecidedLevel(f"printed a {level.kind} level over {level.binders} unlike the pre-pass's "
                                 f"{points.kind} level over {points.binders}")
        level.mirror = points
        return level

    def _child(self, lv: Level, k, a, b, s) -> Level:
        key = (k, a, b, s)
        if key in lv.children:
            return lv.children[key]
        a_c, b_c, s_c = self.value(a, lv), self.value(b, lv), self.value(s, lv)
        kname = self.words.get(k) or naming.kind_word(str(k)) or "k"     # (never the SSA name, k7_2)
        # the trip count of loop i: n_i (not n2 beside a user's n); of a loop the frontend made (a slice's), n
        n_word = naming.clean("n_" + kname) if kname != "k" else "n"
        points = self._decided(lv, key)
        dom = points.domain
        new = lambda hint: lir.Name(self.fresh(hint))      # noqa: E731
        if dom.kind == "range":
            idx = new(kname)
            self.emit(lir.Assign(idx, self.call("arange", a_c, b_c, s_c)))
            # the trip count as a number, so that the index array is dropped when only its length is used
            cnt = new(n_word)
            self.emit(lir.Assign(cnt, trip_count(a, b, s, a_c, b_c, s_c)))
            child = Level(lv, "range", binder=k, seg=None, size=cnt, domain=dom)
        elif dom.kind == "rect":
            n_parent = self._size(lv)
            cnt, rng, seg, idx = new(n_word), new(kname), new("seg"), new(kname)
            self.emit(lir.Assign(rng, self.call("arange", a_c, b_c, s_c)))
            self.emit(lir.Assign(cnt, length(rng)))
            self.emit(lir.Assign(seg, self.call("repeat", self.call("arange", n_parent), cnt)))
            self.emit(lir.Assign(idx, self.call("tile", rng, lir.Tuple((n_parent,)))))
            child = Level(lv, "range", binder=k, seg=seg, size=length(idx), domain=dom)
            child.rect = cnt
        else:
            n_parent = self._size(lv)
            cnt, seg, off, pos, idx = (new(h) for h in (n_word, "seg", "off", "pos", kname))
            count = trip_count(a, b, s, a_c, b_c, s_c, self.dtype("maximum"))
            self.emit(lir.Assign(cnt, lir.BinOp("+", count, self.call("zeros", n_parent, dtype=self.dtype("int64")))))
            self.emit(lir.Assign(seg, self.call("repeat", self.call("arange", n_parent), cnt)))
            self.emit(lir.Assign(off, lir.BinOp("-", self.call("cumulative_sum", cnt), cnt)))
            self.emit(lir.Assign(pos, lir.BinOp("-", self.call("arange", length(seg)), lir.Index(off, (seg,)))))
            a_here = lir.Index(lir.Paren(a_c), (seg,)) if self.deps(a) & self._varying_binders(lv) else a_c
            self.emit(lir.Assign(idx, lir.BinOp("+", a_here, lir.BinOp("*", lir.Paren(s_c), pos))))
            child = Level(lv, "range", binder=k, seg=seg, size=length(idx), domain=dom)
        child.index_code[k] = idx
        lv.children[key] = self._mirrored(child, points)
        return child


    def _one_per_point(self, e, binders: set, lv: Level) -> bool:
        """Whether ``e`` printed at ``lv`` is surely an array of one value per point: it reads one of
        ``binders`` other than only through the arms of a branch on one number (``1 if c else 0`` may
        be a Python number; ``xp.where(x_k > 0, 1, 0)``, a branch on each point, is not).  Otherwise
        its sum broadcasts it to the points first (``xp.sum(v)``, not ``xp.sum(xp.broadcast_to(...))``,
        where it is)."""
        if isinstance(e, sp.Symbol):
            return self._one_per_point(self.temps[e], binders, lv) if e in self.temps else \
                bool(self.deps(e) & binders)
        if not isinstance(e, sp.Basic) or not self.deps(e) & binders:
            return False
        if isinstance(e, sp.Piecewise):
            return self._is_array_level(lv) and any(self.deps(c) & binders for _, c in e.args) or \
                all(self._one_per_point(x, binders, lv) for x, _ in e.args)
        if type(e).__module__.startswith("sympy."):     # +, *, **, functions, comparisons, and/or/not
            return any(self._one_per_point(a, binders, lv) for a in e.args)
        return not self._may_be_scalar(e)      # the phi forms: as before, any branch in them may be a number

    def _size(self, lv: Level) -> lir.Expr:
        if lv.points.size is not None:
            return lv.points.size
        raise AssertionError("level without a size")

    def _reduce(self, e, lv: Level) -> lir.Expr | str:
        body, k, a, b, s = e.args
        child = self._child(lv, k, a, b, s)
        schedule = child.mirror.schedule(e)        # (decided by the pre-pass: reduction_schedules)
        if schedule.terms:
            mv = self.rect_sum(schedule.terms, child)
            if mv is not None:
                # Σ_j A[i, j]·h[j]·g[i]: a matrix-vector product on the block of A, no flattened copy
                return mv
        if schedule.point is not None:
            return self._at_arg_extremum(schedule.point, child, (k, a, b, s))
        vals = self.value(body, child)
        if e.kind == "sum" and is_int_literal(vals) and not self._is_array_level(lv):
            return trivial.count(vals, child.size)      # Σ_k c over n points: c·n, exactly
        if not self._one_per_point(body, {k} | self._varying_binders(child), child):
            # a value that is one number for every point (an invariant body, or a branch whose
            # predicate is a scalar) still counts once per point
            vals = self.call("broadcast_to", self.call("asarray", vals), lir.Tuple((child.size,)))
        kind = e.kind
        # max/min of an empty range is -inf/inf (the loop's initial value); the array API has no
        # ``initial=``, so an empty range is tested for
        empty = {"max": lir.Lit("-math.inf"), "min": lir.Lit("math.inf")}.get(kind)
        if empty:
            self.uses_math = True
        if not self._is_array_level(lv):
            if kind in ("sum", "prod"):
                # an integer total as a Python int, as the loop computes it: a 0-d integer array would not
                # mix with floats under the array API's promotion rules
                integer = (self.temps.get(body, body) if isinstance(body, sp.Symbol) else body).is_integer
                total = self.call(kind, vals)
                return lir.Call(lir.Name("int"), (total,)) if integer else total
            return lir.Paren(lir.IfExp(self._extremum(kind, vals), positive(child.size), empty))
        n_parent = self._size(lv)
        if child.domain.kind == "rect":
            table = self.call("reshape", vals, lir.Tuple((n_parent, child.rect)))
            if kind in ("sum", "prod"):
                return self.call(kind, table, axis=lir.Lit("1"))
            return lir.Paren(lir.IfExp(self._extremum(kind, table, lir.Lit("1")), positive(child.rect),
                                       self.call("full", n_parent, empty)))
        # triangular bounds: a segmented reduction (bincount / ufunc.at where the namespace has them)
        segments = ("_loop_segment_" if self.extrema_first_zero and kind in ("max", "min") else "_segment_") + kind
        return lir.Call(lir.Name(self.helper(segments)), (child.seg, vals, n_parent))

    def _extremum(self, kind: str, vals, axis: lir.Expr | None = None) -> lir.Call:
        """``xp.max(vals, axis=axis)``, or the module's ``_loop_max(vals, axis)`` where the backend asks for the
        loop's zero (the first of equal zeros: lower/extrema_helpers.py)."""
        if not self.extrema_first_zero:
            return self.call(kind, vals, **({} if axis is None else {"axis": axis}))
        return lir.Call(lir.Name(self.helper(f"_loop_{kind}")), (vals,) if axis is None else (vals, axis))

"""Per-segment operations: a loop's points cut into the segments of an index k, one row of a 2-D array each.

The exclusive products of a segment (``ProdAfter``, ``ProdExcept``: reversed cumulative products, no
division, so exact zeros are safe), its arg-extremum one-hots (``argmax``/``argmin`` along the rows), the
states of a linear recurrence v <- a*v + b before each step (a Hillis-Steele scan along the rows), and a
sum weighted by an arg-extremum one-hot (a maximum's adjoint) as its summand at that one point.  Each
needs a segment as a row (``_segments``: a reshape of the points, or of their transpose when the
segments are the columns of a rectangular nest), which is why they are apart from the flat level's
printing.  A mixin of :class:`~coarsen_nb.lower.emit.Printer`; values and statements are records of the
lowered IR (:mod:`coarsen_nb.lower.lir`).
"""

from __future__ import annotations

from coarsen_nb.errors import NoSegmentForm
from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Assign, BinOp, Index, Lit, Name, Paren, Slice, Tuple, Unary
from coarsen_nb.lower.printing import FLAT, Level, is_atom_code, length, positive
from coarsen_nb.phi import forms


class SegmentPrinting:
    """Segment operations of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def _segments(self, body, k, lv: Level, writable: bool = False):
        """The values of ``body`` at level ``lv`` as a 2-D array with one row per segment of ``k``.

        Returns (name, rows, cols, flat) with ``flat(x)`` the code that turns a result of that
        shape back into ``lv``'s order.  Usually k is ``lv``'s own index; when ``lv`` is a
        rectangular loop j opened under k's level (an adjoint summed over an outer index j
        inside k's level), the layout is (k, j) and the segments are its columns.  A value that
        varies with ``lv``'s own index is one number at each of its points already; any other (a
        number, or a branch a scalar predicate chooses) is added to zeros of the points first.  ``writable``:
        the caller writes into the rows, so they are a new array (a copy of a value, which may be a memo's
        or a view of an input), never a view of the value.
        """
        code = self.value(body, lv)
        name = Name(self.fresh("v"))
        parent = lv.parent
        each = lv.binder is not None and lv.binder in self.deps(body) and not self._may_be_scalar(body)
        points = BinOp("+", code, self.call("zeros", lv.size)) if not each else \
            self.call("asarray", code, dtype=self.dtype("float64"), copy=Lit("True")) if writable else code
        if lv.binder == k:
            rows = Lit("1") if parent.kind == "root" else parent.size
            if parent.kind != "root" and lv.domain.kind != "rect":
                raise NoSegmentForm("triangular-extrema")
            cols = lv.size if parent.kind == "root" else lv.rect
            self.emit(Assign(name, self.call("reshape", points, Tuple((rows, cols)))))
            return name, rows, cols, lambda x: self.call("reshape", x, FLAT)
        if (parent is not None and parent.binder == k and parent.kind == "range" and parent.domain.kind == "range"
                and parent.parent is not None and parent.parent.kind == "root" and lv.domain is not None
                and lv.domain.kind == "rect"):
            table = self.call("reshape", points, Tuple((parent.size, lv.rect)))
            self.emit(Assign(name, self.call("asarray", lir.Attr(table, "T"), copy=Lit("True"))))
            return name, lv.rect, parent.size, lambda x: self.call("reshape", lir.Attr(x, "T"), FLAT)
        raise NoSegmentForm("segment-away")

    def _arg_point(self, hot, child: Level, rng) -> Level:
        """The level of the one point of ``child`` (the loop ``rng``) where the one-hot ``hot`` is 1: a mask
        level whose ``mask`` is ``ix``, the first arg-extremum's position in the loop as an index array of
        one element, none where the loop is empty (so nothing is reshaped or reduced when it is)."""
        key = ("arg-point", hot, child.id)
        if key not in self._tables:
            g = self.value(hot.args[0], child)
            if not self.deps(hot.args[0]) & ({rng[0]} | self._varying_binders(child)):
                g = self._each(g, child.size)
            ix = Name(self.fresh("ix"))
            pick = "argmax" if hot.args[5] > 0 else "argmin"
            at = self.call(pick, self.call("reshape", g, Tuple((Lit("1"), Lit("-1")))), axis=Lit("1"))
            none = self.call("zeros", Lit("0"), dtype=self.dtype("int64"))
            self.emit(Assign(ix, lir.IfExp(at, positive(child.size), none)))
            points = self._decided(child, ("point", hot))
            self._tables[key] = self._mirrored(Level(child, "mask", mask=ix, size=length(ix), domain=points.domain),
                                               points)
        return self._tables[key]

    def _at_arg_extremum(self, picked, child: Level, rng) -> lir.Expr:
        """Σ_k [k = argmax_k g]·h(k) (a maximum's adjoint) as h at that one point (``picked``, the pre-pass's
        :class:`~coarsen_nb.lower.reduction_schedules.ArgPoint`): the body's other factors are evaluated on a
        level of at most one point, not on every point and then multiplied by zeros."""
        point = self._arg_point(picked.hot, child, rng)
        varying = {rng[0]} | self._varying_binders(child)
        # the factors that vary over k at the one point; the others (the adjoint of the maximum
        # itself, a scale) where the sum is, from what is computed there already
        at_point, outside = picked.at_point, picked.outside
        vals = self.value(at_point, point)
        if not self.deps(at_point) & varying:
            vals = self._each(vals, point.size)
        total = self.call("sum", vals)
        if outside == 1:
            return total
        scale = self.value(outside, child.parent)
        return BinOp("*", self._unless_no_point(scale, child.size), total)

    @staticmethod
    def _unless_no_point(scale: lir.Expr, n: lir.Expr) -> lir.Expr:
        """``scale``, the factor taken out of a sum over the ``n`` points of a loop (at most one of them, the
        arg-extremum's), or 0.0 where the loop has none: the user's loop never multiplies by it then, so the
        adjoint is 0, not the empty sum's 0 times the factor (NaN where it is infinite: ``exp(-w)`` of
        ``w = -inf``).  One test of a count (a number: the sum is at a level of one point); none where the
        count is a positive literal."""
        code = scale if is_atom_code(scale) else Paren(scale)
        if isinstance(n, Lit) and str(n).isdigit() and int(str(n)) > 0:
            return code
        return Paren(lir.IfExp(code, positive(n), Lit("0.0")))

    def arg_scatter(self, e, lv: Level):
        """``(ix, v)`` where the adjoint ``e``, scattered over the points of the top-level loop ``lv``, is a
        product with the one-hot of that loop's first arg-extremum (a maximum's adjoint, ``b[lo + k] += c·[k =
        argmax]``): ``ix`` the index array of that one point (none where the loop is empty) and ``v`` the other
        factors there, so that the caller adds ``v`` at ``lo + step·ix`` alone, not a one-hot of every point
        (the same numbers: the others are zeros); else None.  Decided by the pre-pass (``LevelWalk.arg_scatter``)."""
        return self._request(lambda: self.walk.arg_scatter(e, lv.mirror), lambda: self._arg_scatter(e, lv))

    def _arg_scatter(self, e, lv: Level):
        picked = lv.mirror.schedules.get(("scatter", e))
        if picked is None:
            return None
        rng = (lv.binder, *self.deps.ranges[lv.binder])
        point = self._arg_point(picked.hot, lv, rng)
        # one number at the point (an index array of one element, or none, broadcasts it): no _each
        at_point, outside = picked.at_point, picked.outside
        vals = None if at_point == 1 else self.value(at_point, point)
        scale = None if outside == 1 else self.value(outside, lv.parent)
        parts = [Paren(x) if not is_atom_code(x) else x for x in (scale, vals) if x is not None]
        if not parts:
            return point.mask, Lit("1.0")
        return point.mask, parts[0] if len(parts) == 1 else BinOp("*", parts[0], parts[1])

    def _each(self, code: lir.Expr, n: lir.Expr) -> lir.Expr:
        """``xp.broadcast_to(xp.asarray(code), (n,))``: one number at each of ``n`` points."""
        return self.call("broadcast_to", self.call("asarray", code), Tuple((n,)))

    def _segment_op(self, e, lv: Level) -> lir.Expr:
        """Exclusive products or arg-extremum indicators of ``body`` within each segment of k."""
        body, k, a, b, s = e.args[:5]
        vv, rows, cols, flat = self._segments(body, k, lv)
        out = Name(self.fresh("x"))
        axis = {"axis": Lit("1")}
        ones = self.call("ones", Tuple((rows, Lit("1"))))

        def exclusive(x):     # the products before each column of x: a 1 first, the last one dropped
            row = self.call("cumulative_prod", self.call("concat", lir.List((ones, x)), **axis), **axis)
            return Index(row, (Slice(), Slice(None, Lit("-1"))))

        if isinstance(e, forms.ProdAfter):
            # exclusive suffix products: a reversed cumulative product, no division
            suf = exclusive(self.call("flip", vv, **axis))
            self.emit(Assign(out, flat(self.call("flip", suf, **axis))))
            return out
        if isinstance(e, forms.ProdExcept):
            # exclusive prefix and suffix products: no division, so exact zeros are safe
            pre = exclusive(vv)
            suf = exclusive(self.call("flip", vv, **axis))
            self.emit(Assign(out, flat(Paren(BinOp("*", pre, self.call("flip", suf, **axis))))))
            return out
        pick = "argmax" if e.args[5] > 0 else "argmin"
        self.emit(Assign(out, self.call("zeros", Tuple((rows, cols)))))
        hot = lir.Compare("==", self.call("arange", cols), self.call(pick, vv, axis=Lit("1"), keepdims=Lit("True")))
        self.emit(lir.If(positive(cols), (Assign(out, self.call("asarray", hot, dtype=self.dtype("float64"))),)))
        self.emit(Assign(out, flat(out)))
        return out

    def _lin_state(self, e, lv: Level) -> lir.Expr:
        """State of v ← a·v + b before each step of k, from 0, per segment: a Hillis–Steele scan of the
        affine maps (a, b) ∘ (a', b') = (a·a', a·b' + b), ⌈log₂ N⌉ passes of products and sums."""
        a, b, k = e.args[:3]
        sa, rows, _, flat = self._segments(a, k, lv, writable=True)
        sb, _, _, _ = self._segments(b, k, lv, writable=True)
        sh, out = Name(self.fresh("sh")), Name(self.fresh("st"))
        every = Slice()
        later, earlier = (every, Slice(sh)), (every, Slice(None, Unary("-", sh)))     # [:, sh:] and [:, :-sh]
        self.emit(Assign(sh, Lit("1")))
        self.emit(lir.While(lir.Compare("<", sh, Index(lir.Attr(sb, "shape"), (Lit("1"),))), (
            Assign(Index(sb, later), BinOp("+", BinOp("*", Index(sa, later), Index(sb, earlier)), Index(sb, later))),
            Assign(Index(sa, later), BinOp("*", Index(sa, later), Index(sa, earlier))),
            lir.AugAssign(sh, "*", Lit("2")))))
        shifted = self.call("concat", lir.List((self.call("zeros", Tuple((rows, Lit("1")))), sb)), axis=Lit("1"))
        self.emit(Assign(out, flat(Index(shifted, (every, Slice(None, Lit("-1")))))))
        return out

"""The adjoint of an element read: the contribution scattered into the read array's adjoint.

A mixin of :class:`~coarsen_nb.lower.reverse.ReverseSweep` (and so of the module writer).  A kernel that
reads ``x[idx]`` over the points of a level has, in its VJP, ``b_x[idx] += e`` at those points; how that
is printed depends on the indices alone, not on the rest of the reverse sweep, so it stands here: a block
or the windows of a dense two-level nest (``Printer.rect_product``), a maximum's one point, the same
element at every point, an affine slice, a guarded element (read only under a branch), or the general
scatter helper.  A fuser that prints the rest of an SOI itself calls :meth:`ScatterAdjoints.scatter` too
(``lower/cupy.py``, ``lower/numba_fusion.py``).  The adjoint's record, ``self._bar(name)``, is the sweep's.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, trivial
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.lir import AugAssign, BinOp, Call, Index, Name, Paren
from coarsen_nb.lower.printing import chain, length
from coarsen_nb.lower.reduction_schedules import arg_factors, unaliased
from coarsen_nb.phi import forms


class ScatterAdjoints:
    """The printing of an element read's adjoint (see the module docstring)."""

    def scatter(self, pr: Printer, name: str, idx, e, level) -> None:
        """Emit, into ``pr``, the adjoint contribution ``b_name[idx] += e`` of an element write read back
        over the points of ``level`` (a rectangular block, one element added once, an affine slice, or
        the general scatter helper); a fuser that prints the rest of an SOI calls it too
        (``lower/cupy.py``, ``lower/numba_fusion.py``)."""
        binders = set(level) | set(pr.deps(e)).union(*(pr.deps(sp.sympify(i)) for i in idx))
        lv = pr.level_for(binders)
        if self._rect_scatter(pr, name, idx, e, lv):
            return
        b = self._bar(name)
        if self._arg_scatter(pr, b, idx, e, lv):
            return
        val = pr.value(e, lv)
        xp = lambda fn: lir.Attr(Name("xp"), fn)       # noqa: E731 (the module's array namespace)
        at_int = lambda codes: Index(b, tuple(Call(Name("int"), (c,)) for c in codes))     # noqa: E731
        if not set().union(*(pr.deps(sp.sympify(i)) for i in idx)) and lv.kind != "root":
            # the same element at every point of the level: add the level's sum once
            codes = [pr.value(sp.sympify(i)) for i in idx]
            total = Call(xp("sum"), (BinOp("+", val, Call(xp("zeros"), (lv.size,))),))
            pr.emit(AugAssign(at_int(codes), "+", total))
            return
        fast = pr.affine_slice(idx[0], lv) if len(idx) == 1 else None
        if fast is not None:
            pr.emit(trivial.scatter_add(self, pr, lv, b, name, fast, val))
            return
        codes = [pr.value(sp.sympify(i), lv) for i in idx]
        if lv.kind != "root":
            wide = lambda c: Paren(BinOp("+", c, Call(xp("zeros"), (lv.size,), (("dtype", xp("int64")),))))  # noqa: E731
            codes = [c if pr.deps(sp.sympify(i)) else wide(c) for c, i in zip(codes, idx, strict=True)]
        shape = lambda d: Index(lir.Attr(b, "shape"), (lir.Lit(str(d)),))     # noqa: E731
        if lv.kind == "root":
            add = AugAssign(at_int(codes), "+", val)
            guard = _nonzero_only_if(pr.temps.get(e, e))
            pr.emit(add if guard is None else lir.If(pr.value(guard), (add,)))
        elif len(codes) == 1:
            n = length(b)
            pr.emit(AugAssign(b, "+", Call(Name(pr.helper('_scatter_sum')), (BinOp("%", codes[0], n), val, n))))
        else:
            # row-major flat indices (Python's negative indices wrap per axis), one 1-D scatter
            flat = BinOp("%", codes[0], shape(0))
            for d, c in enumerate(codes[1:], start=1):
                flat = BinOp("+", BinOp("*", Paren(flat), shape(d)), BinOp("%", c, shape(d)))
            size = chain("*", [shape(d) for d in range(len(codes))])
            summed = Call(Name(pr.helper('_scatter_sum')), (flat, val, size))
            pr.emit(AugAssign(b, "+", Call(xp("reshape"), (summed, lir.Attr(b, "shape")))))

    @staticmethod
    def _arg_scatter(pr: Printer, b, idx, e, lv) -> bool:
        """A maximum's adjoint ``b[lo + step·k] += c·[k = argmax]`` as ``b[lo + step·ix] += c`` at the one point
        ``ix`` (``SegmentPrinting.arg_scatter``), not a one-hot of every point of the loop."""
        factors = arg_factors(unaliased(e, pr.temps), pr.temps)
        if len(idx) != 1 or not any(isinstance(f, forms.ArgOneHot) for f in factors):
            return False
        fast = pr.affine_slice(idx[0], lv)
        hit = None if fast is None else pr.arg_scatter(e, lv)
        if hit is None:
            return False
        (ix, vals), (lo, _, step) = hit, fast
        at = ix if str(step) == "1" else BinOp("*", step, ix)
        if str(lo) != "0":
            at = BinOp("+", lo, at)
        if not (str(lo).isdigit()):
            at = BinOp("%", Paren(at), length(b))       # Python's negative index, as _scatter_add wraps it
        pr.emit(lir.ExprStmt(Call(Name(pr.helper('_add_at')), (b, at, vals))))
        return True

    def _rect_scatter(self, pr: Printer, name: str, idx, e, lv) -> bool:
        """The adjoint of a dense two-level nest (see ``Printer.rect_product``) without flattening:
        into ``w[j + c]`` it is ``(g @ M) * h``, into ``A[i + c, j + c']`` the block ``M * g ⊗ h``, into
        the windows ``x[i + j + c]`` the convolution ``g ∗ h`` (or slice adds of ``M * g ⊗ h``)."""
        rp = pr.rect_product(e, lv, need_matrix=False)
        if rp is None:
            return False
        m, g, h = rp
        if m is None and g is None and h is None:
            return False
        i, j = lv.parent.binder, lv.binder
        b = self._bar(name)
        idx = [sp.sympify(x) for x in idx]
        if len(idx) == 1 and pr.deps(idx[0]) == {i, j}:
            # into the windows x[i + j + c]: a convolution of g and h (a missing one is 1s)
            win = pr.window_read_index(idx, i, j)
            if win is None:
                return False
            pr.emit(pr.window_add(b, win, m, g, h))
            return True
        if m is None and (g is None or h is None):
            return False
        if len(idx) == 1 and pr.deps(idx[0]) == {j}:
            fast = pr.affine_slice(idx[0], pr.level_for({j}))
            if fast is None:
                return False
            val = pr.rect_columns(m, g, h, lv)
            pr.emit(trivial.scatter_add(self, pr, pr.level_for({j}), b, name, fast, val))
            return True
        if len(idx) == 2 and pr.deps(idx[0]) == {i} and pr.deps(idx[1]) == {j}:
            blk = pr.block_read_index(idx, i, j)
            if blk is None:
                return False
            every, new_axis = lir.Slice(), lir.Lit("None")
            factors = ([pr.printed(m)] if m is not None else []) + \
                ([Index(Paren(g), (every, new_axis))] if g is not None else []) + \
                ([Index(Paren(h), (new_axis, every))] if h is not None else [])
            pr.emit(lir.ExprStmt(Call(Name(pr.helper('_block_add')), (b, *blk, chain("*", factors)))))
            return True
        return False


def _nonzero_only_if(e):
    """The condition outside which ``e`` is 0, where ``e`` folds to ``Piecewise((a, c), (0, True))``; else None.

    An element read under a branch (``y[n - 1]`` where the loop ran, the last value of its state) has
    its adjoint at that element zero where the branch is not taken — where the index may not exist
    (``n = 0``: ``b_y[-1]`` of an empty array).  Adding under the same condition adds the same numbers
    and never indexes out of bounds where the forward did not read."""
    folded = sp.piecewise_fold(e)
    if isinstance(folded, sp.Piecewise) and len(folded.args) == 2 and folded.args[1].cond == sp.true \
            and folded.args[1].expr == 0 and folded.args[0].cond != sp.true:
        return folded.args[0].cond
    return None

"""How the NumPy printer (:class:`~coarsen_nb.lower.emit.Printer`) prints each phi-calculus form that is not
a reduction, a write or a branch: one ``_print_<Form>`` method per form, found by the printer's dispatch
(``Printer._compute``) as SymPy's printers find theirs.  A form whose printing takes a module of its own
(scans, segments, nests) calls it from here."""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, trivial
from coarsen_nb.lower.dask_printing import points_read
from coarsen_nb.phi import forms, logsumexp, scans
from coarsen_nb.symbolic.levels import ELEM


class FormPrinting:
    """The ``_print_<Form>`` methods of :class:`~coarsen_nb.lower.emit.Printer` (a mixin of it)."""

    #: each statement computes its array when it runs (NumPy, Numba, CuPy), so an array read for its shape
    #: alone costs its values; False for Dask, whose arrays are graphs and whose numbers may be lazy 0-d
    #: arrays (a ``full_like`` filled with one is computed inside the task): set by the module writer
    eager = True
    #: a read by several index arrays at once is ``_gather_points(a, (i, j))`` (Dask's indexing takes one index
    #: array per call): True for Dask only, set by the module writer (``lower/dask_printing.py``)
    gather_points = False

    def _print_SumTo(self, e, lv):
        g, x = e.args
        # summed to an array leaf's shape, or to the shape of an array the kernel wrote (a slice)
        shaped = self.value(x, self.root) if x in self.temps else self.leaf(x)[0]
        return lir.Call(lir.Name(self.helper('_sum_to')), (self.value(g, lv), lir.Attr(lir.expr(shaped), "shape")))

    def _print_ElemSum(self, e, lv):
        if self.elem is None:       # (np.sum of a number: the number)
            return self.value(e.args[0], lv)
        spread = self._number_per_element(e.args[0])
        if spread is not None:
            return self.call("sum", spread)
        vals = self.value(e.args[0], self.elem)
        if not self._one_per_point(e.args[0], {ELEM}, self.elem):
            # one number for every element (the adjoint 1 of np.sum(y) reaching a scalar that y's
            # elements broadcast, y = v + s): it still counts once per element, as _reduce's sums do
            vals = self.call("broadcast_to", self.call("asarray", vals), self.elem.size)
        return self.call("sum", vals)

    def _number_per_element(self, e) -> lir.Expr | None:
        """``BroadcastLike(c, t)`` with ``c`` one number (the adjoint of ``s`` in ``np.sum(v + s)``, its share of
        each element of ``t = v + s``: :meth:`~coarsen_nb.symbolic.levels.Deps.reduce_to`) as ``c`` broadcast to
        ``t``'s shape, a view to be summed (not a new array); else None.  ``t``'s shape, not the elementwise
        level's: the kernel may also hold arrays of another length (``np.sum(u[1:] * w[:-1])`` beside it)."""
        if not isinstance(e, forms.BroadcastLike) or ELEM in self.deps(e.args[0]) or ELEM not in self.deps(e.args[1]):
            return None
        number = self.call("asarray", self.value(e.args[0], self.elem))
        return self.call("broadcast_to", number, lir.Attr(self.value(e.args[1], self.elem), "shape"))

    def _print_LogSumExp(self, e, lv):
        self.value(forms.RMax(*e.args[1:]), lv)     # the shift, once, before any branch on c
        return self.value(logsumexp.lowered(e), lv)

    def _print_RLin(self, e, lv):
        a, b, k, lo, hi, st = e.args
        return self._reduce(forms.RSum(b * forms.ProdAfter(a, k, lo, hi, st), k, lo, hi, st), lv)

    def _print_ProdExcept(self, e, lv):
        return self._segment_op(e, lv)

    _print_ArgOneHot = _print_ProdAfter = _print_ProdExcept

    def _print_LinState(self, e, lv):
        return self._lin_state(e, lv)

    def _print_scan(self, e, lv):           # (every form of scans.SCAN_FORMS: set below the class)
        return self._scan(e, lv)

    def _print_BroadcastLike(self, e, lv):
        if self.scalar_points and ELEM not in self.deps(e.args[1]):
            # one point of a fused loop, where the array is one number: the number itself (its element's share)
            return self.value(e.args[0], lv)
        if self.eager and self._one_number(e.args[0]):
            # (not under Dask: there the number may be a lazy 0-d array, which full_like's fill value computes
            # inside the task, with NumPy's copyto on a Dask array; zeros_like plus it stays a graph)
            length = self._whole_fill_length(e.args[1])
            if length is not None:
                # np.sum(e) of an array a loop fills whole: n numbers, and the array's values are not needed
                # for its shape (empty_write's sin of every element, computed for the shape alone)
                return self.call("full", lir.Tuple((length,)), self.value(e.args[0], lv), dtype=self.dtype("float64"))
            # the number at every element: one new array, not zeros and then their sum with it
            like = self.value(e.args[1], lv)
            return self.call("full_like", like, self.value(e.args[0], lv), dtype=self.dtype("float64"))
        like = self.value(e.args[1], lv)
        zeros = self.call("zeros_like", like, dtype=self.dtype("float64"))
        return lir.Paren(lir.BinOp("+", zeros, self.value(e.args[0], lv)))

    def _whole_fill_length(self, x) -> lir.Expr | None:
        """The code of ``n`` where ``x`` is the array a loop over ``range(0, n, 1)`` fills whole with floats
        (:func:`~coarsen_nb.lower.trivial.whole_fills`: its shape is ``(n,)``), else None."""
        w = self.resolved(x)
        if not isinstance(w, forms.RWrite):
            return None
        init, _, k, a, b, s, *idx = w.args
        if idx != [k] or a != 0 or s != 1 or not trivial.fills_whole(self, init):
            return None
        return self.value(b, self.root)

    def _one_number(self, b) -> bool:
        """Whether ``b`` is one real number, not an array: a literal, or arithmetic of the kernel's scalar inputs
        (the adjoint of ``np.sum(e)``: ``b_result``, or ``1`` in the gradient)."""
        b = self.resolved(b)
        if not isinstance(b, (sp.Number, sp.Symbol, sp.Add, sp.Mul)) or b.has(sp.I, sp.zoo, sp.nan):
            return False
        leaves = getattr(self, "leaf_map", {})     # (symbol -> (code, is_array): the kernel's inputs)
        return all(s not in self.temps and s not in self.reads and s not in self.deps.ranges
                   and s in leaves and not leaves[s][1] for s in b.free_symbols) \
            and all(isinstance(x, (sp.Number, sp.Symbol, sp.Add, sp.Mul)) for x in sp.preorder_traversal(b))

    def _print_Gather(self, e, lv):
        point = self._gathered_point(e, lv) if self.scalar_points else None
        if point is not None:
            return point
        whole = self.value(e.args[0], self.root)
        fast = self.affine_slice(e.args[1], lv) if len(e.args) == 2 else None
        if fast is not None:        # the elements a loop wrote at k + c: a slice, not a gather
            return lir.Call(lir.Name(self.helper('_take')), (whole, *fast))
        return points_read(self, whole, [self.value(i, lv) for i in e.args[1:]])

    def _gathered_point(self, e, lv) -> lir.Expr | None:
        """``b[int(i)]`` for ``Gather(b, i)`` of an array leaf ``b`` at an index ``i`` of a loop function's indices
        (``scalar_points``: :func:`~coarsen_nb.lower.fusion_domain.point_gather`), as a read ``x[k]`` prints;
        None where the gather is not one element of a leaf."""
        array = e.args[0]
        while isinstance(array, sp.Symbol) and array in self.temps:
            array = self.temps[array]
        if not isinstance(array, sp.Symbol) or array in self.reads or \
                not all(self.deps(i) <= set(self.deps.ranges) for i in e.args[1:]):
            return None
        try:
            code, is_array = self.leaf(array)
        except KeyError:
            return None
        if not is_array:
            return None
        return lir.Index(lir.expr(code), tuple(lir.Call(lir.Name("int"), (self.value(i, lv),)) for i in e.args[1:]))

    def _print_Unwritten(self, e, lv):
        return self._unwritten(e, lv)

    def _print_AndThen(self, e, lv):
        return self._short_circuit(e, lv)

    _print_OrElse = _print_AndThen


# every scan form prints as a scan (a form added to scans.SCAN_FORMS needs nothing here)
for _form in scans.SCAN_FORMS:
    setattr(FormPrinting, f"_print_{_form.__name__}", FormPrinting._print_scan)

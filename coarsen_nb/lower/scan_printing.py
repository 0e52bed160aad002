"""Printing the scans of :mod:`coarsen_nb.phi.scans`: a loop state at every step, without a loop.

``LinScan(a, b, k, ..., init)`` at k's level is one call of a module helper over the level's
points: ``_sum_scan`` (a = 1, a cumulative sum), ``_prod_scan`` (b = 0, a cumulative product) or
``_lin_scan`` (a doubling scan).  Its costate is the same helper on the reversed arrays.  A scan is
computed once at k's own level (a root loop), whatever level asks for it, and broadcast from there
(a masked arm takes its points).  A mixin of :class:`~coarsen_nb.lower.emit.Printer`.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.errors import NoSegmentForm
from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import Level
from coarsen_nb.phi import scans


class ScanPrinting:
    """Scans and costates of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def _scan_level(self, e, lv: Level) -> Level:
        """The level of k, the scan's index, among ``lv``'s ancestors: a loop directly under the root."""
        k = e.args[2]
        for a in lv.ancestors():
            if a.kind == "range" and a.binder == k:
                if a.domain.segmented or a.parent.points is not self.root:
                    raise NoSegmentForm("segment-away")     # lifting keeps scans out of nests
                return a
        return self._child(self.root, k, *e.args[3:6])

    def _scan(self, e, lv: Level) -> lir.Expr:
        at = self._scan_level(e, lv)
        if at is not lv:
            return self.bcast(self.value(e, at), at, lv)
        if isinstance(e, scans.LinScan):
            a, b, _, _, _, _, init = e.args
            return self._scan_call(a, b, init, at, reverse=False)
        a, w = e.args[:2]
        return self._scan_call(a, w, sp.Integer(0), at, reverse=True)

    def _scan_call(self, a, b, init, lv: Level, reverse: bool) -> lir.Expr:
        n = lv.size

        def vec(x):     # a length-n array (reversed for the costate) or a number
            code = self.value(x, lv)
            if not reverse or not self.deps(x):
                return code
            return self.call("flip", code)

        i0 = self.value(init, self.root)
        if a == 1:
            call = lir.Call(lir.Name(self.helper('_sum_scan')), (vec(b), i0, n))
        elif b == 0:
            call = lir.Call(lir.Name(self.helper('_prod_scan')), (vec(a), i0, n))
        else:
            fn = lir.Name(self.helper('_lin_scan'))
            call = lir.Call(fn, (vec(a), vec(b), i0, n))
        return self.call("flip", call) if reverse else call

"""Printing the arrays a closed-form loop writes: ``RWrite`` (a loop that fills ``y[k] = v_k`` into a copy of
its initial array) and ``Unwritten`` (the adjoint's copy of an array with the written elements zeroed).

A mixin of :class:`~coarsen_nb.lower.emit.Printer`: the written values are computed on the loop's level
(:meth:`Printer._child`), then put into a float copy of the initial array (``_put``), or, where one loop writes
every element of a 1-D array in order, are that array (:func:`coarsen_nb.lower.trivial.whole_write`).  A
write inside another array level has no segment form (``NoSegmentForm``: a finer selection is compiled).
"""

from __future__ import annotations

from coarsen_nb.errors import NoSegmentForm
from coarsen_nb.lower import trivial
from coarsen_nb.lower.printing import Level


class WritePrinting:
    """Written arrays of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def _write(self, e, lv: Level) -> str:
        init, body, k, a, b, s, *idx = e.args
        if self._is_array_level(lv):
            raise NoSegmentForm("nested-write")
        child = self._child(lv, k, a, b, s)
        vals = self.value(body, child)
        where = ", ".join(str(self.value(i, child)) for i in idx)
        out = self.fresh("w")
        base = self.value(init, lv)
        whole = trivial.whole_write(self.xp, out, base, vals, self._size(child), len(idx) == 1 and idx[0] == k
                                    and a == 0 and s == 1 and lv.kind == "root")
        if whole:
            self.emit(whole[0])
            self.indent += 1
            self.emit(whole[1])
            self.indent -= 1
            self.emit("else:")
            self.indent += 1
        self.emit(f"{out} = {self.xp}.asarray({base}, dtype={self.xp}.float64, copy=True)")
        self.emit(f"{out} = {self.helper('_put')}({out}, ({where},), {vals})")
        if whole:
            self.indent -= 1
        return out

    def _unwritten(self, e, lv: Level) -> str:
        body, k, a, b, s, *idx = e.args
        child = self._child(lv, k, a, b, s)
        out = self.fresh("u")
        self.emit(f"{out} = {self.xp}.asarray({self.value(body, self.root)}, dtype={self.xp}.float64, copy=True)")
        self.emit(f"{out} = {self.helper('_put')}({out}, ({', '.join(str(self.value(i, child)) for i in idx)},), 0.0)")
        return out

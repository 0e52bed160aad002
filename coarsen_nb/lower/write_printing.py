"""Printing the arrays a closed-form loop writes: ``RWrite`` (a loop that fills ``y[k] = v_k`` into a copy of
its initial array) and ``Unwritten`` (the adjoint's copy of an array with the written elements zeroed).

A mixin of :class:`~coarsen_nb.lower.emit.Printer`: the written values are computed on the loop's level
(:meth:`Printer._child`), then put into a float copy of the initial array (``_put``), or, where one loop writes
every element of a 1-D array in order, are that array (:func:`coarsen_nb.lower.trivial.whole_write`; with
no test where the plan proves it, :func:`coarsen_nb.lower.trivial.whole_fills`: a slice read is its view).  A
write inside another array level has no segment form (``NoSegmentForm``: a finer selection is compiled).
"""

from __future__ import annotations

from coarsen_nb.errors import NoSegmentForm
from coarsen_nb.lower import lir, trivial
from coarsen_nb.lower.lir import Assign, Call, Lit, Name
from coarsen_nb.lower.printing import Level


class WritePrinting:
    """Written arrays of the :class:`~coarsen_nb.lower.emit.Printer`."""

    #: the printed names of the arrays a write fills whole, proved from the plan (trivial.whole_fills)
    whole_fills: frozenset[str] = frozenset()

    def _write(self, e, lv: Level) -> lir.Expr:
        init, body, k, a, b, s, *idx = e.args
        if self._is_array_level(lv):
            raise NoSegmentForm("nested-write")
        child = self._child(lv, k, a, b, s)
        identity = len(idx) == 1 and idx[0] == k and a == 0 and s == 1 and lv.kind == "root"
        if identity and k in self.deps(body) and trivial.fills_whole(self, init):
            # a value at each of the n points, in order: the array (x[1:]'s view), called what the array is
            if e in self.words:
                self.words.setdefault(self.temps.get(body, body), self.words[e])
            return self.value(body, child)
        vals = self.value(body, child)
        where = [self.value(i, child) for i in idx]
        out = Name(self.fresh(self.words.get(e) or "w"))
        base = self.value(init, lv)
        whole = trivial.whole_write(self, base, vals, self._size(child), identity)
        if not whole:
            self._put_copy(out, base, where, vals)
            return out
        with self.block() as orelse:
            # the loop's index (0, 1, ..., n - 1) made here, where only this arm needs it: the level's own
            # index array is then dead where nothing else reads it (a slice read, x[1:])
            self._put_copy(out, base, [self.call("arange", self._size(child))], vals)
        self.emit(lir.If(whole[0], (Assign(out, whole[1]),), tuple(orelse)))
        return out

    def _unwritten(self, e, lv: Level) -> lir.Expr:
        body, k, a, b, s, *idx = e.args
        child = self._child(lv, k, a, b, s)
        out = Name(self.fresh("u"))
        self._put_copy(out, self.value(body, self.root), lambda: [self.value(i, child) for i in idx], Lit("0.0"))
        return out

    def _put_copy(self, out: Name, base: lir.Expr, where, vals: lir.Expr) -> None:
        """``out = xp.asarray(base, dtype=xp.float64, copy=True)``, then ``out = _put(out, (where,), vals)``
        (``where``: the index expressions, or a function giving them, called after the first statement).
        The index tuple keeps the trailing comma the text always had, ``(i, j,)``: a refactor of the text."""
        self.emit(Assign(out, self.call("asarray", base, dtype=self.dtype("float64"), copy=Lit("True"))))
        where = where() if callable(where) else where
        at = lir.Tuple(tuple(where), trailing=len(where) > 1)
        self.emit(Assign(out, Call(Name(self.helper('_put')), (out, at, vals))))

"""How the module writer builds its code as lowered-IR records (:mod:`coarsen_nb.lower.lir`).

A mixin of :class:`~coarsen_nb.lower.module.ModuleWriter`: an IR expression of an opaque step or a
control value as a record (:meth:`WriterRecords.expr`, which the rules of :mod:`coarsen_nb.rules` read
too), the writer's statements (:meth:`~WriterRecords.emit`) and its nested bodies
(:meth:`~WriterRecords.block`).  The writer keeps the function it writes as a body of records (``body``; the
kernel printers' and the fusers' statements join it as records), printed once at the end.
"""

from __future__ import annotations

from contextlib import contextmanager

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.lower import lir, literals, reshapes
from coarsen_nb.lower.printing import lane_rows_read
from coarsen_nb.rules.record import spell
from coarsen_nb.rules.table import missing, rule


class WriterRecords:
    """The module writer's records: expressions, statements, blocks (see the module docstring)."""

    def emit(self, stmt: lir.Stmt) -> None:
        """Append statement ``stmt`` (a :mod:`~coarsen_nb.lower.lir` record): to the innermost open
        :meth:`block`, else to ``body``, the function being written (``ModuleWriter._function`` prints it)."""
        (self._blocks[-1] if self._blocks else self.body).append(stmt)

    def emit_all(self, stmts) -> None:
        """Append the statements ``stmts`` in their order (a kernel printer's body, a fuser's)."""
        for s in stmts:
            self.emit(s)

    @contextmanager
    def block(self):
        """Collect the statements written inside ``with`` into a list, the body of an ``If`` or a loop:
        ``with self.block() as body: ...``, then ``self.emit(lir.If(test, tuple(body)))``.  ``indent`` is
        the block's depth while it is open (a kernel printer made inside prints at it: ``Printer.lines``)."""
        body: list[lir.Stmt] = []
        self._blocks.append(body)
        self.indent += 1
        try:
            yield body
        finally:
            self.indent -= 1
            self._blocks.pop()

    def py(self, name: str) -> str:
        return self.names(name)

    def _name(self, name: str) -> lir.Expr:
        """The Python name of SSA value ``name``, as a record."""
        return lir.expr(self.py(name))

    def ndim(self, e: ir.Expr) -> int:
        t = self.plan.types.get(e.id) if isinstance(e, ir.Name) else None
        return t.ndim if t is not None else 0

    def index_items(self, e: ir.Index) -> tuple[lir.Expr, ...]:
        """The index of the read ``e``, as records: a row ``X[i]`` of a 2-D array is ``X[i, ...]``, the one form
        of a partial index the array API defines (NumPy and CuPy read it the same)."""
        idx = [self.expr(i) for i in e.index]
        base = self.plan.types.get(e.value.id) if isinstance(e.value, ir.Name) else None
        if base is not None and base.is_array and len(e.index) < base.ndim and not any(self.ndim(i) for i in e.index):
            idx.append(lir.Lit("..."))
        return tuple(idx)

    def is_mask(self, e: ir.Expr) -> bool:
        """Whether ``e`` is a boolean array (an index that selects, each element at most once)."""
        t = self.plan.types.get(e.id) if isinstance(e, ir.Name) else None
        return bool(t is not None and t.kind == "bool" and t.ndim)

    def is_array(self, name: str) -> bool:
        t = self.plan.types.get(name)
        return bool(t is not None and t.is_array)

    # -- expressions of the IR (opaque steps, control) ------------------------------------

    def expr(self, e: ir.Expr) -> lir.Expr:
        """An IR expression as a record (for opaque steps and control values).  Compound expressions are
        parenthesized (``Paren``) as the text writer always did, so the printed code is unchanged."""
        if isinstance(e, ir.Name):
            return lir.expr(self.py(e.id))
        if isinstance(e, ir.Const):
            return lir.Lit(repr(e.value))
        if isinstance(e, ir.Undef):
            # never read on a path where it matters (φ(a, undef) = a); a number keeps the
            # eager parts of lowered boolean logic from failing on it
            return lir.Lit("0.0")
        if isinstance(e, ir.BinOp):
            return lir.Paren(lir.BinOp(e.op, self.expr(e.left), self.expr(e.right)))
        if isinstance(e, ir.UnaryOp):
            return lir.Paren(lir.Unary(e.op, self.expr(e.operand)))
        if isinstance(e, ir.Compare):
            return lir.Paren(lir.Compare(e.op, self.expr(e.left), self.expr(e.right)))
        if isinstance(e, ir.BoolOp):
            return lir.Paren(lir.BoolOp(e.op, tuple(self.expr(v) for v in e.values)))
        if isinstance(e, ir.IfExp):
            return lir.Paren(lir.IfExp(self.expr(e.body), self.expr(e.test), self.expr(e.orelse)))
        if isinstance(e, ir.Index):
            rows = self._lanes().get(e.index[0].id) if isinstance(e.index[0], ir.Name) and len(e.index) > 1 \
                and not any(self.ndim(i) for i in e.index[1:]) else None
            if rows is not None:     # z[p, t] over a batched loop's lanes: rows of z, as the kernels read them
                return lane_rows_read(self, self.expr(e.value), rows, self.expr(e.index[0]),
                                      [self.expr(i) for i in e.index[1:]])
            return lir.Index(self.expr(e.value), self.index_items(e))
        if isinstance(e, ir.Attr):
            return lir.Attr(self.expr(e.value), e.attr)
        if isinstance(e, ir.Tuple):
            return lir.Tuple(tuple(self.expr(v) for v in e.elts))
        if isinstance(e, ir.Call):
            return self._call(e)
        raise CoarsenError(str(e), message=f"cannot lower {e}")

    def _call(self, e: ir.Call) -> lir.Expr:
        f = e.func
        if f in reshapes.RESHAPES:
            return reshapes.forward(f, self.expr(e.args[0]), self.ndim(e.args[0]))
        if f in literals.LITERALS:
            items = literals.entries(e)
            ints = all(type(a.value) is int if isinstance(a, ir.Const) else
                       getattr(self.plan.types.get(a.id), "kind", None) == "int" for a in items)
            return literals.forward(e, [self.expr(a) for a in items], ints)
        # an opaque step: spelled as its registration says (rules/)
        p = rule(f)
        spelling = p.spelling.step or p.spelling.array
        if spelling is None:
            raise missing(p, "an opaque step of the array code")
        if p.spelling.helper is not None:
            self.helper(p.spelling.helper)
        return spell(spelling, [self.expr(a) for a in e.args], "xp", e.static)


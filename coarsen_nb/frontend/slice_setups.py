"""Setting up a statement's slice reads at its start, so that the statement is one SOI.

A slice read ``x[1:]`` is a fresh array filled by a loop (:mod:`coarsen_nb.frontend.slices`); before the
loop come ``len(x)``, the bounds, the length and ``np.zeros(length)``.  ``len`` and ``zeros`` are opaque
steps, and an opaque step ends the lifter's run (:mod:`coarsen_nb.phi.lift`): translated in place,
``np.sum((x[1:] - x[:-1]) ** 2)`` was four SOIs, the first read's loop apart from the arithmetic, so its
adjoint went through an array of its own (zeros, ``+=``, a gather, a scatter).  Translated with every
read's set-up at the start of the statement (``len(x)`` once, one length for ``x[1:]`` and ``x[:-1]``),
the loops and the arithmetic are one run, one SOI, as the loop style ``for i in range(len(x) - 1)`` is.

That moves evaluation earlier, so it is done only where nothing can tell: a read of a variable with
literal bounds and step (its set-up reads the variable and literals only), in a simple statement that
binds no name and evaluates nothing conditionally (:func:`hoistable`).  Everything else is set up where
it is read, as before.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from dataclasses import dataclass, field

from coarsen_nb import ir


@dataclass
class _Setups:
    """Where the slice reads of one simple statement compute their lengths, bounds and fresh arrays: the
    position in its first block, and the values computed there so far (IR value -> its temporary)."""

    block: str
    pos: int
    stmt: ast.stmt
    sizes: dict = field(default_factory=dict)


#: the statements whose slice reads are set up at their start: no binding, branch or short circuit inside
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)
_NOT_HOISTED = (ast.NamedExpr, ast.Lambda, ast.comprehension, ast.IfExp, ast.BoolOp)


def _const_bound(e: ast.AST | None) -> bool:
    """Whether ``e`` is an omitted bound or an int literal (``1``, ``-1``)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return e is None or (isinstance(e, ast.Constant) and type(e.value) is int)


def hoistable(node: ast.Subscript, stmt: ast.stmt) -> bool:
    """Whether the slice read ``node`` of statement ``stmt`` may be set up at the statement's start: a read
    of a variable with constant bounds and steps (nothing in it evaluates any sooner), in a statement that
    binds no name and branches nowhere before it is read (its value is the variable's at the start)."""
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return isinstance(node.value, ast.Name) and \
        all(isinstance(e, ast.Slice) and all(_const_bound(b) for b in (e.lower, e.upper, e.step)) for e in elts) and \
        not any(isinstance(n, _NOT_HOISTED) for n in ast.walk(stmt))


class SliceSetups:
    """Mixin of :class:`~coarsen_nb.frontend.slices.SliceTranslator`: where a slice read's set-up goes."""

    @contextmanager
    def slice_setups(self, s: ast.stmt):
        """Translating statement ``s``: a simple one's slice reads are set up at its start (:func:`hoistable`;
        the module docstring says why)."""
        marks = self.__dict__.setdefault("_slice_marks", [])
        marks.append(_Setups(self.cur, len(self.blocks[self.cur]["stmts"]), s) if isinstance(s, _SIMPLE) else None)
        try:
            yield
        finally:
            marks.pop()

    @contextmanager
    def _set_up(self, node: ast.Subscript):
        """The statements emitted inside, moved to the start of the statement where ``node`` may be set up
        there; ``self._sizes``: the values already computed there (else None), for :meth:`_shared`."""
        marks = self.__dict__.get("_slice_marks")
        mark = marks[-1] if marks else None
        if mark is None or not hoistable(node, mark.stmt):
            self._sizes = None
            yield
            return
        here = self.blocks[self.cur]["stmts"]
        first = len(here)
        self._sizes = mark.sizes
        try:
            yield
        finally:
            self._sizes = None
        moved = here[first:]
        del here[first:]
        self.blocks[mark.block]["stmts"][mark.pos:mark.pos] = moved
        mark.pos += len(moved)

    def _shared(self, value: ir.Expr, kind: str, node: ast.AST, word: str | None) -> ir.Expr:
        """``value`` as a temporary, the one already computed where the slice reads of this statement are set
        up (``len(x)`` once; ``x[1:]`` and ``x[:-1]`` one length)."""
        shared = getattr(self, "_sizes", None)
        if shared is None or isinstance(value, (ir.Const, ir.Name)):
            return self.temp(value, kind, node, word)
        if value not in shared:
            shared[value] = self.temp(value, kind, node, word)
        return shared[value]

    # Implemented by the CFG builder and ExprTranslator.
    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None,
             word: str | None = None) -> ir.Expr:  # pragma: no cover
        raise NotImplementedError

"""The small parts every numba loop printer builds its loops from: a scatter's integer index, an accumulator's
first value, a folded index offset, a parenthesized operand, and :class:`Block`, a loop body's statements in the
order its printer printed them.

Apart from :mod:`coarsen_nb.lower.numba_loops` (the loop function of one domain) because the row, nest, scan
and log-sum-exp printers share them without needing a loop function."""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import is_atom_code


def integer_index(e: lir.Expr) -> lir.Expr:
    """A scatter's index as an ``int`` (an integer literal as it is)."""
    return e if str(e).lstrip("-").isdigit() else lir.Call(lir.Name("int"), (e,))


def accumulator_start(red) -> lir.Expr:
    """The accumulator's first value: NumPy's integer sum (product) starts at ``0`` (``1``), a float one
    at ``0.0`` (``1.0``), a maximum (minimum) at minus (plus) ``math.inf``."""
    if red.identity in (sp.oo, -sp.oo):
        inf = lir.Attr(lir.Name("math"), "inf")
        return lir.Unary("-", inf) if red.identity == -sp.oo else inf
    return lir.Lit(str(red.identity) if red.integer else f"{float(red.identity)}")


def minus(a: lir.Expr, b: lir.Expr) -> lir.Expr:
    """``a - b`` (an index relative to a range's start), folded where both are integer literals or ``b`` is 0."""
    def integer(e):
        return int(e.code) if isinstance(e, lir.Lit) and e.code.lstrip("-").isdigit() else None

    if integer(b) == 0:
        return a
    if integer(a) is not None and integer(b) is not None:
        return lir.Lit(str(integer(a) - integer(b)))
    return lir.BinOp("-", a, paren(b))


def paren(e: lir.Expr) -> lir.Expr:
    return e if is_atom_code(e) else lir.Paren(e)


class Block:
    """The statements of one loop body (or the function's), in order: what its printer has printed so far
    (the values and bounds the next statements read) before each statement added."""

    def __init__(self, pr):
        self.pr = pr
        self.out: list[lir.Stmt] = []
        self.taken = 0

    def _flush(self) -> None:
        self.out += self.pr.body[self.taken:]
        self.taken = len(self.pr.body)

    def add(self, stmts: list[lir.Stmt]) -> None:
        self._flush()
        self.out += stmts

    def done(self) -> list[lir.Stmt]:
        self._flush()
        return self.out

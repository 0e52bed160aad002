"""Small builders of lowered-IR expressions (:mod:`coarsen_nb.lower.lir_exprs`) for the rules.

A rule's contribution, tangent or spelling is a record, not text: these are the few shapes the rules write
(``xp.reshape(bar, (n, 1))``, ``a.shape[0]``, a literal of a compile-time parameter).  A record prints
exactly its fields; where the rules wrote parentheses they build :class:`Paren`.
"""

from __future__ import annotations

from dataclasses import dataclass

from coarsen_nb.lower.lir_exprs import (  # noqa: F401 (the records the rules build, named from here)
    Attr,
    BinOp,
    Call,
    Compare,
    Expr,
    IfExp,
    Index,
    List,
    Lit,
    Name,
    Paren,
    Slice,
    Tuple,
    Unary,
)

XP = Name("xp")


@dataclass(frozen=True)
class AtIndex:
    """A rule's cotangent of a 1-D operand that is ``value`` at the elements ``index`` (an index array of
    distinct positions) and zero elsewhere: the reverse sweep adds it there (``b_x[index] += value``),
    not as an array of zeros and ones the size of the operand.  A maximum's is its first arg-maximum's
    one element."""

    index: Expr
    value: Expr


@dataclass(frozen=True)
class AddedBy:
    """A rule's cotangent of an operand that a helper adds into the operand's adjoint and returns
    (``b_x = helper(b_x, *args)``), not an array the size of the operand times a one-hot.  A maximum's over
    axes: each group's cotangent at its first arg-maximum (``_add_at_first_extremum``), in place where the
    namespace writes arrays in place (numba), the adjoint plus the one-hot's product elsewhere (Dask's arrays
    are not written in place: what the helper returns is the adjoint)."""

    helper: str
    args: tuple[Expr, ...]


ZERO = Lit("0.0")
ALL = Slice()                   # ``:``
REST = Lit("...")               # ``...``
NEW = Lit("None")               # a new axis


def dotted(name: str, base: Expr | None = None) -> Expr:
    """``a.b.c`` as a name and its attributes (after ``base`` when given)."""
    head, *attrs = name.split(".")
    out = Name(head) if base is None else Attr(base, head)
    for a in attrs:
        out = Attr(out, a)
    return out


def lit(v) -> Expr:
    """A compile-time Python value (an axis, a mode, a tuple of axes) as it prints with ``repr``."""
    if isinstance(v, tuple):
        return Tuple(tuple(lit(x) for x in v))
    return Lit(repr(v))


def num(k: int | str | None) -> Lit:
    """An int (or a number's code, or None) as a literal, as ``str`` prints it."""
    return Lit(str(k))


def call(fn: str | Expr, *args: Expr, **kwargs: Expr) -> Call:
    """``fn(args, k=v)``; ``fn`` a (dotted) name or a callee record."""
    return Call(dotted(fn) if isinstance(fn, str) else fn, args, tuple(kwargs.items()))


def xp_call(fn: str, *args: Expr, **kwargs: Expr) -> Call:
    """``xp.fn(args, k=v)`` (``fn`` may be dotted: ``linalg.solve``)."""
    return Call(dotted(fn, XP), args, tuple(kwargs.items()))


def shape(x: Expr) -> Attr:
    """``x.shape``."""
    return Attr(x, "shape")


def dim(x: Expr, d: int) -> Index:
    """``x.shape[d]``."""
    return Index(shape(x), (num(d),))


def size(x: Expr) -> Attr:
    """``x.size``."""
    return Attr(x, "size")


def T(x: Expr) -> Attr:     # noqa: N802 (the transpose, as written)
    """``x.T``."""
    return Attr(x, "T")


def op(symbol: str, left: Expr, right: Expr) -> BinOp:
    """``left symbol right``."""
    return BinOp(symbol, left, right)


def mul(*factors: Expr) -> Expr:
    """``a * b * c``, left to right."""
    out = factors[0]
    for f in factors[1:]:
        out = BinOp("*", out, f)
    return out


def neg(x: Expr) -> Expr:
    """``-(x)``: the negation the rules write of a compound value."""
    return Unary("-", Paren(x))


def zeros_like_shape(x: Expr) -> Call:
    """``xp.zeros(x.shape)``."""
    return xp_call("zeros", shape(x))


# -- spellings (see rules/record.py): builders ``(args, xp, static) -> Expr`` -----------------------------


def called(fn: str):
    """The spelling ``fn(a, b)``: ``fn`` called as written (a builtin), whatever the namespace."""
    return lambda args, xp, static: call(fn, *args)


def infix(symbol: str):
    """The spelling ``(a symbol b)``."""
    return lambda args, xp, static: Paren(BinOp(symbol, args[0], args[1]))

"""The lowered IR's expressions: the closed set a generated function's statements evaluate.

Each record prints exactly the text its fields say (``str(node)``) and adds no parentheses of its own
(:class:`Paren` says where Python must group), so a printer moved from f-strings to records prints the same
characters.  :class:`Raw` is code a printer still writes as text, while the printers move over.  The
statements, the printing of a body and ``verify`` are :mod:`coarsen_nb.lower.lir`.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator
from dataclasses import dataclass

# -- expressions -------------------------------------------------------------------------------------


class Expr:
    """An expression of a generated function."""

    __slots__ = ()

    def children(self) -> tuple[Expr, ...]:
        return ()

    def __str__(self) -> str:
        return self.text()

    def text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Name(Expr):
    id: str

    def text(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class Lit(Expr):
    """A literal as it prints: a number's exact code, ``True``, ``None``, a string's repr."""

    code: str

    def text(self) -> str:
        return self.code


@dataclass(frozen=True, slots=True)
class Attr(Expr):
    value: Expr
    attr: str

    def children(self):
        return (self.value,)

    def text(self) -> str:
        return f"{self.value}.{self.attr}"


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """``lo:hi:step`` inside an :class:`Index` (a missing bound prints as nothing)."""

    lo: Expr | None = None
    hi: Expr | None = None
    step: Expr | None = None

    def children(self):
        return tuple(e for e in (self.lo, self.hi, self.step) if e is not None)

    def text(self) -> str:
        parts = ["" if self.lo is None else str(self.lo), "" if self.hi is None else str(self.hi)]
        if self.step is not None:
            parts.append(str(self.step))
        return ":".join(parts)


@dataclass(frozen=True, slots=True)
class Index(Expr):
    """``value[i, j, ...]``; an item may be a :class:`Slice`, or ``Lit("None")`` (a new axis) or
    ``Lit("...")``."""

    value: Expr
    items: tuple[Expr, ...]

    def children(self):
        return (self.value, *self.items)

    def text(self) -> str:
        return f"{self.value}[{', '.join(map(str, self.items))}]"


@dataclass(frozen=True, slots=True)
class Call(Expr):
    func: Expr
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()

    def children(self):
        return (self.func, *self.args, *(v for _, v in self.kwargs))

    def text(self) -> str:
        parts = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """``left op right``: arithmetic (``+ - * / // % ** @``) and bitwise (``& | ^``) operators;
    ``spaced=False`` prints ``left**right`` (the printers write most powers so; the characters are the
    printer's choice, as parentheses are)."""

    op: str
    left: Expr
    right: Expr
    spaced: bool = True

    def children(self):
        return (self.left, self.right)

    def text(self) -> str:
        return f"{self.left} {self.op} {self.right}" if self.spaced else f"{self.left}{self.op}{self.right}"


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    """``-x``, ``+x``, ``~x``, ``not x``."""

    op: str
    operand: Expr

    def children(self):
        return (self.operand,)

    def text(self) -> str:
        return f"{self.op}{' ' if self.op == 'not' else ''}{self.operand}"


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    op: str
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def text(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    op: str                     # "and" | "or"
    values: tuple[Expr, ...]

    def children(self):
        return self.values

    def text(self) -> str:
        return f" {self.op} ".join(map(str, self.values))


@dataclass(frozen=True, slots=True)
class IfExp(Expr):
    body: Expr
    test: Expr
    orelse: Expr

    def children(self):
        return (self.body, self.test, self.orelse)

    def text(self) -> str:
        return f"{self.body} if {self.test} else {self.orelse}"


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    """``(a, b)``; one element prints ``(a,)``, none ``()``; ``bare`` prints without the parentheses
    (the targets and values of ``a, b = c, d``); ``trailing`` prints a comma after the last element
    whatever their number, ``(a, b,)`` (the characters some printers wrote, kept while a commit must not
    change the generated text)."""

    elts: tuple[Expr, ...]
    bare: bool = False
    trailing: bool = False

    def children(self):
        return self.elts

    def text(self) -> str:
        inner = ", ".join(map(str, self.elts)) + ("," if len(self.elts) == 1 or self.trailing and self.elts else "")
        return inner if self.bare else f"({inner})"


@dataclass(frozen=True, slots=True)
class List(Expr):
    """``[a, b]``: a list display (the arrays ``xp.concat`` joins)."""

    elts: tuple[Expr, ...]

    def children(self):
        return self.elts

    def text(self) -> str:
        return f"[{', '.join(map(str, self.elts))}]"


@dataclass(frozen=True, slots=True)
class Raw(Expr):
    """An expression some printer still writes as text (its reads are unknown; see the module docstring)."""

    code: str

    def text(self) -> str:
        return self.code


@dataclass(frozen=True, slots=True)
class Code(Expr):
    """An expression in a notation its maker prints itself, with the names it reads *declared* by the maker
    (``names``), never read back from its text: a CuPy kernel's construction (its C source is a string
    constant; it reads ``xp``), a loop bound SymPy's Python printer wrote (it reads its free symbols).
    Every pass sees its reads as the :class:`Name` children; no pass looks into ``code``."""

    code: str
    names: tuple[str, ...] = ()

    def children(self):
        return tuple(Name(n) for n in self.names)

    def text(self) -> str:
        return self.code


def expr(e: Expr | str) -> Expr:
    """``e`` as an expression record: a printer not yet moved over hands its text in as :class:`Raw`, except
    a plain identifier (an array's name from the module writer, most often), which is the :class:`Name` it
    is: its read is then known."""
    if isinstance(e, Expr):
        return e
    return Name(e) if e.isidentifier() and not keyword.iskeyword(e) else Raw(e)


@dataclass(frozen=True, slots=True)
class Paren(Expr):
    """``(e)``: parentheses where the printer needs Python to group."""

    inner: Expr

    def children(self):
        return (self.inner,)

    def text(self) -> str:
        return f"({self.inner})"


def walk(e: Expr) -> Iterator[Expr]:
    """``e`` and every expression inside it, parents first."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def names_in(e: Expr) -> list[str]:
    """The names ``e`` reads, once per occurrence, in print order (:func:`walk`'s order, without its generator:
    the dead-code passes ask this of every statement again and again, ~18000 times in gmm's build, and the
    generator's frames were half of its time)."""
    out: list[str] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Name):
            out.append(node.id)
        else:
            stack.extend(reversed(node.children()))
    return out

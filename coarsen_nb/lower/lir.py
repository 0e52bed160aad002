"""The lowered IR's statements and expressions: what a generated function is, before it is text.

The back half prints Python (NumPy, CuPy, Numba) functions.  Its passes — dead assignments, freeing
temporaries after their last use, the helpers and imports a module needs, the cost model, the map from
a generated line back to the user's — need to know what each statement defines and reads.  Reading that
back from printed text (regexes, ``ast.parse``) is what this IR replaces: a printer builds these records,
the passes walk them, and :func:`print_body` writes the text once, at the end.

The records are small and frozen, and every one prints on its own (``str(node)``):

* **expressions** — :class:`Name`, :class:`Lit` (a literal, as printed: ``0.5``, ``True``, ``'valid'``),
  :class:`Attr`, :class:`Index` with :class:`Slice`, :class:`Call`, :class:`BinOp`, :class:`Unary`,
  :class:`Compare`, :class:`BoolOp`, :class:`IfExp`, :class:`Tuple`, :class:`Paren`.  A node prints exactly
  the text its fields say and adds no parentheses of its own: where Python's precedence needs them the
  printer says so with :class:`Paren`, as it wrote them in text before.  So a printer moved from f-strings
  to records prints the same characters, and "the generated code did not change" stays a byte comparison.
* **statements** — :class:`Assign` (also ``x[i] = v`` and ``a, b = c, d``), :class:`AugAssign`,
  :class:`ExprStmt`, :class:`If`, :class:`For`, :class:`While`, :class:`Break`, :class:`Pass`,
  :class:`Return`, :class:`Raise`, :class:`Free` (``del``), :class:`Comment` (with the user's source lines it
  stands for).

:class:`Text` (a statement) and :class:`Raw` (an expression) are the records that are not structured: code
some printer still writes as text.  They print, but their reads are unknown, so :func:`verify` refuses them
where ``structured=True`` is asked for; they exist while the printers move over and go when the last one
has.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

INDENT = "    "


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
    """``left op right``: arithmetic (``+ - * / // % ** @``) and bitwise (``& | ^``) operators."""

    op: str
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)

    def text(self) -> str:
        return f"{self.left} {self.op} {self.right}"


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
    (the targets and values of ``a, b = c, d``)."""

    elts: tuple[Expr, ...]
    bare: bool = False

    def children(self):
        return self.elts

    def text(self) -> str:
        inner = ", ".join(map(str, self.elts)) + ("," if len(self.elts) == 1 else "")
        return inner if self.bare else f"({inner})"


@dataclass(frozen=True, slots=True)
class Raw(Expr):
    """An expression some printer still writes as text (its reads are unknown; see the module docstring)."""

    code: str

    def text(self) -> str:
        return self.code


def expr(e: Expr | str) -> Expr:
    """``e`` as an expression record: a printer not yet moved over hands its text in as :class:`Raw`."""
    return e if isinstance(e, Expr) else Raw(e)


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
    """The names ``e`` reads, once per occurrence, in print order."""
    return [n.id for n in walk(e) if isinstance(n, Name)]


# -- statements --------------------------------------------------------------------------------------


class Stmt:
    """A statement of a generated function."""

    __slots__ = ()

    def blocks(self) -> tuple[tuple[Stmt, ...], ...]:
        """The statement lists nested in this one (an ``if`` 's arms, a loop's body)."""
        return ()

    def exprs(self) -> tuple[Expr, ...]:
        """The expressions this statement evaluates itself (not those of its nested blocks)."""
        return ()

    def targets(self) -> tuple[str, ...]:
        """The names this statement binds (a subscript store ``x[i] = v`` binds none: it reads ``x``)."""
        return ()


@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    """``target = value``; the target is a :class:`Name`, an :class:`Index` (a store into an array) or a
    bare :class:`Tuple` of names."""

    target: Expr
    value: Expr

    def exprs(self):
        return (self.value, *_store_reads(self.target))

    def targets(self):
        return _bound(self.target)


@dataclass(frozen=True, slots=True)
class AugAssign(Stmt):
    """``target op= value``: reads the target too."""

    target: Expr
    op: str
    value: Expr

    def exprs(self):
        return (self.value, self.target)

    def targets(self):
        return _bound(self.target)


@dataclass(frozen=True, slots=True)
class ExprStmt(Stmt):
    value: Expr

    def exprs(self):
        return (self.value,)


@dataclass(frozen=True, slots=True)
class If(Stmt):
    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()

    def blocks(self):
        return (self.body, self.orelse) if self.orelse else (self.body,)

    def exprs(self):
        return (self.test,)


@dataclass(frozen=True, slots=True)
class For(Stmt):
    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]

    def blocks(self):
        return (self.body,)

    def exprs(self):
        return (self.iter,)

    def targets(self):
        return _bound(self.target)


@dataclass(frozen=True, slots=True)
class While(Stmt):
    test: Expr
    body: tuple[Stmt, ...]

    def blocks(self):
        return (self.body,)

    def exprs(self):
        return (self.test,)


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Pass(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    value: Expr

    def exprs(self):
        return (self.value,)


@dataclass(frozen=True, slots=True)
class Raise(Stmt):
    value: Expr

    def exprs(self):
        return (self.value,)


@dataclass(frozen=True, slots=True)
class Free(Stmt):
    """``del a, b``: temporaries released after their last use."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Comment(Stmt):
    """``# text``; ``lines``: the user's source lines the code after it computes (for error messages)."""

    text: str
    lines: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Text(Stmt):
    """A line a printer still writes as text (its reads are unknown; see the module docstring)."""

    line: str


def _bound(target: Expr) -> tuple[str, ...]:
    if isinstance(target, Name):
        return (target.id,)
    if isinstance(target, Tuple):
        return tuple(n for e in target.elts for n in _bound(e))
    return ()


def _store_reads(target: Expr) -> tuple[Expr, ...]:
    """What a store reads: ``x[i] = v`` reads ``x`` and ``i``; a name or names read nothing."""
    if isinstance(target, Tuple):
        return tuple(r for e in target.elts for r in _store_reads(e))
    return () if isinstance(target, Name) else (target,)


def reads(s: Stmt) -> list[str]:
    """The names statement ``s`` reads itself (not in its nested blocks), once per occurrence."""
    return [name for e in s.exprs() for name in names_in(e)]


def statements(body) -> Iterator[Stmt]:
    """Every statement of ``body``, nested ones included, in program order."""
    for s in body:
        yield s
        for block in s.blocks():
            yield from statements(block)


# -- printing ----------------------------------------------------------------------------------------


def print_body(body, depth: int = 1) -> list[str]:
    """The lines of ``body`` at indentation ``depth`` (a block of no statement but comments starts with
    ``pass``)."""
    pad = INDENT * depth
    lines: list[str] = [] if any(not isinstance(s, Comment) for s in body) else [pad + "pass"]
    for s in body:
        lines += _print_stmt(s, pad, depth)
    return lines


def _print_stmt(s: Stmt, pad: str, depth: int) -> list[str]:
    if isinstance(s, Assign):
        return [f"{pad}{s.target} = {s.value}"]
    if isinstance(s, AugAssign):
        return [f"{pad}{s.target} {s.op}= {s.value}"]
    if isinstance(s, ExprStmt):
        return [f"{pad}{s.value}"]
    if isinstance(s, If):
        out = [f"{pad}if {s.test}:", *print_body(s.body, depth + 1)]
        if s.orelse:
            out += [f"{pad}else:", *print_body(s.orelse, depth + 1)]
        return out
    if isinstance(s, For):
        return [f"{pad}for {s.target} in {s.iter}:", *print_body(s.body, depth + 1)]
    if isinstance(s, While):
        return [f"{pad}while {s.test}:", *print_body(s.body, depth + 1)]
    if isinstance(s, Break):
        return [f"{pad}break"]
    if isinstance(s, Pass):
        return [f"{pad}pass"]
    if isinstance(s, Return):
        return [f"{pad}return {s.value}"]
    if isinstance(s, Raise):
        return [f"{pad}raise {s.value}"]
    if isinstance(s, Free):
        return [f"{pad}del {', '.join(s.names)}"]
    if isinstance(s, Comment):
        return [f"{pad}# {s.text}"]
    if isinstance(s, Text):
        return [pad + s.line]
    raise TypeError(f"not a statement of the lowered IR: {s!r}")


# -- the invariant -----------------------------------------------------------------------------------


def verify(body, structured: bool = False) -> None:
    """Check what every pass must leave: records of this IR only, expressions of the closed set, blocks
    of statements; with ``structured``, no :class:`Text` or :class:`Raw` (every read known).  Raises
    ``AssertionError`` naming the first offence."""
    for s in body:
        if not isinstance(s, Stmt):
            raise AssertionError(f"not a statement of the lowered IR: {s!r}")
        if structured and isinstance(s, Text):
            raise AssertionError(f"a text line where a structured statement is required: {s.line!r}")
        for e in s.exprs():
            _verify_expr(e, s, structured)
        if isinstance(s, (Assign, AugAssign)) and not isinstance(s.target, (Name, Index, Tuple, Attr)):
            raise AssertionError(f"cannot assign to {s.target!r}")
        for block in s.blocks():
            if not isinstance(block, tuple):
                raise AssertionError(f"a block is a tuple of statements, not {type(block).__name__}: {s!r}")
            verify(block, structured)


def _verify_expr(e, s: Stmt, structured: bool) -> None:
    if not isinstance(e, Expr):
        raise AssertionError(f"not an expression of the lowered IR: {e!r} in {s!r}")
    if structured and isinstance(e, Raw):
        raise AssertionError(f"text where a structured expression is required: {e.code!r}")
    for child in e.children():
        _verify_expr(child, s, structured)

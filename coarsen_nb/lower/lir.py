"""The lowered IR's statements and expressions: what a generated function is, before it is text.

The back half prints Python (NumPy, CuPy, Numba) functions.  Its passes — dead assignments, freeing
temporaries after their last use, the helpers and imports a module needs, the cost model, the map from
a generated line back to the user's — need to know what each statement defines and reads.  Reading that
back from printed text (regexes, ``ast.parse``) is what this IR replaces: a printer builds these records,
the passes walk them, and :func:`print_body` writes the text once, at the end.

The records are small and frozen, and every one prints on its own (``str(node)``):

* **expressions** (:mod:`coarsen_nb.lower.lir_exprs`, named from here too) — :class:`Name`, :class:`Lit`
  (a literal, as printed: ``0.5``, ``True``, ``'valid'``),
  :class:`Attr`, :class:`Index` with :class:`Slice`, :class:`Call`, :class:`BinOp`, :class:`Unary`,
  :class:`Compare`, :class:`BoolOp`, :class:`IfExp`, :class:`Tuple`, :class:`List`, :class:`Paren`.
  A node prints exactly the text its fields say and adds no parentheses of its own: where Python's
  precedence needs them the printer says so with :class:`Paren`, as it wrote them in text before.  So a
  printer moved from f-strings to records prints the same characters, and "the generated code did not
  change" stays a byte comparison.
* **statements** — :class:`Assign` (also ``x[i] = v`` and ``a, b = c, d``), :class:`AugAssign`,
  :class:`ExprStmt`, :class:`If`, :class:`For`, :class:`While`, :class:`Break`, :class:`Pass`,
  :class:`Return`, :class:`Raise`, :class:`Free` (``del``), :class:`Comment` (with the user's source lines it
  stands for), :class:`FunctionDef` (a whole helper function: numba's fused loops).

:class:`Text` (a statement) and :class:`Raw` (an expression) are the records that are not structured: code
some printer still writes as text.  They print, but their reads are unknown, so :func:`verify` refuses them
where ``structured=True`` is asked for; they exist while the printers move over and go when the last one
has.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from coarsen_nb.lower.lir_exprs import (  # noqa: F401 (the IR's expressions, named from here too)
    Attr,
    BinOp,
    BoolOp,
    Call,
    Code,
    Compare,
    Expr,
    IfExp,
    Index,
    List,
    Lit,
    Name,
    Paren,
    Raw,
    Slice,
    Tuple,
    Unary,
    expr,
    names_in,
    walk,
)
from coarsen_nb.lower.lir_wrap import INDENT, assignment_lines, def_lines, if_lines, statement_lines

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
    """``if test: body else: orelse``.  ``exceptional``: the test holds only on data that is not finite (the
    arm that sums an infinite factor's terms one by one, ``NestPrinting._times_taken_out``); it prints nothing,
    and tells the cost model, which costs a run on finite data, to count the ``orelse`` alone.  A pass that
    rebuilds an ``if`` keeps it."""

    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()
    exceptional: bool = False

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
    #: the name of the step whose error this raises where its statement is gone (a dropped ``zeros(n)``'s
    #: check of ``n``, :mod:`coarsen_nb.lower.allocation_checks`): the error is reported at that step's line
    step: str | None = None

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
class FunctionDef(Stmt):
    """``def name(params):`` with its ``docstring`` and ``body``: a function the back half writes whole (the
    numba fuser's loop functions, module-level helpers); ``decorator``: a line ``@decorator`` before it, or
    none (the module writer decorates the helpers it places: ``ModuleWriter._decorated``)."""

    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    docstring: str = ""
    decorator: str = ""

    def blocks(self):
        return (self.body,)

    def targets(self):
        return (self.name,)


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



def rewrite(node, visit):
    """``node`` (a statement or expression record, a tuple of them: a block, a call's arguments, or any field's
    value) rebuilt with ``visit``'s replacements: ``visit(x)`` is the replacement of ``x`` (it rewrites its
    parts itself, through ``rewrite``, where it wants them rewritten), or None to keep ``x`` and rewrite each
    of its elements or fields.  The passes that rewrite records (the tiles' views and lanes, ``math``'s
    trigonometry) differ in what they replace, not in how they walk.

    A record or block none of whose parts ``visit`` replaced is returned itself, not rebuilt: the records are
    frozen, so the copy was equal to it, and a walk that only reads (``numba_flat_tiles``' test of a table's
    subscripts) or replaces a few names in a loop function built every node again (~13k records in gmm's
    build)."""
    made = visit(node)
    if made is not None:
        return made
    if isinstance(node, tuple):
        parts = tuple(rewrite(x, visit) for x in node)
        return node if all(p is x for p, x in zip(parts, node, strict=True)) else parts
    if not isinstance(node, (Stmt, Expr)):
        return node
    names = _FIELD_NAMES.get(type(node))
    if names is None:
        names = _FIELD_NAMES[type(node)] = tuple(f.name for f in dataclasses.fields(node)) \
            if dataclasses.is_dataclass(node) else ()
    changed = {}
    for name in names:
        value = getattr(node, name)
        made = rewrite(value, visit)
        if made is not value:
            changed[name] = made
    return dataclasses.replace(node, **changed) if changed else node


#: each record class's field names, read once (``dataclasses.fields`` builds its tuple at every call)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}

# -- printing ----------------------------------------------------------------------------------------


def print_body(body, depth: int = 1) -> list[str]:
    """The lines of ``body`` at indentation ``depth`` (a block of no statement but comments starts with
    ``pass``)."""
    pad = INDENT * depth
    lines: list[str] = [] if any(not isinstance(s, Comment) for s in body) else [pad + "pass"]
    for s in body:
        lines += _print_stmt(s, pad, depth)
    return lines


def print_statement(s: Stmt, depth: int) -> list[str]:
    """The lines of the one statement ``s`` (its nested blocks included) at indentation ``depth``: a printer
    that still collects text lines (``Printer.emit``) prints each statement as it is emitted."""
    return _print_stmt(s, INDENT * depth, depth)


def _print_stmt(s: Stmt, pad: str, depth: int) -> list[str]:
    if isinstance(s, Assign):
        return assignment_lines(pad, s.target, "=", s.value)
    if isinstance(s, AugAssign):
        return statement_lines(pad, f"{s.target} {s.op}= ", s.value)
    if isinstance(s, ExprStmt):
        return statement_lines(pad, "", s.value)
    if isinstance(s, If):
        out = [*if_lines(pad, s.test), *print_body(s.body, depth + 1)]
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
        return statement_lines(pad, "return ", s.value)
    if isinstance(s, Raise):
        return [f"{pad}raise {s.value}"]
    if isinstance(s, Free):
        return [f"{pad}del {', '.join(s.names)}"]
    if isinstance(s, Comment):
        return [f"{pad}# {s.text}"]
    if isinstance(s, FunctionDef):
        head = [f"{pad}{s.decorator}"] if s.decorator else []
        head += def_lines(pad, s.name, s.params)
        if s.docstring:
            head.append(f'{pad}{INDENT}"""{s.docstring}"""')
        return head + print_body(s.body, depth + 1)
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

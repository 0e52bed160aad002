"""The typed IR shared by every stage: small frozen dataclasses that print.

Notation
--------
A :class:`Function` is a control-flow graph of :class:`Block` s.  Each block
holds φ nodes (after SSA conversion), straight-line :class:`Assign` s of pure
expressions, and one terminator (:class:`Jump`, :class:`Branch` or
:class:`Return`).  Array writes ``out[i] = v`` are pure too: they assign a new
version of ``out`` (``out.2 = update(out.1, i, v)``), which is what makes the
whole IR single-assignment and side-effect free.

The frontend keeps control flow *structured*: every join that is not a loop
header has exactly two predecessors coming from one ``if`` diamond, and every
loop has one header with two predecessors (pre-header, latch) and one exit
edge.  ``break``, ``continue`` and ``return`` inside loops are expressed by
boolean flags (see :mod:`coarsen_nb.frontend.parse`).  That is what lets
:mod:`coarsen_nb.phi.gate` give every φ an exact predicate.

Names
-----
User variables keep their names; SSA versions are ``x.1``, ``x.2`` (a dot
cannot occur in a Python name, so versions never collide with user names).
Compiler temporaries start with ``$`` (``$c3``, ``$k1``, ``$ret``).

Every node has ``__str__`` giving one line, so printed IR is deterministic text
that golden tests can compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------

BINOPS = ("+", "-", "*", "/", "//", "%", "**", "@")
UNARYOPS = ("-", "+", "not")
CMPOPS = ("<", "<=", ">", ">=", "==", "!=")
BOOLOPS = ("and", "or")

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 6, "-": 6, "*": 7, "/": 7,
         "//": 7, "%": 7, "@": 7, "u-": 8, "u+": 8, "**": 9}


@dataclass(frozen=True)
class Name:
    """A variable (before SSA) or an SSA value (after)."""

    id: str

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class Const:
    """A literal number or bool."""

    value: Union[int, float, bool]

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Undef:
    """No value: a φ operand on a path where the variable was never assigned."""

    def __str__(self) -> str:
        return "undef"


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{_wrap(self.left, self.op)} {self.op} {_wrap(self.right, self.op, right=True)}"


@dataclass(frozen=True)
class UnaryOp:
    op: str
    operand: Expr

    def __str__(self) -> str:
        sep = " " if self.op == "not" else ""
        key = "not" if self.op == "not" else "u" + self.op
        return f"{self.op}{sep}{_wrap(self.operand, key)}"


@dataclass(frozen=True)
class Compare:
    """One comparison; chains ``a < b < c`` become ``and`` of two."""

    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{_wrap(self.left, 'cmp')} {self.op} {_wrap(self.right, 'cmp', right=True)}"


@dataclass(frozen=True)
class BoolOp:
    op: str
    values: tuple[Expr, ...]

    def __str__(self) -> str:
        return f" {self.op} ".join(_wrap(v, self.op) for v in self.values)


@dataclass(frozen=True)
class IfExp:
    """``body if test else orelse``: only the selected operand is evaluated."""

    test: Expr
    body: Expr
    orelse: Expr

    def __str__(self) -> str:
        return f"({self.body} if {self.test} else {self.orelse})"


@dataclass(frozen=True)
class Call:
    """A primitive call; ``func`` is a canonical name of :mod:`coarsen_nb.primitives`.

    ``static`` holds the call's compile-time parameters (``axis=0``, ``keepdims=True``) as
    ``(name, value)`` pairs in the registration's order, every one of them, or ``()`` when the call
    gives each its default (:attr:`~coarsen_nb.rules.record.Primitive.static`).  They are not values
    of the program: nothing lifts, renames or differentiates them.
    """

    func: str
    args: tuple[Expr, ...]
    static: tuple[tuple[str, object], ...] = ()

    def __str__(self) -> str:
        parts = [*map(str, self.args), *(f"{k}={v!r}" for k, v in self.static)]
        return f"{self.func}({', '.join(parts)})"


@dataclass(frozen=True)
class Index:
    """``value[index]``; a tuple index is ``x[i, j]``."""

    value: Expr
    index: tuple[Expr, ...]

    def __str__(self) -> str:
        return f"{_wrap(self.value, 'atom')}[{', '.join(map(str, self.index))}]"


@dataclass(frozen=True)
class Attr:
    """``value.attr``; only ``shape``, ``size`` and ``ndim`` are supported."""

    value: Expr
    attr: str

    def __str__(self) -> str:
        return f"{_wrap(self.value, 'atom')}.{self.attr}"


@dataclass(frozen=True)
class Update:
    """The array ``array`` with ``array[index] = value``: a new version, not a mutation."""

    array: Expr
    index: tuple[Expr, ...]
    value: Expr

    def __str__(self) -> str:
        return f"update({self.array}, [{', '.join(map(str, self.index))}], {self.value})"


@dataclass(frozen=True)
class Tuple:
    """A tuple value; only returned (``return a, b``), never indexed or unpacked."""

    elts: tuple[Expr, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elts)) + ("," if len(self.elts) == 1 else "") + ")"


# ---- gated forms (after phi.gate) ---------------------------------------


@dataclass(frozen=True)
class Gamma:
    """γ(p, a, b): ``a`` if ``p`` else ``b``, at the join of an ``if``."""

    pred: Expr
    if_true: Expr
    if_false: Expr

    def __str__(self) -> str:
        return f"γ({self.pred}, {self.if_true}, {self.if_false})"


@dataclass(frozen=True)
class Mu:
    """μ(init, next) at the header of loop ``loop``: v₀ = init, v_{k+1} = next."""

    loop: str
    init: Expr
    next: Expr

    def __str__(self) -> str:
        return f"μ[{self.loop}]({self.init}, {self.next})"


@dataclass(frozen=True)
class Eta:
    """η(v): the value of loop-carried ``v`` when loop ``loop`` exits (v_N)."""

    loop: str
    value: Expr

    def __str__(self) -> str:
        return f"η[{self.loop}]({self.value})"


Expr = Union[Name, Const, Undef, BinOp, UnaryOp, Compare, BoolOp, IfExp, Call, Index,
             Attr, Update, Tuple, Gamma, Mu, Eta]


def _wrap(e: Expr, ctx: str, right: bool = False) -> str:
    """Parenthesize ``e`` when it binds less tightly than its context."""
    mine = _precedence(e)
    theirs = _PREC.get(ctx, 99 if ctx == "atom" else 0)
    text = str(e)
    if mine < theirs or (right and mine == theirs and ctx != "**") or (
        ctx == "**" and not right and mine == theirs
    ):
        return f"({text})"
    return text


def _precedence(e: Expr) -> int:
    if isinstance(e, BinOp):
        return _PREC[e.op]
    if isinstance(e, UnaryOp):
        return _PREC["not" if e.op == "not" else "u" + e.op]
    if isinstance(e, Compare):
        return _PREC["cmp"]
    if isinstance(e, BoolOp):
        return _PREC[e.op]
    if isinstance(e, Const) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and e.value < 0:
        return _PREC["u-"]
    return 100


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``e``, in evaluation order."""
    if isinstance(e, (Name, Const, Undef)):
        return ()
    if isinstance(e, (BinOp, Compare)):
        return (e.left, e.right)
    if isinstance(e, UnaryOp):
        return (e.operand,)
    if isinstance(e, BoolOp):
        return e.values
    if isinstance(e, IfExp):
        return (e.test, e.body, e.orelse)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Index):
        return (e.value, *e.index)
    if isinstance(e, Attr):
        return (e.value,)
    if isinstance(e, Update):
        return (e.array, *e.index, e.value)
    if isinstance(e, Tuple):
        return e.elts
    if isinstance(e, Gamma):
        return (e.pred, e.if_true, e.if_false)
    if isinstance(e, Mu):
        return (e.init, e.next)
    if isinstance(e, Eta):
        return (e.value,)
    raise TypeError(f"not an IR expression: {e!r}")


def names_used(e: Expr) -> list[str]:
    """Every variable read by ``e``, in order, with repeats."""
    if isinstance(e, Name):
        return [e.id]
    out: list[str] = []
    for c in children(e):
        out.extend(names_used(c))
    return out


def map_children(e: Expr, f) -> Expr:
    """``e`` with ``f`` applied to each direct operand of an operator, call or γ (other nodes as they are):
    the one-step rewrite that passes over lifted expressions build on."""
    if isinstance(e, BinOp):
        return BinOp(e.op, f(e.left), f(e.right))
    if isinstance(e, Compare):
        return Compare(e.op, f(e.left), f(e.right))
    if isinstance(e, UnaryOp):
        return UnaryOp(e.op, f(e.operand))
    if isinstance(e, BoolOp):
        return BoolOp(e.op, tuple(f(v) for v in e.values))
    if isinstance(e, IfExp):
        return IfExp(f(e.test), f(e.body), f(e.orelse))
    if isinstance(e, Call):
        return Call(e.func, tuple(f(a) for a in e.args), e.static)
    if isinstance(e, Gamma):
        return Gamma(f(e.pred), f(e.if_true), f(e.if_false))
    return e


def rename(e: Expr, mapping) -> Expr:
    """``e`` with every ``Name`` replaced by ``mapping(name) -> Expr``."""
    if isinstance(e, Name):
        return mapping(e.id)
    if isinstance(e, (Const, Undef)):
        return e
    if isinstance(e, BinOp):
        return BinOp(e.op, rename(e.left, mapping), rename(e.right, mapping))
    if isinstance(e, Compare):
        return Compare(e.op, rename(e.left, mapping), rename(e.right, mapping))
    if isinstance(e, UnaryOp):
        return UnaryOp(e.op, rename(e.operand, mapping))
    if isinstance(e, BoolOp):
        return BoolOp(e.op, tuple(rename(v, mapping) for v in e.values))
    if isinstance(e, IfExp):
        return IfExp(rename(e.test, mapping), rename(e.body, mapping), rename(e.orelse, mapping))
    if isinstance(e, Call):
        return Call(e.func, tuple(rename(a, mapping) for a in e.args), e.static)
    if isinstance(e, Index):
        return Index(rename(e.value, mapping), tuple(rename(i, mapping) for i in e.index))
    if isinstance(e, Attr):
        return Attr(rename(e.value, mapping), e.attr)
    if isinstance(e, Update):
        return Update(rename(e.array, mapping), tuple(rename(i, mapping) for i in e.index),
                      rename(e.value, mapping))
    if isinstance(e, Tuple):
        return Tuple(tuple(rename(v, mapping) for v in e.elts))
    if isinstance(e, Gamma):
        return Gamma(rename(e.pred, mapping), rename(e.if_true, mapping), rename(e.if_false, mapping))
    if isinstance(e, Mu):
        return Mu(e.loop, rename(e.init, mapping), rename(e.next, mapping))
    if isinstance(e, Eta):
        return Eta(e.loop, rename(e.value, mapping))
    raise TypeError(f"not an IR expression: {e!r}")


# --------------------------------------------------------------------------
# Statements, blocks, functions
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Assign:
    """``target = value``; ``line``/``col`` point at the user's source (0 if synthetic)."""

    target: str
    value: Expr
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.target} = {self.value}"


@dataclass(frozen=True)
class Phi:
    """SSA φ: ``target`` takes ``value`` when control arrives from block ``pred``."""

    target: str
    args: tuple[tuple[str, Expr], ...]

    def __str__(self) -> str:
        ops = ", ".join(f"{p}: {v}" for p, v in self.args)
        return f"{self.target} = φ({ops})"


@dataclass(frozen=True)
class Jump:
    target: str

    def __str__(self) -> str:
        return f"jump {self.target}"


@dataclass(frozen=True)
class Branch:
    """Go to ``if_true`` when ``cond`` holds, else to ``if_false``."""

    cond: Expr
    if_true: str
    if_false: str
    line: int = 0

    def __str__(self) -> str:
        return f"branch {self.cond} ? {self.if_true} : {self.if_false}"


@dataclass(frozen=True)
class Return:
    value: Expr

    def __str__(self) -> str:
        return f"return {self.value}"


Terminator = Union[Jump, Branch, Return]


@dataclass(frozen=True)
class LoopInfo:
    """What the frontend knows about the loop whose header carries it.

    ``kind`` is ``"range"`` (a counted ``for``: the counter ``counter`` runs
    over ``range(start, stop, step)``; with ``early_exit`` a ``break`` or
    ``return`` can end it sooner) or ``"while"``.  ``latch`` is the block
    whose jump is the back edge, ``exit`` the block control reaches when the
    loop ends, ``body`` the first block of the body.
    """

    kind: str
    line: int
    body: str
    latch: str
    exit: str
    counter: str | None = None
    start: Expr | None = None
    stop: Expr | None = None
    step: Expr | None = None
    early_exit: bool = False

    def __str__(self) -> str:
        if self.kind == "range":
            rng = f"range({self.start}, {self.stop}, {self.step})"
            extra = ", early exit" if self.early_exit else ""
            return f"loop for {self.counter} in {rng}{extra}, line {self.line}"
        return f"loop while, line {self.line}"


@dataclass(frozen=True)
class Block:
    label: str
    stmts: tuple[Assign, ...]
    term: Terminator
    phis: tuple[Phi, ...] = ()
    loop: LoopInfo | None = None

    def successors(self) -> tuple[str, ...]:
        if isinstance(self.term, Jump):
            return (self.term.target,)
        if isinstance(self.term, Branch):
            return (self.term.if_true, self.term.if_false)
        return ()

    def __str__(self) -> str:
        lines = [f"{self.label}:" + (f"    # {self.loop}" if self.loop else "")]
        lines += [f"    {p}" for p in self.phis]
        lines += [f"    {s}" for s in self.stmts]
        lines.append(f"    {self.term}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Source:
    """Where the function came from: its text and the line offset of its first line."""

    text: str
    first_line: int = 1
    filename: str | None = None

    def line_text(self, line: int) -> str | None:
        lines = self.text.splitlines()
        k = line - self.first_line
        return lines[k] if 0 <= k < len(lines) else None


@dataclass(frozen=True)
class Function:
    """A function as a CFG: ``blocks`` in a deterministic order, ``entry`` first.

    ``ssa`` says whether the blocks are in SSA form (φ nodes placed, every
    name assigned once).  ``gated`` says whether φ nodes were replaced by
    γ/μ/η assignments.  ``array_params`` are parameters indexed or measured
    in the body (known to be arrays before any argument is seen).
    """

    name: str
    params: tuple[str, ...]
    blocks: tuple[Block, ...]
    entry: str
    source: Source = field(default_factory=lambda: Source(""))
    ssa: bool = False
    gated: bool = False
    #: temporary -> the word generated code calls it (frontend/words.py), for every ``$`` name it made
    words: Mapping[str, str] = field(default_factory=dict, compare=False)

    def block(self, label: str) -> Block:
        for b in self.blocks:
            if b.label == label:
                return b
        raise KeyError(label)

    @property
    def block_map(self) -> dict[str, Block]:
        return {b.label: b for b in self.blocks}

    def predecessors(self) -> dict[str, list[str]]:
        preds: dict[str, list[str]] = {b.label: [] for b in self.blocks}
        for b in self.blocks:
            for s in b.successors():
                preds[s].append(b.label)
        return preds

    def __str__(self) -> str:
        head = f"def {self.name}({', '.join(self.params)}):"
        return head + "\n" + "\n".join(str(b) for b in self.blocks)

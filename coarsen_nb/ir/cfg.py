"""The front-half IR's control flow: statements, blocks and functions (see :mod:`coarsen_nb.ir`).

A :class:`Function` is a CFG of :class:`Block` s, each φ nodes, :class:`Assign` s of the expressions of
:mod:`coarsen_nb.ir.exprs`, and one terminator; :class:`LoopInfo` on a loop header says what the
frontend knows about the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from coarsen_nb.ir.exprs import Expr


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

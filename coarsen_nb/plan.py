"""The lifted program: SOIs as symbolic kernels, glued by control steps.

This is what :mod:`coarsen_nb.phi.lift` produces, :mod:`coarsen_nb.soi.select`
regroups, :mod:`coarsen_nb.symbolic.diff` differentiates and
:mod:`coarsen_nb.lower` prints.

A :class:`Kernel` is one segment of interest: a *scalar body* — an ordered
DAG of SymPy expressions over scalar symbols — evaluated over a *domain*:

* no array inputs: plain scalar code;
* array inputs: elementwise over those arrays (one symbol stands for
  every element);
* closed-form loops are reduction nodes inside the body (``RSum`` etc. of
  :mod:`coarsen_nb.phi.forms`, each over its own index range, possibly
  triangular): the printer evaluates a node's body at every point of its
  range at once; array elements read at index expressions of the loop
  indices are :class:`Read` s.

Control that cannot be made symbolic stays as steps: :class:`CondStep` (a
real ``if`` on a scalar predicate) and :class:`IterStep` (a loop that runs
iteration by iteration — a recurrence without closed form, or every loop at
L = 1).  :class:`PrimStep` is an opaque primitive (``dot``, ``@``, array
reductions, gathers, scatters, constructors) with a hand-written rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy as sp

from coarsen_nb import ir


@dataclass(frozen=True)
class Read:
    """``symbol`` stands for ``array[index]`` at every point of the domain."""

    symbol: sp.Symbol
    array: str
    index: tuple

    def __str__(self) -> str:
        return f"{self.symbol} = {self.array}[{', '.join(map(str, self.index))}]"


@dataclass(frozen=True)
class Output:
    """An SSA value the kernel defines: the value of body symbol ``symbol``.

    Loop forms (Σ, Π, max/min, writes) are nodes inside the body
    (:mod:`coarsen_nb.phi.forms`), so an output is always a plain value.
    """

    name: str
    symbol: sp.Symbol

    def __str__(self) -> str:
        return f"{self.name} = {self.symbol}"


@dataclass
class Kernel:
    """One SOI as a symbolic kernel (see the module docstring)."""

    index: int
    scalars: dict                   # Symbol -> SSA name, invariant over the domain
    arrays: dict                    # Symbol -> SSA name, read elementwise
    reads: tuple[Read, ...]
    body: list                      # [(Symbol, Expr)] in dependency order
    outputs: tuple[Output, ...]
    lines: tuple[int, ...] = ()
    note: str = ""                  # how it was formed (closed form kind, ...)
    loop_line: int = 0              # sums hoisted out of a loop: that loop's line (its ``lines`` are none)
    types: dict = field(default_factory=dict)   # SSA name -> phi.types.T for inputs and outputs
    names: dict = field(default_factory=dict)   # Expr -> the SSA name whose value it is (to name temps)

    @property
    def inputs(self) -> list[str]:
        names = list(self.scalars.values()) + list(self.arrays.values()) + [r.array for r in self.reads]
        return list(dict.fromkeys(names))

    @property
    def output_names(self) -> list[str]:
        return [o.name for o in self.outputs]

    def exprs(self) -> dict[str, sp.Expr]:
        """Each output as one SymPy expression over the inputs (body inlined)."""
        sub: dict = {}
        for sym, e in self.body:
            sub[sym] = e.xreplace(sub)
        return {o.name: sub.get(o.symbol, o.symbol) for o in self.outputs}

    def ops(self) -> int:
        """Operation count of the body (SymPy ``count_ops`` of every temp)."""
        return sum(int(sp.count_ops(e)) for _, e in self.body)

    def __str__(self) -> str:
        head = f"soi {self.index}"
        if self.note:
            head += f"  [{self.note}]"
        lines = [head]
        lines += [f"  in  {s} = {n}" for s, n in self.scalars.items()]
        lines += [f"  in  {s} = {n}[...]" for s, n in self.arrays.items()]
        lines += [f"  in  {r}" for r in self.reads]
        lines += [f"  {s} = {e}" for s, e in self.body]
        lines += [f"  out {o}" for o in self.outputs]
        return "\n".join(lines)


@dataclass(frozen=True)
class KernelStep:
    kernel: Kernel

    def lines(self, indent: str = "") -> list[str]:
        return [indent + ln for ln in str(self.kernel).splitlines()]


@dataclass(frozen=True)
class PrimStep:
    """An opaque primitive: ``name = func(args)`` with a hand-written derivative rule."""

    name: str
    expr: ir.Expr
    line: int = 0

    def lines(self, indent: str = "") -> list[str]:
        return [f"{indent}prim {self.name} = {self.expr}"]


@dataclass(frozen=True)
class CondStep:
    """A real ``if`` on the scalar predicate ``cond``; ``gammas`` are (name, then-name, else-name)."""

    cond: str
    then: tuple
    orelse: tuple
    gammas: tuple
    line: int = 0

    def lines(self, indent: str = "") -> list[str]:
        out = [f"{indent}if {self.cond}:"]
        out += [ln for s in self.then for ln in s.lines(indent + "    ")] or [indent + "    pass"]
        out.append(f"{indent}else:")
        out += [ln for s in self.orelse for ln in s.lines(indent + "    ")] or [indent + "    pass"]
        out += [f"{indent}{n} = γ({self.cond}, {a}, {b})" for n, a, b in self.gammas]
        return out


@dataclass(frozen=True)
class IterStep:
    """A loop run iteration by iteration: state ``mus`` (name, init, next), condition from ``header``."""

    label: str
    mus: tuple                      # (name, init Expr, next Expr) with Name/Const operands
    header: tuple
    cond: str
    body: tuple
    etas: tuple                     # (out-name, mu-name)
    line: int = 0
    note: str = ""

    def never_runs(self) -> bool:
        """Whether the condition is the constant False (``while k < 0 and (a - a) > 0:``, folded by the
        lift): the loop runs no iteration, its states keep their first values.  The printers print no loop
        for it (:mod:`coarsen_nb.lower.iterated`): under Numba, a loop printed with ``cond = False`` has its
        body pruned as dead, and with it the one ``append`` that types the tape list."""
        for st in self.header:
            if isinstance(st, KernelStep) and self.cond in st.kernel.output_names:
                return st.kernel.exprs()[self.cond] is sp.false
        return False

    def lines(self, indent: str = "") -> list[str]:
        out = [f"{indent}loop {self.label}" + (f"  [{self.note}]" if self.note else "")]
        out += [f"{indent}  {n} = μ({i}, {x})" for n, i, x in self.mus]
        out += [ln for s in self.header for ln in s.lines(indent + "  ")]
        out.append(f"{indent}  while {self.cond}:")
        out += [ln for s in self.body for ln in s.lines(indent + "    ")]
        out += [f"{indent}{o} = η({m})" for o, m in self.etas]
        return out


Step = KernelStep | PrimStep | CondStep | IterStep


@dataclass
class Plan:
    """The whole lifted function."""

    name: str
    params: tuple[str, ...]
    steps: tuple
    result: ir.Expr
    types: dict
    discontinuities: list = field(default_factory=list)
    #: temporary -> the word generated code calls it (frontend/words.py; SSA names without their version)
    words: Mapping[str, str] = field(default_factory=dict)

    def kernels(self) -> list[Kernel]:
        return [s.kernel for s in walk_steps(self.steps) if isinstance(s, KernelStep)]

    def __str__(self) -> str:
        lines = [f"def {self.name}({', '.join(self.params)}):"]
        lines += [ln for s in self.steps for ln in s.lines("    ")]
        lines.append(f"    return {self.result}")
        return "\n".join(lines)


def walk_steps(steps):
    """Every step of ``steps`` and of the regions inside them, in plan order: a branch before its arms
    (then, else), a loop before its header and body."""
    for s in steps:
        yield s
        if isinstance(s, CondStep):
            yield from walk_steps(s.then)
            yield from walk_steps(s.orelse)
        elif isinstance(s, IterStep):
            yield from walk_steps(s.header)
            yield from walk_steps(s.body)


def names_read(steps) -> set[str]:
    """Every SSA name the steps read (SOI inputs, operands, predicates, φ operands), nested steps included.

    Shared by SOI pruning (:mod:`coarsen_nb.soi.select`) and the lowering (which values ``NAME_grad``
    needs): a fact about steps, so it lives with them.
    """
    out: set[str] = set()
    for s in steps:
        if isinstance(s, KernelStep):
            out |= set(s.kernel.inputs)
        elif isinstance(s, PrimStep):
            out |= set(ir.names_used(s.expr))
        elif isinstance(s, CondStep):
            out.add(s.cond)
            out |= names_read(s.then) | names_read(s.orelse)
            for _, a, b in s.gammas:
                out |= set(ir.names_used(a)) | set(ir.names_used(b))
        else:
            for _, init, nxt in s.mus:
                out |= set(ir.names_used(init)) | set(ir.names_used(nxt))
            out.add(s.cond)
            out |= names_read(s.header) | names_read(s.body)
            out |= {mu for _, mu in s.etas}
    return out

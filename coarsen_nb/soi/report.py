"""What each selected SOI is: its expressions, its derivatives, and their size.

This is the data behind ``Coarsened.sois`` and the notebook's derivative
view: one :class:`SOIRecord` per kernel of the plan, in plan order.  The
derivative expressions are the kernel's VJP (:func:`coarsen_nb.symbolic.diff.vjp`)
with the adjoint of each active output as a leaf symbol ``\\bar{out}``, so
they print like the paper's formulae; ``cse`` and ``derivative_ops`` show
the size of the derivative *after* common-subexpression elimination, which
is the number the reuse-centric selection is meant to keep small (a value
used k times and kept as a temp is differentiated once, not k times).
``derivative_ops_raw`` is the size *before* CSE, with the temps the
selection materialized kept as temps: the paper's expression swell, which
CSE in the generated code may or may not undo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from coarsen_nb.plan import Plan
from coarsen_nb.symbolic.activity import active_names
from coarsen_nb.symbolic.diff import vjp


@dataclass(frozen=True)
class SOIRecord:
    """One SOI of a plan, as a user reads it."""

    index: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    lines: tuple[int, ...]
    exprs: dict = field(hash=False)            # output SSA name -> sympy.Expr (body inlined)
    derivatives: dict = field(hash=False)      # active input (or read) -> sympy.Expr of its adjoint
    cse: list = field(hash=False)              # [(Symbol, Expr)] shared by the derivatives
    note: str = ""
    ops: int = 0                               # forward body, after CSE
    derivative_ops: int = 0                    # derivatives, after CSE (replacements included)
    derivative_ops_raw: int = 0                # derivatives before CSE, materialized temps kept as temps

    def __str__(self) -> str:
        head = f"SOI {self.index} (lines {', '.join(map(str, self.lines)) or '-'})"
        if self.note:
            head += f" [{self.note}]"
        return f"{head}: {', '.join(self.inputs)} -> {', '.join(self.outputs)}; " \
               f"{self.ops} ops, derivative {self.derivative_ops} ops"


def records(plan: Plan, wrt: tuple[str, ...]) -> list[SOIRecord]:
    """One :class:`SOIRecord` per kernel of ``plan`` (in ``plan.kernels()`` order).

    Example
    -------
    >>> import coarsen_nb as cn
    >>> f = cn.coarsen("def f(x):\\n    y = x * x\\n    return y + x\\n")
    >>> _ = f.grad(2.0)
    >>> r = records(f.plan, ("x",))[0]
    >>> list(r.derivatives)
    ['x']
    """
    active = active_names(plan, tuple(wrt))
    return [_record(k, active) for k in plan.kernels()]


def _record(kernel, active: set[str]) -> SOIRecord:
    exprs = kernel.exprs()
    outs = {o.name: sp.Symbol(f"\\bar{{{o.name}}}", real=True) for o in kernel.outputs if o.name in active}
    derivs: dict = {}
    raw = 0
    if outs and set(kernel.inputs) & active:
        v = vjp(kernel, active, outs)
        derivs = v.exprs()
        forward = {s for s, _ in kernel.body}
        raw = sum(int(sp.count_ops(e)) for s, e in v.temps.items() if s not in forward) + \
            sum(int(sp.count_ops(e)) for _, e in v.scalars + v.arrays) + \
            sum(int(sp.count_ops(c[2])) for c in v.scatters)
    repl, reduced = sp.cse(list(derivs.values()), optimizations=None) if derivs else ([], [])
    fwd_repl, fwd_reduced = sp.cse(list(exprs.values())) if exprs else ([], [])
    return SOIRecord(
        index=kernel.index,
        inputs=tuple(kernel.inputs),
        outputs=tuple(kernel.output_names),
        lines=tuple(kernel.lines),
        exprs=exprs,
        derivatives=derivs,
        cse=list(repl),
        note=kernel.note,
        ops=_ops(fwd_repl, fwd_reduced),
        derivative_ops=_ops(repl, reduced),
        derivative_ops_raw=raw,
    )


def _ops(repl, reduced) -> int:
    return sum(int(sp.count_ops(e)) for _, e in repl) + sum(int(sp.count_ops(e)) for e in reduced)

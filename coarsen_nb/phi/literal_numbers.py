"""The literal numbers a gated function assigns, which an SOI reads as numbers, not as inputs.

Inside one SOI a value ``s = 0.0`` is inlined into its users (``KernelBuilder.define``: an atom is never
materialized).  Where the selection cuts between the assignment and a user (an opaque step between them, ``len(x)``;
the size cap), the user's SOI read it as an input, and a loop's initial state then stayed a symbol: gmm's
log-sum-exp restarting at each point (``m = -inf``, ``s = 0.0`` hoisted before the points) printed and ran
``s0 * exp(m0)``, a branch on it and two tables in its nest, and a sum's ``s = 0.0`` before ``len(x)`` was an SOI of
its own.  :meth:`~coarsen_nb.phi.kernel_builder.KernelBuilder.input` answers such a name with the number itself,
as the SOI assigning it does.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi.gate import If, Let


def literal_numbers(nodes) -> dict[str, sp.Basic]:
    """The SSA names ``nodes`` assign a literal number (``m = -math.inf``, ``s = 0.0``), at any depth, as SymPy
    numbers.  An SOI that reads one reads the number (:meth:`KernelBuilder.input`), as the SOI assigning it
    does: a loop's initial state assigned in an earlier SOI (gmm's log-sum-exp restarting at each point, its
    ``m = -inf`` and ``s = 0.0`` hoisted before the loop over the points) then simplifies as it does in one
    SOI (``s0 * exp(m0)`` is 0, and the branch on it goes), where as an input it was printed and run whole.
    Not truth values (a flag stays a branch's input) and not in operator mode (every value its own SOI)."""
    out: dict[str, sp.Basic] = {}
    for n in nodes:
        if isinstance(n, Let):
            v = n.value
            if isinstance(v, ir.Const) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                out[n.name] = sp.Integer(v.value) if isinstance(v.value, int) else sp.Float(v.value)
        elif isinstance(n, If):
            out.update(literal_numbers(n.then))
            out.update(literal_numbers(n.orelse))
        else:
            out.update(literal_numbers(n.header))
            out.update(literal_numbers(n.body))
    return out

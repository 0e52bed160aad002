"""The shapes of the linear-algebra calls the generated code makes (:mod:`coarsen_nb.rules.linalg`), for the
cost model (:mod:`coarsen_nb.lower.shapes`, :mod:`coarsen_nb.lower.values`).

A solve's result has its right-hand side's shape, an inverse its matrix's, a determinant and a trace none,
a transpose its operand's reversed (or permuted by ``axes=``), ``eye(n, m)`` ``(n, m)``, and an einsum the
sizes its subscripts give its output's letters.  Without these the model took the largest operand's size
for each (``solve(A, b)`` as large as ``A``), and an outer product of two such results as n⁴ elements.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

LINALG_CALLS = frozenset({"solve", "inv", "det", "trace", "transpose", "eye", "einsum"})


def linalg_shape(f: str, e: ast.Call, shape: Callable, ints: Callable) -> tuple | None:
    """The shape of call ``e`` of ``f`` (one of ``LINALG_CALLS``), given the model's ``shape(expr)`` and
    ``ints(*exprs)``; None where it cannot tell."""
    a = e.args
    kw = {k.arg: k.value for k in e.keywords}
    if f in ("det", "trace"):
        return ()
    if f == "solve" and len(a) == 2:
        return shape(a[1])
    if f == "inv" and a:
        return shape(a[0])
    if f == "transpose" and a:
        s = shape(a[0])
        if s is None or "axes" not in kw:
            return None if s is None else s[::-1]
        axes = ast.literal_eval(kw["axes"])
        return tuple(s[k] for k in axes) if sorted(axes) == list(range(len(s))) else None
    if f == "eye" and a:
        n = ints(*a)
        return None if None in n else (n[0], n[-1])
    if f == "einsum" and a and isinstance(a[0], ast.Constant) and isinstance(a[0].value, str):
        ins, _, out = a[0].value.replace(" ", "").partition("->")
        dims: dict[str, int] = {}
        for letters, x in zip(ins.split(","), a[1:], strict=False):
            s = shape(x)
            if s is None or len(s) != len(letters):
                return None
            dims.update(zip(letters, s, strict=True))
        return tuple(dims[c] for c in out) if set(out) <= set(dims) else None
    return None

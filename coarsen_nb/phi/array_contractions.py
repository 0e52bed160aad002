"""``np.sum(A * B, axis=-1)`` of a matrix and a vector → ``rowdot(M, v)``, on the gated tree.

The loop style of the rows' dot products (``for i: z = 0; for j: z += X[i, j] * w[j]``) is lifted as
a contraction: ``X @ w`` forward, an outer product into ``b_X`` and ``g @ X`` into ``b_w`` backward.
Written with arrays, ``np.sum(X * w, axis=1)`` is two values, an n×d elementwise product and an opaque
reduction over axis 1, and its adjoint four n×d arrays; the vectorized style was ~3x slower than its
loop (issue 15).  This pass rewrites the pattern before lifting into the contraction step of
:mod:`coarsen_nb.rules.contractions`, whose rules are the loop style's (exact under NumPy's
broadcasting of a size-1 axis, which the step checks at run time: shapes are not known here)::

    $a = A * B                (read only by the sum below, in the same region)
    $p = sum($a, axis=1)      A, B: one a matrix, the other a vector, not both boolean (matmul's
                              or of ands is not the sum's count); axis the last, no keepdims
  →
    $p = rowdot(M, v)         M, v: the matrix and the vector operand (A * B == B * A)

An operand that is not a name becomes an assignment of its own where the product was (``np.sin(X)``
is still an array, computed once, in its SOI); the product is gone.  Recognized only with the
product's value read nowhere else (otherwise it is made anyway, and the sum stays the reduction
of it), and only in one region (a sum in a loop body of a product made before the loop is left
alone: the operands would be evaluated on every iteration).

Why a step and not the loop style's lifted form (an ``RSum`` over j of ``X[i, j] * w[j]`` in the SOI,
through which coarsening would reach): the index reads of that form name an element per (i, j), and
under broadcasting the element is ``X[i, 0]`` or ``w[0]``, which only the run-time shapes decide; a
lifted form would need reads that choose their index at run time, in every printer and derivative
rule.  The step keeps the choice in one helper, and its rules are exact for every shape.
"""

from __future__ import annotations

from collections import Counter

from coarsen_nb import ir
from coarsen_nb.frontend import words
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, name_minter, names_read
from coarsen_nb.phi.types import T, expr_type


def rewrite(g: GatedFunction, types: dict[str, T]) -> tuple[GatedFunction, dict[str, T]]:
    """``g`` with every sum over the last axis of a matrix-times-vector product a ``rowdot`` step, and
    ``types`` for the new names."""
    uses = Counter(ir.names_used(g.result) + names_read(g.body))
    types = dict(types)
    fresh = name_minter(g, "a")
    names = dict(g.words)

    def name_word(name: str) -> str | None:
        base = name.split(".")[0]
        return names.get(base) or (None if "$" in base else base.rpartition(":")[2].rstrip("'"))

    def operand(e: ir.Expr, line: int, out: list) -> ir.Name:
        """``e`` as a name: itself, or a new assignment of it appended to ``out``."""
        if isinstance(e, ir.Name):
            return e
        name = fresh()
        types[name] = expr_type(e, types)
        word = words.ir_word(e, name_word)
        if word:
            names[name.split(".")[0]] = word
        out.append(Let(name, e, line))
        return ir.Name(name)

    def region(nodes) -> tuple:
        products = {n.name for n in nodes if isinstance(n, Let) and _matrix_vector(n.value, types)
                    and uses[n.name] == 1}
        summed = {n.value.args[0].id for n in nodes if isinstance(n, Let) and _last_axis_sum(n.value, types)
                  and n.value.args[0].id in products}
        operands: dict[str, tuple[ir.Name, ir.Name]] = {}     # product's name -> (matrix, vector)
        out: list = []
        for n in nodes:
            if isinstance(n, If):
                out.append(If(n.cond, region(n.then), region(n.orelse), n.gammas, n.line))
            elif isinstance(n, Loop):
                out.append(Loop(n.label, n.info, n.mus, region(n.header), n.cond, region(n.body), n.etas))
            elif n.name in summed:
                a, b = n.value.left, n.value.right
                m, v = (a, b) if _ndim(a, types) == 2 else (b, a)
                operands[n.name] = (operand(m, n.line, out), operand(v, n.line, out))
            elif _last_axis_sum(n.value, types) and n.value.args[0].id in operands:
                out.append(Let(n.name, ir.Call("rowdot", operands[n.value.args[0].id]), n.line))
            else:
                out.append(n)
        return tuple(out)

    body = region(g.body)
    if body == g.body:
        return g, types
    return GatedFunction(g.name, g.params, body, g.result, g.source, names), types


def _ndim(e: ir.Expr, types: dict[str, T]) -> int:
    return expr_type(e, types).ndim


def _matrix_vector(e: ir.Expr, types: dict[str, T]) -> bool:
    """Whether ``e`` is ``A * B`` of a matrix and a vector (either order) of numbers, not both boolean
    (NumPy's matmul of two boolean arrays is their logical or of ands; the sum of their products counts)."""
    if not (isinstance(e, ir.BinOp) and e.op == "*"):
        return False
    a, b = expr_type(e.left, types), expr_type(e.right, types)
    return sorted((a.ndim, b.ndim)) == [1, 2] and {a.kind, b.kind} <= {"float", "int", "bool"} and \
        {a.kind, b.kind} != {"bool"}


def _last_axis_sum(e: ir.Expr, types: dict[str, T]) -> bool:
    """Whether ``e`` is ``sum(a, axis=1)`` (or ``axis=-1``) of a named matrix, keepdims false."""
    if not (isinstance(e, ir.Call) and e.func == "sum" and len(e.args) == 1 and isinstance(e.args[0], ir.Name)):
        return False
    static = dict(e.static)
    return static.get("axis") in (1, -1) and not static.get("keepdims", False) and _ndim(e.args[0], types) == 2

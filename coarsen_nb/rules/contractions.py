"""``np.sum(M * v, axis=-1)`` of a matrix and a vector as a contraction: ``rowdot(M, v)``.

Written out, the product ``M * v`` is an n×d array, and its adjoint four more (the cotangent spread
over the rows, its products with each operand, the operands' sums).  The rows' dot products are a
matrix-vector product, and the loop style of the same computation is lifted to one
(``_block(X, ...) @ w_j``): :mod:`coarsen_nb.phi.array_contractions` rewrites the vectorized style into
this step, so both styles cost the same.

Shapes are not known when the code is generated (the specialization holds ranks and dtypes), and
NumPy broadcasts a size-1 axis: ``M`` of one column times ``v`` of d elements is n×d, and ``M`` times
``v`` of one element too, where ``M @ v`` is an error.  So the step is the generated module's
``_rowdot`` (lower/array_helpers.py), which dispatches at run time: ``M @ v`` when the lengths match,
NumPy's broadcasting sum otherwise.  Its rules are exact in every case, with no dispatch of their own:
for ``s_i = Σ_j M[i, j'] v[j'']`` (``j'``, ``j''``: ``j`` or 0 where that operand has one column)

* ``M̄ = sum_to(ḡ[:, None] * v, M.shape)``: ``ḡ_i v_j`` at each element, summed over the columns
  where ``M`` has one (``_sum_to`` returns the product itself when the shapes match);
* ``v̄ = sum_to(matmul(ḡ, M), v.shape)``: ``Σ_i ḡ_i M[i, j]``, spread over v's elements where ``M`` has one
  column, summed to v's one element where v has one;
* the tangent ``rowdot(Ṁ, v) + rowdot(M, v̇)`` (bilinear).
"""

from __future__ import annotations

from coarsen_nb.rules.build import ALL, NEW, Index, Name, Paren, call, op, shape, xp_call
from coarsen_nb.rules.record import Primitive, Spelling


def _column(bar):
    """``bar[:, None]``: the cotangent of the rows as a column (parenthesized when it is not a name)."""
    return Index(bar if isinstance(bar, Name) else Paren(bar), (ALL, NEW))


def _rowdot_vjp(s, a, bar):
    m, v = s.expr(a[0]), s.expr(a[1])
    sum_to = s.helper("_sum_to")
    return [(a[0], call(sum_to, op("*", _column(bar), v), shape(m))),
            (a[1], call(sum_to, xp_call("matmul", bar, m), shape(v)))]


def _rowdot_jvp(s, a):
    rowdot = s.helper("_rowdot")
    return op("+", call(rowdot, s.array_tangent_expr(a[0]), s.expr(a[1])),
              call(rowdot, s.expr(a[0]), s.array_tangent_expr(a[1])))


CONTRACTIONS: tuple[Primitive, ...] = (
    # made by phi/array_contractions.py, never written by a user (no np. name): its operands are a matrix
    # and a vector, in that order
    Primitive("rowdot", "opaque", (2,), None, evaluate=lambda args, xp: xp.sum(args[0] * args[1], axis=1),
              spelling=Spelling(array="_rowdot", helper="_rowdot"), total=True,
              type=lambda args, static: ("float", 1), vjp=_rowdot_vjp, jvp=_rowdot_jvp),
)

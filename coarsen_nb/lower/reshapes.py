"""``np.atleast_1d``/``2d``/``3d``: shape-only steps, with their forward, VJP and JVP code.

The operand's rank is known when the module is written (the specialization's types), so each call is
printed as what it does to that rank — nothing (rank ≥ k), or ``xp.reshape`` to a shape spelled from
the operand's own ``.shape`` — and the generated code never calls ``atleast_kd`` itself.  NumPy's
rule for where the new axes of length 1 go:

====  =========  ============  ===============
rank  1d         2d            3d
====  =========  ============  ===============
0     ``(1,)``   ``(1, 1)``    ``(1, 1, 1)``
1     —          ``(1, n)``    ``(1, n, 1)``
2     —          —             ``(m, n, 1)``
====  =========  ============  ===============

A reshape moves no value, so the VJP reshapes the cotangent back to the operand's shape and the JVP
reshapes the tangent like the value.
"""

from __future__ import annotations

from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import shape_of, xp_call

RESHAPES = {"atleast_1d": 1, "atleast_2d": 2, "atleast_3d": 3}

_ONE = lir.Lit("1")


def new_shape(func: str, x: lir.Expr, ndim: int) -> lir.Expr | None:
    """The shape ``func`` gives an operand ``x`` of rank ``ndim``, or None if it keeps x's own."""
    k = RESHAPES[func]
    if ndim >= k:
        return None
    dims = [lir.Index(shape_of(x), (lir.Lit(str(i)),)) for i in range(ndim)]
    if ndim == 0:
        dims = [_ONE] * k
    elif k == 2:
        dims = [_ONE, *dims]
    else:
        dims = [_ONE, *dims, _ONE] if ndim == 1 else [*dims, _ONE]
    return lir.Tuple(tuple(dims))


def _as_array(x: lir.Expr, ndim: int) -> lir.Expr:
    """A number operand as a 0-d array: the array API's reshape takes arrays only (NumPy's takes numbers too)."""
    return xp_call("asarray", x) if ndim == 0 else x


def forward(func: str, x: lir.Expr, ndim: int) -> lir.Expr:
    shape = new_shape(func, x, ndim)
    return x if shape is None else xp_call("reshape", _as_array(x, ndim), shape)


def vjp(func: str, x: lir.Expr, ndim: int, bar: lir.Expr) -> lir.Expr:
    """The cotangent of the operand from the result's cotangent ``bar``."""
    if new_shape(func, x, ndim) is None:
        return bar
    return xp_call("sum", bar) if ndim == 0 else xp_call("reshape", bar, shape_of(x))


def jvp(func: str, x: lir.Expr, ndim: int, dx: lir.Expr) -> lir.Expr:
    """The result's tangent from the operand's tangent ``dx`` (an array of x's shape where x is one)."""
    shape = new_shape(func, x, ndim)
    return dx if shape is None else xp_call("reshape", _as_array(dx, ndim), shape)

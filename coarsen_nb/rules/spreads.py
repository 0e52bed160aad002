"""The spreads: ``np.var``, ``np.std`` (with ``ddof=``) and ``np.linalg.norm`` (the 2-norm of a
vector, the Frobenius norm of a matrix), over the whole array or over ``axis=``, with ``keepdims=``.

Each is an opaque step (a reduction: SymPy does not see into it), with the reduction machinery of
:mod:`coarsen_nb.rules.reductions` for its axes.  With ``c = x - mean(x)`` over the reduced axes and
``n`` the number of elements each value combines,

* ``var = sum(c**2) / (n - ddof)``: the cotangent ``2 c bar / (n - ddof)`` (the ``- mean`` term
  contributes nothing: ``c`` sums to zero), the tangent ``2 sum(c dx) / (n - ddof)``;
* ``std = sqrt(var)``: the cotangent ``c bar / ((n - ddof) std)``, the tangent
  ``sum(c dx) / ((n - ddof) std)``;
* ``norm = sqrt(sum(x**2))``: the cotangent ``x bar / norm``, the tangent ``sum(x dx) / norm``.

Where ``std`` or ``norm`` is 0 (a constant slice, a zero vector) neither is differentiable and the
formulas are 0/0, NaN in NumPy.  The generated code returns 0 there (the helper ``_div_or_zero``):
the subgradient of least norm, the convention ``abs`` follows at 0 (``sign(0) = 0``).  ``var`` is
smooth and needs no such care.

``ddof`` is a number known at compile time; ``ddof >= n`` gives NumPy's value (inf or nan, with
its warning).  ``np.linalg.norm`` takes only ``ord=None``: another ``ord`` (an induced matrix norm,
the 1- or max-norm) is a CoarsenError saying how to write it, and ``axis`` names one axis (a
vector norm) or two (a matrix norm), as NumPy requires.
"""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.build import Expr, Lit, Paren, call, lit, mul, op, xp_call
from coarsen_nb.rules.record import Primitive, Spelling
from coarsen_nb.rules.reductions import axes, count, kept, over, reduced_type

MOMENT = (("axis", None), ("ddof", 0), ("keepdims", False))
NORM = (("ord", None), ("axis", None), ("keepdims", False))
TWO = Lit("2.0")


def _check_ddof(fn: str):
    def check(static: dict, ndim: int) -> None:
        ddof = static["ddof"]
        if not isinstance(ddof, (int, float)) or isinstance(ddof, bool):
            err = CoarsenError(f"ddof= of {fn}", hint="give ddof as a number: ddof=0 (the population "
                               "statistic) or ddof=1 (the sample one)", message=f"{fn}'s ddof={ddof!r} is not a number")
            err.user_name = "ddof"
            raise err
    return check


def _check_norm(static: dict, ndim: int) -> None:
    if static["ord"] is not None:
        err = CoarsenError("ord= of np.linalg.norm", hint="leave ord out (the 2-norm of a vector, the Frobenius "
                           "norm of a matrix), or write the norm out: np.sum(np.abs(x)) for ord=1, "
                           "np.max(np.abs(x)) for ord=np.inf", message=f"np.linalg.norm with ord={static['ord']!r} "
                           "is not supported")
        err.user_name = "norm"
        raise err
    axis = static["axis"]
    if isinstance(axis, tuple) and len(axis) > 2:
        err = CoarsenError("axis= of np.linalg.norm", hint="name one axis (a vector norm) or two (a matrix norm), "
                           "or reshape first", message=f"np.linalg.norm's axis={axis!r} names more than two axes")
        err.user_name = "axis"
        raise err


def _kept_axes(s, x, axis) -> dict[str, Expr]:
    """The keyword arguments of a reduction over ``axis`` that broadcasts back against ``x``: the axes kept
    (none to write over the whole array: a scalar broadcasts)."""
    whole = len(axes(axis, s.ndim(x), "a reduction")) == s.ndim(x)
    return over(s, x, axis, keepdims=not whole)


def _centered(s, x, axis) -> Expr:
    """``x`` less its mean over the reduced axes (kept, to broadcast)."""
    code = s.expr(x)
    return Paren(op("-", code, xp_call("mean", code, **_kept_axes(s, x, axis))))


def _moment(std: bool):
    """The VJP and JVP of ``np.var`` (``std=False``) and ``np.std``."""
    def vjp(s, a, bar, axis=None, ddof=0, keepdims=False):
        x = a[0]
        b = kept(s, x, bar, axis, keepdims)
        n = _n(s, x, axis, ddof)
        if not std:
            return [(x, op("/", mul(TWO, _centered(s, x, axis), b), n))]
        sd = xp_call("std", s.expr(x), **_kept_axes(s, x, axis), ddof=lit(ddof))
        return [(x, op("/", mul(_centered(s, x, axis), call(s.helper('_div_or_zero'), b, sd)), n))]

    def jvp(s, a, axis=None, ddof=0, keepdims=False):
        x = a[0]
        moment = xp_call("sum", mul(_centered(s, x, axis), s.array_tangent_expr(x)), **over(s, x, axis, keepdims))
        n = _n(s, x, axis, ddof)
        if not std:
            return op("/", mul(TWO, moment), n)
        sd = xp_call("std", s.expr(x), **over(s, x, axis, keepdims), ddof=lit(ddof))
        return call(s.helper('_div_or_zero'), op("/", moment, n), sd)

    return {"vjp": vjp, "jvp": jvp}


def _norm_of(s, x, axis, keepdims) -> Expr:
    """The norm again, as the derivative code needs it (``keepdims=None``: kept to broadcast against ``x``;
    a sum, not linalg.norm, which takes at most two axes)."""
    code = s.expr(x)
    kw = _kept_axes(s, x, axis) if keepdims is None else over(s, x, axis, keepdims)
    return xp_call("sqrt", xp_call("sum", mul(code, code), **kw))


def _n(s, x, axis, ddof) -> Expr:
    """The divisor ``n - ddof``."""
    n = count(s, x, axis)
    return n if ddof == 0 else Paren(op("-", n, lit(ddof)))


def _norm_vjp(s, a, bar, ord=None, axis=None, keepdims=False):
    x = a[0]
    b = kept(s, x, bar, axis, keepdims)
    return [(x, mul(s.expr(x), call(s.helper('_div_or_zero'), b, _norm_of(s, x, axis, None))))]


def _norm_jvp(s, a, ord=None, axis=None, keepdims=False):
    x = a[0]
    inner = xp_call("sum", mul(s.expr(x), s.array_tangent_expr(x)), **over(s, x, axis, keepdims))
    return call(s.helper('_div_or_zero'), inner, _norm_of(s, x, axis, keepdims))


def _row(name, numpy, static, check, **kw) -> Primitive:
    return Primitive(name, "reduction", (1,), numpy, spelling=Spelling(array=numpy), total=True, static=static,
                     type=reduced_type(f"np.{numpy}", check), **kw)


SPREADS: tuple[Primitive, ...] = (
    _row("var", "var", MOMENT, _check_ddof("np.var"), **_moment(std=False)),
    _row("std", "std", MOMENT, _check_ddof("np.std"), **_moment(std=True)),
    _row("norm", "linalg.norm", NORM, _check_norm, vjp=_norm_vjp, jvp=_norm_jvp),
)

"""The reductions: ``np.sum``, ``mean``, ``prod``, ``max``, ``min``; over the whole array, or over
``axis=`` with ``keepdims=`` (compile-time parameters, :mod:`coarsen_nb.frontend.static`).  The
spreads (``np.std``, ``np.var``, ``np.linalg.norm``) are in :mod:`coarsen_nb.rules.spreads`.

A reduction over axes is an opaque step like the whole-array one.  Its value's rank is the operand's
less the reduced axes (unless ``keepdims``), and its cotangent reaches the operand broadcast back
over the reduced axes: the cotangent re-shaped with those axes kept as length 1
(:func:`kept`), which NumPy's broadcasting in ``b_x += ...`` then spreads over them.  The JVP is
the same reduction of the tangent (``mean``, ``sum``), or a sum over the reduced axes of the
tangent times the partial derivatives (``prod``, ``max``, ``min``).

``prod``, ``max`` and ``min`` over some axes use the generated module's helpers
``_prod_except_axes`` and ``_first_extremum`` (``lower/helpers.py``), which move the reduced axes
last and merge them, so the whole-array rule applies along that one axis: the products of the other
elements without division (zero-safe), and the first arg-extremum (NumPy's ``argmax`` tie rule, in C
order over the reduced axes) as the one element that gets the cotangent.  A call over the whole
array without ``keepdims`` keeps the whole-array code it always had.
"""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.phi import forms
from coarsen_nb.rules.build import (
    XP,
    AddedBy,
    AtIndex,
    BinOp,
    Compare,
    Expr,
    Index,
    Lit,
    Paren,
    Tuple,
    call,
    dim,
    dotted,
    lit,
    mul,
    shape,
    size,
    xp_call,
    zeros_like_shape,
)
from coarsen_nb.rules.record import Primitive, Spelling

ONE = Lit("1")
TRUE = Lit("True")

AXIS = (("axis", None), ("keepdims", False))


def axes(axis, ndim: int, fn: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple, negative counting from the end) as sorted axes of an array
    of ``ndim`` dimensions; a CoarsenError naming ``fn`` when one is out of range or repeated (its
    caret, placed by the type pass, under the word ``axis`` of the line)."""
    try:
        return _axes(axis, ndim, fn)
    except CoarsenError as err:
        err.user_name = "axis"
        raise


def _axes(axis, ndim: int, fn: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    given = axis if isinstance(axis, tuple) else (axis,)
    if any(not isinstance(a, int) or isinstance(a, bool) for a in given):
        raise CoarsenError(f"axis= of {fn}", hint="give axis as an int or a tuple of ints",
                           message=f"{fn}'s axis={axis!r} is not an axis")
    out = []
    for a in given:
        if not -ndim <= a < ndim:
            raise CoarsenError(f"axis= of {fn}", hint=f"an array of {ndim} dimension{'s' * (ndim != 1)} has axes "
                               f"0 to {ndim - 1} (or -{ndim} to -1)" if ndim else "reduce an array, not a number",
                               message=f"{fn}'s axis={a} is out of range for an array of {ndim} "
                                       f"dimension{'s' * (ndim != 1)}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise CoarsenError(f"axis= of {fn}", hint="name each axis once",
                           message=f"{fn}'s axis={axis!r} repeats an axis")
    return tuple(sorted(out))


def reduced_type(fn: str, check=None):
    """The ``type`` rule of a reduction: a float of the operand's rank less the reduced axes.

    ``check(static, ndim)``: the registration's own checks of its other parameters (``ddof``, ``ord``),
    raising a located CoarsenError."""
    def rule(args: list, static: dict) -> tuple[str, int]:
        nd = args[0].ndim
        if check is not None:
            check(static, nd)
        gone = axes(static["axis"], nd, fn)
        return "float", nd if static["keepdims"] else nd - len(gone)
    return rule


def kept(s, x, bar: Expr, axis, keepdims: bool) -> Expr:
    """``bar`` (the cotangent of a reduction of ``x`` over ``axis``) shaped to broadcast against ``x``:
    the reduced axes put back as length 1 (nothing to do with ``keepdims``, or for a scalar)."""
    nd = s.ndim(x)
    gone = axes(axis, nd, "a reduction")
    if keepdims or len(gone) == nd:
        return bar
    shape = tuple(ONE if d in gone else dim(s.expr(x), d) for d in range(nd))
    return xp_call("reshape", bar, Tuple(shape, trailing=True))


def count(s, x, axis) -> Expr:
    """The number of elements a reduction of ``x`` over ``axis`` combines into each of its values."""
    nd = s.ndim(x)
    gone = axes(axis, nd, "a reduction")
    if len(gone) == nd:
        return size(s.expr(x)) if nd else ONE
    dims = [dim(s.expr(x), d) for d in gone]
    return dims[0] if len(dims) == 1 else Paren(mul(*dims))


def over(s, x, axis, keepdims: bool) -> dict[str, Expr]:
    """The keyword arguments of a reduction of generated code over the same axes as ``axis`` of ``x``
    (normalized: non-negative, sorted), none when that is the whole array to a scalar."""
    nd = s.ndim(x)
    gone = axes(axis, nd, "a reduction")
    if len(gone) == nd and not keepdims:
        return {}
    return {"axis": lit(gone[0] if len(gone) == 1 else gone), **({"keepdims": TRUE} if keepdims else {})}


def whole(axis, keepdims) -> bool:
    """The plain call: over the whole array, to a scalar (its rules print the code they always did)."""
    return axis is None and not keepdims


def _static_kw(axis, keepdims) -> dict[str, Expr]:
    return {"axis": lit(axis), **({"keepdims": TRUE} if keepdims else {})}


def _broadcast(s, x) -> Expr:
    """``dx + xp.zeros(x.shape)``: the tangent of ``x`` as an array (the whole-array rules' own form)."""
    return BinOp("+", s.d_expr(x), zeros_like_shape(s.expr(x)))


def _sum_vjp(s, a, bar, axis=None, keepdims=False):
    return [(a[0], kept(s, a[0], bar, axis, keepdims))]


def _sum_jvp(s, a, axis=None, keepdims=False):
    if whole(axis, keepdims):
        return xp_call("sum", _broadcast(s, a[0]))
    return xp_call("sum", s.array_tangent_expr(a[0]), **_static_kw(axis, keepdims))


def _mean_vjp(s, a, bar, axis=None, keepdims=False):
    if whole(axis, keepdims):
        return [(a[0], BinOp("/", bar, size(s.expr(a[0]))))]
    return [(a[0], BinOp("/", kept(s, a[0], bar, axis, keepdims), count(s, a[0], axis)))]


def _mean_jvp(s, a, axis=None, keepdims=False):
    if whole(axis, keepdims):
        return xp_call("mean", _broadcast(s, a[0]))
    return xp_call("mean", s.array_tangent_expr(a[0]), **_static_kw(axis, keepdims))


def _prod_except(s, a, axis) -> Expr:
    return call(s.helper('_prod_except_axes'), s.expr(a[0]), lit(axes(axis, s.ndim(a[0]), 'np.prod')))


def _prod_vjp(s, a, bar, axis=None, keepdims=False):
    if whole(axis, keepdims):
        return [(a[0], mul(bar, call(s.helper('_prod_except'), s.expr(a[0]))))]
    return [(a[0], mul(kept(s, a[0], bar, axis, keepdims), _prod_except(s, a, axis)))]


def _prod_jvp(s, a, axis=None, keepdims=False):
    if whole(axis, keepdims):
        return xp_call("sum", mul(s.array_tangent_expr(a[0]), call(s.helper('_prod_except'), s.expr(a[0]))))
    return xp_call("sum", mul(s.array_tangent_expr(a[0]), _prod_except(s, a, axis)), **over(s, a[0], axis, keepdims))


def _pick(arg: str):
    """The VJP and JVP of ``amax``/``amin``: the first arg-extremum's element (over the reduced axes)."""
    def mask(s, a, axis) -> Expr:
        gone = axes(axis, s.ndim(a[0]), "np.max" if arg == "argmax" else "np.min")
        # which extremum as +1 (argmax) or -1 (argmin), not the function xp.argmax: a function passed as a value
        # makes Numba's cache of the caller fail to pickle it once argmax has been typed with a call
        return call(s.helper('_first_extremum'), s.expr(a[0]), lit(gone), lit(1 if arg == "argmax" else -1))

    def vjp(s, a, bar, axis=None, keepdims=False):
        x = s.expr(a[0])
        if whole(axis, keepdims) and s.ndim(a[0]) == 1:
            # the first arg-extremum's one element (an index array of one, which a Dask array takes too)
            return [(a[0], AtIndex(xp_call(arg, x, keepdims=TRUE), bar))]
        if whole(axis, keepdims):
            first = Compare("==", xp_call("arange", size(x)), xp_call(arg, x))
            return [(a[0], mul(xp_call("reshape", xp_call("asarray", first, dtype=dotted("float64", XP)), shape(x)),
                               bar))]
        # each group's cotangent at its first arg-extremum (in place under numba: no one-hot of x's size)
        gone = axes(axis, s.ndim(a[0]), "np.max" if arg == "argmax" else "np.min")
        return [(a[0], AddedBy("_add_at_first_extremum", (x, lit(gone), lit(1 if arg == "argmax" else -1),
                                                          kept(s, a[0], bar, axis, keepdims))))]

    def jvp(s, a, axis=None, keepdims=False):
        if whole(axis, keepdims):
            return Index(xp_call("reshape", s.array_tangent_expr(a[0]), Tuple((Lit("-1"),))),
                         (xp_call(arg, s.expr(a[0])),))
        return xp_call("sum", mul(mask(s, a, axis), s.array_tangent_expr(a[0])), **over(s, a[0], axis, keepdims))

    return {"vjp": vjp, "jvp": jvp}


def _of_number(rules: dict) -> dict:
    """``rules`` where the operand is an array; a reduction of a number (``np.sum(np.sin(x))`` of a float
    ``x``) is the number itself, so its cotangent passes through and its tangent is the operand's."""
    vjp, jvp = rules["vjp"], rules["jvp"]

    def number_vjp(s, a, bar, **static):
        return [(a[0], bar)] if s.ndim(a[0]) == 0 else vjp(s, a, bar, **static)

    def number_jvp(s, a, **static):
        return s.d_expr(a[0]) if s.ndim(a[0]) == 0 else jvp(s, a, **static)

    return {**rules, "vjp": number_vjp, "jvp": number_jvp}


def _row(name, nargs, numpy=None, **kw) -> Primitive:
    numpy = numpy or name
    return Primitive(name, "reduction", (nargs,), numpy, spelling=Spelling(array=numpy), static=AXIS,
                     type=reduced_type(f"np.{numpy}"), **_of_number(kw))


REDUCTIONS: tuple[Primitive, ...] = (
    # the whole-array sum of elementwise code is lifted into its segment (ElemSum: fused, its adjoint the
    # segment's own); over axes it is a step
    _row("sum", 1, total=True, vjp=_sum_vjp, jvp=_sum_jvp, lift=forms.ElemSum),
    _row("mean", 1, total=True, vjp=_mean_vjp, jvp=_mean_jvp),
    _row("prod", 1, vjp=_prod_vjp, jvp=_prod_jvp),
    _row("amax", 1, "max", **_pick("argmax")),
    _row("amin", 1, "min", **_pick("argmin")),
)

"""The array functions of vectorized code (issue 15): ``np.where`` and ``np.clip`` (elementwise, lifted),
the cumulative, shifting and joining steps (``cumsum``, ``cumprod``, ``diff``, ``roll``, ``outer``,
``concatenate``, ``stack``), the grids ``arange``/``linspace``, and the shape steps ``reshape`` and
``expand_dims`` (what ``x[:, None]`` is).

``np.where(c, a, b)`` is γ(c, a, b) and ``np.clip(x, lo, hi)`` is min(max(x, lo), hi) as a γ chain: SymPy
sees into both, so they fuse into their SOI, their derivative is the taken arm's (C2), and the lowering
evaluates each arm only on the elements that take it (no NaN, inf or warning from ``np.log(x)`` where
``x <= 0`` is not taken).  The value equals NumPy's wherever NumPy's is finite.

The rest move or combine elements; each is an opaque step whose rules below say, in the notation of
:mod:`coarsen_nb.rules.record` (``s.expr``, ``s.array_tangent_expr``, ``s.ndim``), what the cotangent of an
operand is (the step's transpose) and what the tangent of the value is (the step of the tangent):

=============  ==========================================  ========================================
step           cotangent of the operand                    tangent
=============  ==========================================  ========================================
cumsum         reverse cumulative sum of ȳ                 cumsum(ẋ)
cumprod        zero-safe, see ``_cumprod_vjp`` (lower/     zero-safe, ``_cumprod_jvp``
               helpers.py): no division by a zero
diff (n)       n times ``-diff`` of ȳ padded with zeros    diff(ẋ)
roll (shift)   roll(ȳ, -shift)                             roll(ẋ, shift)
outer(a, b)    ȳ·b and aᵀ·ȳ, flattened back                outer(ȧ, b) + outer(a, ḃ)
concatenate    ȳ cut at the operands' offsets              concatenate of the tangents
stack          ȳ taken along the new axis                  stack of the tangents
linspace(a,b)  Σ ȳ(1 - t), Σ ȳ t with t = linspace(0, 1)   ȧ(1 - t) + ḃ t
reshape        ȳ reshaped to the operand's shape           reshape(ẋ)
expand_dims    ȳ squeezed                                  expand_dims(ẋ)
=============  ==========================================  ========================================

``np.cumprod``'s derivative never divides by an element of x: the usual R(ȳ·y)/x (R the reverse
cumulative sum) is taken only where x ≠ 0; at the first zero of a line the derivative is the product of
the other elements up to each j (``R(ȳ·cumprod(x with its zeros set to 1))`` over the stretch before the
second zero), and at every later zero it is 0 — exactly the products of the other elements, as
tests/rules/test_arrays.py checks against brute force.

Generated code uses the array API's names (``cumulative_sum``, ``concat``, ``expand_dims``), which NumPy
2 and CuPy 14 have.  Forms outside these rules are refused where the call's types are known (a
CoarsenError at the function's name on the user's line, with what to write instead).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.errors import CoarsenError
from coarsen_nb.phi.gammas import gamma, is_boolean
from coarsen_nb.rules.build import (
    ALL,
    REST,
    ZERO,
    Expr,
    Index,
    List,
    Lit,
    Paren,
    Slice,
    Tuple,
    call,
    dim,
    lit,
    mul,
    num,
    op,
    shape,
    xp_call,
)
from coarsen_nb.rules.record import Primitive, Spelling
from coarsen_nb.rules.reductions import axes

UNIT, MINUS_ONE = Lit("1.0"), Lit("-1")


def _refuse(fn: str, construct: str, hint: str, message: str) -> CoarsenError:
    """A CoarsenError about a call of ``np.<fn>``; the type pass puts its caret under the word ``fn``."""
    err = CoarsenError(construct, hint=hint, message=message)
    err.user_name = fn
    return err


def _axis(axis, ndim: int, fn: str) -> int:
    """One axis of an array of ``ndim`` dimensions, as a non-negative int (a located error otherwise)."""
    if isinstance(axis, tuple):
        raise _refuse("axis", f"axis= of np.{fn}", f"give one axis, e.g. axis=0: np.{fn} works along one axis",
                      f"np.{fn}'s axis={axis!r} is not one axis")
    return axes(axis, ndim, f"np.{fn}")[0]


def _kind(t) -> str:
    return "int" if t.kind in ("int", "bool") else "float"


def _array_operand(fn: str, t, what: str = "an array") -> None:
    if t.ndim == 0:
        raise _refuse(fn, f"np.{fn} of a number", f"pass {what}: np.{fn} of a number makes a 1-element array, "
                      "which is seldom meant", f"np.{fn} of a number is not supported")


# -- where and clip: lifted ----------------------------------------------------------------------


def _where_lift(c, a, b):
    """γ(c, a, b); a numeric condition means ``c != 0``, as NumPy reads it."""
    return gamma(c if is_boolean(c) else sp.Ne(c, 0), a, b)


def _clip_lift(x, lo, hi):
    """min(max(x, lo), hi), NumPy's definition (``hi`` wins where ``lo > hi``), as a γ chain."""
    m = gamma(x >= lo, x, lo)
    return gamma(m <= hi, m, hi)


def _where_type(args, static):
    a, b = args[1], args[2]
    both_int = a.kind in ("int", "bool") and b.kind in ("int", "bool")
    return ("int" if both_int else "float"), max(t.ndim for t in args)


def _clip_type(args, static):
    return ("int" if all(t.kind == "int" for t in args) else "float"), max(t.ndim for t in args)


# -- cumulative sum and product ----------------------------------------------------------------


def _cumulative_type(fn: str):
    def rule(args, static):
        x = args[0]
        _array_operand(fn, x)
        if static["axis"] is None and x.ndim > 1:
            raise _refuse(fn, f"np.{fn} of a {x.ndim}-D array without axis=",
                          f"give the axis, np.{fn}(x, axis=0), or flatten first: np.{fn}(x.reshape(-1))",
                          f"np.{fn} without axis= flattens a {x.ndim}-D array")
        if static["axis"] is not None:
            _axis(static["axis"], x.ndim, fn)
        return _kind(x), x.ndim
    return rule


def _along(s, x, axis) -> int:
    return 0 if axis is None else axis % s.ndim(x)


def _reverse_cumsum(v: Expr, a: int) -> Expr:
    return xp_call("flip", xp_call("cumulative_sum", xp_call("flip", v, axis=num(a)), axis=num(a)), axis=num(a))


def _cumsum_vjp(s, a, bar, axis=None):
    return [(a[0], _reverse_cumsum(bar, _along(s, a[0], axis)))]


def _cumsum_jvp(s, a, axis=None):
    return xp_call("cumulative_sum", s.array_tangent_expr(a[0]), axis=num(_along(s, a[0], axis)))


def _cumprod_vjp(s, a, bar, axis=None):
    return [(a[0], call(s.helper('_cumprod_vjp'), s.expr(a[0]), bar, num(_along(s, a[0], axis))))]


def _cumprod_jvp(s, a, axis=None):
    return call(s.helper('_cumprod_jvp'), s.expr(a[0]), s.array_tangent_expr(a[0]), num(_along(s, a[0], axis)))


# -- diff and roll -------------------------------------------------------------------------------------


def _diff_type(args, static):
    x, n = args[0], static["n"]
    _array_operand("diff", x)
    if type(n) is not int or n < 0:
        raise _refuse("diff", "n= of np.diff", "give the order as an int >= 0, e.g. n=2",
                      f"np.diff's n={n!r} is not an order of differences")
    _axis(static["axis"], x.ndim, "diff")
    return _kind(x), x.ndim


def _diff_vjp(s, a, bar, n=1, axis=-1):
    return [(a[0], call(s.helper('_diff_vjp'), bar, num(n), num(axis % s.ndim(a[0]))))]


def _diff_jvp(s, a, n=1, axis=-1):
    return xp_call("diff", s.array_tangent_expr(a[0]), n=num(n), axis=num(axis))


def _roll_type(args, static):
    x, shift, axis = args[0], static["shift"], static["axis"]
    _array_operand("roll", x)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    if shift is None or any(type(k) is not int for k in shifts):
        raise _refuse("roll", "np.roll without an int shift", "give the shift as an int written in the "
                      "source, np.roll(x, 1) (or a tuple of ints, with a tuple axis=)",
                      "np.roll needs a constant int shift")
    if isinstance(shift, tuple) != isinstance(axis, tuple) or \
            (isinstance(shift, tuple) and len(shift) != len(axis)):
        raise _refuse("roll", "np.roll with shifts and axes that do not pair", "give one shift per axis: "
                      "np.roll(x, (1, 2), axis=(0, 1)), or one int shift and one axis",
                      "np.roll's shift and axis do not pair up")
    if axis is not None:
        axes(axis, x.ndim, "np.roll")
    return x.kind if x.kind != "bool" else "int", x.ndim


def _negated(shift):
    return tuple(-k for k in shift) if isinstance(shift, tuple) else -shift


def _roll_vjp(s, a, bar, shift=None, axis=None):
    return [(a[0], xp_call("roll", bar, shift=lit(_negated(shift)), axis=lit(axis)))]


def _roll_jvp(s, a, shift=None, axis=None):
    return xp_call("roll", s.array_tangent_expr(a[0]), shift=lit(shift), axis=lit(axis))


# -- outer, concatenate, stack -------------------------------------------------------------------------


def _outer_type(args, static):
    for t in args:
        _array_operand("outer", t, "two arrays (for a number, multiply: a * y)")
    return "float", 2


def _flat(x: Expr) -> Expr:
    return xp_call("reshape", x, Tuple((MINUS_ONE,)))


def _outer_vjp(s, a, bar):
    x, y = s.expr(a[0]), s.expr(a[1])
    return [(a[0], xp_call("reshape", op("@", bar, _flat(y)), shape(x))),
            (a[1], xp_call("reshape", op("@", _flat(x), bar), shape(y)))]


def _outer_code(x: Expr, y: Expr) -> Expr:
    column, row = Tuple((MINUS_ONE, num(1))), Tuple((num(1), MINUS_ONE))
    return Paren(mul(xp_call("reshape", x, column), xp_call("reshape", y, row)))


def _outer_spelled(args, xp, static):
    """The spelling of ``np.outer(a, b)``: ``(xp.reshape(a, (-1, 1)) * xp.reshape(b, (1, -1)))``."""
    return _outer_code(args[0], args[1])


def _outer_jvp(s, a):
    return op("+", _outer_code(s.array_tangent_expr(a[0]), s.expr(a[1])),
              _outer_code(s.expr(a[0]), s.array_tangent_expr(a[1])))


def _joined_type(fn: str, new_axis: bool):
    def rule(args, static):
        ranks = {t.ndim for t in args}
        if 0 in ranks or len(ranks) > 1:
            raise _refuse(fn, f"np.{fn} of arrays of different ranks", "join arrays of one rank (a number "
                          "x as np.array([x]), a vector v as a row v[None, :])",
                          f"np.{fn} joins arrays of one rank, not of ranks {sorted(ranks)}")
        nd = args[0].ndim + new_axis
        _axis(static["axis"], nd, fn)
        return ("int" if all(t.kind == "int" for t in args) else "float"), nd
    return rule


def _concat_vjp(s, a, bar, axis=0):
    """Operand k's cotangent is ȳ's slice at its offset (the sum of the lengths before it) along ``axis``."""
    d = axis % s.ndim(a[0])
    out, start = [], None       # (None: the first operand's offset, 0)
    for x in a:
        stop = dim(s.expr(x), d)
        end = stop if start is None else op("+", start, stop)
        cut = Slice(num(0) if start is None else start, end)
        out.append((x, Index(bar, (*[ALL] * d, cut, REST))))     # (the array API wants every axis named)
        start = end
    return out


def _concat_jvp(s, a, axis=0):
    return xp_call("concat", List(tuple(s.array_tangent_expr(x) for x in a)), axis=num(axis))


def _stack_vjp(s, a, bar, axis=0):
    d = axis % (s.ndim(a[0]) + 1)
    return [(x, Index(bar, (*[ALL] * d, num(k), REST))) for k, x in enumerate(a)]


def _stack_jvp(s, a, axis=0):
    return xp_call("stack", List(tuple(s.array_tangent_expr(x) for x in a)), axis=num(axis))


def _joined(fn: str, numpy: str, array: str, **kw) -> Primitive:
    """``np.concatenate`` / ``np.stack`` of a list written in the call (frontend/arrays.py makes each
    element an operand and always gives ``axis``)."""
    def evaluate(args, xp, axis=0):
        return getattr(xp, numpy)(list(args), axis=axis)

    def spelled(args, xp, static):      # xp.concat([a, b], axis=0)
        return xp_call(array, List(tuple(args)), axis=lit(static["axis"]))

    return Primitive(fn, "opaque", tuple(range(1, 33)), numpy, evaluate=evaluate, total=True,
                     spelling=Spelling(step=spelled), static=(("axis", 0),), **kw)


# -- grids ---------------------------------------------------------------------------------------------


def _arange_type(args, static):
    for t in args:
        if t.ndim:
            raise _refuse("arange", "np.arange of an array", "give the bounds as numbers: np.arange(n), "
                          "np.arange(a, b), np.arange(a, b, step)", "np.arange takes numbers, not arrays")
    return ("int" if all(t.kind in ("int", "bool") for t in args) else "float"), 1


def _linspace_type(args, static):
    a, b, n = args
    if a.ndim or b.ndim:
        raise _refuse("linspace", "np.linspace between arrays", "give the ends as numbers; for a grid per "
                      "element, write a + (b - a) * np.linspace(0.0, 1.0, n)[:, None]",
                      "np.linspace takes numbers as its ends here")
    if n.kind != "int" or n.ndim:
        raise _refuse("linspace", "np.linspace with a number of points that is not an int",
                      "give the number of points as an int: np.linspace(a, b, n)",
                      f"np.linspace's number of points is {n}, not an int")
    return "float", 1


def _unit_grid(s, a) -> Expr:
    return xp_call("linspace", ZERO, UNIT, s.expr(a[2]))


def _linspace_vjp(s, a, bar):
    t = _unit_grid(s, a)
    return [(a[0], xp_call("sum", mul(bar, Paren(op("-", UNIT, t))))), (a[1], xp_call("sum", mul(bar, t)))]


def _linspace_jvp(s, a):
    t = _unit_grid(s, a)
    return op("+", mul(Paren(s.d_expr(a[0])), Paren(op("-", UNIT, t))), mul(Paren(s.d_expr(a[1])), t))


# -- shape steps ---------------------------------------------------------------------------------------


def _reshape_type(args, static):
    x, shape = args
    if shape.kind not in ("tuple", "shape"):
        raise _refuse("reshape", "reshape to a computed shape", "write the sizes in the call: x.reshape(n, m), "
                      "x.reshape(-1), x.reshape((2, -1)) or x.reshape(y.shape)",
                      "the shape of a reshape must be written in the call")
    return x.kind if x.kind != "bool" else "int", shape.ndim


def _expand_type(args, static):
    x = args[0]
    return x.kind if x.kind != "bool" else "int", x.ndim + 1


ARRAYS: tuple[Primitive, ...] = (
    Primitive("where", "elementwise", (3,), "where", lift=_where_lift, spelling=Spelling(array="where"),
              total=True, type=_where_type),
    Primitive("clip", "elementwise", (3,), "clip", lift=_clip_lift, spelling=Spelling(array="clip"),
              total=True, kink=True, type=_clip_type),
    Primitive("cumsum", "opaque", (1,), "cumsum", spelling=Spelling(array="cumulative_sum"), total=True,
              static=(("axis", None),), type=_cumulative_type("cumsum"), vjp=_cumsum_vjp, jvp=_cumsum_jvp),
    Primitive("cumprod", "opaque", (1,), "cumprod", spelling=Spelling(array="cumulative_prod"), total=True,
              static=(("axis", None),), type=_cumulative_type("cumprod"), vjp=_cumprod_vjp, jvp=_cumprod_jvp),
    Primitive("diff", "opaque", (1,), "diff", spelling=Spelling(array="diff"), total=True,
              static=(("n", 1), ("axis", -1)), type=_diff_type, vjp=_diff_vjp, jvp=_diff_jvp),
    Primitive("roll", "opaque", (1,), "roll", spelling=Spelling(array="roll"), total=True,
              static=(("shift", None), ("axis", None)), type=_roll_type, vjp=_roll_vjp, jvp=_roll_jvp),
    Primitive("outer", "opaque", (2,), "outer", spelling=Spelling(step=_outer_spelled), total=True,
              type=_outer_type, vjp=_outer_vjp, jvp=_outer_jvp),
    _joined("concatenate", "concatenate", "concat", type=_joined_type("concatenate", False), vjp=_concat_vjp,
            jvp=_concat_jvp),
    _joined("stack", "stack", "stack", type=_joined_type("stack", True), vjp=_stack_vjp, jvp=_stack_jvp),
    Primitive("arange", "constructor", (1, 2, 3), "arange", spelling=Spelling(array="arange"), total=True,
              differentiable=False, type=_arange_type),
    Primitive("linspace", "opaque", (3,), "linspace", spelling=Spelling(array="linspace"), total=True,
              type=_linspace_type, vjp=_linspace_vjp, jvp=_linspace_jvp),
    # x.reshape(n, m): the operand and the shape as a tuple of ints (frontend/arrays.py)
    Primitive("reshape", "opaque", (2,), "reshape", spelling=Spelling(array="reshape"), type=_reshape_type,
              vjp=lambda s, a, bar: [(a[0], xp_call("reshape", bar, shape(s.expr(a[0]))))],
              jvp=lambda s, a: xp_call("reshape", s.array_tangent_expr(a[0]), s.expr(a[1]))),
    # x[:, None]: one new axis of length 1 at ``axis`` (frontend/slices.py; one call per new axis)
    Primitive("expand_dims", "opaque", (1,), "expand_dims", spelling=Spelling(array="expand_dims"), total=True,
              static=(("axis", None),), type=_expand_type,
              vjp=lambda s, a, bar, axis=None: [(a[0], xp_call("squeeze", bar, axis=num(axis)))],
              jvp=lambda s, a, axis=None: xp_call("expand_dims", s.array_tangent_expr(a[0]), axis=num(axis))),
)

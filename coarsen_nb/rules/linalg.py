"""Linear algebra: transposes, ``np.trace``, ``np.eye``, ``np.einsum`` and ``np.linalg.solve``/``inv``/``det``/
``slogdet``, each an opaque step with its exact rules.

Notation (the sweep's methods: :mod:`coarsen_nb.rules.record`): ``Ā`` is the cotangent of ``A``, ``dA``
its tangent, ``A⁻ᵀ`` the transpose of the inverse.  With ``y`` the step's value:

=====================  ==============================  ==================================
step                   VJP                             JVP
=====================  ==============================  ==================================
``y = Xᵀ``             ``X̄ = ȳᵀ``                      ``dy = dXᵀ``
``y = tr A``           ``Ā = ȳ I``                     ``dy = tr dA``
``y = A⁻¹ b``          ``b̄ = A⁻ᵀ ȳ``, ``Ā = -b̄ yᵀ``     ``dy = A⁻¹ (db - dA y)``
``Y = A⁻¹``            ``Ā = -Yᵀ Ȳ Yᵀ``                 ``dY = -Y dA Y``
``y = det A``          ``Ā = ȳ y A⁻ᵀ``                 ``dy = y tr(A⁻¹ dA)``
``y = log|det A|``     ``Ā = ȳ A⁻ᵀ``                   ``dy = tr(A⁻¹ dA)``
``y = sign det A``     none: piecewise constant        none
=====================  ==============================  ==================================

``np.linalg.slogdet`` returns a pair; it is registered with one primitive per element (``parts``: the
frontend makes the tuple of the two calls), so unpacking it and indexing it with ``[1]`` need nothing
else.  The matrices are 2-D (NumPy's stacked forms, a 3-D ``A``, are refused with a CoarsenError), and a
singular matrix is NumPy's own ``LinAlgError`` at run time, from the generated code's ``xp.linalg`` call
as from the plain function's.

``np.einsum`` takes its subscripts first (a compile-time parameter before the operands, ``leading``),
explicit only: ``'ij,j->i'``.  The cotangent of operand k is the einsum of the result's cotangent with
the other operands, written to k's subscripts; an index of k that appears nowhere else (summed in k
alone, as in ``'ij->j'``) is not an output of that einsum: the cotangent is the same along it, and is
reshaped with that axis of length 1 for ``+=`` to broadcast.  The tangent is the sum over the operands
of the einsum with that operand's tangent in its place.  The rules read the subscripts, so implicit
mode (no ``->``), ``...`` and an index repeated within one operand (a trace, ``'ii->'``) are refused.
"""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.build import (
    ALL,
    NEW,
    XP,
    ZERO,
    Call,
    Expr,
    Index,
    Name,
    T,
    Tuple,
    dim,
    dotted,
    lit,
    mul,
    neg,
    num,
    op,
    xp_call,
)
from coarsen_nb.rules.record import Primitive, Spelling

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _moves(s, x) -> bool:
    """Whether operand ``x`` has a tangent in this sweep (the sweep spells a zero one as a number or zeros)."""
    d = s.d_expr(x)
    return d != ZERO and not (isinstance(d, Call) and d.func == dotted("zeros", XP))


def _tangent(s, x) -> Expr:
    """Operand ``x``'s tangent: an array of x's shape, or a number where x is one."""
    return s.array_tangent_expr(x) if s.ndim(x) else s.d_expr(x)


def _error(fn: str, word: str, message: str, hint: str) -> CoarsenError:
    err = CoarsenError(fn, hint=hint, message=message)
    err.user_name = word        # the caret goes under this word of the user's line (phi/types.py)
    return err


def _matrix_type(fn: str, word: str, ndim_out):
    """The ``type`` rule of a function of one square matrix (and, for solve, a right-hand side)."""
    def rule(args: list, static: dict) -> tuple[str, int]:
        if args[0].ndim != 2:
            nd = args[0].ndim
            raise _error(fn, word, f"{fn} of an array of {nd} dimension{'s' * (nd != 1)}" if nd else
                         f"{fn} of a number", "pass a 2-D array (one matrix); for a stack of matrices, loop over "
                         "them")
        if len(args) > 1 and args[1].ndim not in (1, 2):
            raise _error(fn, word, f"{fn}'s right-hand side has {args[1].ndim} dimensions",
                         "pass b as a vector or a matrix (its columns are the right-hand sides)")
        return "float", ndim_out(args)
    return rule


# -- transposes, trace, eye --------------------------------------------------------------------------------


def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(range(len(axes)), key=lambda k: axes[k]))


def _transpose_type(args: list, static: dict) -> tuple[str, int]:
    nd, axes = args[0].ndim, static["axes"]
    if axes is not None and (not isinstance(axes, tuple) or sorted(axes) != list(range(nd))):
        raise _error("axes= of np.transpose", "transpose", f"np.transpose's axes={axes!r} is not an order of the "
                     f"{nd} axes", f"give each axis 0 to {nd - 1} once, e.g. axes={tuple(reversed(range(nd)))}")
    return "float", nd


def _permuted(x: Expr, axes) -> Expr:
    return xp_call("transpose", x) if axes is None else xp_call("transpose", x, axes=lit(axes))


def _transpose_vjp(s, a, bar, axes=None):
    return [(a[0], _permuted(bar, None if axes is None else _inverse(axes)))]


def _transpose_jvp(s, a, axes=None):
    return _permuted(_tangent(s, a[0]), axes) if s.ndim(a[0]) else s.d_expr(a[0])


def _trace_vjp(s, a, bar):
    x = s.expr(a[0])
    return [(a[0], mul(bar, xp_call("eye", dim(x, 0), dim(x, 1))))]


# -- np.linalg --------------------------------------------------------------------------------------------


def _solve_vjp(s, a, bar):
    A, y = s.expr(a[0]), s.value()
    b_bar = s.temp(xp_call("linalg.solve", T(A), bar), "solve_bar")
    outer = mul(Index(b_bar, (ALL, NEW)), Index(y, (NEW, ALL))) if s.ndim(a[1]) == 1 else op("@", b_bar, T(y))
    return [(a[1], b_bar), (a[0], neg(outer))]


def _solve_jvp(s, a):
    A, b = a
    moved = op("@", s.array_tangent_expr(A), s.value())       # dA y
    rhs = s.array_tangent_expr(b) if not _moves(s, A) else op("-", s.array_tangent_expr(b), moved) \
        if _moves(s, b) else neg(moved)
    return xp_call("linalg.solve", s.expr(A), rhs)


def _inv_vjp(s, a, bar):
    y = s.value()
    return [(a[0], neg(op("@", op("@", T(y), bar), T(y))))]


def _inv_jvp(s, a):
    y = s.value()
    return neg(op("@", op("@", y, s.array_tangent_expr(a[0])), y))


def _trace_of_solve(s, a) -> Expr:
    """tr(A⁻¹ dA): the tangent of log|det A|."""
    return xp_call("trace", xp_call("linalg.solve", s.expr(a[0]), s.array_tangent_expr(a[0])))


def _det_vjp(s, a, bar):
    return [(a[0], mul(bar, s.value(), T(xp_call("linalg.inv", s.expr(a[0])))))]


def _logabsdet_vjp(s, a, bar):
    return [(a[0], mul(bar, T(xp_call("linalg.inv", s.expr(a[0])))))]


def _slogdet_part(k: int):
    return lambda args, xp: xp.linalg.slogdet(args[0])[k]


# -- np.einsum --------------------------------------------------------------------------------------------


def parse_subscripts(spec, ndims: list[int]) -> tuple[list[str], str]:
    """``spec`` (``'ij,j->i'``) as the operands' subscripts and the output's, checked against the operands'
    ranks; a CoarsenError (its caret under ``einsum``) for a form the rules do not read."""
    def refuse(message: str, hint: str) -> CoarsenError:
        return _error("np.einsum subscripts", "einsum", f"np.einsum({spec!r}, ...): {message}", hint)

    if not isinstance(spec, str):
        raise refuse("the subscripts are not a string", "write them as a string first: np.einsum('ij,j->i', A, x)")
    text = spec.replace(" ", "")
    if "." in text:
        raise refuse("an ellipsis (...) is not supported", "name every axis with a letter: 'bij,bj->bi'")
    if "->" not in text:
        implicit = "".join(sorted(c for c in set(text) if c in _LETTERS and text.count(c) == 1))
        raise refuse("implicit mode (no '->') is not supported", f"write the output after '->': what NumPy "
                     f"makes of it here is np.einsum('{text}->{implicit}', ...)")
    lhs, out = text.split("->", 1)
    ins = lhs.split(",")
    if any(set(t) - _LETTERS for t in [*ins, out]):
        raise refuse("subscripts are letters, commas and one '->'", "write one letter per axis: 'ij,jk->ik'")
    if len(ins) != len(ndims):
        raise refuse(f"{len(ins)} operand subscripts for {len(ndims)} operands", "give one group of letters per "
                     "operand, separated by commas")
    for t, nd in zip(ins, ndims, strict=True):
        if len(t) != nd:
            raise refuse(f"'{t}' names {len(t)} axes of an operand with {nd}", "give one letter per axis")
        if len(set(t)) != len(t):
            raise refuse(f"an index repeated within one operand ('{t}': a diagonal or a trace) is not supported",
                         "use np.trace(A) for a trace, or np.diagonal outside the compiled function")
    if len(set(out)) != len(out) or set(out) - set(lhs):
        raise refuse(f"the output '{out}' repeats an index or names one no operand has",
                     "name each output axis once, with letters of the operands")
    return ins, out


def _einsum_type(args: list, static: dict) -> tuple[str, int]:
    return "float", len(parse_subscripts(static["subscripts"], [t.ndim for t in args])[1])


def _einsum(spec: str, codes: list[Expr]) -> Expr:
    return xp_call("einsum", lit(spec), *codes)


def _einsum_spelled(args, xp, static):
    """The spelling ``xp.einsum('ij,j->i', A, x)``: the subscripts first."""
    return Call(dotted("einsum", Name(xp)), (lit(static["subscripts"]), *args))


def _slogdet_spelled(k: int):
    """The spelling ``xp.linalg.slogdet(A)[k]``."""
    return lambda args, xp, static: Index(Call(dotted("linalg.slogdet", Name(xp)), tuple(args)), (num(k),))


def _einsum_cotangent(s, a, bar: Expr, ins: list[str], out: str, k: int) -> Expr:
    """Operand ``k``'s cotangent: the einsum of ``bar`` with the other operands, to ``k``'s subscripts."""
    target = ins[k]
    others = [(ins[j], s.expr(a[j])) for j in range(len(a)) if j != k]
    terms = ([(out, bar)] if out else []) + others
    have = {c for t, _ in terms for c in t}
    kept = "".join(c for c in target if c in have)
    if not terms:
        value = bar
    elif len(terms) == 1 and terms[0][0] == kept:
        value = terms[0][1]
    else:
        value = _einsum(",".join(t for t, _ in terms) + "->" + kept, [c for _, c in terms])
    if not out and terms:       # (a scalar cotangent scales the einsum of the others)
        value = mul(bar, value)
    if kept == target or not kept:
        return value
    x = s.expr(a[k])
    shape = tuple(dim(x, d) if c in have else num(1) for d, c in enumerate(target))
    return xp_call("reshape", value, Tuple(shape, trailing=True))


def _einsum_vjp(s, a, bar, subscripts):
    ins, out = parse_subscripts(subscripts, [s.ndim(x) for x in a])
    return [(a[k], _einsum_cotangent(s, a, bar, ins, out, k)) for k in range(len(a))]


def _einsum_jvp(s, a, subscripts):
    terms = [_einsum(subscripts, [_tangent(s, x) if j == k else s.expr(x) for j, x in enumerate(a)])
             for k in range(len(a)) if _moves(s, a[k])]
    out = terms[0]
    for t in terms[1:]:
        out = op("+", out, t)
    return out


def _einsum_evaluate(args, xp, subscripts):
    return xp.einsum(subscripts, *args)


def _row(name, nargs, numpy, **kw) -> Primitive:
    kind = kw.pop("kind", "opaque")
    spelling = kw.pop("spelling", Spelling(array=numpy))
    return Primitive(name, kind, nargs, numpy, spelling=spelling, **kw)


LINALG: tuple[Primitive, ...] = (
    _row("transpose", (1,), "transpose", total=True, static=(("axes", None),), type=_transpose_type,
         vjp=_transpose_vjp, jvp=_transpose_jvp),
    _row("trace", (1,), "trace", type=_matrix_type("np.trace", "trace", lambda a: 0), vjp=_trace_vjp,
         jvp=lambda s, a: xp_call("trace", s.array_tangent_expr(a[0]))),
    _row("eye", (1, 2), "eye", kind="constructor", differentiable=False, type=lambda args, static: ("float", 2)),
    _row("einsum", (1, 2, 3), "einsum", evaluate=_einsum_evaluate, static=(("subscripts", None),), leading=1,
         spelling=Spelling(array=_einsum_spelled), type=_einsum_type, vjp=_einsum_vjp,
         jvp=_einsum_jvp),
    _row("linalg.solve", (2,), "linalg.solve", vjp=_solve_vjp, jvp=_solve_jvp,
         type=_matrix_type("np.linalg.solve", "solve", lambda a: a[1].ndim)),
    _row("linalg.inv", (1,), "linalg.inv", vjp=_inv_vjp, jvp=_inv_jvp,
         type=_matrix_type("np.linalg.inv", "inv", lambda a: 2)),
    _row("linalg.det", (1,), "linalg.det", total=True, vjp=_det_vjp,
         jvp=lambda s, a: mul(s.value(), _trace_of_solve(s, a)),
         type=_matrix_type("np.linalg.det", "det", lambda a: 0)),
    # (sign, log|det|): the frontend makes the pair of its two parts' calls
    _row("linalg.slogdet", (1,), "linalg.slogdet", parts=("linalg.slogdet.sign", "linalg.slogdet.logabsdet")),
    _row("linalg.slogdet.sign", (1,), None, evaluate=_slogdet_part(0), total=True, differentiable=False,
         spelling=Spelling(array=_slogdet_spelled(0)),
         type=_matrix_type("np.linalg.slogdet", "slogdet", lambda a: 0)),
    _row("linalg.slogdet.logabsdet", (1,), None, evaluate=_slogdet_part(1), total=True, vjp=_logabsdet_vjp,
         jvp=_trace_of_solve, spelling=Spelling(array=_slogdet_spelled(1)),
         type=_matrix_type("np.linalg.slogdet", "slogdet", lambda a: 0)),
)

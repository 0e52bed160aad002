"""IR expressions → SymPy, the arithmetic part of lifting.

One function, :func:`to_sympy`, maps a pure IR expression to a SymPy
expression given a way to look names up.  γ and ``IfExp`` become
``Piecewise`` (C2 then lets the derivative distribute into it), calls map
through :mod:`coarsen_nb.primitives`, numerically fragile patterns become the
guarded forms of :mod:`coarsen_nb.phi.forms`.  What is not arithmetic (array
reductions, ``dot``, constructors, ``len``, writes) raises :class:`NotSymbolic`:
the lifter makes those opaque steps instead.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import domain, forms, rounding


class NotSymbolic(Exception):
    """The expression needs an opaque step (or an iterated loop), not a SymPy form."""


def symbol(name: str, kind: str) -> sp.Symbol:
    """The SymPy symbol for an SSA value of scalar ``kind``."""
    if kind == "int":
        return sp.Symbol(name, integer=True)
    if kind == "bool":
        return sp.Symbol(name)
    return sp.Symbol(name, real=True)


_FUNCS = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "arcsin": sp.asin, "arccos": sp.acos, "arctan": sp.atan,
    "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt,
    "abs": forms.RealAbs, "log1p": forms.Log1p, "expm1": forms.Expm1, "erf": forms.Erf, "sign": sp.sign,
    "floor": rounding.Floor, "ceil": rounding.Ceil, "round": rounding.Round, "mod": rounding.mod,
    "floor_divide": rounding.floor_div, "float": lambda a: a,
}

_CMP = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}


def to_sympy(e: ir.Expr, lookup, index=None) -> sp.Basic:
    """Lift ``e``; ``lookup(name) -> sympy`` resolves names (and may raise NotSymbolic).

    ``index(array_name, index_exprs) -> sympy`` lifts an element read ``x[i]``
    (the kernel makes it a :class:`~coarsen_nb.plan.Read`).
    """
    def rec(x):
        return to_sympy(x, lookup, index)

    if isinstance(e, ir.Index):
        if index is None or not isinstance(e.value, ir.Name):
            raise NotSymbolic("indexing")
        return index(e.value.id, tuple(rec(i) for i in e.index))
    if isinstance(e, ir.Name):
        return lookup(e.id)
    if isinstance(e, ir.Const):
        v = e.value
        if isinstance(v, bool):
            return sp.true if v else sp.false
        return sp.Integer(v) if isinstance(v, int) else sp.Float(v)
    if isinstance(e, ir.Undef):
        raise NotSymbolic("undefined value")
    if isinstance(e, ir.BinOp):
        if e.op == "@":
            raise NotSymbolic("matmul")
        a, b = rec(e.left), rec(e.right)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if e.op == "/":
            return a / b
        if e.op == "**":
            return domain.kept_real("power", [a, b], a ** b)     # 10.0 ** 400.0 raises, as in Python
        if e.op == "//":
            return rounding.floor_div(a, b)
        if e.op == "%":
            return rounding.mod(a, b)
    if isinstance(e, ir.UnaryOp):
        a = rec(e.operand)
        if e.op == "-":
            return -a
        if e.op == "+":
            return a
        return sp.Not(a)
    if isinstance(e, ir.Compare):
        return compare(e.op, rec(e.left), rec(e.right))
    if isinstance(e, ir.BoolOp):
        vals = [rec(v) for v in e.values]
        return forms.AndThen(*vals) if e.op == "and" else forms.OrElse(*vals)
    if isinstance(e, ir.IfExp):
        return gamma(rec(e.test), rec(e.body), rec(e.orelse))
    if isinstance(e, ir.Gamma):
        p = rec(e.pred)
        a = None if isinstance(e.if_true, ir.Undef) else rec(e.if_true)
        b = None if isinstance(e.if_false, ir.Undef) else rec(e.if_false)
        if a is None and b is None:
            raise NotSymbolic("undefined value")
        # F1 with undef: φ(a, undef) = a (the undefined path never reads it).
        if a is None:
            return b
        if b is None:
            return a
        return gamma(p, a, b)
    if isinstance(e, ir.Call):
        return _call(e, rec)
    raise NotSymbolic(type(e).__name__)


def compare(op: str, a, b):
    """``a op b`` as SymPy, kept as written: rewriting it (say to ``a - b op 0``) lets SymPy
    cancel terms, and ``b > b - a`` must stay False when ``b - a`` rounds to ``b``."""
    return _CMP[op](a, b, evaluate=False) if not (a.is_Number and b.is_Number) else _CMP[op](a, b)


def is_boolean(x) -> bool:
    """Whether a lifted value is a truth value (a predicate, a flag, a bool-typed SSA value)."""
    if isinstance(x, sp.logic.boolalg.BooleanAtom):
        return True
    if isinstance(x, sp.Symbol):
        return x.is_real is None and x.is_integer is None
    if isinstance(x, sp.Piecewise):
        return all(is_boolean(e) for e, _ in x.args)
    return isinstance(x, sp.logic.boolalg.Boolean) and not isinstance(x, sp.Expr)


def gamma(p, a, b):
    """γ(p, a, b) as SymPy: F1 (equal operands collapse), truth values as ITE, else a Gamma.

    Truth values never go into a Piecewise: SymPy's rewrites of a Piecewise of
    booleans (``~Piecewise`` → ITE) assume conditions it has canonicalized, and
    γ keeps its predicate as written.
    """
    if a == b:
        return a
    if p == sp.true:
        return a
    if p == sp.false:
        return b
    if is_boolean(a) or is_boolean(b):
        return sp.ITE(p, a, b)   # lowered like a γ: only the selected operand is evaluated
    return forms.Gamma((a, p), (b, True))


def _call(e: ir.Call, rec):
    args = [rec(a) for a in e.args]
    return domain.kept_real(e.func, args, _lifted_call(e.func, args))


def _lifted_call(f: str, args: list):
    if f in _FUNCS:
        return forms.stabilize(_FUNCS[f](*args)) if f == "log" else _FUNCS[f](*args)
    if f in ("min", "minimum", "max", "maximum") and len(args) >= 2:
        # As a γ chain: its derivative is then a Piecewise like every other branch (C2).
        better = (lambda a, b: a <= b) if f.startswith("min") else (lambda a, b: a >= b)
        out = args[0]
        for b in args[1:]:
            out = gamma(better(out, b), out, b)
        return out
    if f == "arctan2":
        return sp.atan2(*args)
    if f == "power":
        return args[0] ** args[1]
    if f == "square":
        return args[0] ** 2
    if f == "logaddexp":
        # log(e^a + e^b) = b + softplus(a - b): the guarded softplus never overflows, and its
        # derivatives are the sigmoid σ(a - b) and 1 - σ(a - b), the softmax of (a, b)
        return args[1] + forms.Softplus(args[0] - args[1])
    if f == "hypot":
        return sp.sqrt(args[0] ** 2 + args[1] ** 2)
    if f == "log2":
        return sp.log(args[0]) / sp.log(2)
    if f == "log10":
        return sp.log(args[0]) / sp.log(10)
    raise NotSymbolic(f)

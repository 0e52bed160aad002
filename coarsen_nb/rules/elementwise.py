"""The elementwise primitives: one registration each (:class:`~coarsen_nb.rules.record.Primitive`).

SymPy sees into all of them.  Where SymPy's own function would lose a fact the
compiler needs (realness of ``|u|``, a stable ``log1p``, erf printed per backend),
the form is a class of :mod:`coarsen_nb.phi.forms`, which carries its
derivative (``fdiff``) and LaTeX; a function with no class anywhere gets one
from :func:`~coarsen_nb.rules.functions.elementwise_function`, built from its
registration (``cbrt``).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from coarsen_nb.phi import elementary, rounding
from coarsen_nb.phi.gammas import gamma
from coarsen_nb.rules.build import Compare, IfExp, Lit, Paren, called, infix
from coarsen_nb.rules.functions import elementwise_function
from coarsen_nb.rules.record import Primitive, Spelling


def _math(name: str, *, array: str | None = None, cuda: str | None = None) -> Spelling:
    """The common spelling: ``xp.<array>`` on arrays, ``math.<name>`` on scalars, ``<cuda>`` in CUDA."""
    return Spelling(array=array or name, scalar=f"math.{name}", cuda=cuda or name)


def _unary(name, sympy_class, math_name=None, *, total=False, nan_outside=False, aliases=()):
    """A function of one argument that SymPy has (``sin``, ``exp``, ...), spelled the same in every backend
    but for the array API's short inverse-trig names (``arcsin`` → ``asin``)."""
    m = math_name or name
    return Primitive(name, "elementwise", (1,), name, m, aliases, lift=sympy_class, forms=(sympy_class,),
                     spelling=_math(m), total=total, nan_outside=nan_outside, cost="math")


def _sign(args, xp, static):
    """Python's sign of a number: ``(1.0 if a > 0 else (-1.0 if a < 0 else 0.0))``."""
    a, zero = args[0], Lit("0")
    return Paren(IfExp(Lit("1.0"), Compare(">", a, zero),
                       Paren(IfExp(Lit("-1.0"), Compare("<", a, zero), Lit("0.0")))))


_MOD, _FLOOR_DIV = infix("%"), infix("//")     # (one builder for array and scalar code, as one template was)


def _python_abs(args, xp):
    x = args[0]
    return abs(x) if isinstance(x, (int, float)) else xp.abs(x)


def _erf(args, xp):
    x = args[0]
    if isinstance(x, (int, float)):
        return math.erf(x)
    return np.vectorize(math.erf, otypes=[float])(x)


def _python_round(args, xp):
    x = args[0]
    return round(x) if isinstance(x, (int, float)) else xp.round(x)   # Python's: an int, half to even


def _chain(better):
    """``min``/``max`` of two or more as a γ chain: its derivative is then a Piecewise like every other
    branch (C2)."""
    def lift(*args):
        out = args[0]
        for b in args[1:]:
            out = gamma(better(out, b), out, b)
        return out
    return lift


def _builtin_extremum(name: str):
    """Builtin ``min``/``max``: of one array a reduction (``amin``/``amax``), of two or more scalars a γ chain."""
    reduced = "amin" if name == "min" else "amax"
    python = min if name == "min" else max

    def evaluate(args, xp):
        return getattr(xp, reduced)(args[0]) if len(args) == 1 else python(*args)

    better = (lambda a, b: a <= b) if name == "min" else (lambda a, b: a >= b)
    return Primitive(name, "elementwise", (1, 2, 3, 4), name, evaluate=evaluate, lift=_chain(better),
                     spelling=Spelling(array=name, step=called(name)), total=True,
                     one_arg=reduced, kink=True, result="int of ints")


def _is_nan(x):
    """``x != x``, kept as written (SymPy would fold it to False: it does not know of NaN)."""
    return sp.Ne(x, x, evaluate=False)


def _binary_extremum(name: str, nan: str):
    """``np.maximum``/``np.minimum`` and ``np.fmax``/``np.fmin`` as one γ each, with NumPy's NaN rule: ``maximum``
    is ``a if a > b or a != a else b`` (a NaN in either wins), ``fmax`` is ``a if a > b or b != b else b`` (a NaN
    in either loses: the other argument); a tie gives ``b``, as NumPy's arrays do for ±0 (its fmax of two
    scalars gives ``a``).  The NaN test is part of the predicate: one ``where``, one comparison more."""
    better = (lambda a, b: a > b) if name in ("maximum", "fmax") else (lambda a, b: a < b)

    def lift(a, b):
        return gamma(sp.Or(better(a, b), _is_nan(a if nan == "wins" else b)), a, b)
    return Primitive(name, "elementwise", (2,), name, lift=lift, spelling=Spelling(array=name), total=True,
                     cost="elementwise")


#: d/dx ∛x = 1 / (3·∛x²); real for every real x (NumPy's cbrt, math.cbrt: ∛-8 = -2).
Cbrt = elementwise_function("Cbrt", lambda x, f: 1 / (3 * f**2), r"\sqrt[3]{{{0}}}", real=True)

ELEMENTWISE: tuple[Primitive, ...] = (
    _unary("sin", sp.sin, total=True),
    _unary("cos", sp.cos, total=True),
    _unary("tan", sp.tan, total=True),
    _unary("arcsin", sp.asin, "asin", nan_outside=True, aliases=("asin",)),
    _unary("arccos", sp.acos, "acos", nan_outside=True, aliases=("acos",)),
    _unary("arctan", sp.atan, "atan", total=True, aliases=("atan",)),
    Primitive("arctan2", "elementwise", (2,), "arctan2", "atan2", ("atan2",), lift=sp.atan2, forms=(sp.atan2,),
              spelling=_math("atan2"), total=True, cost="elementwise"),
    _unary("sinh", sp.sinh),
    _unary("cosh", sp.cosh),
    _unary("tanh", sp.tanh, total=True),
    _unary("arcsinh", sp.asinh, "asinh", total=True, aliases=("asinh",)),
    _unary("arccosh", sp.acosh, "acosh", nan_outside=True, aliases=("acosh",)),
    _unary("arctanh", sp.atanh, "atanh", nan_outside=True, aliases=("atanh",)),
    _unary("exp", sp.exp),
    # 2.0 ** a: a float base, since 2 ** -3 of int arrays is an error where np.exp2 gives 0.125
    Primitive("exp2", "elementwise", (1,), "exp2", "exp2", lift=lambda a: sp.Float(2.0) ** a,
              spelling=Spelling(array="exp2"), cost="math"),
    _unary("expm1", elementary.Expm1),
    Primitive("log", "elementwise", (1,), "log", "log", lift=lambda a: elementary.stabilize(sp.log(a)), forms=(sp.log,),
              spelling=_math("log"), nan_outside=True, cost="math"),
    _unary("log1p", elementary.Log1p, nan_outside=True),
    Primitive("log2", "elementwise", (1,), "log2", "log2", lift=lambda a: sp.log(a) / sp.log(2),
              spelling=Spelling(array="log2"), nan_outside=True, cost="math"),
    Primitive("log10", "elementwise", (1,), "log10", "log10", lift=lambda a: sp.log(a) / sp.log(10),
              spelling=Spelling(array="log10"), nan_outside=True, cost="math"),
    Primitive("cbrt", "elementwise", (1,), "cbrt", "cbrt", lift=Cbrt, forms=(Cbrt,), spelling=_math("cbrt"),
              total=True, cost="math"),
    Primitive("sqrt", "elementwise", (1,), "sqrt", "sqrt", lift=sp.sqrt, spelling=Spelling(array="sqrt"),
              nan_outside=True, cost="math"),
    Primitive("abs", "elementwise", (1,), "abs", "fabs", ("fabs", "absolute"), evaluate=_python_abs,
              lift=elementary.RealAbs, forms=(sp.Abs,), spelling=Spelling("abs", "abs", "fabs", step=called("abs")),
              total=True, cost="math", kink=True, result="int of ints"),
    Primitive("hypot", "elementwise", (2,), "hypot", "hypot", lift=lambda a, b: sp.sqrt(a ** 2 + b ** 2),
              spelling=Spelling(array="hypot"), total=True, cost="elementwise"),
    # neither NumPy nor the array API has erf: the generated module's vectorized _erf
    Primitive("erf", "elementwise", (1,), None, "erf", scipy="special.erf", evaluate=_erf, lift=elementary.Erf,
              forms=(elementary.Erf,), spelling=Spelling("_erf", "math.erf", "erf", helper="_erf"), total=True,
              cost="elementwise"),
    _binary_extremum("maximum", "wins"),
    _binary_extremum("minimum", "wins"),
    _binary_extremum("fmax", "loses"),
    _binary_extremum("fmin", "loses"),
    Primitive("power", "elementwise", (2,), "power", "pow", ("pow",), lift=lambda a, b: a ** b,
              spelling=Spelling(array="pow"), cost="elementwise"),
    Primitive("square", "elementwise", (1,), "square", lift=lambda a: a ** 2, spelling=Spelling(array="square"),
              total=True, cost="math"),
    # log(e^a + e^b) = b + softplus(a - b): the guarded softplus never overflows, and its derivatives are
    # the sigmoid σ(a - b) and 1 - σ(a - b), the softmax of (a, b)
    Primitive("logaddexp", "elementwise", (2,), "logaddexp", lift=lambda a, b: b + elementary.Softplus(a - b),
              spelling=Spelling(array="logaddexp"), cost="math"),
    # integer-valued or piecewise constant: derivative zero
    Primitive("sign", "shape", (1,), "sign", lift=sp.sign, forms=(sp.sign,),
              spelling=Spelling("sign", _sign,
                                "(double)((({0}) > 0) - (({0}) < 0))"),
              total=True, differentiable=False, cost="math"),
    Primitive("floor", "shape", (1,), "floor", "floor", lift=rounding.Floor, forms=(sp.floor,),
              spelling=_math("floor", cuda="floor((double)({0}))"), differentiable=False, cost="math"),
    Primitive("ceil", "shape", (1,), "ceil", "ceil", lift=rounding.Ceil, forms=(sp.ceiling,),
              spelling=_math("ceil", cuda="ceil((double)({0}))"), differentiable=False, cost="math"),
    # Python's rounding arithmetic (derivative 0, or 1 and -(a // b) for %): see phi/rounding.py
    Primitive("round", "elementwise", (1,), "round", aliases=("around",), evaluate=_python_round,
              lift=rounding.Round, forms=(rounding.Round,), spelling=Spelling("round", "round")),
    Primitive("mod", "elementwise", (2,), "remainder", aliases=("remainder",), lift=rounding.mod,
              forms=(rounding.PyMod, sp.Mod), spelling=Spelling(_MOD, _MOD, step="remainder")),
    Primitive("floor_divide", "elementwise", (2,), "floor_divide", lift=rounding.floor_div,
              forms=(rounding.FloorDiv,), spelling=Spelling(_FLOOR_DIV, _FLOOR_DIV, step="floor_divide")),
    Primitive("float", "elementwise", (1,), "float", evaluate=lambda args, xp: float(args[0]), lift=lambda a: a,
              spelling=Spelling(step=called("float")), total=True, result="float",
              vjp=lambda s, a, bar: [(a[0], bar)], jvp=lambda s, a: s.d_expr(a[0])),
    _builtin_extremum("min"),
    _builtin_extremum("max"),
)

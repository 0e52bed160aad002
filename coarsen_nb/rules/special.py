"""``scipy.special``'s functions that users of the subset reach for: ``expit``, ``logit``, ``erf``,
``erfc``, ``gammaln`` (with ``digamma``, its derivative), ``xlogy`` and ``logsumexp``.

A registration names its function by ``scipy=`` (its attribute of ``scipy``); the frontend finds it
by the object the user's name refers to, so ``from scipy.special import expit``, ``import
scipy.special as sc; sc.expit`` and ``scipy.special.expit`` are one function.  ``erf`` is the
registration of :mod:`coarsen_nb.rules.elementwise`, which gives it ``scipy="special.erf"``.

The elementwise ones are lifted into SymPy, so they fuse into their segment like ``np.exp``:

* ``expit`` is the overflow-free sigmoid form (:class:`~coarsen_nb.phi.elementary.Sigmoid`), ``logit`` is
  ``log(p) - log1p(-p)``;
* ``erfc`` keeps its own form, printed as ``math.erfc`` or the module's ``_erfc``, which avoids the
  cancellation of ``1 - erf(x)``;
* ``xlogy(x, y)`` is 0 where ``x == 0``; its partial derivatives are JAX's, ``log(y)`` and ``x / y``,
  at ``x == 0`` too.

``logsumexp(a, axis=, keepdims=)`` is a reduction step: its cotangent is the softmax of ``a`` over the
reduced axes times the cotangent, computed from the step's own value (``exp(a - lse)``) so that
nothing overflows.  Its ``b=`` weights and ``return_sign=`` are refused.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from coarsen_nb.errors import CoarsenError
from coarsen_nb.phi import elementary
from coarsen_nb.rules.build import Expr, mul, op, xp_call
from coarsen_nb.rules.functions import elementwise_function
from coarsen_nb.rules.record import Primitive, Spelling
from coarsen_nb.rules.reductions import kept, over, reduced_type

#: d/dx erfc(x) = -2/√π·exp(-x²)
Erfc = elementwise_function("Erfc", lambda x, f: -2 / sp.sqrt(sp.pi) * sp.exp(-x**2),
                            r"\operatorname{{erfc}}\left({0}\right)", real=True)


class Digamma(sp.Function):
    """ψ(x) = d/dx log|Γ(x)|.  It has no derivative rule here (a second derivative of ``gammaln`` is
    then a CoarsenError naming it, not an unevaluated ``Derivative``)."""

    nargs = 1

    def _latex(self, printer):
        return rf"\psi\left({printer._print(self.args[0])}\right)"


#: d/dx log|Γ(x)| = ψ(x)
Gammaln = elementwise_function("Gammaln", lambda x, f: Digamma(x), r"\ln\left|\Gamma\left({0}\right)\right|",
                               real=False)


class Xlogy(sp.Function):
    """x·log(y), 0 where x = 0.  ∂/∂x = log(y) and ∂/∂y = x/y everywhere (JAX's rule): at x = 0 the
    value does not depend on y, and the one-sided derivative in x is log(y)."""

    nargs = 2

    def fdiff(self, argindex=1):
        x, y = self.args
        return sp.log(y) if argindex == 1 else x / y

    def _latex(self, printer):
        x, y = (printer._print(a) for a in self.args)
        return rf"\operatorname{{xlogy}}\left({x}, {y}\right)"


def _scipy(name: str):
    """``scipy.special.<name>`` run on the operands (the interpreters' meaning of the call)."""
    def evaluate(args, xp, **static):
        import scipy.special
        return getattr(scipy.special, name)(*args, **static)
    return evaluate


def _erfc(args, xp):
    x = args[0]
    if isinstance(x, (int, float)):
        return math.erfc(x)
    return np.vectorize(math.erfc, otypes=[float])(x)


def _logsumexp_checks(static: dict) -> None:
    for name, default in (("b", None), ("return_sign", False)):
        if static.get(name, default) != default:
            err = CoarsenError(f"{name}= of scipy.special.logsumexp",
                               hint="write the weighted sum out: np.log(np.sum(b * np.exp(a)))" if name == "b"
                               else "compute the sign outside the compiled function",
                               message=f"scipy.special.logsumexp's {name}= is not supported")
            err.user_name = name
            raise err


def _softmax(s, a, axis, keepdims) -> Expr:
    """exp(a - logsumexp(a)) over the reduced axes: the derivative of the step's value."""
    return xp_call("exp", op("-", s.expr(a[0]), kept(s, a[0], s.value(), axis, keepdims)))


def _logsumexp_vjp(s, a, bar, axis=None, b=None, keepdims=False, return_sign=False):
    if s.ndim(a[0]) == 0:
        return [(a[0], bar)]
    return [(a[0], mul(_softmax(s, a, axis, keepdims), kept(s, a[0], bar, axis, keepdims)))]


def _logsumexp_jvp(s, a, axis=None, b=None, keepdims=False, return_sign=False):
    if s.ndim(a[0]) == 0:
        return s.d_expr(a[0])
    return xp_call("sum", mul(_softmax(s, a, axis, keepdims), s.array_tangent_expr(a[0])),
                   **over(s, a[0], axis, keepdims))


def _logsumexp_type(args: list, static: dict) -> tuple[str, int]:
    _logsumexp_checks(static)
    return reduced_type("scipy.special.logsumexp")(args, {"axis": static.get("axis"),
                                                           "keepdims": static.get("keepdims", False)})


def _logsumexp_evaluate(args, xp, axis=None, b=None, keepdims=False, return_sign=False):
    import scipy.special
    return scipy.special.logsumexp(args[0], axis=axis, keepdims=keepdims)


SPECIAL: tuple[Primitive, ...] = (
    Primitive("expit", "elementwise", (1,), None, scipy="special.expit", evaluate=_scipy("expit"),
              lift=elementary.Sigmoid, total=True),
    Primitive("logit", "elementwise", (1,), None, scipy="special.logit", evaluate=_scipy("logit"),
              lift=lambda p: sp.log(p) - elementary.Log1p(-p), nan_outside=True),
    Primitive("erfc", "elementwise", (1,), None, "erfc", scipy="special.erfc", evaluate=_erfc, lift=Erfc,
              forms=(Erfc,), spelling=Spelling("_erfc", "math.erfc", "erfc", helper="_erfc"), total=True,
              cost="elementwise"),
    Primitive("gammaln", "elementwise", (1,), None, scipy="special.gammaln", evaluate=_scipy("gammaln"),
              lift=Gammaln, forms=(Gammaln,), spelling=Spelling("_gammaln", "_gammaln", "lgamma",
                                                               helper="_gammaln"), cost="elementwise"),
    Primitive("digamma", "elementwise", (1,), None, scipy="special.digamma",
              evaluate=_scipy("digamma"), lift=Digamma, forms=(Digamma,),
              spelling=Spelling("_digamma", "_digamma", None, helper="_digamma"), cost="elementwise"),
    Primitive("xlogy", "elementwise", (2,), None, scipy="special.xlogy", evaluate=_scipy("xlogy"), lift=Xlogy,
              forms=(Xlogy,), spelling=Spelling("_xlogy", "_xlogy",
                                                "(({0}) == 0.0 ? 0.0 : ({0}) * log({1}))", helper="_xlogy"),
              cost="elementwise"),
    Primitive("logsumexp", "reduction", (1,), None, scipy="special.logsumexp", evaluate=_logsumexp_evaluate,
              spelling=Spelling(array="_logsumexp", helper="_logsumexp"),
              static=(("axis", None), ("b", None), ("keepdims", False), ("return_sign", False)),
              type=_logsumexp_type, vjp=_logsumexp_vjp, jvp=_logsumexp_jvp, total=True),
)

"""SymPy functions of our own for elementary functions, and the rewrite of fragile patterns into them.

* ``Softplus(z)`` = log(1 + exp(z)), printed as a guarded form; ``Sigmoid(z)`` = 1 / (1 + exp(-z))
  without overflow; ``Log1p``, ``Expm1``;
* ``Erf``, whose lowering picks ``math.erf`` or the generated module's ``_erf``;
* ``RealAbs``: ``abs`` of a real program value, d|u| = sign(u)·du.

:func:`stabilize` rewrites log(1+exp(z)) and log(1+x) into them wherever they are written.
"""

from __future__ import annotations

import sympy as sp


class RealAbs(sp.Abs):
    """``abs(u)`` of a program value, which is a real float (NaN where the math is not real): d|u| = sign(u)·du.

    SymPy's Abs cannot prove ``log1p(abs(a))``, ``asin(a)`` or ``a**0.5`` real (they are real on part of
    the line only) and differentiates them into re/im terms, which no printer has; in the compiled code's
    real arithmetic those terms are ``u`` and 0.  Printers and checks see an ``Abs`` (it is one).
    """

    def _eval_derivative(self, x):
        u = self.args[0]
        return sp.sign(u) * sp.diff(u, x)

    def _sympystr(self, printer):
        return f"Abs({printer._print(self.args[0])})"


class Softplus(sp.Function):
    """log(1 + exp(z)), lowered as a guarded, overflow-free form."""

    nargs = 1

    def fdiff(self, argindex=1):
        return Sigmoid(self.args[0])

    def _latex(self, printer):
        return rf"\operatorname{{softplus}}\left({printer._print(self.args[0])}\right)"


class Sigmoid(sp.Function):
    """1 / (1 + exp(-z)), lowered without overflow."""

    nargs = 1

    def fdiff(self, argindex=1):
        z = self.args[0]
        return Sigmoid(z) * (1 - Sigmoid(z))

    def _latex(self, printer):
        return rf"\sigma\left({printer._print(self.args[0])}\right)"


class Log1p(sp.Function):
    nargs = 1

    def fdiff(self, argindex=1):
        return 1 / (1 + self.args[0])

    def _latex(self, printer):
        return rf"\operatorname{{log1p}}\left({printer._print(self.args[0])}\right)"


class Expm1(sp.Function):
    nargs = 1

    def fdiff(self, argindex=1):
        return sp.exp(self.args[0])

    def _latex(self, printer):
        return rf"\operatorname{{expm1}}\left({printer._print(self.args[0])}\right)"


class Erf(sp.Function):
    """erf, kept as our own node so that lowering picks its implementation: ``math.erf`` on scalars,
    the generated module's vectorized ``_erf`` on arrays (neither NumPy nor the array API has erf)."""

    nargs = 1

    def fdiff(self, argindex=1):
        z = self.args[0]
        return 2 / sp.sqrt(sp.pi) * sp.exp(-z**2)

    def _latex(self, printer):
        return rf"\operatorname{{erf}}\left({printer._print(self.args[0])}\right)"


def is_one(x) -> bool:
    """Whether ``x`` is the number 1, written ``1`` or ``1.0`` (SymPy's Integer 1 != Float 1.0)."""
    return bool(x.is_Number and x == (sp.Float(1) if isinstance(x, sp.Float) else sp.S.One))


def stabilize(e: sp.Expr) -> sp.Expr:
    """Rewrite numerically fragile patterns: log(1+exp(z)) → softplus(z), whose plain form overflows.

    ``log(1 + x)`` stays as written, not ``log1p(x)``: more accurate, but not the user's number, and a
    comparison on it can take the other branch (``a > math.log(abs(a) + 1.0)`` at a = 5e-33: the user's
    ``1.0 + 5e-33`` is 1 and its log 0, ``log1p`` gives a)."""

    def rule(node):
        if isinstance(node, sp.log) and isinstance(node.args[0], sp.Add):
            a = node.args[0]
            ones = [t for t in a.args if is_one(t)]
            if len(a.args) == 2 and ones:
                other = a.args[1] if a.args[0] is ones[0] else a.args[0]
                if isinstance(other, sp.exp):
                    return Softplus(other.args[0])
        return node

    return e.replace(lambda n: isinstance(n, sp.log), rule)

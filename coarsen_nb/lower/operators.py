"""Printing SymPy's operators and functions as array code (or plain ``math``): the arithmetic part of
the :class:`~coarsen_nb.lower.emit.Printer`.

``+ - * /`` and powers, elementwise functions (each spelled as its registration in
:mod:`coarsen_nb.rules` says: ``xp.asin``/``math.asin``, ``_erf``, ``a % b``),
comparisons and logic, and the forms of :mod:`coarsen_nb.phi` that print as one
call (softplus, a constant outside its domain).  Each is built as an expression of the lowered IR
(:mod:`coarsen_nb.lower.lir`), with :class:`~coarsen_nb.lower.lir.Paren` where the text had parentheses;
a registration's spelling (``rules/``) is a call of its callee, or, where it is a template, still text
(``Raw``).  Integer and boolean array operands of a float
operation are cast (the array API does not promote between kinds).  In scalar
derivative code (``Printer.ieee``) a division or a power that Python would
refuse (``0.5 / 0.0``, ``0.0 ** -0.5``) prints as the module's IEEE helper, so
a derivative at the edge of its domain is inf, as JAX gives.
"""

from __future__ import annotations

import math

import sympy as sp

from coarsen_nb.lower import division_checks, lir
from coarsen_nb.lower.lir import BinOp, Call, Compare, Lit, Name, Paren, Unary
from coarsen_nb.lower.printing import (
    Level,
    chain,
    common_coefficient,
    exact_integer_division,
    int_typed,
    is_atom_code,
    is_number_code,
    number_code,
    signed_terms,
)
from coarsen_nb.phi import domain, elementary, forms, rounding
from coarsen_nb.phi.gammas import is_boolean
from coarsen_nb.rules.record import spell
from coarsen_nb.rules.table import missing, no_derivative, printed


class OperatorPrinting:
    """Operators and functions of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def number(self, e) -> Lit:
        """A SymPy number as a literal (:func:`~coarsen_nb.lower.printing.number_code`): an infinity or a
        NaN is ``math``'s."""
        if e in (sp.oo, -sp.oo) or e is sp.nan:
            self.uses_math = True
        return Lit(number_code(e))

    def _op(self, e, lv: Level, array: bool) -> lir.Expr:
        xp = self.xp
        if isinstance(e, sp.Derivative):
            raise no_derivative(e.expr)      # SymPy's form of a derivative it does not know
        if isinstance(e, sp.Mul):
            return self._mul(e, lv, array)
        if isinstance(e, sp.Pow):
            return self._pow(e.base, e.exp, lv, array)
        # integer or boolean array operands of a float operation are cast (the array API does not promote)
        cast = not (e.is_integer or is_boolean(e)) or isinstance(e, sp.core.relational.Relational)
        if isinstance(e, sp.Add):
            common = common_coefficient(e)
            if common is not None:
                # SymPy distributes numbers over sums (200*(a - b) -> 200*a - 200*b); printed as
                # 200 * (a - b), the sum is one node that other multiples of it share
                c, prim = common
                code = self.value(prim, lv)
                return Paren(BinOp("*", self.number(c), self._floats([prim], [code], force=True)[0] if cast else code))
            # a - b, not a + (-b): the negated term is one value (shared with other uses of b)
            negs, parts = zip(*signed_terms(e), strict=True)
            codes = [self.value(x, lv) for x in parts]
            if cast:
                codes = self._floats(parts, codes)
            out = None
            for neg, code in zip(negs, codes, strict=True):
                out = (Unary("-", code) if neg else code) if out is None else BinOp("-" if neg else "+", out, code)
            return Paren(out)
        exact = exact_integer_division(e)
        if exact is not None:
            num, den, down = exact
            code, den = self.value(num, lv), Lit(str(den))
            if down:
                return Paren(BinOp("//", code, den))
            return Paren(Unary("-", Paren(BinOp("//", Paren(Unary("-", code)), den))))
        a = [self.value(x, lv) for x in e.args]
        if cast:
            a = self._floats(e.args, a)
        if not array and self.scalar_call is not None:
            made = self.scalar_call(self, e, a)      # (a numba loop's own spelling: lower/numba_trig.py)
            if made is not None:
                return made
        if not array and type(e) in _CHECKED_ROUNDING and division_checks.checked(self, e.args[:1], e.args[1:]):
            return Call(Name(self.helper(_CHECKED_ROUNDING[type(e)])), tuple(a))     # (Python's % and // at 0)
        p = printed(type(e))
        if p is not None:
            # a primitive's form: spelled as its registration says (rules/)
            spelling = p.spelling.array if array else p.spelling.scalar
            if spelling is None:
                raise missing(p, "array code" if array else "scalar code")
            if not array and isinstance(spelling, str) and spelling.startswith("math."):
                self.uses_math = True
            if p.spelling.helper is not None and (array or spelling == p.spelling.array):
                self.helper(p.spelling.helper)      # (a scalar spelling calls it where it is the array one)
            return spell(spelling, a, xp if array else None)
        if isinstance(e, domain.OutsideDomain):
            # the call as the user wrote it, so it raises where Python's own does (ValueError, OverflowError;
            # ** its ZeroDivisionError, or a complex number)
            if e.math_name == "pow":
                return Paren(BinOp("**", a[0], a[1]))
            self.uses_math = True
            return Call(lir.Attr(Name("math"), e.math_name), tuple(a))
        if isinstance(e, elementary.Softplus):
            if array:
                return self.call("logaddexp", _ZERO, a[0])
            return Call(Name(self.helper('_softplus')), (a[0],))
        if isinstance(e, elementary.Sigmoid):
            if array:
                # (an argument SymPy knows is <= 0, -|z|: one exp and a division, no select)
                helper = '_expit_nonpositive' if e.args[0].is_nonpositive else '_expit'
                return Call(Name(self.helper(helper)), (a[0],))
            return Call(Name(self.helper('_sigmoid')), (a[0],))
        if isinstance(e, forms.PowInt):
            if array:
                # a float base: a power of an int base and an int exponent array wraps around silently
                base = Lit(repr(float(e.args[0]))) if e.args[0].is_Integer else \
                    (Paren(BinOp("*", Lit("1.0"), a[0])) if e.args[0].is_integer else a[0])
                return Paren(BinOp("**", Paren(base), Paren(a[1])))
            return Call(Name(self.helper('_ipow')), (a[0], a[1]))
        if isinstance(e, sp.Heaviside):
            pos, neg = Compare(">", a[0], Lit("0")), Compare("<", a[0], Lit("0"))
            if array:
                return self.call("where", pos, Lit("1.0"), self.call("where", neg, _ZERO, Lit("0.5")))
            return Paren(lir.IfExp(Lit("1.0"), pos, lir.IfExp(_ZERO, neg, Lit("0.5"))))
        if isinstance(e, sp.DiracDelta):
            return _ZERO
        if isinstance(e, sp.Max) or isinstance(e, sp.Min):
            fn = ("maximum" if isinstance(e, sp.Max) else "minimum")
            if array:
                out = a[0]
                for c in a[1:]:
                    out = self.call(fn, out, c)
                return out
            return Call(Name('max' if isinstance(e, sp.Max) else 'min'), tuple(a))
        if isinstance(e, sp.core.relational.Relational):
            return Paren(Compare(e.rel_op, a[0], a[1]))
        if isinstance(e, sp.Not):
            # not ~: on a Python bool (a scalar predicate at an array level) ~True is -2
            return self.call("logical_not", a[0]) if array else Paren(Unary("not", a[0]))
        if isinstance(e, (sp.And, sp.Or)):
            if not array:
                return Paren(lir.BoolOp("and" if isinstance(e, sp.And) else "or", tuple(a)))
            return Paren(chain("&" if isinstance(e, sp.And) else "|", a))
        raise NotImplementedError(f"no printer for {type(e).__name__}: {e}")

    def _floats(self, args, codes: list[lir.Expr], force: bool = False) -> list[lir.Expr]:
        """Integer or boolean array operands of a float operation (or of a comparison that mixes
        kinds) cast to float64: the array API does not promote between kinds (NumPy does).  A printer of
        one point at a time (a fused loop's body, ``scalar_points``) has Python numbers, which promote."""
        if self.scalar_points:
            return codes
        if not force and all(x.is_integer or is_boolean(x) for x in args) \
                and not any(isinstance(x, sp.Float) for x in args):
            return codes
        return [self.call("asarray", c, dtype=lir.Attr(Name(self.xp), "float64"))
                if int_typed(self.resolved(x)) and not is_number_code(c) and (self.deps(x) or self.is_reduced(x)) else c
                for x, c in zip(args, codes, strict=True)]

    def resolved(self, x):
        """``x`` with a temp symbol replaced by its expression (a symbol has no integer type): what a
        type test reads (here, ``branches.py``, the reverse sweep's casts)."""
        while isinstance(x, sp.Symbol) and x in self.temps:
            x = self.temps[x]
        return x

    def is_reduced(self, x) -> bool:
        """Whether ``x`` involves a reduction: its value is then a 0-d array, not a Python number (the
        reverse sweep adds such a contribution as an array)."""
        if x not in self._reduced_memo:
            self._reduced_memo[x] = False     # cycles cannot occur; this only bounds the recursion
            if isinstance(x, sp.Symbol):
                out = x in self.temps and self.is_reduced(self.temps[x])
            elif isinstance(x, (sp.Piecewise, sp.ITE)) and not self.where_choices:
                # a Python ``if`` picks one arm as it is: a reduction in its predicate does not make the value
                # an array (numba adds no 0-d array into a float: ``b_a += xp.asarray(choice, ...)`` fell back)
                arms = [c.expr for c in x.args] if isinstance(x, sp.Piecewise) else x.args[1:]
                out = any(self.is_reduced(a) for a in arms)
            else:
                out = isinstance(x, (forms.Reduction, forms.ElemSum)) or any(
                    self.is_reduced(a) for a in x.args if isinstance(a, sp.Basic))
            self._reduced_memo[x] = out
        return self._reduced_memo[x]

    def _mul(self, e, lv: Level, array: bool) -> lir.Expr:
        if e.args[0] == -1:
            # -(a*b) as the negation of the product a*b: one shared node when a*b is used elsewhere
            return Unary("-", self.value(-e, lv))
        num, den, den_values, sign = [], [], [], False
        cast = not all(int_typed(self.resolved(f)) for f in e.args)   # (a·γ(0, 0) "is" an integer)
        args = list(e.args)
        consts = [f for f in args if f.is_number and f.is_real]
        if array and len(consts) > 1:
            # 1/sqrt(2) * 1/sqrt(pi) * ...: one float factor, not one array pass per constant
            c = float(sp.Mul(*consts))
            args = [f for f in args if not (f.is_number and f.is_real)]
            if c < 0:
                sign, c = True, -c
            if c != 1.0 or not args:
                num.append(Lit(repr(c)))
        for f in args:
            if f == 1 and len(args) > 1:
                continue        # a Float 1.0 coefficient (0.5 * 2.0) multiplies nothing
            if f == -1:
                sign = True
            elif isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                if f.exp == -1:
                    den.append(self._pow(f.base, 1, lv, array, cast=cast))
                    den_values.append(f.base)
                else:
                    # sqrt(tau), vol**2, ...: shared subexpressions, computed once like any other node
                    pos = sp.Pow(f.base, -f.exp)
                    code = self.value(pos, lv)
                    den.append(self._floats([pos], [code], force=True)[0] if cast else code)
                    den_values.append(pos)
            else:
                num.append(self._floats([f], [self.value(f, lv)], force=True)[0] if cast else self.value(f, lv))
        text = chain("*", num) if num else Lit("1.0" if den else "1")
        if den:
            d = den[0] if len(den) == 1 else Paren(chain("*", den))
            num_values = [f for f in args if not (isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0)]
            text = self._divide(text, d, array, value=(num_values, den_values))
            if isinstance(text, Call):
                return Unary("-", text) if sign else text      # a call needs no parentheses of its own
        return Unary("-", Paren(text)) if sign else Paren(text)

    def _pow(self, base, exp, lv: Level, array: bool, cast: bool = False) -> lir.Expr:
        b = self.value(base, lv)
        if cast or not (exp.is_integer and exp.is_nonnegative):
            b = self._floats([base], [b], force=True)[0]
        if exp == sp.Rational(1, 2) and is_number_code(b):
            return Lit(repr(math.sqrt(float(str(b)))))
        if exp in (sp.Rational(1, 2), sp.Rational(-1, 2)):
            if not array:
                self.uses_math = True
            root = self.call("sqrt", b) if array else Call(lir.Attr(Name("math"), "sqrt"), (b,))
            return root if exp > 0 else self._divide(Lit("1.0"), root, array, wrap=True, value=((), (base,)))
        if exp == -1:
            return self._divide(Lit("1.0"), b, array, wrap=True, value=((), (base,)))
        if exp == 1:
            return b
        if exp == 2:
            return Paren(BinOp("*", b, b)) if is_atom_code(b) else _power(Paren(b), Lit("2"))
        x = self.value(exp, lv)
        if not (base.is_integer and exp.is_integer):
            x = self._floats([exp], [x], force=True)[0]
        if self.ieee and not array and not (exp.is_integer and exp.is_nonnegative):
            return Call(Name(self.helper('_ieee_pow')), (b, x))   # 0.0 ** -0.5 is inf here, not a ZeroDivisionError
        plain = is_atom_code(b) and is_atom_code(x) and not str(b).startswith("-") and not str(x).startswith("-")
        return _power(b, x) if plain else _power(Paren(b), Paren(x))

    def _divide(self, num: lir.Expr, den: lir.Expr, array: bool, wrap: bool = False, value=None) -> lir.Expr:
        """``num / den`` (in parentheses with ``wrap``); in scalar derivative code IEEE's ±inf or nan
        where Python would raise ZeroDivisionError (the derivative of sqrt at 0), unless ``den`` is
        a nonzero number; where the printer checks the user's divisions, Python's ZeroDivisionError whatever
        the operands' types (``value``: the numerator's factors and the divisor's, as SymPy expressions,
        :mod:`~coarsen_nb.lower.division_checks`)."""
        if self._ieee_division(den, array):
            return Call(Name(self.helper('_ieee_div')), (num, den))
        if not array and value is not None and division_checks.checked(self, *value):
            return Call(Name(self.helper('_div')), (num, den))
        return Paren(BinOp("/", num, den)) if wrap else BinOp("/", num, den)

    def _ieee_division(self, den: lir.Expr, array: bool) -> bool:
        """Whether a division by ``den`` is printed as the helper ``_ieee_div`` (see ``_divide``)."""
        return self.ieee and not array and not (is_number_code(den) and float(str(den)) != 0)


_ZERO = Lit("0.0")
#: the user's ``%`` and ``//`` by a divisor the printer checks (lower/division_checks.py): the module's helper
_CHECKED_ROUNDING = {rounding.PyMod: "_mod", sp.Mod: "_mod", rounding.FloorDiv: "_floordiv"}


def _power(base: lir.Expr, exp: lir.Expr) -> lir.Expr:
    """``base**exp``, printed without spaces, as the printer always wrote it."""
    return BinOp("**", base, exp, spaced=False)

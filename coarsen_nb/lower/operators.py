"""Printing SymPy's operators and functions as array code (or plain ``math``): the arithmetic part of
the :class:`~coarsen_nb.lower.emit.Printer`.

``+ - * /`` and powers, elementwise functions (each spelled as its registration in
:mod:`coarsen_nb.rules` says: ``xp.asin``/``math.asin``, ``_erf``, ``a % b``),
comparisons and logic, and the forms of :mod:`coarsen_nb.phi` that print as one
call (softplus, a constant outside its domain).  Integer and boolean array operands of a float
operation are cast (the array API does not promote between kinds).  In scalar
derivative code (``Printer.ieee``) a division or a power that Python would
refuse (``0.5 / 0.0``, ``0.0 ** -0.5``) prints as the module's IEEE helper, so
a derivative at the edge of its domain is inf, as JAX gives.
"""

from __future__ import annotations

import math

import sympy as sp

from coarsen_nb.lower.printing import (
    Level,
    common_coefficient,
    exact_integer_division,
    int_typed,
    is_atom_code,
    is_number_code,
    number_code,
)
from coarsen_nb.phi import domain, elementary, forms
from coarsen_nb.phi.gammas import is_boolean
from coarsen_nb.rules.record import spell
from coarsen_nb.rules.table import missing, no_derivative, printed


class OperatorPrinting:
    """Operators and functions of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def number(self, e) -> str:
        """A SymPy number as code (:func:`~coarsen_nb.lower.printing.number_code`): an infinity or a NaN is
        ``math``'s."""
        if e in (sp.oo, -sp.oo) or e is sp.nan:
            self.uses_math = True
        return number_code(e)

    def _op(self, e, lv: Level, array: bool) -> str:
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
                return f"({self.number(c)} * {self._floats([prim], [code], force=True)[0] if cast else code})"
            # a - b, not a + (-b): the negated term is one value (shared with other uses of b)
            terms = sorted(e.args, key=lambda x: x.could_extract_minus_sign())
            negs = [x.could_extract_minus_sign() for x in terms]
            parts = [-x if neg else x for x, neg in zip(terms, negs, strict=True)]
            codes = [self.value(x, lv) for x in parts]
            if cast:
                codes = self._floats(parts, codes)
            out = ""
            for neg, code in zip(negs, codes, strict=True):
                out = (f"-{code}" if neg else code) if not out else f"{out} {'-' if neg else '+'} {code}"
            return f"({out})"
        exact = exact_integer_division(e)
        if exact is not None:
            num, den, down = exact
            code = self.value(num, lv)
            return f"({code} // {den})" if down else f"(-((-{code}) // {den}))"
        a = [self.value(x, lv) for x in e.args]
        if cast:
            a = self._floats(e.args, a)
        a = [str(c) for c in a]     # (the spellings below are text; operators.py moves to records next)
        p = printed(type(e))
        if p is not None:
            # a primitive's form: spelled as its registration says (rules/)
            spelling = p.spelling.array if array else p.spelling.scalar
            if spelling is None:
                raise missing(p, "array code" if array else "scalar code")
            if not array and spelling.startswith("math."):
                self.uses_math = True
            if p.spelling.helper is not None and (array or spelling == p.spelling.array):
                self.helper(p.spelling.helper)      # (a scalar spelling calls it where it is the array one)
            return spell(spelling, a, xp if array else None)
        if isinstance(e, domain.OutsideDomain):
            # the call as the user wrote it, so it raises where Python's own does (ValueError, OverflowError;
            # ** its ZeroDivisionError, or a complex number)
            if e.math_name == "pow":
                return f"({a[0]} ** {a[1]})"
            self.uses_math = True
            return f"math.{e.math_name}({', '.join(a)})"
        if isinstance(e, elementary.Softplus):
            if array:
                return f"{xp}.logaddexp(0.0, {a[0]})"
            return f"{self.helper('_softplus')}({a[0]})"
        if isinstance(e, elementary.Sigmoid):
            if array:
                return f"{xp}.exp(-{xp}.logaddexp(0.0, -({a[0]})))"
            return f"{self.helper('_sigmoid')}({a[0]})"
        if isinstance(e, forms.PowInt):
            if array:
                # a float base: a power of an int base and an int exponent array wraps around silently
                base = f"{float(e.args[0])!r}" if e.args[0].is_Integer else \
                    (f"(1.0 * {a[0]})" if e.args[0].is_integer else a[0])
                return f"(({base}) ** ({a[1]}))"
            return f"{self.helper('_ipow')}({a[0]}, {a[1]})"
        if isinstance(e, sp.Heaviside):
            if array:
                return f"{xp}.where({a[0]} > 0, 1.0, {xp}.where({a[0]} < 0, 0.0, 0.5))"
            return f"(1.0 if {a[0]} > 0 else 0.0 if {a[0]} < 0 else 0.5)"
        if isinstance(e, sp.DiracDelta):
            return "0.0"
        if isinstance(e, sp.Max) or isinstance(e, sp.Min):
            fn = ("maximum" if isinstance(e, sp.Max) else "minimum")
            if array:
                out = a[0]
                for c in a[1:]:
                    out = f"{xp}.{fn}({out}, {c})"
                return out
            return f"{'max' if isinstance(e, sp.Max) else 'min'}({', '.join(a)})"
        if isinstance(e, sp.core.relational.Relational):
            return f"({a[0]} {e.rel_op} {a[1]})"
        if isinstance(e, sp.Not):
            # not ~: on a Python bool (a scalar predicate at an array level) ~True is -2
            return f"{xp}.logical_not({a[0]})" if array else f"(not {a[0]})"
        if isinstance(e, sp.And):
            return "(" + (" & " if array else " and ").join(a) + ")"
        if isinstance(e, sp.Or):
            return "(" + (" | " if array else " or ").join(a) + ")"
        raise NotImplementedError(f"no printer for {type(e).__name__}: {e}")

    def _floats(self, args, codes: list[str], force: bool = False) -> list[str]:
        """Integer or boolean array operands of a float operation (or of a comparison that mixes
        kinds) cast to float64: the array API does not promote between kinds (NumPy does).  A printer of
        one point at a time (a fused loop's body, ``scalar_points``) has Python numbers, which promote."""
        if self.scalar_points:
            return codes
        if not force and all(x.is_integer or is_boolean(x) for x in args) \
                and not any(isinstance(x, sp.Float) for x in args):
            return codes
        return [f"{self.xp}.asarray({c}, dtype={self.xp}.float64)"
                if int_typed(self._resolved(x)) and not is_number_code(c) and (self.deps(x) or self._reduced(x)) else c
                for x, c in zip(args, codes, strict=True)]

    def _resolved(self, x):
        """``x`` with a temp symbol replaced by its expression (a symbol has no integer type)."""
        while isinstance(x, sp.Symbol) and x in self.temps:
            x = self.temps[x]
        return x

    def _reduced(self, x) -> bool:
        """Whether ``x`` involves a reduction: its value is then a 0-d array, not a Python number."""
        if x not in self._reduced_memo:
            self._reduced_memo[x] = False     # cycles cannot occur; this only bounds the recursion
            if isinstance(x, sp.Symbol):
                out = x in self.temps and self._reduced(self.temps[x])
            else:
                out = isinstance(x, (forms.Reduction, forms.ElemSum)) or any(
                    self._reduced(a) for a in x.args if isinstance(a, sp.Basic))
            self._reduced_memo[x] = out
        return self._reduced_memo[x]

    def _mul(self, e, lv: Level, array: bool) -> str:
        if e.args[0] == -1:
            # -(a*b) as the negation of the product a*b: one shared node when a*b is used elsewhere
            return f"-{self.value(-e, lv)}"
        num, den, sign = [], [], ""
        cast = not all(int_typed(self._resolved(f)) for f in e.args)   # (a·γ(0, 0) "is" an integer)
        args = list(e.args)
        consts = [f for f in args if f.is_number and f.is_real]
        if array and len(consts) > 1:
            # 1/sqrt(2) * 1/sqrt(pi) * ...: one float factor, not one array pass per constant
            c = float(sp.Mul(*consts))
            args = [f for f in args if not (f.is_number and f.is_real)]
            if c < 0:
                sign, c = "-", -c
            if c != 1.0 or not args:
                num.append(repr(c))
        for f in args:
            if f == 1 and len(args) > 1:
                continue        # a Float 1.0 coefficient (0.5 * 2.0) multiplies nothing
            if f == -1:
                sign = "-"
            elif isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                if f.exp == -1:
                    den.append(self._pow(f.base, 1, lv, array, cast=cast))
                else:
                    # sqrt(tau), vol**2, ...: shared subexpressions, computed once like any other node
                    pos = sp.Pow(f.base, -f.exp)
                    code = self.value(pos, lv)
                    den.append(self._floats([pos], [code], force=True)[0] if cast else code)
            else:
                num.append(self._floats([f], [self.value(f, lv)], force=True)[0] if cast else self.value(f, lv))
        text = " * ".join(map(str, num)) if num else ("1.0" if den else "1")
        if den:
            d = den[0] if len(den) == 1 else "(" + " * ".join(map(str, den)) + ")"
            text = self._divide(text, d, array)
            if self._ieee_division(d, array):
                return f"{sign}{text}"      # a call needs no parentheses of its own
        return f"{sign}({text})" if sign else f"({text})"

    def _pow(self, base, exp, lv: Level, array: bool, cast: bool = False) -> str:
        b = self.value(base, lv)
        if cast or not (exp.is_integer and exp.is_nonnegative):
            b = self._floats([base], [b], force=True)[0]
        if exp == sp.Rational(1, 2) and is_number_code(b):
            return repr(math.sqrt(float(str(b))))
        if exp == sp.Rational(1, 2):
            if not array:
                self.uses_math = True
            return f"{self.xp + '.sqrt' if array else 'math.sqrt'}({b})"
        if exp == sp.Rational(-1, 2):
            if not array:
                self.uses_math = True
            return self._divide('1.0', (self.xp + '.sqrt' if array else 'math.sqrt') + f'({b})', array, wrap=True)
        if exp == -1:
            return self._divide('1.0', b, array, wrap=True)
        if exp == 1:
            return b
        if exp == 2:
            return f"({b} * {b})" if is_atom_code(b) else f"({b})**2"
        x = self.value(exp, lv)
        if not (base.is_integer and exp.is_integer):
            x = self._floats([exp], [x], force=True)[0]
        if self.ieee and not array and not (exp.is_integer and exp.is_nonnegative):
            return f"{self.helper('_ieee_pow')}({b}, {x})"   # 0.0 ** -0.5 is inf here, not a ZeroDivisionError
        plain = is_atom_code(b) and is_atom_code(x) and not str(b).startswith("-") and not str(x).startswith("-")
        return f"{b}**{x}" if plain else f"({b})**({x})"

    def _divide(self, num: str, den: str, array: bool, wrap: bool = False) -> str:
        """``num / den`` (in parentheses with ``wrap``); in scalar derivative code IEEE's ±inf or nan
        where Python would raise ZeroDivisionError (the derivative of sqrt at 0), unless ``den`` is
        a nonzero number."""
        if self._ieee_division(den, array):
            return f"{self.helper('_ieee_div')}({num}, {den})"
        return f"({num} / {den})" if wrap else f"{num} / {den}"

    def _ieee_division(self, den: str, array: bool) -> bool:
        """Whether a division by ``den`` is printed as the helper ``_ieee_div`` (see ``_divide``)."""
        return self.ieee and not array and not (is_number_code(den) and float(str(den)) != 0)


"""LaTeX for the derivative view: SymPy's printer with the user's names and exact constants.

Three things SymPy's own ``latex`` gets wrong for this view:

* a γ (:class:`coarsen_nb.phi.gammas.Gamma`, a Piecewise that is never
  re-canonicalized) printed through the generic function path shows as the
  Gamma function ``Γ((a, p), (b, True))``; here it prints as the Piecewise it
  is, a cases brace;
* lifted constants are Floats (``0.707106781186547``); for *display* each is
  replaced by the simple exact number it equals to 12 digits (``√2/2``,
  ``1/2``), and an integer-valued one by the integer (``1.0·x`` is ``x``);
  a float with no short exact form stays as it is;
* symbols print through :class:`~coarsen_nb.notebook.names.DisplayNames`, so
  no ``$`` or SSA suffix reaches MathJax.

``AndThen``/``OrElse`` (the short-circuit ``and``/``or``) print as ∧ / ∨, and
an integer power ``PowInt(1 - lr, 3)`` as a power, with its parentheses.
"""

from __future__ import annotations

import math
import re

import sympy as sp
from sympy.printing.latex import LatexPrinter

#: Largest denominator of a rational shown instead of a float.
MAX_DENOMINATOR = 1000
_SURDS = (sp.sqrt(2), sp.sqrt(3), sp.pi)
#: Forms whose own ``_latex`` this view prints differently.
_OWN = ("PowInt", "Gamma")


def sympy_name(token: str) -> str:
    """A token of an index expression (``$k1.2``) as a name SymPy parses as one symbol (``N_…``).

    :func:`token_of` inverts it; both live here, beside the printer that inverts it, so that
    :mod:`coarsen_nb.notebook.names` (which parses) imports this module and not the other way round.
    """
    return "N_" + re.sub(r"\W", lambda m: f"_{ord(m.group(0))}_", token)


def token_of(symbol_name: str) -> str:
    """The inverse of :func:`sympy_name` (for index expressions parsed by SymPy)."""
    if not symbol_name.startswith("N_"):
        return symbol_name
    return re.sub(r"_(\d+)_", lambda m: chr(int(m.group(1))), symbol_name[2:])


def latex(expr, names, *, unsafe: bool = False) -> str:
    """``expr`` as LaTeX with ``names`` (a ``DisplayNames``) and exact constants.

    >>> from coarsen_nb.notebook.names import DisplayNames, NameContext
    >>> x = sp.Symbol("x.1")
    >>> latex(sp.Float(0.707106781186547) * x + sp.Float(1.0), DisplayNames(["x.1"], NameContext()))
    '\\\\frac{\\\\sqrt{2} x}{2} + 1'
    """
    return _Printer(names, unsafe).doprint(exact_constants(sp.sympify(expr)))


def exact_constants(expr):
    """``expr`` with each Float replaced by the exact number it equals (display only)."""
    floats = expr.atoms(sp.Float)
    if not floats:
        return expr
    table = {f: _exact(f) for f in floats}
    table = {f: e for f, e in table.items() if e is not None}
    return expr.xreplace(table) if table else expr


def _exact(f: sp.Float):
    value = float(f)
    if not math.isfinite(value):
        return None
    if value.is_integer() and abs(value) < 1e15:
        return sp.Integer(int(value))
    rational = sp.Rational(value).limit_denominator(MAX_DENOMINATOR)
    if abs(float(rational) - value) <= 1e-12 * abs(value):
        return rational
    for surd in _SURDS:
        ratio = sp.Rational(value / float(surd)).limit_denominator(64)
        if ratio != 0 and abs(float(ratio * surd) - value) <= 1e-12 * abs(value):
            return ratio * surd
        inverse = sp.Rational(value * float(surd)).limit_denominator(64)
        if inverse != 0 and abs(float(inverse / surd) - value) <= 1e-12 * abs(value):
            return inverse / surd
    return None


class _Printer(LatexPrinter):
    def __init__(self, names, unsafe: bool) -> None:
        super().__init__({"mul_symbol": None})
        self._names, self._unsafe = names, unsafe

    def _print(self, expr, **kwargs):
        # The compiler's forms print themselves (``_latex``) and take no ``exp``
        # keyword, which SymPy passes for a function raised to a power.
        exp = kwargs.pop("exp", None)
        if type(expr).__name__ in _OWN:  # ours beats the form's own ``_latex``
            text = getattr(self, "_print_" + type(expr).__name__)(expr)
            return text if exp is None else rf"\left({text}\right)^{{{exp}}}"
        if exp is not None and hasattr(type(expr), "_latex"):
            return rf"\left({super()._print(expr, **kwargs)}\right)^{{{exp}}}"
        if exp is not None:
            kwargs["exp"] = exp
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr, style="plain"):
        name = expr.name
        if self._unsafe:
            name = token_of(name)
        return self._names.tex(name)

    _print_Dummy = _print_Symbol

    def _print_PowInt(self, expr):
        # PowInt prints ``{base}^{n}`` without the parentheses a sum base needs.
        return self._print(sp.Pow(*expr.args, evaluate=False))

    def _print_Gamma(self, expr):
        return self._print_Piecewise(expr)

    def _print_AndThen(self, expr):
        return r" \wedge ".join(self._print_paren(a) for a in expr.args)

    def _print_OrElse(self, expr):
        return r" \vee ".join(self._print_paren(a) for a in expr.args)

    def _print_Float(self, expr):
        # Floats with no short exact form: at most 6 significant digits.
        text = f"{float(expr):.6g}"
        mantissa, _, exp = text.partition("e")
        if not exp:
            return mantissa
        power = f"10^{{{int(exp)}}}"
        return power if mantissa == "1" else rf"{mantissa} \cdot {power}"

    def _print_paren(self, expr):
        text = self._print(expr)
        return text if expr.is_Atom or isinstance(expr, sp.Not) else rf"\left({text}\right)"

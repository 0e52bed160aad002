"""Python's rounding arithmetic as SymPy nodes: ``//``, ``%``, ``floor``, ``ceil`` and ``round``.

All of them are piecewise constant (``%`` piecewise linear), so the derivative
is zero almost everywhere, and for ``a % b = a - b·(a // b)`` it is 1 with
respect to ``a`` and ``-(a // b)`` with respect to ``b``; at the jumps it is
the one-sided value, as every AD tool gives.  SymPy's own ``floor``,
``ceiling`` and ``Mod`` have no derivative a printer could print (it stays
``Derivative(floor(x), x)``), and ``floor(a / b)`` is not Python's ``a // b``
bit for bit (``1 // 0.1 == 9.0`` but ``floor(1 / 0.1) == 10``).  So the
nodes here print as Python writes them — ``a // b``, ``a % b``, ``round(a)`` —
and NumPy's operators on arrays mean the same (the result takes the sign of
the divisor, ``-3.5 % 2.0 == 0.5``; floor division rounds down; ``round`` rounds
half to even).  Integer operands keep SymPy's exact ``floor``/``Mod``: index
arithmetic has no derivative and simplifies there.
"""

from __future__ import annotations

import math

import sympy as sp


class _Printed:
    """Printed as the SymPy function it extends (SymPy's printers look functions up by class name)."""

    c_name = ""
    sympy_class = sp.Function

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _sympystr(self, printer):
        return f"{self.c_name}({printer._print(self.args[0])})"

    def _latex(self, printer):
        return printer._print(self.sympy_class(self.args[0], evaluate=False))

    def _ccode(self, printer):
        return f"{self.c_name}({printer._print(self.args[0])})"


class Floor(_Printed, sp.floor):
    """``math.floor`` / ``np.floor``: SymPy's floor (its folding) with derivative 0."""

    c_name, sympy_class = "floor", sp.floor


class Ceil(_Printed, sp.ceiling):
    """``math.ceil`` / ``np.ceil``: SymPy's ceiling with derivative 0."""

    c_name, sympy_class = "ceil", sp.ceiling


def _python_number(v) -> sp.Number:
    return sp.Integer(v) if isinstance(v, int) else sp.Float(v)


def _operand(x):
    """``x`` as the Python number it stands for (an int for an Integer), else None."""
    if x.is_Integer:
        return int(x)
    if x.is_Number:
        return float(x)
    return None


class Round(sp.Function):
    """``round(a)`` (one argument) / ``np.round``: to the nearest integer, half to even; derivative 0."""

    nargs = 1

    @classmethod
    def eval(cls, a):
        if a.is_integer:
            return a
        v = _operand(a)
        return sp.Integer(round(v)) if v is not None and math.isfinite(v) else None

    def _eval_is_integer(self):
        return True

    def _eval_is_real(self):
        return self.args[0].is_real

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _sympystr(self, printer):
        return f"round({printer._print(self.args[0])})"

    def _latex(self, printer):
        return rf"\operatorname{{round}}\left({printer._print(self.args[0])}\right)"


class _PythonBinary(sp.Function):
    """``a <op> b`` of floats as Python computes it, folded when both operands are numbers; printed as the
    operator (``_symbol``), so that the generated code is Python's own arithmetic."""

    nargs = 2
    _symbol = ""
    _apply = staticmethod(lambda x, y: None)

    @classmethod
    def eval(cls, a, b):
        x, y = _operand(a), _operand(b)
        if x is not None and y is not None and y != 0:
            return _python_number(cls._apply(x, y))
        return None

    def _eval_is_integer(self):
        return True if self.args[0].is_integer and self.args[1].is_integer else None

    def _eval_is_real(self):
        return True if self.args[0].is_real and self.args[1].is_real else None

    def _sympystr(self, printer):
        return f"({printer._print(self.args[0])} {self._symbol} {printer._print(self.args[1])})"


class FloorDiv(_PythonBinary):
    """``a // b`` of floats as Python computes it; derivative 0 in both operands."""

    _symbol = "//"
    _apply = staticmethod(lambda x, y: x // y)

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _latex(self, printer):
        return rf"\left\lfloor {printer._print(self.args[0])} / {printer._print(self.args[1])} \right\rfloor"


class PyMod(_PythonBinary):
    """``a % b`` of floats as Python computes it (the sign of ``b``): ∂/∂a = 1, ∂/∂b = −(a // b)."""

    _symbol = "%"
    _apply = staticmethod(lambda x, y: x % y)

    def fdiff(self, argindex=1):
        return sp.S.One if argindex == 1 else -FloorDiv(*self.args)

    def _latex(self, printer):
        return rf"\left({printer._print(self.args[0])} \bmod {printer._print(self.args[1])}\right)"


def floor_div(a, b):
    """The lifted ``a // b``: SymPy's exact floor for integers, Python's float floor division else."""
    return sp.floor(a / b) if a.is_integer and b.is_integer else FloorDiv(a, b)


def mod(a, b):
    """The lifted ``a % b``: SymPy's Mod for integers (the same sign rule), Python's float % else."""
    return sp.Mod(a, b) if a.is_integer and b.is_integer else PyMod(a, b)

"""Calls on constants outside the function's real domain: ``math.log(-2.0)``, ``math.sqrt(-1.0)``,
``math.exp(1000.0)``.

SymPy folds ``log(-2)`` to ``log(2) + iπ`` and ``log(0)`` to ``zoo``, numbers no
printer of real code can spell, so a function with such a constant on a
branch it rarely takes would not compile.  Python evaluates the call only when
that branch runs, and then raises ``ValueError: math domain error`` (or
``OverflowError`` past the float range, where SymPy's arbitrary precision has a
value that would print as ``inf``).  The
lifted form keeps the call as written, so the generated code calls ``math``
at the same point and raises the same error; its derivative is 0 (it is a
constant).
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from coarsen_nb.rules.table import PRIMITIVES


class OutsideDomain(sp.Function):
    """``math.<math_name>(c, ...)`` (``c ** d`` for ``pow``) of constants where it has no float value;
    one subclass per function (:func:`outside_domain`), so that the arguments are only the constants."""

    math_name = ""

    @classmethod
    def eval(cls, *args):
        return None

    def _eval_is_real(self):
        return True     # were it ever computed; it raises instead

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _sympystr(self, printer):
        args = [printer._print(a) for a in self.args]
        return f"({args[0]} ** {args[1]})" if self.math_name == "pow" else f"math.{self.math_name}({', '.join(args)})"

    def _latex(self, printer):
        return rf"\operatorname{{{self.math_name}}}\left({', '.join(printer._print(a) for a in self.args)}\right)"


@functools.cache
def outside_domain(math_name: str) -> type:
    """The :class:`OutsideDomain` class of ``math.<math_name>`` (one per name, also across threads: SymPy
    tells functions apart by class)."""
    return type(f"OutsideDomain_{math_name}", (OutsideDomain,), {"math_name": math_name})


def kept_real(func: str, args: list, lifted):
    """``lifted`` (the SymPy form of ``func(*args)``), or an :class:`OutsideDomain` call where every
    argument is a number and SymPy's value is not a real number, or not a float (``exp(1000.0)``:
    Python raises OverflowError where SymPy's arbitrary precision has a value)."""
    if not args or not all(isinstance(a, sp.Basic) and a.is_Number for a in args):
        return lifted
    if not isinstance(lifted, sp.Basic):
        return lifted
    if lifted.is_extended_real is True and not (lifted.is_Number and _overflows(lifted, args)):
        return lifted
    name = PRIMITIVES[func].math if func in PRIMITIVES else None      # the registration's math name
    return outside_domain(name)(*args) if name else lifted


def _overflows(value, args) -> bool:
    """Whether the number ``value`` is past the float range though its finite arguments are not."""
    return all(math.isfinite(float(a)) for a in args) and not math.isfinite(float(value))

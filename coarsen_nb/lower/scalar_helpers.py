"""The generated module's helpers for scalar code: Python's float arithmetic where it raises.

Each is a plain function, run by the tests as it is here; the module writer copies its text
(``inspect.getsource``) into a generated module that calls it (:mod:`coarsen_nb.lower.helpers`).
Python raises ``OverflowError`` and ``ZeroDivisionError`` where IEEE 754 gives an infinity or a NaN;
derivative code at the edge of a function's domain needs IEEE 754's answer, as JAX and NumPy give.
"""

from __future__ import annotations

import math


def _softplus(z):
    """log(1 + exp(z)) without overflow."""
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))


def _sigmoid(z):
    """1 / (1 + exp(-z)) without overflow."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez)


def _ieee_div(a, b):
    """a / b as IEEE 754 divides (+-inf, nan) where Python raises ZeroDivisionError: a derivative at
    the edge of its domain (sqrt at 0) is infinite, as JAX and NumPy give."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _div(a, b):
    """a / b as Python divides the user's numbers, also where the code holds them otherwise (a batched sum's
    NumPy float, ``np.float64(0.0) / 0`` is nan; a numba loop's NumPy error model): ZeroDivisionError at
    ``b == 0`` where ``a`` is 0 — a sum of no terms, Python's ``0.0`` — or a Python number (its own ``/``
    raises).  A NumPy float ``a`` other than 0 divides as NumPy's does, as the user's sum of array elements
    does in Python (``s / (len(x) - 1)`` on one record is inf with a warning)."""
    if b == 0 and a == 0:
        raise ZeroDivisionError("float division by zero")
    return a / b


def _mod(a, b):
    """a % b as Python takes the user's numbers' remainder: ZeroDivisionError at b == 0 where ``a`` is 0 or a
    Python number (see ``_div``)."""
    if b == 0 and a == 0:
        raise ZeroDivisionError("float modulo")
    return a % b


def _floordiv(a, b):
    """a // b as Python floor-divides the user's numbers: ZeroDivisionError at b == 0 where ``a`` is 0 or a
    Python number (see ``_div``)."""
    if b == 0 and a == 0:
        raise ZeroDivisionError("float floor division by zero")
    return a // b


def _ieee_pow(a, b):
    """a ** b as IEEE 754's pow where Python raises or returns a complex number: inf for 0.0 ** -0.5
    and on overflow (-inf for a negative base and an odd exponent), nan for a negative base and a
    fractional exponent.  Derivative code at the edge of a function's domain, as JAX gives."""
    a, b = float(a), float(b)
    try:
        out = a ** b
    except (ZeroDivisionError, OverflowError):
        odd = b.is_integer() and int(b) % 2 == 1
        return math.copysign(math.inf, a) if odd else math.inf
    return math.nan if isinstance(out, complex) else out


def _ipow(a, m):
    """a**m for an integer m >= 0, inf on overflow like the loop it replaces (not OverflowError)."""
    try:
        return float(a) ** int(m)
    except OverflowError:
        return math.copysign(math.inf, a) if int(m) % 2 else math.inf


#: the helpers of this module, in the order the registry (:mod:`coarsen_nb.lower.helpers`) lists them
HELPER_FUNCTIONS = (_softplus, _sigmoid, _ieee_div, _div, _mod, _floordiv, _ieee_pow, _ipow)

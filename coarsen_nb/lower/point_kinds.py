"""Whether a loop's written value is one real number at each point, and whether that number is a float.

A write ``out[k] = v`` over ``range(0, n, 1)`` into a fresh ``zeros(n)`` or ``empty(n)`` makes an array that
*is* the values ``v`` (:func:`coarsen_nb.lower.trivial.whole_fills`), provided the array of values the printer
makes for ``v`` is what NumPy would store: one float at each point.  A row (``X[k]`` of a matrix), an array
invariant or an integer (``k * 2``: NumPy would store it as a float) is not, and keeps the copy into the
written array (or raises, as Python does, for a row).  The kinds are read from the plan's types of the
kernel's arrays and scalars, never guessed: what this module cannot type is "not a number at each point".
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi import forms

# the kinds whose sum or product with a float is a float
_REAL = frozenset({"float", "int", "bool"})

# functions of real numbers whose value is a float (NumPy's ufuncs of an integer array return floats)
_FLOAT_FUNCTIONS = (sp.sin, sp.cos, sp.tan, sp.exp, sp.log, sp.sinh, sp.cosh, sp.tanh, sp.asin, sp.acos,
                    sp.atan, sp.asinh, sp.acosh, sp.atanh)


def point_kind(writer, kernel, v, k) -> str | None:
    """``"float"`` or ``"int"`` where ``v`` (an expression of ``kernel``'s symbols, at each value of the loop
    index ``k``) is one real number of that kind at each point; None where it is anything else or unknown.
    ``writer``: the module writer (its plan's types)."""
    reads = {r.symbol: r for r in kernel.reads}
    temps = dict(kernel.body)

    def kind(x, indices: frozenset) -> str | None:
        if x in indices:
            return "int"
        if isinstance(x, sp.Integer):
            return "int"
        if isinstance(x, (sp.Float, sp.Rational)):
            return "float"
        if x in reads:
            read = reads[x]
            t = writer.plan.types.get(read.array)
            if t is None or t.ndim != len(read.index) or t.kind not in _REAL:
                return None         # a row, or an array of another kind: not one number a point
            return "float" if t.kind == "float" else "int"
        if x in temps:
            return kind(temps[x], indices)
        if isinstance(x, sp.Symbol):
            t = writer.plan.types.get(kernel.scalars.get(x))
            if t is None or t.is_array or t.kind not in _REAL:
                return None
            return "float" if t.kind == "float" else "int"
        if isinstance(x, (sp.Add, sp.Mul)):
            kinds = [kind(a, indices) for a in x.args]
            return None if None in kinds else "float" if "float" in kinds else "int"
        if isinstance(x, sp.Pow):
            base, power = kind(x.base, indices), kind(x.exp, indices)
            if base is None or power is None:
                return None
            if "float" in (base, power):
                return "float"
            return "int" if isinstance(x.exp, sp.Integer) and x.exp >= 0 else None
        if isinstance(x, _FLOAT_FUNCTIONS):
            return "float" if all(kind(a, indices) for a in x.args) else None
        if isinstance(x, forms.Reduction):
            body, binder = x.args[0], x.args[1]
            return kind(body, indices | {binder})
        return None

    return kind(v, frozenset({k}))

"""Which of the user's divisions raise ZeroDivisionError at a divisor of 0: Python's, whatever the code computes.

The user's ``total / n`` raises in Python when ``n == 0``: ``total`` and ``n`` are Python numbers there (a float
accumulator, a length, a loop's count). The compiled code may hold the same numbers otherwise: a batched or fused
sum is ``xp.sum(...)``, a NumPy float, and ``np.float64(0.0) / 0`` is nan with a RuntimeWarning; a numba loop
function runs NumPy's error model, where ``0.0 / 0`` is nan. So a printer that sets ``Printer.checked_division``
prints such a division as the module's ``_div`` (:mod:`.scalar_helpers`), which raises at a divisor of 0 (the NumPy
backend's scalar code; numba's loop functions over the user's loops, ``numba_loops``). Numba's entry points need
none: they run Python's error model.

Not every scalar division: where an operand is an array's element (``x[i]``, a NumPy float in the user's own loop),
Python's division is NumPy's too (``1.0 / x[i]`` at 0 is inf with a warning), and so is the user's elementwise
division of arrays: those keep NumPy's inf and nan. (A value computed from elements through a ``math`` function is a
Python float again: ``math.exp(x[i])`` is checked.) ``_div`` raises where the divisor is 0 and the numerator is 0 (a
sum of no terms: Python's ``0.0``, the mean over nothing) or a Python number in the compiled code (its own ``/``
raises); a NumPy float other than 0 divides as NumPy's does, as Python's own sum of array elements does once it has
a term (``s / (len(x) - 1)`` on one record is inf with a warning). Derivative code divides as IEEE 754 does
(``Printer.ieee``), never checked.

Left: a parameter divided by an empty sum fused into one SOI (``a / s``: ``a`` is a NumPy float there, the value inf
where Python raises; knowing the numerator's provenance would do); a division inside a batched loop's lanes
(phi/batching.py: ``running / n_steps`` over every path at once) is array code, ``lanes / 0`` nan; the printer
cannot tell lanes from the user's own arrays.
"""

from __future__ import annotations

import sympy as sp


def checked(pr, num, den) -> bool:
    """Whether ``pr`` prints the division of the product of ``num`` by that of ``den`` (SymPy expressions, the
    factors of each) through ``_div``: the printer checks its divisions, the divisor is not a number, and both
    sides are Python numbers in the user's program (a NumPy float on either side divides as NumPy does in
    Python too)."""
    if not pr.checked_division or pr.ieee:
        return False
    den = [sp.sympify(d) for d in den]
    if all(d.is_number for d in den):
        return False        # (a number of 0 is SymPy's zoo, never printed as a division)
    return all(python_number(pr, sp.sympify(e)) for e in (*num, *den))


def python_number(pr, e) -> bool:
    """Whether the user's program holds ``e`` as a Python number: no element of an array (a read ``x[i]``, an
    array argument's element) is one of its terms or factors, through sums, products and powers (a NumPy
    float there makes the whole a NumPy float); what a function returns (``math.exp``, a loop's sum, a
    batched loop's sum over its lanes) is a Python number."""
    todo, seen = [e], set()
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if isinstance(x, sp.Symbol):
            if x in pr.reads or pr.is_array_leaf(x):
                return False
            if x in pr.temps:
                todo.append(pr.temps[x])
        elif isinstance(x, (sp.Add, sp.Mul, sp.Pow)):
            todo.extend(x.args)
    return True

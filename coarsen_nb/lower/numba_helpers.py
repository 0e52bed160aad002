"""The numba backend's own versions of helpers whose NumPy-backend text is outside Numba's subset.

The NumPy backend's scalar power helpers catch Python's ``OverflowError`` and ``ZeroDivisionError``
to return IEEE 754's answer; Numba has no ``except`` of a class, and its float power already is
IEEE 754's ``pow`` (``0.0 ** -0.5`` is inf, a negative base to a fractional power is nan,
overflow is inf with the sign of an odd power), so here they are one line.  The module writer
uses an entry of this table in place of the NumPy backend's (``Backend.helpers``).
"""

from __future__ import annotations

NUMBA_HELPERS = {
    "_ieee_pow": '''def _ieee_pow(a, b):
    """a ** b as IEEE 754's pow (inf for 0.0 ** -0.5 and on overflow, nan for a negative base and a
    fractional exponent): Numba's float power."""
    return float(a) ** float(b)
''',
    "_ipow": '''def _ipow(a, m):
    """a**m for an integer m >= 0, inf on overflow like the loop it replaces: Numba's float power."""
    return float(a) ** int(m)
''',
}

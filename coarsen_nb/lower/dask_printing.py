"""The few places the dask module's statements differ from the NumPy module's, printed by the NumPy printer
under the dask backend only (``ModuleWriter.printer`` sets them; NumPy's, CuPy's and Numba's code is unchanged).

* A read by two or more index arrays at once (``m[i, j]``, pointwise): Dask's indexing takes one index array
  per call ("Don't yet support nd fancy indexing"), so the read is ``_gather_points(m, (i, j))``
  (``lower/dask_helpers.py``: ``m.vindex`` where the indices are known without the data, else a 1-D read of
  ``m`` flattened).  Its adjoint needs nothing here: ``_scatter_sum`` already adds at flat positions.
* Python's sign of a number (``rules/elementwise.py`` spells it ``1.0 if a > 0 else ...``): a Python choice on
  a reduced value, which computes the graph built so far; here ``_python_sign(a)``, ``where`` of the same
  choices on a 0-d Dask array (determinant's gradient: the sign of det(A)).
* A loop extremum's NaN test (``if g > m: m = g`` steps over a NaN term: :func:`nan_test_choice`), which the
  NumPy module prints as ``if red == red: ... else: <the reduction again, a NaN term skipped>``: here both arms
  at the level of the choice (the reduction again over the terms ``red`` already has there), then ``xp.where``
  of them (``BranchPrinting._scalar_piecewise``; its pre-pass, ``LevelWalk._scalar_piecewise``, opens no arm
  level for it), so the reduction is not computed while the graph is built.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import is_int_literal
from coarsen_nb.phi import forms


def points_read(printer, whole: lir.Expr, codes: list) -> lir.Expr:
    """``whole[codes]``, or under Dask (``printer.gather_points``) with two or more codes that are not integer
    literals, ``_gather_points(whole, (codes...))``: the helper reads ``whole[codes]`` where that is one index
    array or none, so it is printed whenever two codes may be arrays."""
    if getattr(printer, "gather_points", False) and sum(not is_int_literal(c) for c in codes) >= 2:
        return lir.Call(lir.Name(printer.helper("_gather_points")), (whole, lir.Tuple(tuple(codes))))
    return lir.Index(whole, tuple(codes))


def lazy_scalar_call(printer, e, args) -> lir.Expr | None:
    """The dask printer's ``scalar_call`` (``Printer.scalar_call``): the functions of numbers whose scalar
    spelling is a Python choice, spelled by a helper that stays lazy on a 0-d Dask array; None for the rest."""
    if isinstance(e, sp.sign):
        return lir.Call(lir.Name(printer.helper("_python_sign")), (args[0],))
    return None


def nan_test_choice(clauses, resolved) -> bool:
    """Whether the scalar choice ``clauses`` (a Piecewise's) is a loop extremum's NaN test, as
    :func:`coarsen_nb.phi.recurrence_classes.nan_skipping` and its adjoint (``symbolic/diff.py``) write it:
    γ(red == red, red, red') with red' the same reduction over the terms, a NaN term skipped, or, in the
    adjoint's one-hot, γ(red == red, g, γ(g > -inf, g, -inf)).  Both arms then read only the terms ``red``
    itself read, so evaluating the arm not taken cannot fail: under Dask both are computed, at the level of the
    choice, and the choice is a ``where``.  ``resolved``: the printer's (a temp symbol -> its expression)."""
    if len(clauses) != 2:
        return False
    (fast, test), (slow, _) = clauses
    if not (isinstance(test, sp.Eq) and test.args[0] == test.args[1]):
        return False
    red = resolved(test.args[0])
    if not isinstance(red, (forms.RMax, forms.RMin)):
        return False
    other = resolved(slow)
    if fast == test.args[0]:
        return type(other) is type(red) and other.args[1:] == red.args[1:]
    # (the adjoint's terms: the NaN-skipping arm is a choice between the terms and the reduction's identity)
    return isinstance(other, sp.Piecewise) and any(resolved(arm) == resolved(fast) for arm, _ in other.args)


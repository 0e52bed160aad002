"""SymPy's ``simplify_logic`` as Piecewise folding calls it, without SymPy's costly proof that an inequality's
two sides differ.

``piecewise_fold`` simplifies every ITE condition it folds with ``simplify_logic(c, form="cnf")``, whose deep
step runs ``simplify`` on each relation; ``Relational._eval_simplify`` then asks ``(lhs - rhs).equals(0)``,
which simplifies the difference again, evaluates it at random points and recurses into its factors: 0.26 of
the 0.42 s CPU that segment_distance's clamp (``min(max(t, 0.0), 1.0)`` under a running maximum) spends in
one call.  Only a True answer changes the relation (to True or False), and a difference that is a rational
function of its symbols with small integer numbers, whose exact value at one point is not 0, is not 0 —
nor can SymPy's simplification, whose arithmetic on such numbers is exact, make it 0.  So the question is
asked only where that value does not answer it (:func:`surely_not_zero`); everything else is SymPy's own
code, so the result is the one ``simplify_logic`` gives.

:func:`relation_simplified` is SymPy 1.14's ``Relational._eval_simplify`` (BSD-3-Clause, © SymPy
Development Team) with that one test added; under another SymPy version, or for an ``Eq``/``Ne`` (which
simplify their own way), SymPy's ``simplify`` runs instead.  ``tests/phi/test_relation_simplify.py``
compares the two.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational
from sympy.logic import boolalg

#: the SymPy version whose ``Relational._eval_simplify`` :func:`relation_simplified` copies
COPIED_FROM = "1.14.0"
#: the numbers :func:`surely_not_zero` evaluates exactly: integers (or integral floats) below this
_SMALL = 2 ** 20
_SIMPLIFY_OPTIONS = dict(ratio=1.7, measure=sp.count_ops, rational=False, inverse=False, doit=True)


def simplify_logic(expr, form=None, deep=True, force=False, dontcare=None):
    """``sympy.simplify_logic(expr, form, deep, force, dontcare)``, the same result, with each relation of
    its deep step simplified by :func:`relation_simplified`."""
    expr = sp.sympify(expr)
    if not deep or form not in ("cnf", "dnf") or _quick_exit(expr, form) or sp.__version__ != COPIED_FROM:
        return boolalg.simplify_logic(expr, form, deep, force, dontcare)
    relations = expr.atoms(Relational)
    simplified = expr.xreplace({r: relation_simplified(r) for r in relations})
    if _quick_exit(simplified, form):
        # SymPy checks for a quick exit before its deep step only: where the simplified relations would
        # exit now, its own path goes on (the truth table), so it runs as it is
        return boolalg.simplify_logic(expr, form, deep, force, dontcare)
    return boolalg.simplify_logic(simplified, form, False, force, dontcare)


def _quick_exit(expr, form: str) -> bool:
    """``simplify_logic``'s test for returning ``expr`` as it is (in ``form`` already, every argument a
    literal)."""
    ok = boolalg.is_cnf(expr) if form == "cnf" else boolalg.is_dnf(expr)
    return ok and all(boolalg.is_literal(a) for a in expr.args)


def relation_simplified(rel):
    """``sympy.simplify(rel)`` of a relation in ``simplify_logic``'s deep step."""
    if type(rel)._eval_simplify is not Relational._eval_simplify or sp.__version__ != COPIED_FROM:
        return sp.simplify(rel)
    return _eval_simplify(rel, **_SIMPLIFY_OPTIONS)



def surely_not_zero(dif) -> bool:
    """Whether ``dif`` is shown not to be 0 by its exact value at one point: a rational function of its
    symbols whose numbers are small integers (integral floats too), each symbol given a distinct value its
    assumptions allow.  False where that does not show it (another number or function, a value 0 or not
    finite there)."""
    if not isinstance(dif, sp.Expr) or dif.is_number:
        return False
    for n in dif.atoms(sp.Number):
        if not (n.is_Integer or (n.is_Float and float(n).is_integer())) or abs(n) >= _SMALL:
            return False
    point = {}
    for k, s in enumerate(sorted(dif.free_symbols, key=str)):
        if not isinstance(s, sp.Symbol) or s.is_zero is not None and s.is_zero:
            return False
        if s.is_integer and (s.is_even is not None or s.is_prime is not None):
            return False
        value = sp.Integer(2 * k + 3) if s.is_integer else sp.Rational(4 * k + 5, 7)
        point[s] = -value if (s.is_negative or s.is_nonpositive) else value
    at = dif.xreplace(point)
    return bool(at.is_Rational or at.is_Float) and at.is_finite is True and at != 0


def _eval_simplify(self, **kwargs):
    """SymPy 1.14's ``Relational._eval_simplify``, ``dif.equals(0)`` asked only where :func:`surely_not_zero`
    does not answer it."""
    from sympy.core.add import Add
    from sympy.core.expr import Expr
    from sympy.core.singleton import S
    from sympy.core.sorting import ordered

    r = self
    r = r.func(*[i.simplify(**kwargs) for i in r.args])
    if r.is_Relational:
        if not isinstance(r.lhs, Expr) or not isinstance(r.rhs, Expr):
            return r
        dif = r.lhs - r.rhs
        # replace dif with a valid Number that will
        # allow a definitive comparison with 0
        v = None
        if dif.is_comparable:
            v = dif.n(2)
            if any(i._prec == 1 for i in v.as_real_imag()):
                rv, iv = [i.n(2) for i in dif.as_real_imag()]
                v = rv + S.ImaginaryUnit*iv
        elif not surely_not_zero(dif) and dif.equals(0):  # XXX this is expensive
            v = S.Zero
        if v is not None:
            r = r.func._eval_relation(v, S.Zero)
        r = r.canonical
        # If there is only one symbol in the expression,
        # try to write it on a simplified form
        free = list(filter(lambda x: x.is_real is not False, r.free_symbols))
        if len(free) == 1:
            try:
                from sympy.solvers.solveset import linear_coeffs
                x = free.pop()
                dif = r.lhs - r.rhs
                m, b = linear_coeffs(dif, x)
                if m.is_zero is False:
                    if m.is_negative:
                        # Dividing with a negative number, so change order of arguments
                        # canonical will put the symbol back on the lhs later
                        r = r.func(-b / m, x)
                    else:
                        r = r.func(x, -b / m)
                else:
                    r = r.func(b, S.Zero)
            except ValueError:
                # maybe not a linear function, try polynomial
                from sympy.polys.polyerrors import PolynomialError
                from sympy.polys.polytools import Poly, gcd, poly
                try:
                    p = poly(dif, x)
                    c = p.all_coeffs()
                    constant = c[-1]
                    c[-1] = 0
                    scale = gcd(c)
                    c = [ctmp / scale for ctmp in c]
                    r = r.func(Poly.from_list(c, x).as_expr(), -constant / scale)
                except PolynomialError:
                    pass
        elif len(free) >= 2:
            try:
                from sympy.polys.polytools import gcd
                from sympy.solvers.solveset import linear_coeffs
                free = list(ordered(free))
                dif = r.lhs - r.rhs
                m = linear_coeffs(dif, *free)
                constant = m[-1]
                del m[-1]
                scale = gcd(m)
                m = [mtmp / scale for mtmp in m]
                nzm = list(filter(lambda f: f[0] != 0, list(zip(m, free, strict=False))))
                if scale.is_zero is False:
                    if constant != 0:
                        # lhs: expression, rhs: constant
                        newexpr = Add(*[i * j for i, j in nzm])
                        r = r.func(newexpr, -constant / scale)
                    else:
                        # keep first term on lhs
                        lhsterm = nzm[0][0] * nzm[0][1]
                        del nzm[0]
                        newexpr = Add(*[i * j for i, j in nzm])
                        r = r.func(lhsterm, -newexpr)

                else:
                    r = r.func(constant, S.Zero)
            except ValueError:
                pass
    # Did we get a simplified result?
    r = r.canonical
    measure = kwargs['measure']
    if measure(r) < kwargs['ratio'] * measure(self):
        return r
    else:
        return self

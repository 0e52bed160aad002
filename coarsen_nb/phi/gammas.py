"""γ as SymPy, and the truth values it needs: the bottom of lifting, shared by the lifter
(:mod:`coarsen_nb.phi.symbols`), the rule table (``min``/``max`` lift to a γ chain) and the printers.

:class:`Gamma` is a Piecewise that SymPy never re-canonicalizes; :class:`AndThen` and :class:`OrElse`
are ``and``/``or`` with Python's order kept (the right operand evaluated only where it runs), with the
set and negation-normal-form rules SymPy's Piecewise and ``Not`` ask of them.
"""

from __future__ import annotations

import sympy as sp
import sympy.functions.elementary.piecewise as _piecewise_module
from sympy.core.cache import cacheit

from coarsen_nb.phi import relation_simplify
from coarsen_nb.phi.forms import Inert


def is_boolean(x) -> bool:
    """Whether a lifted value is a truth value (a predicate, a flag, a bool-typed SSA value)."""
    if isinstance(x, sp.logic.boolalg.BooleanAtom):
        return True
    if isinstance(x, sp.Symbol):
        return x.is_real is None and x.is_integer is None
    if isinstance(x, sp.Piecewise):
        return all(is_boolean(e) for e, _ in x.args)
    return isinstance(x, sp.logic.boolalg.Boolean) and not isinstance(x, sp.Expr)


def gamma(p, a, b):
    """γ(p, a, b) as SymPy: F1 (equal operands collapse), truth values as ITE, else a Gamma.

    Truth values never go into a Piecewise: SymPy's rewrites of a Piecewise of
    booleans (``~Piecewise`` → ITE) assume conditions it has canonicalized, and
    γ keeps its predicate as written.
    """
    if a == b:
        return a
    if p == sp.true:
        return a
    if p == sp.false:
        return b
    if is_boolean(a) or is_boolean(b):
        return sp.ITE(p, a, b)   # lowered like a γ: only the selected operand is evaluated
    return Gamma((a, p), (b, True))


class AndThen(sp.logic.boolalg.BooleanFunction):
    """``a and b`` with Python's order kept: ``b`` is only evaluated where ``a`` holds.

    SymPy's ``And`` sorts its arguments, which would lose the guard in
    ``x > 0 and log(x) < 1``; lowering evaluates ``b`` under the mask of ``a``.
    """

    @classmethod
    def eval(cls, *args):
        if any(a == sp.false for a in args):
            return sp.false
        rest = [a for a in args if a != sp.true]
        if not rest:
            return sp.true
        if len(rest) == 1:
            return rest[0]
        if len(rest) != len(args):
            return cls(*rest)
        return None


class OrElse(sp.logic.boolalg.BooleanFunction):
    """``a or b`` with Python's order kept: ``b`` is only evaluated where ``a`` fails."""

    @classmethod
    def eval(cls, *args):
        if any(a == sp.true for a in args):
            return sp.true
        rest = [a for a in args if a != sp.false]
        if not rest:
            return sp.false
        if len(rest) == 1:
            return rest[0]
        if len(rest) != len(args):
            return cls(*rest)
        return None

def _and_set(self):
    out = self.args[0].as_set()
    for a in self.args[1:]:
        out = out.intersect(a.as_set())
    return out


def _or_set(self):
    out = self.args[0].as_set()
    for a in self.args[1:]:
        out = out.union(a.as_set())
    return out


# SymPy's Piecewise simplifies univariate conditions through their sets.
AndThen._eval_as_set = _and_set
OrElse._eval_as_set = _or_set
AndThen.to_nnf = lambda self, simplify=True: sp.And(*self.args).to_nnf(simplify)
OrElse.to_nnf = lambda self, simplify=True: sp.Or(*self.args).to_nnf(simplify)


class Gamma(sp.Piecewise):
    """γ(p, a, b) as a Piecewise that SymPy never re-canonicalizes.

    SymPy's Piecewise rewrites its conditions on every construction, and for
    some conditions (floats on both sides of a relation, nested min/max) that
    rewriting never reaches a fixed point.  A γ keeps its predicate as lifted;
    the derivative still distributes into it (C2) through Piecewise's rules,
    and every printer treats it as the Piecewise it is.
    """

    def __new__(cls, *args, **options):
        pairs = [getattr(ec, "args", ec) for ec in args]
        return super().__new__(cls, *[(e, as_written(c)) for e, c in pairs], **options)

    @classmethod
    def eval(cls, *args):
        return None

    def _sympystr(self, printer):
        return "γ(" + ", ".join(f"{printer._print(e)} if {printer._print(c)}" for e, c in self.args) + ")"


def as_written(cond):
    """A predicate with every γ inside it (``(u if c else v) > 0``) folded into an ITE chain.

    SymPy's Piecewise does this fold itself on construction, but then tries to prove the
    chain's conditions exhaustive through their solution sets, and its inequality solver
    fails (IndexError) on relations of two ``abs`` terms.  The chain is exhaustive by
    construction (a γ ends in ``True``), so no set logic is needed.
    """
    if not isinstance(cond, sp.Basic) or isinstance(cond, sp.Piecewise) or not cond.has(sp.Piecewise):
        return cond
    folded = sp.piecewise_fold(cond)
    if not isinstance(folded, sp.Piecewise) or folded.args[-1].cond != sp.true:
        return cond
    out = folded.args[-1].expr
    for e, c in reversed(folded.args[:-1]):
        out = sp.ITE(c, e, out)
    return out


# SymPy's piecewise_fold rewrites every ITE condition it meets with ``simplify_logic(c, form="cnf")``, whose
# ``deep`` step runs ``simplify`` on each relation: ``Relational._eval_simplify`` proves ``lhs - rhs != 0`` by
# evaluating it at random points and ``nsimplify``-ing floats (0.16-0.3 s a relation).  A γ's condition is folded
# again in every predicate that reads it (segment_distance's clamp: four times, 0.7 s of its 1.35 s build), and the
# answer is a pure function of the condition, so piecewise_fold's one call site gets SymPy's own memo
# (``cacheit``: SymPy's objects are immutable and hashable; ``sympy.core.cache.clear_cache`` empties it too).
# Its deep step's relations are simplified without SymPy's costly proof that their sides differ where one
# exact value shows it (relation_simplify: the same result; segment_distance's call 0.42 -> ~0.1 s).
_piecewise_module.simplify_logic = cacheit(relation_simplify.simplify_logic)


def _fold_around_our_forms(expr, evaluate=True):
    """SymPy's ``piecewise_fold`` with our own forms (:class:`~coarsen_nb.phi.forms.Inert`: sums over elements
    or an index, gathers) opaque: it takes a γ out of any function, but a per-element choice inside a sum is no
    choice between two sums — ``ElemSum(γ(x if x > b, sin(x))) <= 1.5`` is not ``ITE(x > b, ElemSum(x) <= 1.5,
    ElemSum(sin(x)) <= 1.5)`` (a per-element predicate the default selection printed as a mask: an array
    result, or an arm's temporary read under the other arm's mask).  SymPy folds every condition it puts in a
    Piecewise (``ExprCondPair``) and recurses through the module's name, so the module's name is replaced."""
    if not isinstance(expr, sp.Basic) or not expr.has(sp.Piecewise):
        return expr
    opaque = {form: sp.Dummy() for form in expr.atoms(Inert) if form.has(sp.Piecewise)}
    if not opaque:
        return _SYMPY_PIECEWISE_FOLD(expr, evaluate)
    folded = _SYMPY_PIECEWISE_FOLD(expr.xreplace(opaque), evaluate)
    return folded.xreplace({d: form for form, d in opaque.items()})


_SYMPY_PIECEWISE_FOLD = _piecewise_module.piecewise_fold
_piecewise_module.piecewise_fold = _fold_around_our_forms
sp.piecewise_fold = _fold_around_our_forms


def _not_to_nnf(self, simplify=True):
    """``not (a and b)`` → ``(not a) or (not b)``: SymPy's Not knows only its own And/Or."""
    inner = self.args[0]
    if isinstance(inner, AndThen):
        return sp.Or._to_nnf(*[sp.Not(a) for a in inner.args], simplify=simplify)
    if isinstance(inner, OrElse):
        return sp.And._to_nnf(*[sp.Not(a) for a in inner.args], simplify=simplify)
    return _SYMPY_NOT_TO_NNF(self, simplify)


_SYMPY_NOT_TO_NNF = sp.Not.to_nnf
sp.Not.to_nnf = _not_to_nnf

"""The branch choice: how a ``Piecewise`` of an SOI is computed over the points of a level, decided from the
SOI's facts and not while its code is printed (issue 13, ``notes/lowered-ir.md``: the NumPy printer's levels
decided before printing, item 1).

A branch of an array level is one of three schedules:

``cond``   its predicates are one value for the whole level (or the level is one point): a real ``if``;
           its arms are printed on the same points, each under its own predicate (no domain of their own);
``where``  every arm may be evaluated on *all* points (cheap and total, see :func:`cheap_arms`): one
           ``where(p1, a1, where(p2, a2, a3))`` over the values (``constant_where`` for integer or truth
           values: numbers, or cheap truth values, of the arms' own kind);
``mask``   each arm on its own points only (a ``mask`` level domain, :func:`~coarsen_nb.lower.domain.
           masked_level`), the result put back by index; ``base``, if not None, the one cheap arm evaluated
           on every point as the result's buffer (the others never where another arm is taken).

What the choice reads: the predicates' dependencies (:func:`scalar_branch`), the arms' value kinds (``int_typed``
of the resolved value: a float result; ``is_integer``, ``is_boolean``: the buffer's dtype), and the arms' costs
(:func:`cheap_arms`), where an arm already *computed* on every point is free: that is the one fact the printer
supplies (``computed(e)``: ``e`` is in the memo of the level or of one above), so the choice of ``where`` can
still change with what was printed before the branch.  ``soi`` below is anything with the SOI's ``deps``
(dependencies of a node on loop indices and ``ELEM``), ``temps`` (SSA temp -> value), ``reads`` (array reads)
and ``resolved`` (a temp's value, followed): the :class:`~coarsen_nb.lower.emit.Printer` is one.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.functions.elementary.piecewise import ExprCondPair

from coarsen_nb.lower.printing import int_typed
from coarsen_nb.phi.gammas import is_boolean

# Arms of a branch evaluated on all points (``cheap_arms``): arithmetic that is finite for every finite
# operand, and at most this many operations over all arms together.  Transcendental functions (sin, exp,
# erf, ...) cost more than gathering their operands at an arm's own points.
WHERE_MAX_OPS = 12
CHEAP_NODES = (sp.Add, sp.Mul, sp.Abs, sp.sign, sp.Max, sp.Min, sp.core.relational.Relational, sp.And, sp.Or,
               sp.Not, sp.Piecewise, ExprCondPair)
BRANCH_KINDS = ("cond", "where", "constant_where", "mask")


@dataclass(frozen=True)
class BranchChoice:
    """How one ``Piecewise`` is computed at an array level: ``kind`` one of :data:`BRANCH_KINDS`; ``base``
    the arm evaluated on every point as a masked choice's buffer (None: an empty buffer).  What its arms
    read that is computed on every point of the level first, in this order (after the predicates; the
    pre-pass fills them in, ``soi_levels``): ``scans``, the scans over the level's loops (a scan needs all
    its points, an arm has only its own), and ``wholes``, the whole arrays of the elements (a slice
    written element by element: one array, not a value per masked point)."""
    kind: str
    base: int | None = None
    scans: tuple = ()
    wholes: tuple = ()

    def __post_init__(self):
        assert self.kind in BRANCH_KINDS, self.kind
        assert self.base is None or self.kind == "mask", self


def scalar_branch(clauses, deps, array_level: bool, varying) -> bool:
    """Whether a ``Piecewise`` of ``clauses`` is a real ``if`` (``cond``): the level is one point
    (``array_level`` false: no loop or elementwise level above), or no predicate varies over ``varying``
    (the level's loop indices and ``ELEM``)."""
    return not array_level or not any(deps(c) & varying for _, c in clauses)


def scalar_short_circuit(e, deps, array_level: bool, varying) -> bool:
    """Whether a short-circuit ``and``/``or`` ``e`` is Python's own (one truth value for the whole level,
    also inside a masked arm) rather than masked operands: as :func:`scalar_branch`, of the whole ``e``."""
    return not array_level or not deps(e) & varying


def array_choice(clauses, soi, computed) -> BranchChoice:
    """The schedule of a ``Piecewise`` whose predicates vary over an array level (not :func:`scalar_branch`).
    ``computed(e)``: ``e`` is already computed on every point of the level (the printer computes the
    predicates, scans and whole arrays the arms read before it asks)."""
    floating = not all(int_typed(soi.resolved(x)) for x, _ in clauses)
    if floating and cheap_arms(clauses, soi, computed):
        return BranchChoice("where")
    # (integer and truth values keep their masked buffer's dtype)
    if not floating and (all(x.is_Number or x in (sp.true, sp.false) for x, _ in clauses)
                         or all(is_boolean(x) for x, _ in clauses) and cheap_arms(clauses, soi, computed)):
        return BranchChoice("constant_where")
    integer = all(getattr(c[0], "is_integer", False) for c in clauses)
    boolean = all(is_boolean(c[0]) for c in clauses)
    # One cheap arm may be evaluated on every point as the result's buffer; the others then run on their
    # own points only (sin, exp, log, division: never where another arm is taken).
    base = base_arm(clauses, soi, computed) if floating and not integer and not boolean else None
    return BranchChoice("mask", base)


def base_arm(clauses, soi, computed) -> int | None:
    """The arm evaluated on all points, if one is cheap (see :func:`cheap_arms`): the one with the fewest
    operations, the later one on a tie."""
    best = None
    for k, (expr, _) in enumerate(clauses):
        if cheap_arms(clauses, soi, computed, arm=k):
            ops = sp.count_ops(soi.resolved(expr))
            if best is None or ops <= best[0]:
                best = (ops, k)
    return None if best is None else best[1]


def cheap_arms(clauses, soi, computed, arm: int | None = None) -> bool:
    """Whether every arm (or only ``arm``) may be evaluated on *all* points of the level: it is already
    computed there, or it is cheap arithmetic (a few operations over all arms) and *total* — no division,
    root, log, exp or inexact power that could raise, warn or give NaN on a point of another branch, and no
    array read that the predicates do not already make (an arm's index could be out of range elsewhere).
    Then one ``where`` over the values costs less than gathering operands and putting results back per
    arm."""
    cond_reads, cond_divisors = set(), set()
    for _, cond in clauses:
        cond_reads |= {s for s in expanded_atoms(cond, soi.temps) if s in soi.reads}
        cond_divisors |= invariant_divisors(cond, soi)
    budget = [WHERE_MAX_OPS]

    def cheap(e) -> bool:
        if computed(e):
            return True                 # computed on every point already
        if isinstance(e, sp.Symbol):
            if e in soi.temps:
                return cheap(soi.temps[e])
            return e not in soi.reads or e in cond_reads
        if e.is_Number or e in (sp.true, sp.false, sp.pi, sp.E):
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if isinstance(e, sp.Pow):
            if not (e.exp.is_Integer and (e.exp >= 0 or e.base in cond_divisors)):
                return False
        elif not isinstance(e, CHEAP_NODES):
            return False
        return all(cheap(a) for a in e.args)

    return all(cheap(expr) for k, (expr, _) in enumerate(clauses) if arm is None or k == arm)


def invariant_divisors(cond, soi) -> set:
    """The point-invariant values that ``cond`` (through the temps) divides by: ``t / l2 >= 0`` with ``l2``
    one scalar for the whole level.  The predicates are evaluated on every point, so an arm that divides by
    the same scalar fails (or warns) on no point where they did not already."""
    out, seen, todo = set(), set(), [cond]
    while todo:
        x = todo.pop()
        if x in seen or not isinstance(x, sp.Basic):
            continue
        seen.add(x)
        if isinstance(x, sp.Symbol) and x in soi.temps:
            todo.append(soi.temps[x])
            continue
        if isinstance(x, sp.Pow) and x.exp.is_negative and not soi.deps(x.base):
            out.add(x.base)
        todo.extend(x.args)
    return out


def expanded_atoms(e, temps) -> set:
    """The free symbols of ``e`` and, through the temps, of their values."""
    out, todo = set(), [e]
    while todo:
        for s in sp.sympify(todo.pop()).free_symbols:
            if s in out:
                continue
            out.add(s)
            if s in temps:
                todo.append(temps[s])
    return out


def arm_nodes(clauses, temps, found):
    """The nodes of a γ's arms (through the ``temps``) for which ``found(node)`` holds, each once, in the
    order a depth-first walk meets them; the walk does not enter such a node."""
    seen: set = set()
    todo = [x for x, _ in clauses]
    while todo:
        x = todo.pop()
        if x in seen or not isinstance(x, sp.Basic):
            continue
        seen.add(x)
        if found(x):
            yield x
        elif isinstance(x, sp.Symbol) and x in temps:
            todo.append(temps[x])
        else:
            todo.extend(x.args)

"""Operations that can fail, and the loop-invariant ones among them: what must not run before a loop
that Python would not have run.

Python evaluates a loop body only when the loop runs.  Three things evaluate loop-invariant work
outside the loop, once, and so also when the loop runs zero times: loop-invariant code motion
(:func:`coarsen_nb.phi.tree_passes.hoist_invariants`), the sums hoisted before an iterated loop
(``HoistContext`` in :mod:`coarsen_nb.phi.kernel_builder`), and a closed form, whose lowering computes an
invariant factor of Σ_k once at the root rather than per point of the sum's domain.  For a total
operation that is only a little wasted work.  For one that can fail — ``math.sqrt`` of a negative
number, a division by zero, ``math.exp`` overflowing — it turns a loop that never runs into a
ValueError, ZeroDivisionError or OverflowError that Python never raises.

An operation is *total* here when no value of its operands makes it raise.  (Shape mismatches are
not counted: they fail on the loop's first iteration too, so they are the program's own error.)
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.rules.table import PRIMITIVES


def can_fail(e: ir.Expr) -> bool:
    """Whether the operation at the top of ``e`` (not its operands) can raise for some operand value."""
    if isinstance(e, ir.BinOp):
        if e.op in ("/", "//", "%"):
            return not (isinstance(e.right, ir.Const) and e.right.value != 0)
        if e.op == "**":
            r = e.right
            return not (isinstance(r, ir.Const) and isinstance(r.value, int) and not isinstance(r.value, bool)
                        and r.value >= 0)
        return False
    if isinstance(e, ir.Call):
        # total: the registration's fact (``math.sin`` of inf raises, but an inf is already a result Python
        # would have produced); builtin min/max of one argument reduce an array, and an empty one raises
        p = PRIMITIVES.get(e.func)
        if p is not None and p.one_arg is not None and len(e.args) == 1:
            p = PRIMITIVES[p.one_arg]
        return p is None or not p.total
    if isinstance(e, ir.Index):
        return True         # out of range, when the loop that would have checked it does not run
    return isinstance(e, ir.Update)


def _failing_operands(e: ir.Expr) -> list[ir.Expr]:
    """The operands whose value decides whether ``e`` fails: a divisor, a base, a call's arguments."""
    if isinstance(e, ir.BinOp):
        return [e.right] if e.op in ("/", "//", "%") else [e.left, e.right]
    if isinstance(e, ir.Call):
        return list(e.args)
    if isinstance(e, ir.Index):
        return [e.value, *e.index]
    return []


def cannot_raise(e: ir.Expr, shapes: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether evaluating ``e`` can never raise.  ``shapes`` are names bound to an array's ``.shape``:
    an element of one at a constant position is total (``a.shape[1]``)."""
    if isinstance(e, ir.Index) and isinstance(e.value, ir.Name) and e.value.id in shapes \
            and all(isinstance(i, ir.Const) for i in e.index):
        return True
    if can_fail(e):
        return False
    return all(cannot_raise(c, shapes) for c in ir.children(e))


def fails_invariantly(e: ir.Expr, variant: set[str]) -> bool:
    """Whether ``e``'s operation can fail and its failing operands read names, none of them in
    ``variant``.  Constant operands are left alone (``math.log(2.0 * math.pi)`` is folded, and a
    constant that fails is an error of its own); so are element reads, which a closed form does not
    evaluate outside its domain: an invariant ``x[0]`` over an empty ``x`` is left (an IndexError there
    is the one failure this does not guard)."""
    if isinstance(e, ir.Index) or not can_fail(e):
        return False
    names = [set(ir.names_used(o)) for o in _failing_operands(e)]
    return bool(set().union(*names)) and not any(n & variant for n in names)


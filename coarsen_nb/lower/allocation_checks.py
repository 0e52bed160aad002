"""What stays of an allocation nothing reads: the check of its size, which is the user's error.

``np.zeros(n)`` raises ``ValueError: negative dimensions are not allowed`` for ``n < 0`` whether or not anything
reads the zeros.  Where the generated code needs no array there (a write that fills it whole is its values,
:func:`coarsen_nb.lower.trivial.whole_fills`; an array the user makes and never reads), the dead-code passes
(:func:`coarsen_nb.lower.lir_passes.drop_dead_assignments`, :func:`coarsen_nb.lower.lir_liveness.drop_dead_code`)
drop the allocation and keep this comparison of Python integers in its place: the same error, on the same
line, without the array.  Only allocations the module writer registered get one (:func:`register`: a step of
the user's ``zeros``/``empty``/``ones``/``full`` whose sizes the plan types as integers, so that ``n < 0``
compares numbers, never a tuple); a size that cannot be negative (a shape, ``len``, ``max(0, ...)``, a literal)
needs none.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.lower import trivial
from coarsen_nb.lower.lir import Assign, Attr, BoolOp, Call, Compare, Expr, If, Index, Lit, Name, Raise, Stmt, Tuple
from coarsen_nb.plan import KernelStep, PrimStep, walk_steps

# the array namespace's allocations whose first argument is a shape
_SHAPED = frozenset({"empty", "zeros", "ones", "full"})

NEGATIVE_DIMENSIONS = "negative dimensions are not allowed"     # (NumPy's message, word for word)


def nonnegative_names(plan) -> frozenset[str]:
    """The SSA names of ``plan`` that cannot be negative: ``len(x)``, ``x.shape[i]`` (``i`` a literal), and a
    name an SOI passes one of them on to unchanged (gmm's ``k_count = len(mu)``); a size of one of them
    needs no check."""
    found: set[str] = set()
    shapes: set[str] = set()
    for st in walk_steps(plan.steps):
        e = getattr(st, "expr", None)
        if isinstance(st, PrimStep):
            if isinstance(e, ir.Attr) and e.attr == "shape":
                shapes.add(st.name)
            elif isinstance(e, ir.Call) and e.func == "len" or isinstance(e, ir.Index) \
                    and isinstance(e.value, ir.Name) and e.value.id in shapes \
                    and all(isinstance(i, ir.Const) for i in e.index):
                found.add(st.name)
        elif isinstance(st, KernelStep) and found:
            found.update(out for out, source in trivial.passed_on(st.kernel) if source in found)
    return frozenset(found)


def register(checks: dict, s: Stmt) -> None:
    """Note in ``checks`` (allocation statement -> its check, what the dead-code passes read) the check of the
    allocation ``s``, whose sizes the caller knows are integers; nothing where it needs none."""
    check = size_check(s)
    if check is not None:
        checks[s] = check


def size_check(s: Stmt) -> If | None:
    """``if n < 0: raise ValueError(...)`` for a dropped ``name = xp.zeros(n)`` (each of a shape tuple's sizes
    that may be negative), or None where ``s`` is no such allocation or its sizes cannot be negative."""
    if not isinstance(s, Assign) or not isinstance(s.value, Call) or not s.value.args:
        return None
    func = s.value.func
    if not (isinstance(func, Attr) and isinstance(func.value, Name) and func.value.id == "xp" and func.attr in _SHAPED):
        return None
    shape = s.value.args[0]
    sizes = shape.elts if isinstance(shape, Tuple) else (shape,)
    if isinstance(shape, Tuple) and any(isinstance(d, Tuple) for d in sizes):
        return None
    tests = tuple(Compare("<", d, Lit("0")) for d in sizes if _may_be_negative(d))
    if not tests:
        return None
    test = tests[0] if len(tests) == 1 else BoolOp("or", tests)
    step = s.target.id if isinstance(s.target, Name) else None     # (the error is reported at its line)
    return If(test, (Raise(Call(Name("ValueError"), (Lit(repr(NEGATIVE_DIMENSIONS)),)), step=step),))


def _may_be_negative(d: Expr) -> bool:
    if isinstance(d, Lit):
        return d.code.startswith("-")
    if isinstance(d, Attr) and d.attr in ("shape", "size"):
        return False        # (a shape is a tuple of lengths: no check of its own)
    if isinstance(d, Index) and isinstance(d.value, Attr) and d.value.attr == "shape":
        return False
    if isinstance(d, Call) and isinstance(d.func, Name):
        if d.func.id == "len":
            return False
        if d.func.id == "max" and any(isinstance(a, Lit) and a.code == "0" for a in d.args):
            return False
    return True

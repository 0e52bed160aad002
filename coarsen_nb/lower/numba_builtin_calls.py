"""A numba loop function's calls of Python's ``max``/``min`` of two numbers and ``int`` of a loop counter,
printed without the builtin: Numba compiles each one's overload per process and argument types.

A loop function's trip counts and sizes read ``max(0, n)`` and its tiles ``min(tile + 64, n)``; its scatters
index by ``int(k)``.  Numba implements ``max``/``min`` of numbers by an ``@overload`` whose implementation it
compiles (typing, lowering, an LLVM module) once per process for each pair of argument types, and ``int`` of an
integer likewise: in gmm's cold start ~0.01-0.015 s each, ~0.04 s of its gradient's compile, on top of a
function that needs no call at all.  So, as the loop function is registered (after the analyses that read the
calls: :mod:`coarsen_nb.lower.numba_bounds`' spans and the nests' tests), this pass rewrites

* ``max(a, b)`` to ``b if b > a else a`` and ``min(a, b)`` to ``b if b < a else a``: exactly what Numba's
  implementation computes (``do_minmax``: ``select(b > a, b, a)`` on the unified type, Python's algorithm, the
  first argument kept on a tie or a NaN), so the result is the same number of the same type;
* ``int(k)`` to ``k`` where ``k`` is an integer already: the counter of a ``for k in range(...)`` the function
  assigns nowhere else, or a name every assignment of which is integer arithmetic (:func:`_integer_names`:
  lengths ``x.shape[i]``, ``len(...)``, integer literals, ``+ - * // %`` and ``max``/``min`` of such).

The entry points get the ``int`` part (``numba_tape_finish.finished``, the numba backend's last pass over an
entry's body): their glue indexes by ``y[int(t3)]`` too (brachistochrone, rosenbrock, hookean_spring: ~0.02 s
of their cold compile).  Their ``max(0, n)`` stays: a tape's length ``xp.empty(max(0, n - i_init))`` is what
the tape's tests read (and the conditional would save ~0.02 s more: left).

Only where both arguments are cheap to read twice (names, literals, their arithmetic): an argument that calls
or subscripts stays in the builtin.
"""

from __future__ import annotations

import dataclasses

from coarsen_nb.lower import lir

_CHEAP = (lir.Name, lir.Lit)


def without_builtin_calls(body: tuple, extrema: bool = True) -> tuple:
    """``body`` (a loop function's statements) with the calls above rewritten; ``extrema`` False: the ``int``
    calls only (an entry point's: its ``max(0, n)`` lengths stay as printed, which tests and readers match)."""
    counters = _integer_names(body)

    def visit(node):
        if isinstance(node, lir.Call):
            args = tuple(lir.rewrite(a, visit) for a in node.args)
            if isinstance(node.func, lir.Name) and not node.kwargs:
                extremum = _conditional(node.func.id, args) if extrema else None
                if extremum is not None:
                    return extremum
                if node.func.id == "int" and len(args) == 1 and isinstance(args[0], lir.Name) and \
                        args[0].id in counters:
                    return args[0]
            return dataclasses.replace(node, func=lir.rewrite(node.func, visit), args=tuple(map(_bare, args)),
                                       kwargs=lir.rewrite(node.kwargs, visit))
        if isinstance(node, (lir.Assign, lir.AugAssign, lir.Return, lir.ExprStmt)):
            made = lir.rewrite(node, lambda n: None if n is node else visit(n))
            return _unwrap_value(made)
        return None

    return lir.rewrite(tuple(body), visit)


def _conditional(func: str, args: tuple) -> lir.Expr | None:
    """``max``/``min`` of two cheap arguments as the parenthesized conditional Numba's overload computes."""
    if func not in ("max", "min") or len(args) != 2 or not all(_cheap(_bare(a)) for a in args):
        return None
    a, b = (_bare(x) for x in args)
    test = lir.Compare(">" if func == "max" else "<", b, a)
    return lir.Paren(lir.IfExp(b, test, a))


def _cheap(e: lir.Expr) -> bool:
    if isinstance(e, _CHEAP):
        return True
    if isinstance(e, lir.BinOp) and e.op in ("+", "-", "*"):
        return _cheap(e.left) and _cheap(e.right)
    if isinstance(e, lir.Unary) and e.op == "-":
        return _cheap(e.operand)
    return isinstance(e, lir.Paren) and _cheap(e.inner)


def _bare(e: lir.Expr) -> lir.Expr:
    """A conditional made here without its parentheses (an argument of a call needs none)."""
    return e.inner if isinstance(e, lir.Paren) and isinstance(e.inner, lir.IfExp) else e


def _unwrap_value(s):
    """A statement whose whole value is a conditional made here, without its parentheses."""
    if isinstance(s, (lir.Assign, lir.AugAssign, lir.Return, lir.ExprStmt)) and isinstance(s.value, lir.Paren) \
            and isinstance(s.value.inner, lir.IfExp):
        return dataclasses.replace(s, value=s.value.inner)
    return s


def _range_counters(body: tuple) -> frozenset[str]:
    """The counters of the ``for k in range(...)`` loops of ``body`` that nothing else assigns."""
    counters, assigned = set(), set()
    for s in lir.statements(body):
        if isinstance(s, lir.For) and isinstance(s.target, lir.Name) and isinstance(s.iter, lir.Call) and \
                isinstance(s.iter.func, lir.Name) and s.iter.func.id == "range":
            counters.add(s.target.id)
        elif isinstance(s, (lir.For, lir.Assign, lir.AugAssign)):
            targets = s.target.elts if isinstance(s.target, lir.Tuple) else (s.target,)
            assigned.update(t.id for t in targets if isinstance(t, lir.Name))
    return frozenset(counters - assigned)


_INTEGER_OPS = ("+", "-", "*", "//", "%")


def _integer_names(body: tuple) -> frozenset[str]:
    """The names of ``body`` that hold an integer wherever they are assigned: the range counters above, and the
    names each assignment of which (a plain ``name = value``, none other) is integer arithmetic of lengths,
    literals and such names (the largest such set: names that read each other in a loop count).  A name read
    before its first assignment in program order is not one: a parameter (of any type) or a value from outside."""
    values: dict[str, list] = {}
    other: set[str] = set()
    for s in lir.statements(body):
        other.update(n for n in lir.reads(s) if n not in values)
        if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name):
            values.setdefault(s.target.id, []).append(s.value)
        elif isinstance(s, (lir.Assign, lir.AugAssign, lir.For)):
            targets = s.target.elts if isinstance(s.target, lir.Tuple) else (s.target,)
            other.update(t.id for t in targets if isinstance(t, lir.Name))
    known = set(values) - other
    while True:
        kept = {n for n in known if all(_integer(v, known) for v in values[n])}
        if kept == known:
            return frozenset(known) | _range_counters(body)
        known = kept


def _integer(e: lir.Expr, names) -> bool:
    """``e`` is an integer where the ``names`` are (a length, an integer literal, their arithmetic)."""
    if isinstance(e, lir.Name):
        return e.id in names
    if isinstance(e, lir.Lit):
        return e.code.isdigit()
    if isinstance(e, lir.Paren):
        return _integer(e.inner, names)
    if isinstance(e, lir.Unary):
        return e.op == "-" and _integer(e.operand, names)
    if isinstance(e, lir.BinOp):
        return e.op in _INTEGER_OPS and _integer(e.left, names) and _integer(e.right, names)
    if isinstance(e, lir.IfExp):
        return _integer(e.body, names) and _integer(e.orelse, names)
    if isinstance(e, lir.Index):        # x.shape[i]
        return isinstance(e.value, lir.Attr) and e.value.attr == "shape" and len(e.items) == 1 and \
            _integer(e.items[0], ())
    if isinstance(e, lir.Call) and isinstance(e.func, lir.Name) and not e.kwargs:
        if e.func.id == "len" and len(e.args) == 1:
            return True
        return e.func.id in ("max", "min") and len(e.args) == 2 and all(_integer(a, names) for a in e.args)
    return False

"""Statements moved into the one arm of a later ``if`` that reads what they compute.

A nest function computes every reduction its result names before the scalar tail that combines them.  Where
the tail chooses between two of them by a test (a loop's NaN-skipping extremum, ``if g > m: m = g``, is
γ(red == red, red, red'): the namespace's reduction, and only where it is a NaN the reduction that steps over
NaNs, :func:`coarsen_nb.phi.recurrence_classes.nan_skipping`), the one only the ``else`` reads is better
computed there: on data without a NaN it is never run.  This pass moves a statement (a loop, an ``if``, an
assignment) to the start of the arm of the first later statement that mentions what it binds, where that
later statement is an ``if`` whose test and other arm do not, nothing after it does, and nothing between them
rebinds what the moved statement reads.  It moves only statements that bind names and store into no array
and call nothing but the math module, the extremum intrinsics and a few builtins: moving them changes when
they run, never what anything computes.
"""

from __future__ import annotations

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_exprs import Attr, Call, Name, names_in, walk

#: functions a moved statement may call: pure, and cheap to reason about
_PURE_CALLS = frozenset({"_ieee_maximum", "_ieee_minimum", "abs", "float", "int", "max", "min", "range", "len"})


def sink_into_branches(body: list) -> list:
    """``body`` (a flat list of statements) with each movable statement moved into the ``if`` arm that alone
    reads it (see the module docstring); moved statements are then tried again inside that arm."""
    body = list(body)
    i = len(body) - 1
    while i >= 0:
        target = _sink_target(body, i)
        if target is not None:
            j, arm = target
            s = body.pop(i)
            branch = body[j - 1]
            arms = [list(branch.body), list(branch.orelse)]
            arms[arm] = sink_into_branches([s, *arms[arm]])
            body[j - 1] = lir.If(branch.test, tuple(arms[0]), tuple(arms[1]), branch.exceptional)
        i -= 1
    return body


def _sink_target(body: list, i: int) -> tuple[int, int] | None:
    """(the index of the ``if`` statement ``body[i]`` can move into, which arm), or None."""
    s = body[i]
    if not _movable(s):
        return None
    bound = _bound(s)
    read = {n for t in lir.statements((s,)) for n in lir.reads(t)} - bound
    for j in range(i + 1, len(body)):
        later = body[j]
        if not bound & _mentioned([later]):
            if _bound(later) & read:
                return None     # what s reads is rebound before its readers: s must run where it is
            continue
        if not isinstance(later, lir.If) or not later.orelse or bound & set(names_in(later.test)):
            return None
        reading = [k for k, arm in enumerate((later.body, later.orelse)) if bound & _mentioned(arm)]
        if len(reading) != 1:
            return None
        same = _same_tests(body, j, bound)
        if _read_outside(body[j + 1:], bound, same, reading[0]):
            return None
        return j, reading[0]
    return None


def _same_tests(body: list, j: int, bound: set[str]) -> frozenset:
    """The tests that take the same arm as ``body[j]`` 's wherever they are evaluated after it: its test, and
    names bound once (in the whole function) to the very expression its test name was bound to, where that
    expression reads nothing rebound after ``body[j]`` (nor anything in ``bound``)."""
    test = body[j].test
    if not isinstance(test, Name):
        return frozenset()
    assigned = [t for t in lir.statements(body) if isinstance(t, lir.Assign) and isinstance(t.target, Name)]
    defining = [t.value for t in assigned if t.target.id == test.id]
    if len(defining) != 1:
        return frozenset()
    value = defining[0]
    rebound = {n for t in lir.statements(body[j + 1:]) for n in t.targets()}
    if set(names_in(value)) & (rebound | bound):
        return frozenset()
    names = [t.target.id for t in assigned if t.value == value]
    return frozenset(n for n in names if sum(t.target.id == n for t in assigned) == 1)


def _read_outside(body, bound: set[str], same: frozenset, arm: int) -> bool:
    """Whether a statement of ``body`` mentions a name of ``bound`` other than in the arm ``arm`` of an ``if``
    whose test is a name of ``same``."""
    for s in body:
        if isinstance(s, lir.If) and isinstance(s.test, Name) and s.test.id in same:
            if bound & _mentioned(s.blocks()[1 - arm] if len(s.blocks()) == 2 else ()):
                return True
            continue
        if bound & {*lir.reads(s), *s.targets()}:
            return True
        if any(_read_outside(block, bound, same, arm) for block in s.blocks()):
            return True
    return False


def _movable(s: lir.Stmt) -> bool:
    """Whether ``s`` and every statement inside it only binds names and calls nothing with an effect."""
    for t in lir.statements((s,)):
        if isinstance(t, lir.Assign):
            if not isinstance(t.target, Name):
                return False
        elif not isinstance(t, (lir.For, lir.If, lir.Break, lir.Pass)):
            return False
        for e in t.exprs():
            for node in walk(e):
                if isinstance(node, Call) and not _pure(node.func):
                    return False
    return True


def _pure(func) -> bool:
    if isinstance(func, Name):
        return func.id in _PURE_CALLS
    return isinstance(func, Attr) and isinstance(func.value, Name) and func.value.id == "math"


def _bound(s: lir.Stmt) -> set[str]:
    return {n for t in lir.statements((s,)) for n in t.targets()}


def _mentioned(body) -> set[str]:
    return {n for t in lir.statements(body) for n in (*lir.reads(t), *t.targets())}

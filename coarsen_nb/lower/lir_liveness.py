"""Dead code by liveness over a generated function's records: what no later statement can read, along the
paths control takes.

:func:`coarsen_nb.lower.lir_passes.drop_dead_assignments` drops a name that nothing in the function reads.
That misses what only the *earlier* part of a function reads.  A gradient function replays each iterated
loop forward (to count its trips and store its tape), then runs the reverse sweep, which replays every
iteration again and reloads what it needs.  Whatever the forward replay computes for the *value* (a Monte
Carlo option's payoff sum, the tape its inner loop stores that the reverse sweep allocates and stores
afresh) is read by the forward replay alone: a cycle of assignments that feeds only itself, which a count
of mentions never finds dead.  Here the live names are computed backwards through the structured body,
loops to a fixed point, ``break`` to what is live after its loop, so such a cycle dies with everything it
alone reads: barrier_option's gradient evaluates ``exp`` two times per step, not three.

What is kept, read or not (the pass knows nothing of the values): a statement that writes into an array
(``x[i] = v``, ``x += v`` on a name that may hold an array), except into a *private array*, a name
assigned only fresh arrays (``xp.empty(...)``, ``xp.zeros(...)``) and used only subscripted, whose stores
are dead where no load of it can follow; a call statement; a call to an ``impure`` function (one that
writes into its arguments); a loop's test, ``break``, ``return``, ``raise``; a ``while`` loop (its trips).
A ``for`` loop over a range whose body is emptied goes; so does an ``if`` whose arms are.  A parallel
assignment ``a, b = c, d`` keeps the elements whose names are live.
"""

from __future__ import annotations

from coarsen_nb.lower.helpers import Helper
from coarsen_nb.lower.lir import (
    Assign,
    Attr,
    AugAssign,
    Break,
    Call,
    Comment,
    For,
    FunctionDef,
    If,
    Index,
    Lit,
    Name,
    Pass,
    Raise,
    Return,
    Stmt,
    Tuple,
    While,
    names_in,
    print_body,
    reads,
    statements,
    verify,
    walk,
)
from coarsen_nb.lower.lir_passes import is_number_literal

_FRESH = frozenset({"empty", "zeros", "ones", "full", "empty_like", "zeros_like"})


def drop_dead_code(body: tuple, impure=frozenset(), narrow=None, checks=None) -> tuple:
    """``body`` without the statements whose results no later statement can read (module docstring).

    ``narrow(call, keep, names)``, where given: a call computing only the results at positions ``keep`` of
    ``names = call(...)`` (a copy of the called function with the rest dropped), or None; asked where a
    tuple assignment from a call has results nothing reads (asian_option's forward replay: the scan's
    function returns the payoff and the next path index, and only the index is read).  ``checks``: allocation
    statement -> the check of its sizes that takes its place where it is dropped
    (:mod:`coarsen_nb.lower.allocation_checks`)."""
    verify(body, structured=True)
    facts = _Facts(body, impure)
    facts.narrow = narrow
    facts.checks = checks or {}
    out, _ = _block(body, frozenset(), frozenset(), facts)
    return out


class _Facts:
    """What holds of a name throughout the function: which arrays are private, which names only ever hold
    Python numbers (an ``n += 1`` on those rebinds, it writes into nothing)."""

    def __init__(self, body: tuple, impure):
        self.impure = frozenset(impure)
        self.narrow = None
        self.checks: dict = {}
        assigned: dict[str, list] = {}
        bare: set[str] = set()          # names read other than as the array of a subscript
        for s in statements(body):
            if isinstance(s, Assign) and isinstance(s.target, Name):
                assigned.setdefault(s.target.id, []).append(s.value)
            elif isinstance(s, (Assign, For)) and isinstance(getattr(s, "target", None), Tuple):
                for e in s.target.elts:
                    for n in names_in(e):
                        assigned.setdefault(n, []).append(None)
            elif isinstance(s, For):
                for n in names_in(s.target):
                    assigned.setdefault(n, []).append(None)
            for e in _loads(s):
                bare |= _bare_reads(e)
        self.private = {n for n, values in assigned.items()
                        if n not in bare and all(_fresh_array(v) for v in values)}
        self.numbers = {n for n, values in assigned.items()
                        if all(isinstance(v, Lit) and is_number_literal(v.code) for v in values)}

    def pure(self, e) -> bool:
        return not any(isinstance(x, Call) and isinstance(x.func, Name) and x.func.id in self.impure
                       for x in walk(e))


def _loads(s: Stmt) -> list:
    """The expressions ``s`` evaluates, a store's array counted as a subscript (``x[i] = v``: ``x[i]``)."""
    if isinstance(s, Assign):
        return [s.value] + ([s.target] if not isinstance(s.target, (Name, Tuple)) else [])
    return list(s.exprs())


def _bare_reads(e) -> set[str]:
    """The names ``e`` reads other than as the array of a subscript (``x`` in ``x[i]`` is not bare)."""
    subscripted = {id(x.value) for x in walk(e) if isinstance(x, Index) and isinstance(x.value, Name)}
    return {x.id for x in walk(e) if isinstance(x, Name) and id(x) not in subscripted}


def _fresh_array(value) -> bool:
    return isinstance(value, Call) and isinstance(value.func, Attr) and isinstance(value.func.value, Name) \
        and value.func.value.id == "xp" and value.func.attr in _FRESH


def _block(body, live: frozenset, at_break: frozenset, facts: _Facts) -> tuple[tuple, frozenset]:
    """``body`` with its dead statements dropped, given the names ``live`` after it and those live after the
    innermost loop around it (``at_break``); and the names live before it."""
    out: list[Stmt] = []
    for s in reversed(body):
        kept, live = _statement(s, live, at_break, facts)
        out.extend(reversed(kept))
    out.reverse()
    return tuple(out), live


def _statement(s: Stmt, live: frozenset, at_break: frozenset, facts: _Facts) -> tuple[list, frozenset]:
    """(what stays of ``s``, the names live before it), given those live after it."""
    if isinstance(s, Assign):
        return _assign(s, live, facts)
    if isinstance(s, AugAssign):
        target = s.target
        if isinstance(target, Name) and target.id not in live and target.id in facts.numbers and facts.pure(s.value):
            return [], live
        if isinstance(target, Index) and isinstance(target.value, Name) and target.value.id in facts.private \
                and target.value.id not in live and facts.pure(s.value):
            return [], live
        return [s], live | set(reads(s))
    if isinstance(s, Break):
        return [s], at_break
    if isinstance(s, (Return, Raise)):
        return [s], frozenset(reads(s))
    if isinstance(s, If):
        body, live_body = _block(s.body, live, at_break, facts)
        orelse, live_else = _block(s.orelse, live, at_break, facts)
        if not _does_anything(body) and not _does_anything(orelse) and facts.pure(s.test) \
                and not any(isinstance(x, Call) for x in walk(s.test)):
            return [], live
        orelse = orelse or ((Pass(),) if s.orelse else ())
        return [If(s.test, body or (Pass(),), orelse, s.exceptional)], live_body | live_else | set(reads(s))
    if isinstance(s, While):
        head = live | set(reads(s))
        while True:
            body, entry = _block(s.body, head, live, facts)
            grown = head | entry
            if grown == head:
                break
            head = grown
        return [While(s.test, body or (Pass(),))], head
    if isinstance(s, For):
        bound = set(names_in(s.target))
        head = live
        while True:
            body, entry = _block(s.body, head, live, facts)
            grown = head | (entry - bound)
            if grown == head:
                break
            head = grown
        if not _does_anything(body) and _is_range(s.iter):
            return [], live
        return [For(s.target, s.iter, body or (Pass(),))], head | set(reads(s))
    return [s], live | set(reads(s))        # a call statement, del, a comment, a nested function


def _assign(s: Assign, live: frozenset, facts: _Facts) -> tuple[list, frozenset]:
    target, value = s.target, s.value
    if isinstance(target, Name):
        if target.id not in live and facts.pure(value):
            check = facts.checks.get(s)
            return ([check], live | set(reads(check))) if check is not None else ([], live)
        return [s], (live - {target.id}) | set(names_in(value))
    if isinstance(target, Tuple) and all(isinstance(e, Name) for e in target.elts):
        names = [e.id for e in target.elts]
        if isinstance(value, Tuple) and len(value.elts) == len(names):
            keep = [k for k, n in enumerate(names) if n in live or not facts.pure(value.elts[k])]
            if not keep:
                return [], live
            if len(keep) < len(names):
                if len(keep) == 1:
                    s = Assign(target.elts[keep[0]], value.elts[keep[0]])
                else:
                    s = Assign(Tuple(tuple(target.elts[k] for k in keep), bare=target.bare),
                               Tuple(tuple(value.elts[k] for k in keep), bare=value.bare))
            return [s], (live - set(names)) | {n for k in keep for n in names_in(value.elts[k])}
        if not set(names) & live and facts.pure(value):
            return [], live
        if facts.narrow is not None and isinstance(value, Call) and facts.pure(value) and set(names) - live:
            keep = tuple(k for k, n in enumerate(names) if n in live)
            call = facts.narrow(value, keep, tuple(names))
            if call is not None:
                kept = tuple(target.elts[k] for k in keep)
                s = Assign(kept[0] if len(kept) == 1 else Tuple(kept, bare=True), call)
                value = call
        return [s], (live - set(names)) | set(names_in(value))
    if isinstance(target, Index) and isinstance(target.value, Name) and target.value.id in facts.private \
            and target.value.id not in live and facts.pure(value):
        return [], live
    return [s], live | set(reads(s))


def _does_anything(body) -> bool:
    return any(not isinstance(s, (Pass, Comment)) for s in body)


def _is_range(e) -> bool:
    return isinstance(e, Call) and isinstance(e.func, Name) and e.func.id == "range"


def narrowed_call(table: dict, made: dict, call: Call, keep: tuple[int, ...], names: tuple[str, ...],
                  impure=frozenset()) -> Call | None:
    """A call of a copy of the function ``call`` calls that returns only the results at ``keep`` (its other
    work dropped by :func:`drop_dead_code`, and the parameters it no longer reads), or None where that
    function is not one the back half wrote as records (``table``: the module's helpers), writes into its
    arguments, or returns other than once, at its end, a tuple of ``len(names)``.  The copy goes to
    ``made`` (name -> (its :class:`~coarsen_nb.lower.helpers.Helper`, the original's name)), to be defined
    where the final body calls it; it is named for what it returns: ``_soi4_fwd_scan_p_next``."""
    helper = table.get(call.func.id) if isinstance(call.func, Name) else None
    function = getattr(helper, "record", None)
    if not isinstance(function, FunctionDef) or helper.writes or len(call.args) != len(function.params):
        return None
    *rest, last = function.body
    if not isinstance(last, Return) or not isinstance(last.value, Tuple) or len(last.value.elts) != len(names) \
            or any(isinstance(s, Return) for s in statements(rest)):
        return None
    name = f"{function.name}_{'_'.join(names[k] for k in keep)}"
    if name not in made:        # (the liveness pass asks again at each step of a loop's fixed point)
        results = tuple(last.value.elts[k] for k in keep)
        returned = Return(results[0] if len(results) == 1 else Tuple(results, bare=True))
        body = drop_dead_code((*rest, returned), impure)
        read = {n for s in statements(body) for n in reads(s)}
        params = tuple(p for p in function.params if p in read)
        what = function.docstring.partition(":")[0] if ":" in function.docstring else function.docstring
        copy = FunctionDef(name, params, body, f"{what.rstrip('.')}: only {', '.join(names[k] for k in keep)}.")
        source = "\n".join(print_body((copy,), 0)) + "\n"
        made[name] = (Helper(name, source, frozenset(read - set(params)), record=copy), function.name)
    kept = set(made[name][0].record.params)
    args = tuple(a for p, a in zip(function.params, call.args, strict=True) if p in kept)
    return Call(Name(name), args)

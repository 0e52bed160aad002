"""Passes over the lowered IR (:mod:`coarsen_nb.lower.lir`): which names of a generated function are live.
The module writer runs them on every function's body of records (``ModuleWriter._finish``); they replaced
text passes over printed lines (regexes), kept as the tests' reference in tests/liveness_text.py.

* :func:`drop_dead_assignments` — a ``name = value`` whose name nothing else reads is dropped (every
  assignment the printers make is pure), repeated until nothing changes; so is an assignment inside a
  loop whose name only the loop's own assignments of it read, when nothing after the loop or in a loop
  around it can see it (the reverse sweep's replay recomputes the next state, which only the forward loop
  reads).
* :func:`free_dead_names` — ``del`` after the last top-level statement that reads a top-level temporary, so
  NumPy reuses its buffer for the next one (a name read inside a loop lives until the loop ends; a name
  assigned only inside a block is left to the return; a Python number is not worth a ``del``).
* :func:`names_called` / :func:`modules_used` — the helper functions a body calls and the modules it reads
  (``xp``, ``math``): what a generated module must define and import, known without reading its text.

Each takes and returns a tuple of statements; what holds after it is :func:`coarsen_nb.lower.lir.verify`.
A :class:`~coarsen_nb.lower.lir.Text` line or :class:`~coarsen_nb.lower.lir.Raw` expression has unknown
reads: the passes refuse a body that holds one (the text passes still serve such bodies).
"""

from __future__ import annotations

from collections import Counter

from coarsen_nb.lower.lir import (
    Assign,
    Attr,
    AugAssign,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Expr,
    For,
    Free,
    If,
    IfExp,
    Index,
    Lit,
    Name,
    Pass,
    Return,
    Stmt,
    Tuple,
    Unary,
    While,
    names_in,
    reads,
    statements,
    verify,
    walk,
)


def occurrences(s: Stmt) -> list[str]:
    """Every name statement ``s`` mentions itself — reads, bound targets, ``del`` s — in print order."""
    if isinstance(s, (Assign, AugAssign)):
        return names_in(s.target) + names_in(s.value)
    if isinstance(s, For):
        return names_in(s.target) + names_in(s.iter)
    if isinstance(s, Free):
        return list(s.names)
    return reads(s)


def _mentions(body) -> Counter:
    return Counter(n for s in statements(body) for n in occurrences(s))


def _own_mentions(s: Assign, name: str) -> int:
    """How often ``name = value`` (or ``a, name = value``) mentions ``name``: the target, and reads of it in
    ``value``."""
    return 1 + names_in(s.value).count(name)


def _assigned(s: Stmt, impure=frozenset()) -> tuple[str, ...]:
    """The names ``s`` assigns where it is an assignment that may be dropped: ``name = value`` or
    ``a, b = value`` (every element a name), and ``value`` calls none of the functions ``impure`` (those
    that write into their arguments: a loop function that also scatters in place); else ()."""
    if not isinstance(s, Assign):
        return ()
    if isinstance(s.target, Name):
        names: tuple[str, ...] = (s.target.id,)
    elif isinstance(s.target, Tuple) and s.target.elts and all(isinstance(e, Name) for e in s.target.elts):
        names = tuple(e.id for e in s.target.elts)
    else:
        return ()
    if impure and any(isinstance(e, Call) and isinstance(e.func, Name) and e.func.id in impure
                      for e in walk(s.value)):
        return ()
    return names


def _is_name_assign(s: Stmt) -> bool:
    return isinstance(s, Assign) and isinstance(s.target, Name)


def drop_dead_assignments(body: tuple, impure=frozenset(), checks=None) -> tuple:
    """``body`` without the assignments nothing reads (see the module docstring); ``impure``: the functions
    whose calls are kept, read or not (they write into their arguments); ``checks``: allocation statement ->
    the check of its sizes put in its place where it is dropped (:mod:`coarsen_nb.lower.allocation_checks`)."""
    verify(body, structured=True)
    while True:
        mentions = _mentions(body)
        own: Counter = Counter()
        for s in statements(body):
            for n in _assigned(s, impure):
                own[n] += _own_mentions(s, n)
        dead = {n for n, c in own.items() if mentions[n] == c}
        dead_ids = {id(s) for s in statements(body) if (names := _assigned(s, impure)) and set(names) <= dead}
        dead_ids |= _dead_in_loops(body, impure=impure)
        if not dead_ids:
            return body
        kept = {id(s): checks[s] for s in statements(body) if id(s) in dead_ids and s in (checks or {})}
        body = without(body, dead_ids, kept)


def _dead_in_loops(body: tuple, around: Counter | None = None, after: Counter | None = None,
                   impure=frozenset()) -> set[int]:
    """The ids of assignments inside a loop of ``body`` that nothing can read once the loop has assigned
    them: nothing printed after the loop (``after``: the mentions of the rest of the function), no loop
    around it (``around``: the mentions of the loops around ``body``, whose later iterations run everything
    in it again), only the loop's own assignments of the name.  The mentions of what follows each loop are
    counted once, backwards, not again for each loop (that was quadratic in the function's length)."""
    around, after = around or Counter(), after or Counter()
    following: dict[int, Counter] = {}      # position of a loop or an if -> the mentions of what follows it
    acc = Counter(after)
    for k in range(len(body) - 1, -1, -1):
        if isinstance(body[k], (For, While, If)):
            following[k] = Counter(acc)
        acc.update(_mentions((body[k],)))
    dead: set[int] = set()
    for k, s in enumerate(body):
        if isinstance(s, (For, While)):
            rest = following[k]
            seen = rest + around
            inside = _mentions(s.body)
            own: Counter = Counter()
            for t in statements(s.body):
                for n in _assigned(t, impure):
                    own[n] += _own_mentions(t, n)
            for t in statements(s.body):
                names = _assigned(t, impure)
                if names and all(not seen[n] and inside[n] == own[n] for n in names):
                    dead.add(id(t))
            dead |= _dead_in_loops(s.body, around + _mentions((s,)), rest, impure)
        elif isinstance(s, If):
            # (the else arm counts as after the then arm, as in the text: it cannot run after it, but
            # the pass need not be sharper than the text one it replaces)
            dead |= _dead_in_loops(s.body, around, _mentions(s.orelse) + following[k], impure)
            dead |= _dead_in_loops(s.orelse, around, following[k], impure)
    return dead


def without(body: tuple, dead: set[int], replaced=None) -> tuple:
    """``body`` without the statements whose ``id`` is in ``dead`` (an emptied ``else`` keeps a ``pass``), each
    replaced by ``replaced[id]`` where that is given (a dropped allocation's check of its sizes)."""
    out = []
    replaced = replaced or {}
    for s in body:
        if id(s) in dead:
            if id(s) in replaced:
                out.append(replaced[id(s)])
            continue
        if isinstance(s, If):
            # an else whose statements all went stays, with ``pass`` (the arms' comments say what it was)
            orelse = without(s.orelse, dead, replaced) or ((Pass(),) if s.orelse else ())
            s = If(s.test, without(s.body, dead, replaced), orelse, s.exceptional)
        elif isinstance(s, For):
            s = For(s.target, s.iter, without(s.body, dead, replaced))
        elif isinstance(s, While):
            s = While(s.test, without(s.body, dead, replaced))
        out.append(s)
    return tuple(out)


_NUMBER_CALLS = frozenset({"max", "min", "int", "len", "float", "bool"})


def _is_python_number(e: Expr) -> bool:
    """Whether ``e`` computes a Python number (a literal, a size ``x.shape[0]``, a trip count ``max(0, n)``,
    ``math``): nothing to free."""
    if isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, Lit):
        e = e.operand
    if isinstance(e, Lit):
        return e.code in ("True", "False") or is_number_literal(e.code)
    if isinstance(e, Index) and isinstance(e.value, Attr) and e.value.attr == "shape" and \
            len(e.items) == 1 and isinstance(e.items[0], Lit) and e.items[0].code.isdigit():
        return True
    while True:                 # the expression the printed e starts with
        if isinstance(e, (BinOp, Compare)):
            e = e.left
        elif isinstance(e, BoolOp):
            e = e.values[0]
        elif isinstance(e, IfExp):
            e = e.body
        elif isinstance(e, Index):
            e = e.value
        elif isinstance(e, Attr):
            if isinstance(e.value, Name) and e.value.id == "math":
                return True
            e = e.value
        elif isinstance(e, Call):
            if isinstance(e.func, Name) and e.func.id in _NUMBER_CALLS:
                return True
            e = e.func
        else:
            return False


def is_number_literal(code: str) -> bool:
    try:
        float(code)
    except ValueError:
        return False
    return True


def free_dead_names(body: tuple, keep=()) -> tuple:
    """``body`` (a function's) with :class:`~coarsen_nb.lower.lir.Free` after the last top-level reader
    of each top-level temporary; ``keep``: names never freed (the parameters)."""
    verify(body, structured=True)
    assigned, numbers = set(), set()
    for s in body:
        if _is_name_assign(s):
            (numbers if _is_python_number(s.value) else assigned).add(s.target.id)
    assigned -= numbers | set(keep)
    last: dict[str, int] = {}
    order: dict[int, list[str]] = {}            # statement -> names in the order it mentions them
    for i, s in enumerate(body):
        mentioned = [n for t in statements((s,)) for n in occurrences(t)]
        order[i] = mentioned
        for name in mentioned:
            if name in assigned:
                last[name] = i
    frees: dict[int, list[str]] = {}
    for name, i in last.items():
        if i + 1 < len(body) and not isinstance(body[i + 1], Return):    # (return frees them)
            frees.setdefault(i, []).append(name)
    out: list[Stmt] = []
    for i, s in enumerate(body):
        out.append(s)
        if i in frees:
            out.append(Free(tuple(sorted(frees[i], key=lambda n: (order[i].index(n), n)))))
    return tuple(out)


def names_called(body) -> set[str]:
    """The names ``body`` calls as functions (``_take(...)``: a helper the module must define)."""
    return {e.func.id for s in statements(body) for x in s.exprs() for e in walk(x)
            if isinstance(e, Call) and isinstance(e.func, Name)}


def modules_used(body, modules=("xp", "math")) -> set[str]:
    """Which of ``modules`` ``body`` reads an attribute of (``xp.sum``, ``math.exp``): the imports it needs."""
    return {e.value.id for s in statements(body) for x in s.exprs() for e in walk(x)
            if isinstance(e, Attr) and isinstance(e.value, Name) and e.value.id in modules}

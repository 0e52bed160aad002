"""A numba function's tapes made final, after the writer has printed it (:func:`finished`).

The tape printer (:mod:`coarsen_nb.lower.numba_tape`) gives each bounded loop one array per state and per
kept value, allocated before the loop, stored by the forward sweep and loaded by the reverse one; it cannot
know, while it prints, which loads the writer's dead-assignment pass will drop, nor which loops sit inside
others.  So these passes run over the whole function's records once it is printed: the arrays no reverse
sweep reads dropped (:func:`drop_unread`), the rest of each loop allocated as one block per dtype
(:func:`packed`: glibc's heap keeps its pages between calls), an inner loop's block allocated once before the
loops around it (:mod:`coarsen_nb.lower.numba_tape_hoist`), and the adjoints the reverse sweep carries
assigned their first addend (:mod:`coarsen_nb.lower.numba_carried_adjoints`).  Only the numba backend runs
them (``Backend.load_tape``: the module writer calls ``tape.finished``).
"""

from __future__ import annotations

from collections import Counter

from coarsen_nb.lower import lir, lir_passes
from coarsen_nb.lower.numba_builtin_calls import without_builtin_calls
from coarsen_nb.lower.numba_carried_adjoints import assigned_first
from coarsen_nb.lower.numba_tape_hoist import hoisted


def drop_unread(body: tuple) -> tuple:
    """``body`` without the tape arrays no reverse sweep reads: their allocation and their stores.

    The reverse sweep loads every state scalar (:meth:`ArrayTape.read`) and the writer's pass drops the
    loads nothing reads (a loop counter the body does not use, an accumulator no derivative needs:
    the logistic map's ``acc``); the arrays those loads read are then written and never read.  An array
    counts as unread when its name is mentioned only by its own allocation and by stores into it."""
    mentions = Counter(n for s in lir.statements(body) for n in lir_passes.occurrences(s))
    own: Counter = Counter()
    for s in lir.statements(body):
        if isinstance(s, lir.Assign) and _tape_array(s.target):
            own[s.target.id] += 1
        elif isinstance(s, lir.Assign) and isinstance(s.target, lir.Index) and _tape_array(s.target.value):
            own[s.target.value.id] += 1
    unread = {n for n, c in own.items() if mentions[n] == c}
    if not unread:
        return body
    dead = {id(s) for s in lir.statements(body) if isinstance(s, lir.Assign)
            and (_tape_array(s.target) and s.target.id in unread
                 or isinstance(s.target, lir.Index) and _tape_array(s.target.value) and s.target.value.id in unread)}
    return lir_passes.without(body, dead)     # (the dead-assignment pass's own removal)


def finished(body: tuple) -> tuple:
    """A function's body with its tapes final: the arrays nothing reads dropped (:func:`drop_unread`),
    the rest packed one block per loop and dtype (:func:`packed`), an inner loop's allocated once before
    the loops around it (:func:`~coarsen_nb.lower.numba_tape_hoist.hoisted`); the adjoints the reverse sweep
    carries from one iteration to the one before assigned their first addend, not zeroed and added to
    (:func:`coarsen_nb.lower.numba_carried_adjoints.assigned_first`).  Last, as in the loop functions, ``int`` of an
    integer without Numba's per-process overload (:func:`coarsen_nb.lower.numba_builtin_calls.without_builtin_calls`:
    an entry point's glue indexes by ``int(t3)`` too)."""
    return without_builtin_calls(hoisted(packed(drop_unread(assigned_first(body)))), extrema=False)


def packed(body: tuple) -> tuple:
    """``body`` with each loop's tape arrays of one dtype allocated as one block, each array a row of it.

    Why: memory.  Each array is a fresh allocation of a few hundred kB per call (10⁵ iterations), freed
    at the end of the call.  glibc's ``malloc`` serves the first from ``mmap``, then raises its threshold
    to that size, so later ones come from the heap — but a ``free`` trims the heap's top back to the
    system once more than twice that threshold is free.  Three arrays of 800 kB free 2.4 MB against a
    1.6 MB trim threshold: every call gets its pages from the kernel again (554 page faults a call on
    the IIR filter of ``benchmarks/scalar_loops``, most of its gradient's time).  One block of 2.4 MB
    raises the thresholds to its own size, and the heap keeps its pages between calls.  The rows keep
    the arrays' names and their contiguous layout, so the loops that store and load them are unchanged:
    ``_tape_line96_float64 = xp.empty((3, n), dtype=xp.float64)``, ``_tape_line96_s_y1 =
    _tape_line96_float64[1]``.  Arrays allocated in one statement list (a loop's :meth:`ArrayTape.start`
    and its kept values) are packed together; a lone array stays as it was."""
    allocations: dict[tuple, list] = {}
    for s in body:
        key = _allocation(s)
        if key is not None:
            allocations.setdefault(key, []).append(s)
    blocks = {id(group[0]): (key, group) for key, group in allocations.items() if len(group) > 1}
    merged = {id(s) for _, group in blocks.values() for s in group[1:]}
    out: list[lir.Stmt] = []
    for s in body:
        if id(s) in blocks:
            out.extend(_block(*blocks[id(s)]))
        elif id(s) in merged:
            continue
        elif isinstance(s, lir.If):
            out.append(lir.If(s.test, packed(s.body), packed(s.orelse), s.exceptional))
        elif isinstance(s, lir.For):
            out.append(lir.For(s.target, s.iter, packed(s.body)))
        elif isinstance(s, lir.While):
            out.append(lir.While(s.test, packed(s.body)))
        else:
            out.append(s)
    return tuple(out)


def _allocation(s: lir.Stmt) -> tuple | None:
    """(the loop's tape name, the dtype, the capacity's text) where ``s`` allocates one of its arrays,
    ``_tape_L_s_x = xp.empty(capacity, dtype=xp.float64)``; else None."""
    if not (isinstance(s, lir.Assign) and _tape_array(s.target) and isinstance(s.value, lir.Call)):
        return None
    call = s.value
    if str(call.func) != "xp.empty" or len(call.args) != 1 or [k for k, _ in call.kwargs] != ["dtype"]:
        return None
    dtype = call.kwargs[0][1]
    if not isinstance(dtype, lir.Attr):
        return None
    return s.target.id[:s.target.id.index("_s_")], dtype.attr, str(call.args[0])


def _block(key: tuple, group: list) -> list[lir.Stmt]:
    """The block of ``group``'s arrays (one row each) and each array bound to its row."""
    tape, dtype, _ = key
    block = lir.Name(f"{tape}_{dtype}")
    first = group[0].value
    shape = lir.Tuple((lir.Lit(str(len(group))), first.args[0]))
    out: list[lir.Stmt] = [lir.Assign(block, lir.Call(first.func, (shape,), first.kwargs))]
    out += [lir.Assign(s.target, lir.Index(block, (lir.Lit(str(j)),))) for j, s in enumerate(group)]
    return out


def _tape_array(e: lir.Expr) -> bool:
    return isinstance(e, lir.Name) and e.id.startswith("_tape_") and "_s_" in e.id

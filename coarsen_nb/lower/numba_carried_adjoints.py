"""A number's adjoint zeroed in a loop body and then added to once: assigned instead (numba backend).

The reverse sweep of a loop run iteration by iteration (:mod:`coarsen_nb.lower.iterated`) hands each
state's adjoint on to the iteration before and starts it again from zero::

    carry = b_y1
    b_y1 = 0.0
    ...
    b_y1 += t7

Without fast-math flags LLVM may not fold ``0.0 + t7`` into ``t7`` (the sum of ``+0.0`` and ``-0.0`` is
``+0.0``), so the zero costs an add on the chain that carries the adjoint from one iteration to the
next, the chain that bounds the sweep: 3-4 % of the Lorenz RK4 gradient (``benchmarks/scalar_loops``).
:func:`assigned_first` writes ``b_y1 = t7`` and drops the zero where that is the same number: the zero
and the ``+=`` are statements of one loop body (or of a block inside one), the ``+=`` is the first
statement after the zero that mentions the name (nested blocks included), its value does not read the
name, and nothing between them leaves the block (``break``, ``return``, ``raise``) or has unknown reads
(a :class:`~coarsen_nb.lower.lir.Text` line).  The one difference is the sign of a zero adjoint.

Only inside loops: there the name is also zeroed before the loop (a float), so Numba types it float64
whatever the added value is (an int literal ``1`` would make a top-level adjoint, a gradient returned to
the user, an int).  Only the numba backend runs it (:func:`coarsen_nb.lower.numba_tape_finish.finished`): the
NumPy backend's modules are unchanged.
"""

from __future__ import annotations

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_passes import occurrences

_ZERO = "0.0"


def assigned_first(body: tuple, in_loop: bool = False) -> tuple:
    """``body`` with each zeroed-then-added number's adjoint in a loop assigned its one addend (module
    docstring); the blocks nested in ``body`` too."""
    out = [_nested(s, in_loop) for s in body]
    if not in_loop:
        return tuple(out)
    dropped: set[int] = set()
    for i, s in enumerate(out):
        name = _zeroed(s)
        if name is None:
            continue
        j = _first_mention(out, i + 1, name)
        if j is None:
            continue
        add = out[j]
        if isinstance(add, lir.AugAssign) and add.op == "+" and isinstance(add.target, lir.Name) \
                and add.target.id == name and name not in lir.names_in(add.value):
            out[j] = lir.Assign(add.target, add.value)
            dropped.add(i)
    return tuple(s for i, s in enumerate(out) if i not in dropped)


def _nested(s: lir.Stmt, in_loop: bool) -> lir.Stmt:
    if isinstance(s, (lir.For, lir.While)):
        return _with_body(s, assigned_first(s.body, True))
    if isinstance(s, lir.If):
        return lir.If(s.test, assigned_first(s.body, in_loop), assigned_first(s.orelse, in_loop), s.exceptional)
    return s


def _with_body(s, body):
    return lir.For(s.target, s.iter, body) if isinstance(s, lir.For) else lir.While(s.test, body)


def _zeroed(s: lir.Stmt) -> str | None:
    """``name`` where ``s`` is ``name = 0.0``."""
    if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and isinstance(s.value, lir.Lit) \
            and s.value.code == _ZERO:
        return s.target.id
    return None


def _first_mention(block: list, start: int, name: str) -> int | None:
    """The index in ``block`` of the first statement from ``start`` on that mentions ``name`` (itself or
    in a nested block), or None where there is none, or where a statement before it leaves the block or
    has reads not known (then nothing is rewritten)."""
    for j in range(start, len(block)):
        inner = list(lir.statements((block[j],)))
        if any(name in occurrences(x) for x in inner):
            return j
        if any(isinstance(x, (lir.Break, lir.Return, lir.Raise, lir.Text)) for x in inner):
            return None
    return None

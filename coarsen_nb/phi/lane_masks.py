"""The inner loops of a batched nest (:mod:`coarsen_nb.phi.batching`) over all lanes, a per-lane exit as a mask.

Once the outer loop's counter is the array of its lanes, an inner loop's state is an array over the lanes.
Where every lane runs the same number of steps (``for t in range(n_steps)`` without ``break``), the loop
runs as written.  Where the exit differs by lane (a ``break`` on a path's value, ``while`` on a lane's
state: its continuation condition is an array), each lane gets a mask and the loop runs until no lane is
left::

    active = (all lanes)                      # a μ: the lanes still running
    while True:
        live = active and c                   # the loop's own header, lane by lane (its ``and`` masked)
        if not any(live): break
        ...body, every lane...
        s = γ(live, s_next, s)                # a lane that left keeps its state: frozen
        active = live

A lane's state stops at the first step whose condition fails, which is its exit value (its η), as the plain
loop leaves it; the steps after compute values for it that the γ discards.  The reverse sweep reads the same
masks back: the adjoint of γ passes a frozen lane's cotangent through unchanged, and the tape holds one array
state per step (the longest lane's count of them), not one per (lane, step) pair.

``active`` makes the exit final: a condition that reads a state shared by the lanes (a ``while`` counter
``k`` run in lockstep) could hold again for a lane that left (``k != m[p]``).  A state that does not differ
by lane (a counter) runs in lockstep; where its exit value is read, a frozen copy per lane gives each lane
its own.  A loop nested in a masked one starts with the enclosing mask as its ``active``, so that it never
runs for a lane that has left (its condition on a frozen state need not ever fail).

A lane that has left still runs the body, on its frozen state and the step's data.  What could fail there
stays iterated (:func:`maskable`, and batching's rule on operations that raise): an index that differs by
lane (other than the lane's own number) could be out of range for it, and an exit value of a header value
(not of a state) is not frozen.  An overflow-only call (``math.exp``) of a lane's value reads
``γ(live, x, 0.0)``: the inf of a step the plain loop never ran would vanish from the value but not from the
adjoint (0 · inf).  Not covered: a product of finite values past 1e308 on a lane that has left (inf in
Python too, where it runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coarsen_nb import ir
from coarsen_nb.phi.gate import Let, Loop


@dataclass(frozen=True)
class Lanes:
    """What widening needs to know about the lanes of one batched loop."""

    deps: set[str]                  # the names whose value differs by lane
    bools: set[str]                 # the names of truth values (a break flag)
    consts: dict[str, ir.Const]     # names bound to a constant before the loop (a flag's ``False``)
    zeros: str                      # a float array of zeros over the lanes
    izeros: Callable[[], str]       # an int one (made on first use)
    fresh: Callable[[str], str]     # a new SSA name


def maskable(loop: Loop, deps: set[str], lane_names: set[str], bools: set[str]) -> bool:
    """Whether ``loop``, whose exit differs by lane, can run masked: no index that differs by lane other
    than the lane's number (``lane_names``: the counter and its copies) in its header or body, and only
    states leave it, none of them a truth value the lanes share (it has no frozen copy).  Loops nested
    in it are checked by the caller (every loop of the region is)."""
    states = {m.name for m in loop.mus}
    for e in loop.etas:
        of = e.value.value.id if isinstance(e.value.value, ir.Name) else None
        if of not in states or (of in bools and of not in deps):
            return False
    return not _lane_index(tuple(loop.header) + tuple(loop.body) + tuple(loop.mus), deps, lane_names)


def _lane_index(nodes, deps: set[str], lane_names: set[str]) -> bool:
    """Whether an index in ``nodes`` (at any depth) has an operand that differs by lane and is not the
    lane's number."""
    def bad(e: ir.Expr) -> bool:
        if isinstance(e, ir.Index):
            used = {u for i in e.index for u in ir.names_used(i)}
            if used & deps - lane_names:
                return True
        return any(bad(c) for c in ir.children(e))

    for n in nodes:
        if isinstance(n, Let):
            if bad(n.value):
                return True
        elif isinstance(n, Loop):
            if _lane_index(tuple(n.mus) + tuple(n.header) + tuple(n.body), deps, lane_names):
                return True
    return False


def widen(nodes, lanes: Lanes, mask: str | None = None) -> list:
    """``nodes`` with each inner loop state that varies by lane starting as an array over the lanes
    (``init + zeros``): a state is then an array on every iteration, its first included, as the
    reverse sweep that reads it back from the tape expects.  A loop whose continuation differs by lane
    runs masked (the module docstring); ``mask`` is the name of the enclosing masked loop's live lanes."""
    out: list = []
    for n in nodes:
        if not isinstance(n, Loop):
            out.append(n)
            continue
        mus = []
        for m in n.mus:
            init = m.value.init
            if m.name in lanes.deps and m.name != n.info.counter and not set(ir.names_used(init)) & lanes.deps:
                wide = lanes.fresh("lane")
                out.append(Let(wide, _lanes_of(init, m.name in lanes.bools, lanes), n.info.line))
                m = Let(m.name, ir.Mu(m.value.loop, ir.Name(wide), m.value.next), m.line)
            mus.append(m)
        n = Loop(n.label, n.info, tuple(mus), n.header, n.cond, n.body, n.etas)
        if n.cond in lanes.deps:
            out += _masked(n, lanes, mask)
        else:
            out.append(Loop(n.label, n.info, n.mus, n.header, n.cond, tuple(widen(n.body, lanes, mask)), n.etas))
    return out


def _lanes_of(init: ir.Expr, truth: bool, lanes: Lanes) -> ir.Expr:
    """``init`` on every lane: ``init + zeros``, or for a truth value (a constant: :func:`widenable`)
    the comparison of ``zeros`` with 0.0 that gives it."""
    if truth:
        value = _constant(init, lanes.consts).value
        return ir.Compare("==" if value else "!=", ir.Name(lanes.zeros), ir.Const(0.0))
    return ir.BinOp("+", init, ir.Name(lanes.zeros))


def _constant(e: ir.Expr, consts: dict[str, ir.Const]) -> ir.Const | None:
    if isinstance(e, ir.Name):
        return consts.get(e.id)
    return e if isinstance(e, ir.Const) else None


def widenable(loop: Loop, lanes: Lanes) -> bool:
    """Whether each state of ``loop`` that differs by lane can start as an array over the lanes: a truth
    value (``found = False``) only from a constant."""
    return all(_constant(m.value.init, lanes.consts) is not None for m in loop.mus
               if m.name in lanes.deps and m.name in lanes.bools and not set(ir.names_used(m.value.init)) & lanes.deps)


def logic_gammas(nodes, deps: set[str], bools: set[str]) -> list:
    """``nodes`` with each γ that picks a truth value per lane (a break flag set in one arm) written as
    ``and``/``or``, which evaluate an operand only on the lanes that need it as γ does: SymPy makes a
    γ of truth values an ITE, which the array code does not lower."""
    out: list = []
    for n in nodes:
        if isinstance(n, Let) and n.name in bools and n.name in deps:
            n = Let(n.name, _as_logic(n.value), n.line)
        elif isinstance(n, Loop):
            n = Loop(n.label, n.info, n.mus, tuple(logic_gammas(n.header, deps, bools)), n.cond,
                     tuple(logic_gammas(n.body, deps, bools)), n.etas)
        out.append(n)
    return out


def _as_logic(e: ir.Expr) -> ir.Expr:
    """A truth value's γ(p, a, b) as ``p and a or not p and b``, constant arms folded."""
    if not isinstance(e, ir.Gamma) or isinstance(e.if_true, ir.Undef) or isinstance(e.if_false, ir.Undef):
        return e
    p, a, b = e.pred, _as_logic(e.if_true), _as_logic(e.if_false)
    if a == ir.Const(True):
        return ir.BoolOp("or", (p, b))
    if a == ir.Const(False):
        return ir.BoolOp("and", (ir.UnaryOp("not", p), b))
    if b == ir.Const(True):
        return ir.BoolOp("or", (ir.UnaryOp("not", p), a))
    if b == ir.Const(False):
        return ir.BoolOp("and", (p, a))
    return ir.BoolOp("or", (ir.BoolOp("and", (p, a)), ir.BoolOp("and", (ir.UnaryOp("not", p), b))))


def _masked(n: Loop, lanes: Lanes, mask: str | None) -> list:
    """The nodes that run ``n`` over the lanes with a mask: the first ``active``, the loop."""
    deps, bools, fresh = lanes.deps, lanes.bools, lanes.fresh
    line = n.info.line
    pre: list = []
    if mask is None:
        first = fresh("all")
        pre.append(Let(first, ir.Compare("==", ir.Name(lanes.zeros), ir.Const(0.0)), line))
    else:
        first = mask
    active, live, more = fresh("active"), fresh("live"), fresh("more")
    used_after = {e.value.value.id for e in n.etas if isinstance(e.value.value, ir.Name)}
    mus = [Let(active, ir.Mu(n.label, ir.Name(first), ir.Name(live)), line)]
    frozen: list = []
    etas = []
    shadow_of: dict[str, str] = {}
    for m in n.mus:
        if m.name in deps and m.name in bools and m.name not in used_after:
            pass    # a lane that left is out for good (``active``): its flags need not keep their value
        elif m.name in deps:
            # a state of its own per lane: frozen where the lane has left
            kept = fresh("frozen")
            keep = ir.Gamma(ir.Name(live), m.value.next, ir.Name(m.name))
            frozen.append(Let(kept, _as_logic(keep) if m.name in bools else keep, line))
            m = Let(m.name, ir.Mu(m.value.loop, m.value.init, ir.Name(kept)), m.line)
        elif m.name in used_after and m.name not in bools:
            # a state run in lockstep (a counter) whose exit value is read: a frozen copy per lane
            copy, kept = fresh("lane"), fresh("frozen")
            wide = fresh("lane")
            pre.append(Let(wide, ir.BinOp("+", m.value.init, ir.Name(lanes.izeros())), line))
            mus.append(Let(copy, ir.Mu(n.label, ir.Name(wide), ir.Name(kept)), line))
            frozen.append(Let(kept, ir.Gamma(ir.Name(live), m.value.next, ir.Name(copy)), line))
            shadow_of[m.name] = copy
        mus.append(m)
    for e in n.etas:
        of = e.value.value.id
        etas.append(Let(e.name, ir.Eta(e.value.loop, ir.Name(shadow_of.get(of, of))), e.line))
    header = _guarded(n.header, active, deps) + [
        Let(live, ir.BoolOp("and", (ir.Name(active), ir.Name(n.cond))), line),
        Let(more, ir.Compare(">", ir.Call("sum", (ir.Name(live),)), ir.Const(0)), line)]
    body = _guarded(widen(n.body, lanes, live), live, deps) + frozen
    return pre + [Loop(n.label, n.info, tuple(mus), tuple(header), more, tuple(body), tuple(etas))]


#: Functions whose only failure is an overflow (Python's OverflowError, NumPy's inf with its warning).
OVERFLOW_ONLY = {"exp", "expm1", "exp2", "sinh", "cosh"}


def _guarded(nodes, mask: str, deps: set[str]) -> list:
    """``nodes`` with the argument of each call that can overflow (``math.exp``) read as ``γ(mask, x, 0.0)``
    where it differs by lane: a lane that has left computes ``exp(0)``, not the overflow of a step the plain
    loop never ran for it, whose inf the γ would discard from the value but whose adjoint, a 0 times inf,
    would be a nan in the gradient."""
    def guard(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Call) and e.func in OVERFLOW_ONLY and len(e.args) == 1 and \
                set(ir.names_used(e.args[0])) & deps:
            return ir.Call(e.func, (ir.Gamma(ir.Name(mask), guard(e.args[0]), ir.Const(0.0)),), e.static)
        return ir.map_children(e, guard)

    out: list = []
    for n in nodes:
        if isinstance(n, Let):
            n = Let(n.name, guard(n.value), n.line)
        elif isinstance(n, Loop):
            n = Loop(n.label, n.info, tuple(Let(m.name, ir.Mu(m.value.loop, m.value.init, guard(m.value.next)), m.line)
                                            for m in n.mus),
                     tuple(_guarded(n.header, mask, deps)), n.cond, tuple(_guarded(n.body, mask, deps)), n.etas)
        out.append(n)
    return out


def lane_copies(nodes, counter: str) -> set[str]:
    """The counter and the names that are copies of it (``p = $k``): the lane's own number."""
    out = {counter}
    for n in nodes:
        if isinstance(n, Let) and isinstance(n.value, ir.Name) and n.value.id in out:
            out.add(n.name)
    return out


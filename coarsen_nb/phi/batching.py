"""Loop interchange of independent outer iterations: a loop nest run once over all its lanes.

A Monte Carlo pricer, a batch of particles, a set of independent fits: users write an outer loop
over paths whose every iteration starts its state afresh, runs an inner loop step by step, and
leaves only a sum behind::

    for p in range(n_paths):                 # independent lanes
        s = s0; alive = 1.0                  # fresh state (invariant: hoisted before the loop)
        for t in range(n_steps):             # an inner recurrence, run step by step
            s = s * math.exp(sigma * z[p, t] - ...)
            if s > barrier:
                alive = 0.0
        total += alive * max(s - s0, 0.0)    # the only value that leaves an iteration

When the inner loop has no closed form, the outer one has none either, and both run iteration by
iteration: n_paths × n_steps interpreted steps, with a tape entry per pair.  Even where the inner
loop has one (a scan, :mod:`coarsen_nb.phi.scans`), a branch on its result can leave the outer loop
iterated: n_paths interpreted iterations of vectorized code.  Here the outer loop is
replaced by its lanes, ``p = arange(start, stop, step)`` as an array: the body's values become arrays
over the lanes (``z[p, t]`` a gather of a column), the inner loop's state becomes an array state (one
tape entry per inner step for all lanes), a branch on a lane's value becomes a γ of arrays (Piecewise,
evaluated masked), and the sum accumulator becomes ``total = init + Σ_p contribution``.

The rewrite is exact: the lanes are independent (no value of one iteration reaches another except
through the sum), so evaluating them together in lockstep computes the same numbers, and the
symbolic derivatives of the rewritten program are the derivatives of the same function.

It applies only where it is needed and sound, checked on the gated tree:

* the outer loop is a counted ``for`` over ``range`` without ``break``/``return``, and the lifter
  left it iterated around an inner loop that is iterated or a scan (:func:`candidates`);
* every μ of it other than the counter is a float sum accumulator, ``acc = acc + e``, read nowhere
  else in the body, and only accumulators leave it (its other ηs are unused);
* the body's branches have only assignments in their arms (they become γs);
* an inner loop whose exit differs by lane (a ``break`` on a path's value, a ``while`` on a lane's
  state) runs under a mask over the lanes (:mod:`coarsen_nb.phi.lane_masks`, whose conditions it
  meets: no index that differs by lane other than the lane's own number, only states leave it);
* every value that differs by lane is a number in one iteration (a row ``for row in X`` is not: its
  reads ``row[j]`` would have to move to the lanes' second axis);
* no operation whose failure Python raises and NumPy turns into nan or inf (``math.sqrt``/``math.log``
  of a negative, a division by zero) reads a value that differs by lane, so the lanes raise where the
  loop raised; an overflow (``math.exp`` of a large value) is the one allowed difference: inf, as NumPy
  gives it, where Python raises OverflowError.
"""

from __future__ import annotations

import itertools

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, defined_names, names_read
from coarsen_nb.phi.lane_masks import OVERFLOW_ONLY, Lanes, lane_copies, logic_gammas, maskable, widen, widenable
from coarsen_nb.phi.partial import can_fail
from coarsen_nb.phi.scans import LinScan
from coarsen_nb.plan import IterStep, KernelStep, Plan, walk_steps


def candidates(plan: Plan) -> set[str]:
    """Labels of the loops the plan runs iteration by iteration around an inner loop that is iterated
    too or lifted as a scan (a state read every step); whether their iterations are independent lanes
    is :func:`batch`'s to check.  (Around an inner loop with another closed form, Σ, Π or a recurrence's
    exit value, the outer iterations already run vectorized code, and those forms are not lowered over
    lanes.)"""
    return {s.label for s in walk_steps(plan.steps) if isinstance(s, IterStep) and any(
        isinstance(t, IterStep) or isinstance(t, KernelStep) and _has_scan(t) for t in walk_steps(s.body))}


def _has_scan(step: KernelStep) -> bool:
    return any(isinstance(e, sp.Basic) and e.atoms(LinScan) for _, e in step.kernel.body)


def batch(g: GatedFunction, labels: set[str], types: dict) -> GatedFunction | None:
    """``g`` with each batchable loop of ``labels`` (at the function's top level) run over its lanes at
    once; None when none of them is batchable.  ``types``: the value types of ``g`` as written."""
    used_after = _reads(g)
    taken = defined_names(g.body) | set(g.params)
    counter = itertools.count(1)

    def fresh(stem: str) -> str:
        while True:
            name = f"${stem}{next(counter)}.1"
            if name not in taken:
                taken.add(name)
                return name

    consts = {n.name: n.value for n in g.body if isinstance(n, Let) and isinstance(n.value, ir.Const)}
    undefined = _undefined(g.body)      # (hoisted out of the loops, as an inlined helper's $ret = undef is)
    changed = False
    body: list = []
    for n in g.body:
        if isinstance(n, Loop) and n.label in labels:
            lanes = _lanes(n, used_after, fresh, types, consts, undefined)
            if lanes is not None:
                body += lanes
                changed = True
                continue
        body.append(n)
    return GatedFunction(g.name, g.params, tuple(body), g.result, g.source, g.words) if changed else None


def _reads(g: GatedFunction) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names_read(g.body) + ir.names_used(g.result):
        counts[name] = counts.get(name, 0) + 1
    return counts


def _lanes(loop: Loop, reads: dict[str, int], fresh, types: dict, consts: dict, undefined: set[str]) -> list | None:
    """The nodes that replace ``loop`` by its lanes, or None when it is not batchable: also when a value
    that differs by lane is an array in one iteration (``for row in X``: indexing the lanes' rows would
    need the axes shifted by one, which this rewrite does not do)."""
    info = loop.info
    if info.kind != "range" or info.early_exit or info.counter is None:
        return None
    counter = info.counter
    mus = {m.name: m.value for m in loop.mus}
    if counter not in mus or len(loop.header) != 1 or not isinstance(loop.header[0], Let):
        return None
    # the body: the counter's increment, the accumulators' updates, the rest
    increment = mus[counter].next
    accumulators: dict[str, tuple[ir.Expr, ir.Expr]] = {}       # μ name -> (init, the contribution e)
    lets = {n.name: n for n in loop.body if isinstance(n, Let)}
    for name, mu in mus.items():
        if name == counter:
            continue
        nxt = lets.get(mu.next.id) if isinstance(mu.next, ir.Name) else None
        e = _added_to(nxt.value, name) if nxt is not None else None
        if e is None:
            return None
        accumulators[name] = (mu.init, e)
    updates = {mu.next.id for name, mu in mus.items() if name != counter}
    if isinstance(increment, ir.Name):
        updates.add(increment.id)
    kept = _branch_free_region((n for n in loop.body if not (isinstance(n, Let) and n.name in updates)), undefined)
    if kept is None:
        return None
    # each accumulator is read only by its update; only the accumulators leave the loop
    inner_reads = names_read(tuple(kept)) + [v for _, e in accumulators.values() for v in ir.names_used(e)]
    if any(name in inner_reads for name in accumulators):
        return None
    etas = {e.name: e.value.value.id if isinstance(e.value.value, ir.Name) else None for e in loop.etas}
    for out, of in etas.items():
        if of not in accumulators and reads.get(out, 0):
            return None
    # the lanes: the counter as an array, the body as it is, the sums after it
    start, stop, step = (x if x is not None else ir.Const(d) for x, d in
                         ((info.start, 0), (info.stop, 0), (info.step, 1)))
    size, zeros = fresh("nlanes"), fresh("zl")
    nodes: list = [Let(counter, ir.Call("lanes", (start, stop, step)), info.line),
                   Let(size, ir.Call("len", (ir.Name(counter),)), info.line),
                   Let(zeros, ir.Call("zeros", (ir.Name(size),)), info.line)]
    deps = _dependent(kept, counter)
    bools = {name for name, t in types.items() if getattr(t, "kind", None) == "bool"}
    made: list[str] = []

    def izeros() -> str:
        if not made:
            made.append(fresh("izl"))
        return made[0]

    lanes = Lanes(deps, bools, consts, zeros, izeros, fresh)
    contributions = [Let(name, e, info.line) for name, (_, e) in accumulators.items()]
    if any(getattr(types.get(name), "ndim", 0) for name in deps) or _counts_differ(kept, deps) or \
            not _keeps_python_errors(kept + contributions, deps) or \
            not all(maskable(n, deps, lane_copies(kept, counter), bools) for n in _loops(kept) if n.cond in deps) or \
            not all(widenable(n, lanes) for n in _loops(kept)):
        return None
    wide = widen(logic_gammas(kept, deps, bools), lanes)
    if made:
        nodes.append(Let(made[0], ir.Call("zeros_like", (ir.Name(counter),)), info.line))
    nodes += wide
    for name, (init, e) in accumulators.items():
        out = next((o for o, of in etas.items() if of == name), None)
        if out is None:
            continue
        part, total = fresh("part"), fresh("sum")
        nodes.append(Let(part, ir.BinOp("+", e, ir.Name(zeros)), info.line))
        nodes.append(Let(total, ir.Call("sum", (ir.Name(part),)), info.line))
        nodes.append(Let(out, ir.BinOp("+", init, ir.Name(total)), info.line))
    return nodes


def _added_to(value: ir.Expr, acc: str) -> ir.Expr | None:
    """``e`` when ``value`` is ``acc + e`` or ``e + acc``, else None."""
    if isinstance(value, ir.BinOp) and value.op == "+":
        if value.left == ir.Name(acc):
            return value.right
        if value.right == ir.Name(acc):
            return value.left
    return None


def _branch_free(node, undefined: set[str]) -> list | None:
    """``node`` with every branch whose arms only assign made into its γs (arm values inlined, so a
    lane evaluates only its own arm's expressions); None when a branch arm holds a loop.  An inner loop
    that may exit early is kept: where its exit differs by lane it runs masked (phi/lane_masks.py).

    A γ operand that names an ``undefined`` value (an inlined helper's ``$ret = undef`` before its early
    ``return``) becomes ``undef`` itself, as the γ of a branch kept whole reads it: φ(a, undef) = a, the
    path that picks it never reads it.  By name, the γ had no SymPy form, stayed an opaque step of the
    lanes, and no printer or derivative rule takes a γ."""
    if isinstance(node, Let):
        return [node]
    if isinstance(node, If):
        arms = {}
        for arm in (node.then, node.orelse):
            for n in arm:
                if not isinstance(n, Let):
                    return None
                arms[n.name] = n.value
        out = []
        for gm in node.gammas:
            out.append(Let(gm.name, _undefined_operands(_inline(gm.value, arms), undefined), gm.line))
        return out
    if isinstance(node, Loop):
        header, body = _branch_free_region(node.header, undefined), _branch_free_region(node.body, undefined)
        if header is None or body is None:
            return None
        return [Loop(node.label, node.info, node.mus, tuple(header), node.cond, tuple(body), node.etas)]
    return None


def _branch_free_region(nodes, undefined: set[str]) -> list | None:
    """The nodes of a region, each through :func:`_branch_free`; None when any of them is None."""
    out: list = []
    for n in nodes:
        flat = _branch_free(n, undefined)
        if flat is None:
            return None
        out += flat
    return out


def _undefined(nodes) -> set[str]:
    """The names the region ``nodes`` binds to ``undef``, at any depth (SSA: one binding each)."""
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, Let) and isinstance(n.value, ir.Undef):
            out.add(n.name)
        elif isinstance(n, If):
            out |= _undefined(n.then) | _undefined(n.orelse)
        elif isinstance(n, Loop):
            out |= _undefined(n.header) | _undefined(n.body)
    return out


def _undefined_operands(e: ir.Expr, undefined: set[str]) -> ir.Expr:
    """γ ``e`` with an operand that names an undefined value replaced by ``undef``."""
    if not isinstance(e, ir.Gamma):
        return e
    pick = [ir.Undef() if isinstance(v, ir.Name) and v.id in undefined else v for v in (e.if_true, e.if_false)]
    return ir.Gamma(e.pred, *pick)


def _inline(e: ir.Expr, values: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with the names of ``values`` replaced by their expressions (recursively)."""
    return ir.rename(e, lambda name: _inline(values[name], values) if name in values else ir.Name(name))


def _dependent(nodes, counter: str) -> set[str]:
    """The names of ``nodes`` whose value depends on the lane counter (their lanes differ)."""
    deps = {counter}

    def walk(region) -> bool:
        grew = False
        for n in region:
            if isinstance(n, Let):
                if n.name not in deps and set(ir.names_used(n.value)) & deps:
                    deps.add(n.name)
                    grew = True
            elif isinstance(n, Loop):
                for m in n.mus:
                    if m.name not in deps and set(ir.names_used(m.value.init) + ir.names_used(m.value.next)) & deps:
                        deps.add(m.name)
                        grew = True
                grew |= walk(n.header) | walk(n.body)
                for e in n.etas:
                    # a lane's exit value is its own where the lanes leave the loop at different steps
                    if e.name not in deps and (set(ir.names_used(e.value)) & deps or n.cond in deps):
                        deps.add(e.name)
                        grew = True
        return grew

    while walk(nodes):
        pass
    return deps


def _counts_differ(nodes, deps: set[str]) -> bool:
    """Whether an inner ``for ... in range(...)`` of ``nodes`` has bounds that differ by lane (``range(i)`` in
    the loop over i): ``range`` takes one integer, and the lanes would run different counts of steps.  (A
    ``while`` or a ``break`` whose exit differs by lane runs masked instead: phi/lane_masks.py.)"""
    return any(n.info.kind == "range" and any(set(ir.names_used(x)) & deps for x in (n.info.start, n.info.stop,
                                                                                     n.info.step) if x is not None)
               for n in _loops(nodes))


def _loops(nodes) -> list[Loop]:
    """Every loop of the region ``nodes``, at any depth (the branches are γs by now)."""
    out: list[Loop] = []
    for n in nodes:
        if isinstance(n, Loop):
            out += [n] + _loops(n.header) + _loops(n.body)
    return out


def _keeps_python_errors(nodes, deps: set[str]) -> bool:
    """Whether the lanes raise where the loop raised: no operation that Python makes raise and NumPy makes
    nan or inf (``math.sqrt`` or ``math.log`` of a negative, a division by zero) has an operand that
    differs by lane.  Overflow is the exception allowed: ``math.exp`` of a large lane value is inf, as
    NumPy computes it, where Python would raise OverflowError."""
    def ok(e: ir.Expr) -> bool:
        if isinstance(e, ir.Call) and e.func in OVERFLOW_ONLY:
            pass
        elif not isinstance(e, ir.Index) and can_fail(e) and set(ir.names_used(_deciding(e))) & deps:
            return False
        return all(ok(c) for c in ir.children(e))

    for n in nodes:
        if isinstance(n, Let) and not ok(n.value):
            return False
        if isinstance(n, Loop) and not (_keeps_python_errors(n.header, deps) and _keeps_python_errors(n.body, deps)
                                        and all(ok(m.value.next) for m in n.mus)):
            return False
    return True


def _deciding(e: ir.Expr) -> ir.Expr:
    """The operands whose values decide whether ``e`` fails, as one tuple: a divisor, a power's two
    operands, a call's arguments."""
    if isinstance(e, ir.BinOp):
        return ir.Tuple((e.right,) if e.op in ("/", "//", "%") else (e.left, e.right))
    if isinstance(e, ir.Call):
        return ir.Tuple(tuple(e.args))
    return e

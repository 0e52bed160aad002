"""Gated tree → :class:`~coarsen_nb.plan.Plan`: SOIs lifted to SymPy.

Three modes give the three points of the design space in one pipeline:

``"phi"``       the phi-calculus: γ → ``Piecewise`` inside a kernel, loops whose
                μs have a closed form (see :mod:`.recurrences`) → reductions over
                an index range, everything else iterated with symbolic bodies;
``"block"``     SOIs never cross a φ (the paper's "without phi-calculus"
                ablation): straight-line code of one block per kernel, ``if`` s as
                real branches, every loop iterated;
``"operator"``  L = 1: every operation its own kernel — classic operator-level AD (statements are
                first split into one assignment per operation, :mod:`coarsen_nb.phi.operations`).

A kernel is closed (and a new one opened) at every opaque step, iterated loop
and real branch; a run of values past ``max_soi`` operations is cut by the
selection pass :mod:`coarsen_nb.soi.partition` (after its most-used value,
small neighbours merged again), from the sizes this lifting measured; a value used
more than ``reuse`` times is kept as a named temp of its kernel instead of
being substituted into its users (the reuse-centric rule).
"""

from __future__ import annotations

import math
from collections import Counter

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import array_contractions, array_logsumexp, batching, indexing, recurrences
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, names_read
from coarsen_nb.phi.kernel_builder import HoistContext, KernelBuilder
from coarsen_nb.phi.literal_numbers import literal_numbers
from coarsen_nb.phi.operations import one_operation_per_let
from coarsen_nb.phi.symbols import NotSymbolic, to_sympy
from coarsen_nb.phi.types import T, infer
from coarsen_nb.plan import CondStep, IterStep, KernelStep, Plan, PrimStep
from coarsen_nb.rules.table import PRIMITIVES
from coarsen_nb.soi.partition import RunNode, partition


def lift(g: GatedFunction, types: dict[str, T], mode: str = "phi", max_soi: float | None = None,
         reuse: float | None = None, lanes: bool = True) -> Plan:
    """Lift the gated function ``g`` with value types ``types`` into a plan of SOIs.

    A loop nest left iterated whose outer iterations are independent is lifted again with the outer
    loop run over all its lanes at once (:mod:`coarsen_nb.phi.batching`), where ``lanes`` (the backend's
    choice: an array backend runs the lanes as arrays, a compiling one the nest as the user's loops)."""
    if mode not in ("phi", "block", "operator"):
        raise ValueError(f"unknown lifting mode {mode!r}")
    plan = _lift(g, types, mode, max_soi, reuse)
    labels = batching.candidates(plan) if lanes else set()
    batched = batching.batch(g, labels, types) if labels else None
    if batched is None:
        return plan
    return _lift(batched, infer(batched, tuple(types[p] for p in g.params)), mode, max_soi, reuse)


def _lift(g: GatedFunction, types: dict[str, T], mode: str, max_soi: float | None, reuse: float | None) -> Plan:
    g, types = array_logsumexp.rewrite(g, types)
    g, types = array_contractions.rewrite(g, types)
    g, types = indexing.normalize(g, types)
    if mode == "operator":
        g, types = one_operation_per_let(g, types)
    lifter = _Lifter(g, types, mode, math.inf if max_soi is None else max_soi,
                     math.inf if reuse is None else reuse)
    steps = lifter.region(g.body)
    return Plan(g.name, g.params, tuple(steps), g.result, types, words=g.words)


def use_counts(g: GatedFunction) -> Counter:
    """How many times each SSA name is read in ``g`` (the reuse measure)."""
    return Counter(ir.names_used(g.result) + names_read(g.body))


class _Lifter:
    def __init__(self, g: GatedFunction, types: dict[str, T], mode: str, max_soi: float, reuse: float):
        self.g = g
        self.types = types
        self.mode = mode
        self.max_soi = max_soi
        self.reuse = reuse
        self.uses = use_counts(g)
        self.numbers = literal_numbers(g.body) if mode == "phi" else {}
        self.hoist_stack: list[HoistContext] = []
        self._hoists = 0
        self.iterated = 0        # depth of iterated loop bodies around the region being lifted

    def hoist_count(self) -> int:
        self._hoists += 1
        return self._hoists

    # -- regions -----------------------------------------------------------------

    def region(self, nodes, tail_uses: set[str] | None = None) -> list:
        """Steps for ``nodes``; ``tail_uses`` are names read after the region.

        A *run* is a maximal sequence of nodes that can share one SOI (values, pure ``if`` s and
        closed-form loops); opaque steps, real branches and iterated loops end it.  The run is lifted
        once, as it grows; when it ends, the selection pass (:func:`coarsen_nb.soi.partition.partition`)
        cuts it at the cap L from the operations each node added, and each piece of a cut run is lifted
        once more, as its own SOI.  With L = ∞ a run is one SOI.
        """
        nodes = list(nodes)
        tail = set(tail_uses or set()) | set(ir.names_used(self.g.result))
        later = _uses_after(nodes, tail)
        steps: list = []
        kb = KernelBuilder(self)
        run: list[RunNode] = []     # the open run's nodes, from node index ``start`` on
        start = 0
        rewritten: dict = {}        # node index -> the Let as lifted (element reads split off)

        def joined(k: int, ops_before: int) -> None:
            nonlocal start
            if not run:
                start = k
            node = rewritten.get(k, nodes[k])
            run.append(RunNode(kb.ops - ops_before, tuple(_defines(node)), tuple(names_read([node]))))

        def end_run(k: int) -> None:
            """End the open run before node ``k``: its SOIs, as the selection cuts it."""
            nonlocal kb
            pieces = partition(run, self.max_soi, operator=self.mode == "operator")
            if len(pieces) == 1:
                kern = kb.close(later[k])
                if kern is not None:
                    steps.append(KernelStep(kern))
            else:
                for b, piece in self._lift_pieces(nodes, [(start + a, start + b) for a, b in pieces], rewritten):
                    kern = piece.close(later[b])
                    if kern is not None:
                        steps.append(KernelStep(kern))
            kb = KernelBuilder(self)
            run.clear()

        k = 0
        while k < len(nodes):
            n = nodes[k]
            if isinstance(n, Let) and self.mode == "operator" and run:
                end_run(k)
            fresh_retry = self.mode == "phi" and bool(run) and not isinstance(n, (Let, If))
            before = kb.ops
            if self._join(kb, n):
                joined(k, before)
                k += 1
                continue
            if run:
                end_run(k)
            else:
                kb = KernelBuilder(self)    # (what a failed join left in it: inputs of no value)
            if isinstance(n, Let):
                if self.is_opaque(n):
                    steps.append(PrimStep(n.name, n.value, n.line))
                    k += 1
                    continue
                value = self._split_reads(n, steps)
                try:
                    expr = to_sympy(value, kb.input, kb.index_read)
                except NotSymbolic:
                    kb = KernelBuilder(self)
                    steps.append(PrimStep(n.name, value, n.line))
                    k += 1
                    continue
                rewritten[k] = Let(n.name, value, n.line)
                kb.define(n.name, expr, n.line, self._materialize(n.name))
                joined(k, 0)
            elif isinstance(n, If):
                steps.append(self._cond(n, later[k + 1]))
            elif fresh_retry and self._join(kb, n):
                # the loop may read an array the ended run writes (a table filled by an earlier loop):
                # from a fresh kernel that array is an input, read element by element
                joined(k, 0)
            else:
                steps += self._iterate(n, later[k + 1])
            k += 1
        if run:
            end_run(len(nodes))
        return steps

    def _join(self, kb: KernelBuilder, n) -> bool:
        """Add node ``n`` to the open kernel ``kb``; False when ``n`` cannot join an SOI there."""
        if isinstance(n, Let):
            if self.is_opaque(n):
                return False
            try:
                expr = to_sympy(n.value, kb.input, kb.index_read)
            except NotSymbolic:
                return False
            kb.define(n.name, expr, n.line, self._materialize(n.name))
            return True
        if isinstance(n, If):
            if self.mode == "phi" and self.is_pure_branch(n) and not self._scalar_branch_in_iterated_loop(n):
                try:
                    self._if_into(kb, n)
                    return True
                except NotSymbolic:
                    pass
            return False
        return self.mode == "phi" and not n.info.early_exit and bool(recurrences.closed_form(self, kb, n))

    def _scalar_branch_in_iterated_loop(self, n: If) -> bool:
        """Whether ``n`` stays a real branch although it could be a γ ``Piecewise`` in the open SOI.

        Inside an iterated loop body the values are scalars and no φ-crossing SOI vectorizes anything;
        a Piecewise there only makes every derivative of the SOI carry both arms, and the arms'
        common subexpressions (``exp(m - a)`` of a running log-sum-exp) are evaluated once per
        derivative.  A real branch evaluates one arm once (measured on kernels/gmm: the default was
        1.09x slower than per-block for this reason alone).  Like the reuse rule it keeps shared work
        shared, so R = ∞ (and so L = R = ∞, the fully symbolic baseline) turns it off.
        """
        arrays = any(self.types.get(gm.name) is None or self.types[gm.name].is_array for gm in n.gammas)
        return self.iterated > 0 and self.reuse < math.inf and not arrays

    def _lift_range(self, nodes: list, a: int, b: int, rewritten: dict) -> KernelBuilder:
        """``nodes[a:b]`` lifted into one fresh kernel (NotSymbolic if one of them cannot join it)."""
        kb = KernelBuilder(self)
        for i in range(a, b):
            if not self._join(kb, rewritten.get(i, nodes[i])):
                raise NotSymbolic(f"node {i} cannot join an SOI starting at node {a}")
        return kb

    def _lift_pieces(self, nodes: list, pieces: list, rewritten: dict) -> list[tuple[int, KernelBuilder]]:
        """Each piece ``(a, b)`` of a cut run lifted once, as an SOI of its own: ``(b, its kernel)``.

        A piece that cannot stand alone (a value the run's lifting inlined, which a fresh SOI would have
        to read as an input it cannot be) stays with the piece before it; the first piece starts the
        run, so it always can."""
        out: list[tuple[int, int, KernelBuilder]] = []
        for a, b in pieces:
            try:
                out.append((a, b, self._lift_range(nodes, a, b, rewritten)))
            except NotSymbolic:
                if not out:
                    raise
                first = out.pop()[0]
                out.append((first, b, self._lift_range(nodes, first, b, rewritten)))
        return [(b, kb) for _, b, kb in out]

    def _split_reads(self, n: Let, steps: list) -> ir.Expr:
        """Make each element read of ``n`` an opaque gather step of its own; the rest stays symbolic."""
        from coarsen_nb.phi.types import expr_type

        count = [0]

        def sub(e: ir.Expr) -> ir.Expr:
            if isinstance(e, ir.Index):
                count[0] += 1
                name = f"{n.name}#r{count[0]}"
                self.types[name] = expr_type(e, self.types)
                steps.append(PrimStep(name, e, n.line))
                return ir.Name(name)
            if isinstance(e, (ir.Name, ir.Const, ir.Undef)):
                return e
            return ir.map_children(e, sub)

        return sub(n.value)

    def _materialize(self, name: str) -> bool:
        return self.mode != "phi" or self.uses[name] > self.reuse

    def is_opaque(self, n: Let) -> bool:
        """Whether ``n``'s value is a step of its own, not SymPy (no SymPy form, an axis reduction, ``@``,
        an update, attribute, tuple, array-valued index): a kernel ends there (here, ``recurrences.py``)."""
        v = n.value
        if isinstance(v, ir.Call) and v.func in PRIMITIVES and PRIMITIVES[v.func].lift is None:
            return True         # SymPy cannot see into it (its registration has no SymPy form)
        if isinstance(v, ir.Call) and v.static and v.func in PRIMITIVES and PRIMITIVES[v.func].kind == "reduction":
            return True         # np.sum(x, axis=0): a step (its form is the whole-array sum)
        if isinstance(v, ir.BinOp) and v.op == "@":
            return True
        if isinstance(v, (ir.Update, ir.Attr, ir.Tuple)):
            return True
        if isinstance(v, ir.Index):
            t = self.types.get(n.name)
            base = self.types.get(v.value.id) if isinstance(v.value, ir.Name) else None
            return t is None or t.is_array or t.kind == "shape" or base is None or base.kind == "shape"
        t = self.types.get(n.name)
        return t is not None and t.kind in ("shape", "tuple")

    def is_pure_branch(self, n: If) -> bool:
        """Whether both arms of ``n`` are straight-line SymPy (no loop or opaque step at any depth): it
        merges into the open kernel (or a recurrence's body) as γ Piecewise values."""
        def ok(nodes) -> bool:
            for m in nodes:
                if isinstance(m, Loop):
                    return False
                if isinstance(m, If) and not ok(m.then + m.orelse):
                    return False
                if isinstance(m, Let) and self.is_opaque(m):
                    return False
            return True

        return ok(n.then) and ok(n.orelse)

    def _if_into(self, kb: KernelBuilder, n: If) -> None:
        """Merge a pure ``if`` into the open kernel: arm values inline into γ Piecewise."""
        saved = dict(kb.env)
        arm_env: dict[str, sp.Basic] = {}

        def arm(nodes):
            for m in nodes:
                if isinstance(m, Let):
                    arm_env[m.name] = to_sympy(m.value, lookup, index)
                else:
                    arm(m.then)
                    arm(m.orelse)
                    for gm in m.gammas:
                        arm_env[gm.name] = to_sympy(gm.value, lookup, index)

        def lookup(name: str):
            return arm_env[name] if name in arm_env else kb.input(name)

        def index(array, idx):
            if array in arm_env:
                raise NotSymbolic("read of an array made in the branch")
            return kb.index_read(array, idx)

        arm(n.then)
        arm(n.orelse)
        for gm in n.gammas:
            expr = to_sympy(gm.value, lookup, index)
            kb.define(gm.name, expr, gm.line, self._materialize(gm.name))
        kb.env.update({k: v for k, v in saved.items() if k not in kb.env})

    # -- real branches and iterated loops ----------------------------------------------

    def _cond(self, n: If, after: set[str]) -> CondStep:
        gam_uses = set()
        for gm in n.gammas:
            gam_uses |= set(ir.names_used(gm.value))
        then = self.region(n.then, after | gam_uses)
        orelse = self.region(n.orelse, after | gam_uses)
        gammas = tuple((gm.name, gm.value.if_true, gm.value.if_false) for gm in n.gammas)
        return CondStep(n.cond, tuple(then), tuple(orelse), gammas, n.line)

    def _iterate(self, n: Loop, after: set[str]) -> list:
        """The loop as an IterStep, preceded by the invariant sums hoisted out of its body."""
        nexts = set()
        for m in n.mus:
            nexts |= set(ir.names_used(m.value.next))
        ctx = HoistContext(self, n)
        if self.mode == "phi":
            self.hoist_stack.append(ctx)
        self.iterated += 1
        try:
            header = self.region(n.header, nexts | {n.cond} | set(names_read(n.body)) | after)
            body = self.region(n.body, nexts | {m.name for m in n.mus})
        finally:
            self.iterated -= 1
            if self.mode == "phi":
                self.hoist_stack.pop()
        mus = tuple((m.name, m.value.init, m.value.next) for m in n.mus)
        etas = tuple((e.name, e.value.value.id) for e in n.etas)
        note = f"{len(ctx.names)} invariant sums hoisted before it" if ctx.names else ""
        return ctx.steps() + [IterStep(n.label, mus, tuple(header), n.cond, tuple(body), etas, n.info.line, note)]


def _defines(n) -> list[str]:
    """The SSA names node ``n`` defines that later nodes can read (a Let's name, γs, ηs)."""
    if isinstance(n, Let):
        return [n.name]
    if isinstance(n, If):
        return [gm.name for gm in n.gammas]
    return [e.name for e in n.etas]



def _uses_after(nodes: list, tail: set[str]) -> list[set[str]]:
    """For each position k, the names read by nodes[k:] or after the region."""
    out = [set() for _ in range(len(nodes) + 1)]
    acc = set(tail)
    out[len(nodes)] = set(acc)
    for k in range(len(nodes) - 1, -1, -1):
        acc |= set(names_read([nodes[k]]))
        out[k] = set(acc)
    return out


def check_defined(plan: Plan) -> None:
    """Every step's inputs are defined before it (a lifting post-condition)."""
    defined = set(plan.params)

    def walk(steps, scope):
        scope = set(scope)
        for s in steps:
            if isinstance(s, KernelStep):
                for name in s.kernel.inputs:
                    if name not in scope:
                        raise AssertionError(f"SOI {s.kernel.index} reads {name} before it is defined")
                scope |= set(s.kernel.output_names)
            elif isinstance(s, PrimStep):
                scope.add(s.name)
            elif isinstance(s, CondStep):
                walk(s.then, scope)
                walk(s.orelse, scope)
                scope |= {g[0] for g in s.gammas}
            else:
                inner = scope | {m[0] for m in s.mus}
                inner = walk(s.header, inner)
                walk(s.body, inner)
                scope |= {e[0] for e in s.etas}
        return scope

    walk(plan.steps, defined)

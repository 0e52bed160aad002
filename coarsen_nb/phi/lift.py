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
and real branch; a run of values past ``max_soi`` operations is split after
its most-used value and small neighbours are merged again; a value used
more than ``reuse`` times is kept as a named temp of its kernel instead of
being substituted into its users (the reuse-centric rule).
"""

from __future__ import annotations

import math
from collections import Counter

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import array_logsumexp, logsumexp, recurrences
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, names_read
from coarsen_nb.phi.operations import one_operation_per_let
from coarsen_nb.phi.symbols import NotSymbolic, symbol, to_sympy
from coarsen_nb.phi.types import T
from coarsen_nb.plan import CondStep, IterStep, Kernel, KernelStep, Output, Plan, PrimStep, Read

_OPAQUE_CALLS = {"sum", "mean", "prod", "amax", "amin", "dot", "matmul", "len", "int", "zeros", "ones", "empty",
                 "full", "zeros_like", "ones_like", "empty_like", "copy", "atleast_1d", "atleast_2d", "atleast_3d",
                 "array_literal", "array_literal_2d"}


def lift(g: GatedFunction, types: dict[str, T], mode: str = "phi", max_soi: float | None = None,
         reuse: float | None = None) -> Plan:
    """Lift the gated function ``g`` with value types ``types`` into a plan of SOIs."""
    if mode not in ("phi", "block", "operator"):
        raise ValueError(f"unknown lifting mode {mode!r}")
    g, types = array_logsumexp.rewrite(g, types)
    if mode == "operator":
        g, types = one_operation_per_let(g, types)
    lifter = _Lifter(g, types, mode, math.inf if max_soi is None else max_soi,
                     math.inf if reuse is None else reuse)
    steps = lifter.region(g.body)
    return Plan(g.name, g.params, tuple(steps), g.result, types)


def use_counts(g: GatedFunction) -> Counter:
    """How many times each SSA name is read in ``g`` (the reuse measure)."""
    return Counter(ir.names_used(g.result) + names_read(g.body))


class _KernelBuilder:
    """The open kernel of a region: straight-line values being merged into one SOI."""

    def __init__(self, lifter: _Lifter):
        self.lifter = lifter
        self.scalars: dict[sp.Symbol, str] = {}
        self.arrays: dict[sp.Symbol, str] = {}
        self.reads: dict[tuple, Read] = {}
        self.body: list[tuple[sp.Symbol, sp.Basic]] = []
        self.env: dict[str, sp.Basic] = {}          # SSA name -> expression inside this kernel
        self.named: dict = {}                       # expression -> SSA name, of loop bodies' values
        self.defined: list[str] = []                # SSA names this kernel defines, in order
        self.lines: list[int] = []
        self.ops = 0
        self.note = ""

    def empty(self) -> bool:
        return not self.defined

    def input(self, name: str) -> sp.Basic:
        if name in self.env:
            return self.env[name]
        t = self.lifter.types.get(name)
        if t is None or t.kind in ("undef", "shape", "tuple"):
            raise NotSymbolic(f"{name} has no scalar value")
        s = symbol(name, t.kind)
        if t.is_array:
            self.arrays[s] = name
        else:
            self.scalars[s] = name
        self.env[name] = s
        return s

    def read(self, array: str, index: tuple) -> sp.Symbol:
        key = (array, index)
        if key not in self.reads:
            k = len(self.reads) + 1
            s = sp.Symbol(f"{array}[{', '.join(map(str, index))}]#{k}", real=True)
            self.reads[key] = Read(s, array, index)
        return self.reads[key].symbol

    def index_read(self, array: str, index: tuple) -> sp.Symbol:
        """``array[index]`` as a :class:`Read` symbol; ``array`` must come from outside the kernel."""
        t = self.lifter.types.get(array)
        if array in self.defined or t is None or not t.is_array or len(index) != t.ndim:
            raise NotSymbolic("not an element read")
        for i in index:
            if isinstance(i, sp.Basic) and (i.is_integer is False or isinstance(i, sp.Float)):
                raise NotSymbolic("non-integer index")
        return self.read(array, index)

    def snapshot(self):
        return (dict(self.scalars), dict(self.arrays), dict(self.reads), list(self.body), dict(self.env),
                list(self.defined), list(self.lines), self.ops, self.note)

    def restore(self, snap) -> None:
        (self.scalars, self.arrays, self.reads, self.body, self.env, self.defined, self.lines, self.ops,
         self.note) = snap

    def define(self, name: str, expr: sp.Basic, line: int, materialize: bool) -> None:
        self.ops += int(sp.count_ops(expr)) if isinstance(expr, sp.Basic) else 0
        if materialize and isinstance(expr, sp.Expr) and not expr.is_Atom:
            s = symbol(name, self.lifter.types[name].kind)
            self.body.append((s, expr))
            expr = s
        self.env[name] = expr
        self.defined.append(name)
        if line:
            self.lines.append(line)

    def temp(self, name: str, expr: sp.Basic, kind: str = "float") -> sp.Symbol:
        s = symbol(name, kind)
        self.body.append((s, expr))
        return s

    def close(self, live_after: set[str]) -> Kernel | None:
        """The finished kernel; outputs are the values read after it."""
        outs = []
        for name in self.defined:
            if name not in live_after:
                continue
            e = self.env[name]
            if isinstance(e, sp.Symbol) and any(s == e for s, _ in self.body):
                outs.append(Output(name, e))
            else:
                s = symbol(name + "'", self.lifter.types[name].kind) if isinstance(e, sp.Symbol) else \
                    symbol(name, self.lifter.types[name].kind)
                self.body.append((s, e))
                outs.append(Output(name, s))
        if not outs:
            return None
        self.body = logsumexp.recognize(self.body)
        # which expression each SSA value stood for, so that generated code can call it by its name
        named = {e: n for n, e in reversed(self.env.items()) if isinstance(e, sp.Expr) and not e.is_Number}
        named.update({e: n for e, n in self.named.items() if e not in named})
        k = Kernel(0, dict(self.scalars), dict(self.arrays), tuple(self.reads.values()), list(self.body),
                   tuple(outs), tuple(sorted(set(self.lines))), self.note, names=named)
        return k


class _HoistContext:
    """Loop-invariant sums found inside an iterated loop, to be computed once before it."""

    def __init__(self, lifter: _Lifter, loop: Loop):
        from coarsen_nb.phi.gate import defined_in

        self.lifter = lifter
        self.loop_defined = defined_in(loop)
        self.kb = _KernelBuilder(lifter)
        self.kb.note = f"loop-invariant sums hoisted out of the loop at line {loop.line}"
        self.names: dict = {}

    def sum_of(self, h, k, rng, kb, reads) -> str:
        """The name of Σ_k h computed before the loop (shared when the same sum appears twice)."""
        from coarsen_nb.phi.forms import RSum
        from coarsen_nb.phi.types import FLOAT

        hb = self.kb
        sub = {}
        for s in (h.free_symbols | set().union(*(sp.sympify(b).free_symbols for b in rng))):
            if s in reads:
                sub[s] = hb.read(reads[s].array, reads[s].index)
            elif s in kb.scalars:
                sub[s] = hb.input(kb.scalars[s])
        body = h.xreplace(sub)
        bounds = tuple(sp.sympify(b).xreplace(sub) for b in rng)
        key = (body, k, bounds)
        if key not in self.names:
            name = f"$sum{len(self.names) + 1}:{self.lifter.hoist_count()}"
            self.lifter.types[name] = FLOAT
            g = hb.temp(name + ":g", body)
            hb.define(name, RSum(g, k, *bounds), self.kb_line(), materialize=False)
            self.names[key] = name
        return self.names[key]

    def kb_line(self) -> int:
        return 0

    def steps(self) -> list:
        kern = self.kb.close(set(self.names.values()))
        return [KernelStep(kern)] if kern is not None else []


class _Lifter:
    def __init__(self, g: GatedFunction, types: dict[str, T], mode: str, max_soi: float, reuse: float):
        self.g = g
        self.types = types
        self.mode = mode
        self.max_soi = max_soi
        self.reuse = reuse
        self.uses = use_counts(g)
        self.hoist_stack: list[_HoistContext] = []
        self._hoists = 0
        self.iterated = 0        # depth of iterated loop bodies around the region being lifted

    def hoist_count(self) -> int:
        self._hoists += 1
        return self._hoists

    # -- regions -----------------------------------------------------------------

    def region(self, nodes, tail_uses: set[str] | None = None) -> list:
        """Steps for ``nodes``; ``tail_uses`` are names read after the region.

        A *run* is a maximal sequence of nodes that can share one SOI (values, pure ``if`` s and
        closed-form loops); opaque steps, real branches and iterated loops end it.  With a finite
        cap L a run is cut into SOIs as it grows (:meth:`_cut`) and its small neighbours are merged
        when it ends (:meth:`_merge`); with L = ∞ a run is one SOI.
        """
        nodes = list(nodes)
        tail = set(tail_uses or set()) | set(ir.names_used(self.g.result))
        later = _uses_after(nodes, tail)
        steps: list = []
        kb = _KernelBuilder(self)
        start = 0               # first node of the open kernel
        pieces: list = []       # node ranges [a, b) of the current run already cut at the cap
        rewritten: dict = {}    # node index -> the Let as lifted (element reads split off)

        def flush(k: int) -> None:
            """End the run at node ``k``: emit its SOIs (one unless the cap cut it)."""
            nonlocal kb, pieces
            if pieces:
                for a, b in self._merge(nodes, pieces + ([(start, k)] if not kb.empty() else []), rewritten):
                    kern = self._lift_range(nodes, a, b, rewritten).close(later[b])
                    if kern is not None:
                        steps.append(KernelStep(kern))
            elif not kb.empty():
                kern = kb.close(later[k])
                if kern is not None:
                    steps.append(KernelStep(kern))
            kb = _KernelBuilder(self)
            pieces = []

        def close_at_cap(k: int) -> None:
            """The open kernel reached the cap L with node ``k``: it becomes a piece of the run."""
            nonlocal kb, start
            if kb.ops >= self.max_soi:
                pieces.append((start, k + 1))
                kb = _KernelBuilder(self)
                start = k + 1

        k = 0
        while k < len(nodes):
            n = nodes[k]
            if isinstance(n, Let) and self.mode == "operator" and not kb.empty():
                flush(k)
                start = k
            if kb.empty():
                start = k
            fresh_retry = self.mode == "phi" and not kb.empty() and not isinstance(n, (Let, If))
            if self._join(kb, n):
                if kb.ops > self.max_soi and k > start:
                    # Oversized: cut the run after its most-used value and lift the rest afresh.
                    j = self._cut(nodes, start, k)
                    pieces.append((start, j + 1))
                    kb = _KernelBuilder(self)
                    k = start = j + 1
                    continue
                close_at_cap(k)
                k += 1
                continue
            flush(k)
            start = k
            if isinstance(n, Let):
                if self._opaque(n):
                    steps.append(PrimStep(n.name, n.value, n.line))
                    k += 1
                    continue
                value = self._split_reads(n, steps)
                try:
                    expr = to_sympy(value, kb.input, kb.index_read)
                except NotSymbolic:
                    kb = _KernelBuilder(self)
                    steps.append(PrimStep(n.name, value, n.line))
                    k += 1
                    continue
                rewritten[k] = Let(n.name, value, n.line)
                kb.define(n.name, expr, n.line, self._materialize(n.name))
                close_at_cap(k)
            elif isinstance(n, If):
                steps.append(self._cond(n, later[k + 1]))
            else:
                if fresh_retry and self._join(kb, n):
                    # the loop may read an array the flushed kernel writes (a table filled by an earlier
                    # loop): from a fresh kernel that array is an input, read element by element
                    close_at_cap(k)
                    k += 1
                    continue
                steps += self._iterate(n, later[k + 1])
            k += 1
        flush(len(nodes))
        return steps

    def _join(self, kb: _KernelBuilder, n) -> bool:
        """Add node ``n`` to the open kernel ``kb``; False when ``n`` cannot join an SOI there."""
        if isinstance(n, Let):
            if self._opaque(n):
                return False
            try:
                expr = to_sympy(n.value, kb.input, kb.index_read)
            except NotSymbolic:
                return False
            kb.define(n.name, expr, n.line, self._materialize(n.name))
            return True
        if isinstance(n, If):
            if self.mode == "phi" and self._pure(n) and not self._scalar_branch_in_iterated_loop(n):
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

    def _lift_range(self, nodes: list, a: int, b: int, rewritten: dict) -> _KernelBuilder:
        """``nodes[a:b]`` lifted into one fresh kernel (NotSymbolic if one of them cannot join it)."""
        kb = _KernelBuilder(self)
        for i in range(a, b):
            if not self._join(kb, rewritten.get(i, nodes[i])):
                raise NotSymbolic(f"node {i} cannot join an SOI starting at node {a}")
        return kb

    def _cut(self, nodes: list, a: int, k: int) -> int:
        """Where to cut the oversized run ``nodes[a:k + 1]``: after the node whose value is read most
        often inside it (the paper's split at the most-used value; materializing that value removes
        the most inlined copies).  Ties go to the later node, so the first SOI stays as large as it
        can; the cut is always before ``k``, the node that made the run exceed L."""
        inside = Counter(names_read(nodes[a:k + 1]))

        def score(i: int) -> tuple:
            return max((inside[name] for name in _defines(nodes[i])), default=0), i

        return max(range(a, k), key=score)

    def _merge(self, nodes: list, pieces: list, rewritten: dict) -> list:
        """Merge neighbouring pieces of one run while the merged SOI has at most L operations
        (a cut can leave small SOIs next to each other, e.g. when the most-used value is early).
        Operator mode (L = 1) keeps every operation its own SOI, constants and copies included."""
        if self.mode == "operator":
            return pieces
        out = [pieces[0]]
        for a, b in pieces[1:]:
            a0 = out[-1][0]
            try:
                fits = self._lift_range(nodes, a0, b, rewritten).ops <= self.max_soi
            except NotSymbolic:
                fits = False
            if fits:
                out[-1] = (a0, b)
            else:
                out.append((a, b))
        return out

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

    def _opaque(self, n: Let) -> bool:
        v = n.value
        if isinstance(v, ir.Call) and v.func in _OPAQUE_CALLS:
            return True
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

    def _pure(self, n: If) -> bool:
        def ok(nodes) -> bool:
            for m in nodes:
                if isinstance(m, Loop):
                    return False
                if isinstance(m, If) and not ok(m.then + m.orelse):
                    return False
                if isinstance(m, Let) and self._opaque(m):
                    return False
            return True

        return ok(n.then) and ok(n.orelse)

    def _if_into(self, kb: _KernelBuilder, n: If) -> None:
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
        ctx = _HoistContext(self, n)
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

"""CFG → SSA: dominators, dominance frontiers, pruned φ placement, renaming.

Algorithms
----------
* Dominators: Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm"
  (2001) — iterate ``idom`` over reverse post-order to a fixed point.
* Dominance frontiers: the same paper's two-finger walk from each join.
* φ placement: Cytron et al. (1991) iterated dominance frontier, *pruned* by
  liveness: a φ for ``v`` is placed at ``b`` only if ``v`` is live on entry
  to ``b``, so dead φs never appear.
* Renaming: one walk of the dominator tree with a stack per variable.
  Parameters keep their names; each other definition of ``v`` becomes
  ``v.1``, ``v.2``, ... in walk order (deterministic).  A use with no reaching
  definition on some path becomes :class:`~coarsen_nb.ir.Undef`.
* Afterwards, assignments and φs whose value is never used are removed, and every read of a variable
  that may be unbound is checked where it runs (:mod:`coarsen_nb.frontend.unbound`).

Post-condition (checked by :func:`verify`): every name is assigned once; every
use is dominated by its definition (a φ operand by the end of its
predecessor); every φ has one operand per predecessor.
"""

from __future__ import annotations

from collections import defaultdict

from coarsen_nb import ir
from coarsen_nb.frontend.unbound import check_unbound_reads, is_bound_check


class VerifyError(AssertionError):
    """The IR broke an SSA invariant (a compiler bug, never a user error)."""


# ---------------------------------------------------------------- dominators


def reverse_postorder(fn: ir.Function) -> list[str]:
    """Blocks reachable from the entry, in reverse post-order."""
    bmap = fn.block_map
    seen, order = set(), []

    def visit(label: str) -> None:
        stack = [(label, iter(bmap[label].successors()))]
        seen.add(label)
        while stack:
            node, it = stack[-1]
            nxt = next((s for s in it if s not in seen), None)
            if nxt is None:
                order.append(node)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(bmap[nxt].successors())))

    visit(fn.entry)
    return order[::-1]


def dominators(fn: ir.Function) -> dict[str, str]:
    """Immediate dominators (Cooper–Harvey–Kennedy); the entry maps to itself."""
    rpo = reverse_postorder(fn)
    index = {b: k for k, b in enumerate(rpo)}
    preds = fn.predecessors()
    idom: dict[str, str] = {fn.entry: fn.entry}

    def intersect(a: str, b: str) -> str:
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            ps = [p for p in preds[b] if p in idom]
            new = ps[0]
            for p in ps[1:]:
                new = intersect(p, new)
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    return idom


def dominates(idom: dict[str, str], a: str, b: str) -> bool:
    """Whether block ``a`` dominates block ``b``."""
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


def dominance_frontiers(fn: ir.Function, idom: dict[str, str]) -> dict[str, set[str]]:
    preds = fn.predecessors()
    df: dict[str, set[str]] = {b: set() for b in idom}
    for b in idom:
        ps = [p for p in preds[b] if p in idom]
        if len(ps) >= 2:
            for p in ps:
                runner = p
                while runner != idom[b]:
                    df[runner].add(b)
                    runner = idom[runner]
    return df


# ---------------------------------------------------------------- liveness


def _uses_defs(block: ir.Block) -> tuple[set[str], set[str]]:
    uses, defs = set(), set()
    for s in block.stmts:
        uses |= {u for u in ir.names_used(s.value) if u not in defs}
        defs.add(s.target)
    term_uses = _term_names(block.term)
    uses |= {u for u in term_uses if u not in defs}
    if block.loop is not None:
        for e in (block.loop.start, block.loop.stop, block.loop.step):
            if e is not None:
                uses |= {u for u in ir.names_used(e) if u not in defs}
    return uses, defs


def _term_names(term: ir.Terminator) -> list[str]:
    if isinstance(term, ir.Branch):
        return ir.names_used(term.cond)
    if isinstance(term, ir.Return):
        return ir.names_used(term.value)
    return []


def live_in(fn: ir.Function) -> dict[str, set[str]]:
    """Variables live on entry to each block (backward data-flow to a fixed point)."""
    bmap = fn.block_map
    ud = {b.label: _uses_defs(b) for b in fn.blocks}
    live = {b.label: set() for b in fn.blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(fn.blocks):
            out = set().union(*(live[s] for s in bmap[b.label].successors())) if b.successors() else set()
            uses, defs = ud[b.label]
            new = uses | (out - defs)
            if new != live[b.label]:
                live[b.label] = new
                changed = True
    return live


# ---------------------------------------------------------------- the pass


def to_ssa(fn: ir.Function) -> ir.Function:
    """Convert a CFG from :func:`~coarsen_nb.frontend.parse.parse` to pruned SSA.

    Unreachable blocks are dropped; the result passes :func:`verify`.
    """
    rpo = reverse_postorder(fn)
    fn = ir.Function(fn.name, fn.params, tuple(b for b in fn.blocks if b.label in set(rpo)),
                     fn.entry, fn.source, words=fn.words)
    idom = dominators(fn)
    df = dominance_frontiers(fn, idom)
    live = live_in(fn)
    preds = fn.predecessors()

    # 1. φ placement (Cytron et al.), pruned by liveness.
    defsites: dict[str, set[str]] = defaultdict(set)
    for b in fn.blocks:
        for s in b.stmts:
            defsites[s.target].add(b.label)
    for p in fn.params:
        defsites[p].add(fn.entry)
    phi_vars: dict[str, list[str]] = {b.label: [] for b in fn.blocks}
    for var in sorted(defsites):
        work = list(defsites[var])
        placed: set[str] = set()
        while work:
            d = work.pop()
            for y in df[d]:
                if y not in placed:
                    placed.add(y)
                    if var in live[y]:
                        phi_vars[y].append(var)
                    if y not in defsites[var]:
                        work.append(y)

    # 2. Renaming along the dominator tree.
    children: dict[str, list[str]] = defaultdict(list)
    order = [b.label for b in fn.blocks]
    for b in order:
        if idom[b] != b:
            children[idom[b]].append(b)
    counters: dict[str, int] = defaultdict(int)
    stacks: dict[str, list[str]] = defaultdict(list)
    for p in fn.params:
        stacks[p].append(p)
    bmap = fn.block_map
    new_phis: dict[str, list[tuple[str, str]]] = {}   # label -> [(var, new name)]
    phi_args: dict[str, dict[str, dict[str, ir.Expr]]] = defaultdict(lambda: defaultdict(dict))
    new_blocks: dict[str, ir.Block] = {}

    def fresh(var: str) -> str:
        counters[var] += 1
        name = f"{var}.{counters[var]}"
        stacks[var].append(name)
        return name

    def current(var: str) -> ir.Expr:
        return ir.Name(stacks[var][-1]) if stacks[var] else ir.Undef()

    def walk(label: str) -> None:
        block = bmap[label]
        pushed: list[str] = []
        loop = block.loop
        if loop is not None and loop.kind == "range":
            loop = ir.LoopInfo(loop.kind, loop.line, loop.body, loop.latch, loop.exit, loop.counter,
                               ir.rename(loop.start, current), ir.rename(loop.stop, current),
                               ir.rename(loop.step, current), loop.early_exit)
        names = []
        for var in phi_vars[label]:
            names.append((var, fresh(var)))
            pushed.append(var)
        new_phis[label] = names
        if loop is not None and loop.kind == "range":
            loop = ir.LoopInfo(loop.kind, loop.line, loop.body, loop.latch, loop.exit,
                               stacks[loop.counter][-1], loop.start, loop.stop, loop.step, loop.early_exit)
        stmts = []
        for s in block.stmts:
            value = ir.rename(s.value, current)
            stmts.append(ir.Assign(fresh(s.target), value, s.line, s.col))
            pushed.append(s.target)
        term = block.term
        if isinstance(term, ir.Branch):
            term = ir.Branch(ir.rename(term.cond, current), term.if_true, term.if_false, term.line)
        elif isinstance(term, ir.Return):
            term = ir.Return(ir.rename(term.value, current))
        for succ in block.successors():
            for var in phi_vars[succ]:
                phi_args[succ][var][label] = current(var)
        new_blocks[label] = ir.Block(label, tuple(stmts), term, (), loop)
        for c in children[label]:
            walk(c)
        for var in pushed:
            stacks[var].pop()

    walk(fn.entry)
    blocks = []
    for label in order:
        b = new_blocks[label]
        phis = tuple(ir.Phi(name, tuple((p, phi_args[label][var][p]) for p in preds[label]))
                     for var, name in new_phis[label])
        blocks.append(ir.Block(b.label, b.stmts, b.term, phis, b.loop))
    out = ir.Function(fn.name, fn.params, tuple(blocks), fn.entry, fn.source, ssa=True, words=fn.words)
    return eliminate_dead_code(check_unbound_reads(out))


def eliminate_dead_code(fn: ir.Function) -> ir.Function:
    """Drop assignments and φs whose values are never used.  All IR is pure but a read's bound check
    (:mod:`coarsen_nb.frontend.unbound`): Python raises at a read whose value is never used all the same
    (``t = math.sin(y)`` with ``t`` dead), so the check stays, and so does everything it reads."""
    while True:
        used: set[str] = {s.target for b in fn.blocks for s in b.stmts if is_bound_check(s.value)}
        for b in fn.blocks:
            for p in b.phis:
                for _, v in p.args:
                    used |= set(ir.names_used(v))
            for s in b.stmts:
                used |= set(ir.names_used(s.value))
            used |= set(_term_names(b.term))
            if b.loop is not None:
                used |= {b.loop.counter} if b.loop.counter else set()
                for e in (b.loop.start, b.loop.stop, b.loop.step):
                    if e is not None:
                        used |= set(ir.names_used(e))
        blocks = []
        removed = False
        for b in fn.blocks:
            phis = tuple(p for p in b.phis if p.target in used)
            stmts = tuple(s for s in b.stmts if s.target in used)
            removed |= len(phis) != len(b.phis) or len(stmts) != len(b.stmts)
            blocks.append(ir.Block(b.label, stmts, b.term, phis, b.loop))
        fn = ir.Function(fn.name, fn.params, tuple(blocks), fn.entry, fn.source, fn.ssa, fn.gated, fn.words)
        if not removed:
            return fn


# ---------------------------------------------------------------- verify


def verify(fn: ir.Function) -> None:
    """Check the SSA post-condition; raise :class:`VerifyError` naming the violation."""
    if not fn.ssa:
        raise VerifyError(f"{fn.name}: not in SSA form")
    labels = [b.label for b in fn.blocks]
    if len(set(labels)) != len(labels):
        raise VerifyError(f"{fn.name}: duplicate block labels")
    bmap = fn.block_map
    for b in fn.blocks:
        for s in b.successors():
            if s not in bmap:
                raise VerifyError(f"{b.label}: jumps to unknown block {s}")
    idom = dominators(fn)
    preds = fn.predecessors()
    where: dict[str, tuple[str, int]] = {}   # name -> (block, position); φs at -1, params at entry -2

    def define(name: str, block: str, pos: int) -> None:
        if name in where:
            raise VerifyError(f"{name} is assigned more than once")
        where[name] = (block, pos)

    for p in fn.params:
        define(p, fn.entry, -2)
    for b in fn.blocks:
        if b.label not in idom:
            raise VerifyError(f"{b.label} is unreachable")
        for p in b.phis:
            define(p.target, b.label, -1)
        for k, s in enumerate(b.stmts):
            define(s.target, b.label, k)

    def check_use(name: str, block: str, pos: int, what: str) -> None:
        if name not in where:
            raise VerifyError(f"{what}: {name} is used but never assigned")
        db, dpos = where[name]
        if db == block:
            if dpos >= pos:
                raise VerifyError(f"{what}: {name} is used before its assignment")
        elif not dominates(idom, db, block):
            raise VerifyError(f"{what}: the use of {name} in {block} is not dominated by its assignment in {db}")

    for b in fn.blocks:
        for p in b.phis:
            got = [lbl for lbl, _ in p.args]
            if sorted(got) != sorted(preds[b.label]) or len(got) != len(preds[b.label]):
                raise VerifyError(f"{b.label}: {p.target} has operands for {got}, predecessors are "
                                  f"{preds[b.label]}")
            for lbl, v in p.args:
                for u in ir.names_used(v):
                    check_use(u, lbl, len(bmap[lbl].stmts) + 1, f"{b.label}: {p}")
        for k, s in enumerate(b.stmts):
            for u in ir.names_used(s.value):
                check_use(u, b.label, k, f"{b.label}: {s}")
        for u in _term_names(b.term):
            check_use(u, b.label, len(b.stmts), f"{b.label}: {b.term}")
        if b.loop is not None:
            for e in (b.loop.start, b.loop.stop, b.loop.step):
                for u in (ir.names_used(e) if e is not None else []):
                    check_use(u, b.label, -1, f"{b.label}: loop bounds")
            if b.loop.counter is not None and b.loop.counter not in {p.target for p in b.phis}:
                raise VerifyError(f"{b.label}: loop counter {b.loop.counter} is not a φ of the header")

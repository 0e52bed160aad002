"""SSA φ → gated φ (γ, μ, η), as a region tree.

SSA φ nodes carry no predicate, so they cannot be lifted to math.  Because
the frontend keeps control flow structured (see :mod:`coarsen_nb.frontend.parse`),
every φ has an exact gate:

* a φ at the join of an ``if`` whose branch block tests ``p`` becomes
  **γ(p, a, b)** — ``a`` arrives through the true arm, ``b`` through the false arm
  (the arm is the successor of the branch that dominates the predecessor);
* a φ at a loop header becomes **μ(init, next)** — ``init`` from the
  pre-header, ``next`` from the latch;
* a value of a loop used after the loop becomes **η(v)**, v at the final trip
  count N, under a new name ``v.out`` (loop-closed SSA: inside the loop ``s.2``
  is the state of iteration k, after it ``s.2.out`` is s_N).

The result is a tree of regions, the form the lifter and the SOI selection
work on: a region is a list of :class:`Let` (a pure assignment), :class:`If`
(two arms and the γs at their join) and :class:`Loop` (μs, a header region
that computes the continuation condition, a body region, the ηs).

Post-condition: every SSA name is defined once in the tree, and every use
inside a region refers to a name defined earlier in an enclosing or the same
region (checked by :func:`verify_tree`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from coarsen_nb import ir
from coarsen_nb.frontend.ssa import dominates, dominators


@dataclass(frozen=True)
class Let:
    name: str
    value: ir.Expr
    line: int = 0

    def lines(self, indent: str = "") -> list[str]:
        return [f"{indent}{self.name} = {self.value}"]


@dataclass(frozen=True)
class If:
    cond: str
    then: tuple
    orelse: tuple
    gammas: tuple[Let, ...]        # Let(name, Gamma(cond, a, b))
    line: int = 0

    def lines(self, indent: str = "") -> list[str]:
        out = [f"{indent}if {self.cond}:    # line {self.line}"]
        out += [ln for n in self.then for ln in n.lines(indent + "    ")] or [indent + "    pass"]
        if self.orelse:
            out.append(f"{indent}else:")
            out += [ln for n in self.orelse for ln in n.lines(indent + "    ")]
        out += [ln for g in self.gammas for ln in g.lines(indent)]
        return out


@dataclass(frozen=True)
class Loop:
    label: str
    info: ir.LoopInfo
    mus: tuple[Let, ...]           # Let(name, Mu(label, init, next))
    header: tuple                  # computes `cond` at the start of every iteration (and the last check)
    cond: str
    body: tuple
    etas: tuple[Let, ...]          # Let(name.out, Eta(label, name))

    @property
    def line(self) -> int:
        return self.info.line

    def lines(self, indent: str = "") -> list[str]:
        out = [f"{indent}{self.label}: {self.info}"]
        out += [ln for m in self.mus for ln in m.lines(indent + "  ")]
        out += [ln for n in self.header for ln in n.lines(indent + "  ")]
        out.append(f"{indent}  while {self.cond}:")
        out += [ln for n in self.body for ln in n.lines(indent + "    ")]
        out += [ln for e in self.etas for ln in e.lines(indent)]
        return out


Node = Let | If | Loop


@dataclass(frozen=True)
class GatedFunction:
    name: str
    params: tuple[str, ...]
    body: tuple
    result: ir.Expr
    source: ir.Source = field(default_factory=lambda: ir.Source(""))
    words: Mapping[str, str] = field(default_factory=dict, compare=False)     # see ir.Function.words

    def __str__(self) -> str:
        lines = [f"def {self.name}({', '.join(self.params)}):"]
        lines += [ln for n in self.body for ln in n.lines("    ")]
        lines.append(f"    return {self.result}")
        return "\n".join(lines)


def gate(fn: ir.Function) -> GatedFunction:
    """Turn an SSA function into its gated region tree."""
    if not fn.ssa:
        raise ValueError("gate() needs SSA input")
    return _Gater(fn).run()


class _Gater:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.bmap = fn.block_map
        self.idom = dominators(fn)
        self.preds = fn.predecessors()
        self.eta_of: list[dict[str, str]] = []     # stack of renamings after loops

    def run(self) -> GatedFunction:
        body, result = self._region(self.fn.entry, None)
        return GatedFunction(self.fn.name, self.fn.params, tuple(body), result, self.fn.source, self.fn.words)

    # A renaming applied to every expression: names of loop values used after their loop.
    def _rn(self, e: ir.Expr) -> ir.Expr:
        def sub(name: str) -> ir.Expr:
            for table in reversed(self.eta_of):
                if name in table:
                    return ir.Name(table[name])
            return ir.Name(name)

        return ir.rename(e, sub) if self.eta_of else e

    def _region(self, start: str, stop: str | None):
        """Nodes for the blocks from ``start`` up to (not including) ``stop``; the return value if reached."""
        nodes: list = []
        label = start
        while label != stop:
            block = self.bmap[label]
            if block.loop is not None:
                loop = self._loop(block)
                nodes.append(loop)
                label = block.loop.exit
                continue
            nodes += [Let(s.target, self._rn(s.value), s.line) for s in block.stmts]
            term = block.term
            if isinstance(term, ir.Return):
                return nodes, self._rn(term.value)
            if isinstance(term, ir.Jump):
                label = term.target
                continue
            join = self._join_of(block)
            cond = self._rn(term.cond)
            assert isinstance(cond, ir.Name), "the frontend branches on names"
            then, _ = self._region(term.if_true, join) if term.if_true != join else ([], None)
            orelse, _ = self._region(term.if_false, join) if term.if_false != join else ([], None)
            gammas = []
            for phi in self.bmap[join].phis:
                args = {p: v for p, v in phi.args}
                a = b = None
                for p, v in args.items():
                    if self._true_side(block, term, join, p):
                        a = v
                    else:
                        b = v
                gammas.append(Let(phi.target, ir.Gamma(cond, self._rn(a), self._rn(b)), term.line))
            nodes.append(If(cond.id, tuple(then), tuple(orelse), tuple(gammas), term.line))
            # The join's φs became the γs above; its statements and terminator come next.
            label = join
        return nodes, None

    def _true_side(self, block: ir.Block, term: ir.Branch, join: str, pred: str) -> bool:
        if pred == block.label:
            return term.if_true == join
        return term.if_true != join and dominates(self.idom, term.if_true, pred)

    def _join_of(self, block: ir.Block) -> str:
        """The block where the two arms of ``block``'s branch meet (its immediate post-dominator)."""
        term = block.term
        reach_t = self._reachable(term.if_true)
        # walk the false arm in order; the first block also reachable from the true arm is the join
        order = [term.if_false]
        seen = set()
        while order:
            lbl = order.pop(0)
            if lbl in seen:
                continue
            seen.add(lbl)
            if lbl in reach_t:
                return lbl
            b = self.bmap[lbl]
            if b.loop is not None:
                order.append(b.loop.exit)
            else:
                order.extend(b.successors())
        raise AssertionError(f"no join for the branch in {block.label}")

    def _reachable(self, start: str) -> set[str]:
        """Blocks reachable from ``start`` without taking a loop's back edge."""
        seen, work = set(), [start]
        while work:
            lbl = work.pop()
            if lbl in seen:
                continue
            seen.add(lbl)
            b = self.bmap[lbl]
            if b.loop is not None:
                work.append(b.loop.exit)
            else:
                work.extend(s for s in b.successors() if not (self.bmap[s].loop and dominates(self.idom, s, lbl)))
        return seen

    def _loop(self, header: ir.Block) -> Loop:
        info = header.loop
        latch = info.latch
        inits = {phi.target: self._rn(next(v for p, v in phi.args if p != latch)) for phi in header.phis}
        head_nodes = [Let(s.target, self._rn(s.value), s.line) for s in header.stmts]
        cond = self._rn(header.term.cond)
        assert isinstance(cond, ir.Name), "the frontend branches on names"
        body, _ = self._region(info.body, header.label)
        # The latch's jump back ends the body region.  μ's `next` is renamed after
        # the body, so that it sees the ηs of loops nested inside.
        mus = [Let(phi.target, ir.Mu(header.label, inits[phi.target], self._rn(dict(phi.args)[latch])), info.line)
               for phi in header.phis]
        defined = [m.name for m in mus] + [n.name for n in head_nodes]
        table = {name: name + ".out" for name in defined}
        etas = tuple(Let(name + ".out", ir.Eta(header.label, ir.Name(name)), info.line) for name in defined)
        self.eta_of.append(table)
        # μ operands were renamed before this loop's table existed, so they still see inner names.
        loop = Loop(header.label, info, tuple(mus), tuple(head_nodes), cond.id, tuple(body), etas)
        return loop


def names_read(nodes) -> list[str]:
    """Every name the nodes read (operands, predicates, loop bounds), in order, with repeats."""
    out: list[str] = []
    for n in nodes:
        if isinstance(n, Let):
            out += ir.names_used(n.value)
        elif isinstance(n, If):
            out.append(n.cond)
            out += names_read(n.then) + names_read(n.orelse) + names_read(n.gammas)
        else:
            out += names_read(n.mus) + names_read(n.header) + [n.cond] + names_read(n.body) + \
                names_read(n.etas)
            for e in (n.info.start, n.info.stop, n.info.step):
                if e is not None:
                    out += ir.names_used(e)
    return out


def verify_tree(g: GatedFunction) -> None:
    """Every name defined once; every use sees an earlier definition in scope."""
    defined: set[str] = set(g.params)

    def define(name: str) -> None:
        if name in defined:
            raise AssertionError(f"{name} defined twice in the gated tree")
        defined.add(name)

    def check(e: ir.Expr, scope: set[str], where: str) -> None:
        for u in ir.names_used(e):
            if u not in scope:
                raise AssertionError(f"{where}: {u} used out of scope")

    def walk(nodes, scope: set[str]) -> set[str]:
        scope = set(scope)
        for n in nodes:
            if isinstance(n, Let):
                check(n.value, scope, str(n))
                define(n.name)
                scope.add(n.name)
            elif isinstance(n, If):
                if n.cond not in scope:
                    raise AssertionError(f"if: {n.cond} out of scope")
                t = walk(n.then, scope)
                f = walk(n.orelse, scope)
                for gm in n.gammas:
                    check(gm.value.pred, scope, str(gm))
                    check(gm.value.if_true, t, str(gm))
                    check(gm.value.if_false, f, str(gm))
                    define(gm.name)
                    scope.add(gm.name)
            else:
                inner = set(scope)
                for m in n.mus:
                    check(m.value.init, scope, str(m))
                    define(m.name)
                    inner.add(m.name)
                inner = walk(n.header, inner)
                body_scope = walk(n.body, inner)
                for m in n.mus:
                    check(m.value.next, body_scope, str(m))
                for e in n.etas:
                    define(e.name)
                    scope.add(e.name)
        return scope

    walk(g.body, defined)
    check(g.result, defined | _all_names(g.body), "return")


def _all_names(nodes) -> set[str]:
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, Let):
            out.add(n.name)
        elif isinstance(n, If):
            out |= {gm.name for gm in n.gammas}
        else:
            out |= {e.name for e in n.etas}
    return out


def name_minter(g: GatedFunction, prefix: str) -> Callable[[], str]:
    """A source of new SSA names ``$<prefix>N.1`` that no parameter or definition of ``g`` uses, nor an
    earlier name of this source: the new values of a rewrite of ``g``."""
    taken = defined_names(g.body) | set(g.params)
    counter = itertools.count(1)

    def fresh() -> str:
        while True:
            name = f"${prefix}{next(counter)}.1"
            if name not in taken:
                taken.add(name)
                return name
    return fresh


def defined_names(nodes) -> set[str]:
    """Every name the region ``nodes`` defines, at any depth (loops' μs and ηs included)."""
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, Let):
            out.add(n.name)
        elif isinstance(n, If):
            out |= defined_names(n.then) | defined_names(n.orelse) | {gm.name for gm in n.gammas}
        else:
            out |= defined_in(n) | {e.name for e in n.etas}
    return out


def defined_in(loop: Loop) -> set[str]:
    """The names a loop defines inside it (its μs, header and body; not its ηs, which follow it)."""
    return {m.name for m in loop.mus} | defined_names(loop.header) | defined_names(loop.body)

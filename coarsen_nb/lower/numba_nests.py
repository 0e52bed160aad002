"""The numba backend's loop nests: the parts of an SOI that run over several loop indices, as compiled nests.

A double loop the phi-calculus keeps as sums (``e += f(i, j)`` over ``j in range(i + 1, n)`` inside
``i in range(n)``: a nested Σ) or whose adjoint scatters over two indices (``b_px[i, j + 1] += g(i, j)``)
matches none of the one-loop domains of :mod:`coarsen_nb.lower.numba_fusion`, and the NumPy printer runs it
over n × n index arrays (a triangle through a mask).  Under Numba the cheapest form is the user's own loop
nest, with nothing stored: here each such part becomes one function of the module, a ``nest`` domain:

* a target that is a number (the value, or a scalar adjoint ``b_a += ...``) whose sums are nested over the
  loops: each sum an accumulator set before its loop, and the code that reads an inner sum placed after
  the inner loop, inside the outer one; several sums in one target are several nests in turn;
* scatters ``b_x[i(.), j(.)] += g(i, j)`` that vary over the same loops: one nest, every scatter added in
  its innermost body (the loops run in sequence, so two scatters to one element add up as the user's loop
  adds them).

The ranges nest as the user's loops did (an inner range may read the outer indices: triangles); a
``Piecewise`` is a real ``if`` at each point, as in every fused loop.  Not taken (array code as before): a
sum other than Σ or Π, a scatter whose value holds a sum, a target varying over the elements of an array
(``ELEM``), and the nodes no single pass computes (``fusion_domain.NOT_ONE_PASS``) or the scans.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.domain import Domain, Target
from coarsen_nb.lower.fusion_domain import NOT_ONE_PASS, Body
from coarsen_nb.lower.numba_loops import LoopFunction, integer_index
from coarsen_nb.phi import forms
from coarsen_nb.phi.scans import SCAN_FORMS
from coarsen_nb.symbolic.levels import ELEM


def nest_domains(body: Body, targets: list[Target]) -> tuple[list[Domain], list[Target]]:
    """The ``nest`` domains of those ``targets`` that have one (the scatters over one set of loops share
    a domain; each number target is a domain of its own), and the targets left over."""
    groups: dict = {}
    rest: list[Target] = []
    for t in targets:
        key = _scatter_loops(body, t) if t.mode == "scatter" else ("sums", len(groups)) \
            if _nested_sums(body, t) else None
        if key is None:
            rest.append(t)
        else:
            groups.setdefault(key, []).append(t)
    return [Domain("nest", tuple(group)) for group in groups.values()], rest


def _plain(body: Body, e) -> bool:
    """``e`` holds nothing a nest cannot compute point by point."""
    return not any(isinstance(n, NOT_ONE_PASS + SCAN_FORMS + (forms.ElemSum,)) for n in body.nodes(e))


def _scatter_loops(body: Body, t: Target):
    """The loops (outermost first) a scatter varies over, where there are two or more of them."""
    exprs = [t.expr, *(sp.sympify(i) for i in t.index)]
    if not all(_plain(body, e) for e in exprs) or any(isinstance(n, forms.Reduction)
                                                     for e in exprs for n in body.nodes(e)):
        return None
    binders = frozenset().union(*(body.deps(e) for e in exprs))
    if ELEM in binders or len(binders) < 2 or not binders <= set(body.deps.ranges):
        return None
    if t.level is not None and set(t.level) != binders:
        return None
    chain = nest_order(body, binders)
    return tuple(chain) if chain is not None else None


def nest_order(body: Body, binders) -> list | None:
    """``binders`` outermost first, where each range reads only the loops outside it; None otherwise."""
    order = list(body.deps.ranges)
    chain = sorted(binders, key=lambda b: (body.deps.nest_depth(b), -order.index(b)))
    for n, k in enumerate(chain):
        if any(body.deps(x) - set(chain[:n]) for x in body.deps.ranges[k]):
            return None
    return chain


def _nested_sums(body: Body, t: Target) -> bool:
    """A number target whose sums (Σ, Π) each run over a loop whose range and operand read only the loops of
    the sums around it, with at least one sum inside another (one level is the ``reduce`` domain's)."""
    if body.deps(t.expr) or not _plain(body, t.expr):
        return False
    sums = [n for n in body.nodes(t.expr) if isinstance(n, forms.Reduction)]
    if not sums or any(n.kind not in ("sum", "prod") for n in sums):
        return False
    nested = False
    for top in _outermost(body, t.expr):
        depth = _tree_ok(body, top, frozenset())
        if depth is None:
            return False
        nested |= depth > 1
    return nested


def _outermost(body: Body, e) -> list:
    """The sums of ``e`` not inside another sum of it, in a stable order."""
    found: dict = {}
    stack = [sp.sympify(e)]
    seen = set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if isinstance(x, forms.Reduction):
            found.setdefault(x, None)
        elif isinstance(x, sp.Symbol) and x in body.temps:
            stack.append(body.temps[x])
        elif isinstance(x, sp.Symbol) and x in body.reads:
            stack.extend(sp.sympify(i) for i in body.reads[x][1])
        else:
            stack.extend(x.args)
    return sorted(found, key=str)


def _tree_ok(body: Body, red, outside: frozenset) -> int | None:
    """The depth of the sums under ``red`` (1: none), where each reads only the loops around it; else None."""
    k = red.args[1]
    if k not in body.deps.ranges or any(body.deps(b) - outside for b in red.args[2:5]):
        return None
    inside = outside | {k}
    if body.deps(red.args[0]) - inside:
        return None
    deepest = 0
    for inner in _outermost(body, red.args[0]):
        d = _tree_ok(body, inner, inside)
        if d is None:
            return None
        deepest = max(deepest, d)
    return 1 + deepest


class NestLoops(LoopFunction):
    """The loop function of one ``nest`` domain (see the module docstring)."""

    def _function(self) -> tuple[str, list[str]] | None:
        loops = {n.args[1] for t in self.targets for n in self.body.nodes(t.expr) if isinstance(n, forms.Reduction)}
        loops |= {k for t in self.targets for e in [t.expr, *map(sp.sympify, t.index)] for k in self.body.deps(e)}
        leaves, reads = self.used([x for k in sorted(loops, key=str) for x in self.body.deps.ranges[k]])
        self.codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([self.codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        self.reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        self.loads: set[str] = set()
        outer = self._point({})
        block = _Block(outer)
        scatters = [t for t in self.targets if t.mode == "scatter"]
        if scatters:
            chain = nest_order(self.body, frozenset().union(*(
                self.body.deps(e) for t in scatters for e in [t.expr, *map(sp.sympify, t.index)])))
            block.add(self._scatter_nest(chain, {}, outer, scatters))
        returns = []
        for t in self.targets:
            if t.mode != "scatter":
                for red in _outermost(self.body, t.expr):
                    block.add(self._sum(red, {}, outer))
                returns.append(outer.value(t.expr))
        body = block.done()
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        self._note(outer)
        return self.register(params, body, self.loads), params

    # -- printing ------------------------------------------------------------------------------

    def _point(self, index: dict):
        """A printer of one point of the loops in ``index`` (binder -> loop variable)."""
        pr = self.printer(self.codes, self.reads_map, 2 + len(index), {k: v.id for k, v in index.items()})
        pr.scalar_points = True
        return pr

    def _note(self, pr) -> None:
        self.loads |= pr.helpers | ({"math"} if pr.uses_math else set())

    def _range(self, k, pr) -> tuple[lir.Name, lir.Expr]:
        a, b, s = (pr.value(x) for x in self.body.deps.ranges[k])
        step = self.body.deps.ranges[k][2]
        word = pr.words.get(k)          # (the user's loop variable)
        name = self.fresh(word if isinstance(word, str) and word.isidentifier() else "k")
        return lir.Name(name), lir.Call(lir.Name("range"), (a, b) if sp.sympify(step) == 1 else (a, b, s))

    def _sum(self, red, index: dict, around) -> list[lir.Stmt]:
        """The statements computing sum ``red`` at a point of the loops ``index`` (printed by ``around``,
        which then reads it as its accumulator): the accumulator, the loop, the inner sums inside it."""
        k = red.args[1]
        acc = lir.Name(self.fresh("acc"))
        var, rng = self._range(k, around)
        inner_index = {**index, k: var}
        pr = self._point(inner_index)
        block = _Block(pr)
        for inner in _outermost(self.body, red.args[0]):
            block.add(self._sum(inner, inner_index, pr))
        value = pr.value(red.args[0])
        self._note(pr)
        loop_body = block.done() + [lir.AugAssign(acc, "+" if red.kind == "sum" else "*", value)]
        around.root.memo[red] = acc.id
        start = lir.Lit("0.0" if red.kind == "sum" else "1.0")
        return [lir.Assign(acc, start), lir.For(var, rng, tuple(loop_body))]

    def _scatter_nest(self, chain, index: dict, around, scatters) -> list[lir.Stmt]:
        """The loops of ``chain`` (outermost first) around the scatters, added in the innermost body."""
        k, *rest = chain
        var, rng = self._range(k, around)
        inner_index = {**index, k: var}
        pr = self._point(inner_index)
        block = _Block(pr)
        if rest:
            block.add(self._scatter_nest(rest, inner_index, pr, scatters))
        else:
            adds = []
            for t in scatters:
                at = tuple(integer_index(pr.value(sp.sympify(x))) for x in t.index)
                adds.append(lir.AugAssign(lir.Index(lir.Name(t.target), at), "+", pr.value(t.expr)))
            block.add(adds)
        self._note(pr)
        return [lir.For(var, rng, tuple(block.done()))]

    def _call(self, name: str, params: list[str]) -> list[lir.Stmt]:
        """The call; its results into the targets that are not scatters (written in place)."""
        call = lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params))
        results = [t for t in self.targets if t.mode != "scatter"]
        if not results:
            return [lir.ExprStmt(call)]
        (t,) = results
        target = lir.Name(t.target)
        return [lir.AugAssign(target, "+", call) if t.mode == "add" else lir.Assign(target, call)]


class _Block:
    """The statements of one loop body (or the function's), in order: what its printer has printed so far
    (the values and bounds the next statements read) before each statement added."""

    def __init__(self, pr):
        self.pr = pr
        self.out: list[lir.Stmt] = []
        self.taken = 0

    def _flush(self) -> None:
        self.out += self.pr.body[self.taken:]
        self.taken = len(self.pr.body)

    def add(self, stmts: list[lir.Stmt]) -> None:
        self._flush()
        self.out += stmts

    def done(self) -> list[lir.Stmt]:
        self._flush()
        return self.out

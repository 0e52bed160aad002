"""The numba backend's loop nests: the parts of an SOI that run over several loop indices, as compiled nests.

A double loop the phi-calculus keeps as sums (``e += f(i, j)`` over ``j in range(i + 1, n)`` inside
``i in range(n)``: a nested Σ) or whose adjoint scatters over two indices (``b_px[i, j + 1] += g(i, j)``)
matches none of the one-loop domains of :mod:`coarsen_nb.lower.numba_fusion`, and the NumPy printer runs it
over n × n index arrays (a triangle through a mask).  Under Numba the cheapest form is the user's own loop
nest, with nothing stored: here each such part becomes one function of the module, a ``nest`` domain:

* a target that is a number (the value, or a scalar adjoint ``b_a += ...``) whose reductions nest over the
  loops: each reduction an accumulator set before its loop, the code that reads an inner one placed after
  the inner loop, inside the outer one; reductions of one level that read each other in turn (a
  log-sum-exp is its maximum, then the sum of the shifted exponentials: ``phi.logsumexp.lowered``);
* scatters ``b_x[i(.), j(.)] += g(i, j)`` that vary over the same loops: one nest, every scatter added in
  its innermost body (the loops run in sequence, so two scatters to one element add up as the user's loop
  adds them), each reduction their values read computed once at the outermost loop it can be (a
  softmax's log-sum-exp at each i, before the loop over j).

The ranges nest as the user's loops did (an inner range may read the outer indices: triangles); a
``Piecewise`` is a real ``if`` at each point, as in every fused loop; Σ, Π, max and min (NumPy's: a NaN
wins).  Not taken (array code as before): a target varying over the elements of an array (``ELEM``), the
nodes no single pass computes (``fusion_domain.NOT_ONE_PASS``, but for the log-sum-exp) and the scans.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, lir_passes
from coarsen_nb.lower.domain import Domain, Target
from coarsen_nb.lower.fusion_domain import NOT_ONE_PASS, Body
from coarsen_nb.lower.numba_loops import LoopFunction, integer_index, minus
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.phi import forms, logsumexp
from coarsen_nb.phi.scans import SCAN_FORMS
from coarsen_nb.symbolic.levels import ELEM


def nest_domains(body: Body, targets: list[Target]) -> tuple[list[Domain], list[Target]]:
    """The ``nest`` domains of those ``targets`` that have one (the scatters over one chain of loops share
    a domain; each number target is a domain of its own), and the targets left over."""
    groups: dict = {}
    rest: list[Target] = []
    for t in targets:
        key = _scatter_loops(body, t) if t.mode == "scatter" else ("number", len(groups)) \
            if _number_ok(body, t) else None
        if key is None:
            rest.append(t)
        else:
            groups.setdefault(key, []).append(t)
    return [Domain("nest", tuple(group)) for group in groups.values()], rest


def _plain(body: Body, e) -> bool:
    """``e`` holds nothing a nest cannot compute point by point (a log-sum-exp is two reductions)."""
    barred = tuple(c for c in NOT_ONE_PASS if c is not forms.LogSumExp) + SCAN_FORMS + (forms.ElemSum,)
    return not any(isinstance(n, barred) for n in body.nodes(e))


def _number_ok(body: Body, t: Target) -> bool:
    """A number target whose reductions each run over a loop whose range and operand read only the loops
    of the reductions around it."""
    if body.deps(t.expr) or not _plain(body, t.expr):
        return False
    tops = maximal_reductions(body, t.expr)
    return bool(tops) and all(_depth(body, r, frozenset()) is not None for r in tops)


def _scatter_loops(body: Body, t: Target):
    """The loops (outermost first) a scatter varies over; each reduction its value reads computed at the
    level of the loops it varies over (an outer part of them).  None: not a nest."""
    exprs = [t.expr, *(sp.sympify(i) for i in t.index)]
    if not all(_plain(body, e) for e in exprs):
        return None
    binders = frozenset().union(*(body.deps(e) for e in exprs))
    if ELEM in binders or not binders or not binders <= set(body.deps.ranges):
        return None
    if t.level is not None and set(t.level) != binders:
        return None
    chain = nest_order(body, binders)
    if chain is None:
        return None
    prefixes = [frozenset(chain[:m]) for m in range(len(chain))]
    for e in exprs:
        for r in maximal_reductions(body, e):
            if body.deps(r) not in prefixes or _depth(body, r, body.deps(r)) is None:
                return None
    if len(chain) == 1 and not any(maximal_reductions(body, e) for e in exprs):
        return None             # one loop, nothing reduced: the one-loop scatter domain's
    return tuple(chain)


def nest_order(body: Body, binders) -> list | None:
    """``binders`` outermost first, where each range reads only the loops outside it; None otherwise."""
    order = list(body.deps.ranges)
    chain = sorted(binders, key=lambda b: (body.deps.nest_depth(b), -order.index(b)))
    for n, k in enumerate(chain):
        if any(body.deps(x) - set(chain[:n]) for x in body.deps.ranges[k]):
            return None
    return chain


def maximal_reductions(body: Body, e) -> list:
    """The reductions (and log-sum-exps) of ``e`` not inside another one, in a stable order."""
    found: dict = {}
    stack = [sp.sympify(e)]
    seen = set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if isinstance(x, (forms.Reduction, forms.LogSumExp)):
            found.setdefault(x, None)
        elif isinstance(x, sp.Symbol) and x in body.temps:
            stack.append(body.temps[x])
        elif isinstance(x, sp.Symbol) and x in body.reads:
            stack.extend(sp.sympify(i) for i in body.reads[x][1])
        else:
            stack.extend(x.args)
    return sorted(found, key=str)


def _inside(node) -> sp.Expr:
    """What computing ``node`` prints: a reduction's operand, a log-sum-exp's max-shifted form."""
    return logsumexp.lowered(node) if isinstance(node, forms.LogSumExp) else node.args[0]


def _depth(body: Body, node, level: frozenset) -> int | None:
    """How many loops deep computing ``node`` at a point of the loops ``level`` goes; None where it cannot
    (a reduction kind other than Σ Π max min, a range or an operand reading a loop not around it)."""
    if isinstance(node, forms.LogSumExp):
        inner = [_depth(body, r, level) for r in maximal_reductions(body, _inside(node))]
        return None if not inner or None in inner else max(inner)
    if node.kind not in _KINDS:
        return None
    k = node.args[1]
    if k not in body.deps.ranges or any(body.deps(b) - level for b in node.args[2:5]):
        return None
    inside = level | {k}
    if body.deps(node.args[0]) - inside:
        return None
    deepest = 0
    for r in maximal_reductions(body, node.args[0]):
        d = body.deps(r)
        found = _depth(body, r, level) if d <= level else _depth(body, r, inside) if d <= inside else None
        if found is None:
            return None
        deepest = max(deepest, found if d <= level else found + 1)
    return max(1, deepest)


def _costly_inner(body: Body, e, binders: set) -> list:
    """The largest parts of ``e`` outside any branch that vary over exactly one loop ``k`` of ``binders`` (not
    the outermost: a table of the outermost loop saves nothing), whose range is fixed (step 1), and that
    call a function (``exp``, ``log``, a power that is not a square)."""
    if len(binders) < 2:
        return []
    outermost = nest_order(body, frozenset(binders))
    fixed = {k for k in binders if not any(body.deps(x) for x in body.deps.ranges[k])
             and sp.sympify(body.deps.ranges[k][2]) == 1}
    if outermost is not None:
        fixed.discard(outermost[0])
    out, stack, seen = [], [sp.sympify(e)], set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if isinstance(x, sp.Symbol):
            if x in body.temps:
                stack.append(body.temps[x])
            continue
        d = body.deps(x)
        if len(d) == 1 and next(iter(d)) in fixed and _calls(x):
            out.append(x)
            continue
        if isinstance(x, (sp.Piecewise, sp.ITE, forms.Reduction, forms.LogSumExp)) or x.is_Boolean:
            continue        # (a branch's arms, and what a reduction binds, are not every point's)
        stack.extend(x.args)
    return out


def _invariant(body: Body, e, level: frozenset) -> list:
    """The parts of ``e`` outside any branch that vary over the loops ``level`` at most, read no
    array element (a read before the loop that guards it could be out of bounds), and call a function or
    branch (worth computing once)."""
    out, stack, seen = [], [sp.sympify(e)], set()
    while stack:
        x = stack.pop()
        if x in seen or x.is_Number:
            continue
        seen.add(x)
        if isinstance(x, sp.Symbol):
            if x in body.temps:
                stack.append(body.temps[x])
            continue
        if body.deps(x) <= level and (_calls(x) or x.has(sp.Piecewise)) and not _reads(body, x):
            out.append(x)       # (and its parts: the printer may print a part in the loop, -m in g - m)
        if isinstance(x, (sp.Piecewise, sp.ITE, forms.Reduction, forms.LogSumExp)) or x.is_Boolean:
            continue
        stack.extend(x.args)
    return out


def guarded_contribution(body: Body, e):
    """``(c, v)`` where ``e`` is ``v`` when ``c`` holds and 0 otherwise: a branch with a zero ``else`` arm,
    times numbers the function was given (a seed, a parameter: finite, so 0 times them is 0); else None."""
    def definition(x):
        while isinstance(x, sp.Symbol) and x in body.temps:
            x = body.temps[x]
        return x

    e = definition(sp.sympify(e))
    factors = [definition(f) for f in e.args] if isinstance(e, sp.Mul) else [e]
    branches = [f for f in factors if isinstance(f, sp.Piecewise) and len(f.args) == 2
                and f.args[1].cond == sp.true and f.args[1].expr == 0 and f.args[0].cond != sp.true]
    if len(branches) != 1:
        return None
    (branch,) = branches
    rest = [f for f in factors if f is not branch]
    if not all(f.is_Number or (isinstance(f, sp.Symbol) and f in body.leaves and not body.leaves[f][2])
               for f in rest):
        return None
    return branch.args[0].cond, sp.Mul(*rest, branch.args[0].expr)


def _reads(body: Body, e) -> bool:
    """``e`` reads an array element itself (not inside a reduction, which is computed before it)."""
    stack, seen = [sp.sympify(e)], set()
    while stack:
        x = stack.pop()
        if x in seen or isinstance(x, (forms.Reduction, forms.LogSumExp)):
            continue
        seen.add(x)
        if isinstance(x, sp.Symbol):
            if x in body.reads:
                return True
            if x in body.temps:
                stack.append(body.temps[x])
            continue
        stack.extend(x.args)
    return False


def _calls(x) -> bool:
    """``x`` calls a function: a SymPy function application or a power other than a small integer one."""
    for n in sp.preorder_traversal(x):
        if isinstance(n, sp.Function) and not isinstance(n, forms.Inert):
            return True
        if isinstance(n, sp.Pow) and not (n.exp.is_Integer and abs(n.exp) <= 2):
            return True
    return False


_KINDS = ("sum", "prod", "max", "min")
_START = {"sum": lir.Lit("0.0"), "prod": lir.Lit("1.0"),
          "max": lir.Unary("-", lir.Attr(lir.Name("math"), "inf")), "min": lir.Attr(lir.Name("math"), "inf")}


class NestLoops(LoopFunction):
    """The loop function of one ``nest`` domain (see the module docstring)."""

    def _function(self) -> tuple[str, list[str]] | None:
        exprs = [e for t in self.targets for e in [t.expr, *map(sp.sympify, t.index)]]
        loops = {n.args[1] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.Reduction)}
        loops |= {n.args[2] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.LogSumExp)}
        loops |= {k for e in exprs for k in self.body.deps(e)}
        leaves, reads = self.used([x for k in sorted(loops, key=str) for x in self.body.deps.ranges[k]])
        self.codes = {s: self.body.leaves[s][0] for s in leaves}
        params = list(dict.fromkeys([self.codes[s] for s in leaves] + reads +
                                    [t.target for t in self.targets if t.mode == "scatter"]))
        if not all(p.isidentifier() for p in params):
            return None
        self.reads_map = {s: (self.body.names(arr), idx) for s, (arr, idx) in self.body.reads.items()}
        self.loads: set[str] = set()
        self.tables: list = []
        known: dict = {}
        block = _Block(self._point({}, known))
        self._fill_tables(block, exprs)
        scatters = [t for t in self.targets if t.mode == "scatter"]
        if scatters:
            chain = nest_order(self.body, frozenset().union(*(
                self.body.deps(e) for t in scatters for e in [t.expr, *map(sp.sympify, t.index)])))
            self._scatter_nest(chain, {}, block, known, scatters)
        returns = []
        for t in self.targets:
            if t.mode != "scatter":
                for r in maximal_reductions(self.body, t.expr):
                    self._ensure(r, {}, block, known)
                returns.append(block.pr.value(t.expr))
        body = block.done()
        if returns:
            body.append(lir.Return(returns[0] if len(returns) == 1 else lir.Tuple(tuple(returns), bare=True)))
        self._note(block.pr)
        # (a value computed once before a loop that the loop's printer then did not ask for)
        body = list(lir_passes.drop_dead_assignments(tuple(body)))
        return self.register(params, body, self.loads), params

    # -- printing ------------------------------------------------------------------------------

    def _point(self, index: dict, known: dict):
        """A printer of one point of the loops in ``index`` (binder -> loop variable), which reads the
        reductions ``known`` there (node -> the accumulator's name)."""
        pr = self.printer(self.codes, self.reads_map, 2 + len(index), {k: v.id for k, v in index.items()})
        pr.scalar_points = True
        pr.root.memo.update(known)
        for node, k, table, lo in self.tables:
            if k in index:
                pr.root.memo[node] = lir.Index(table, (minus(index[k], lo),))
        return pr

    def _fill_tables(self, block, exprs) -> None:
        """Tables of the costly values that vary over an inner loop alone (``exp(-2*log_sigma[k])`` inside
        ``for i: for k:``): computed once per point of that loop before the nest, then read in it, as the
        NumPy printer computes them once at their own level.  Only values every point computes (not under a
        branch: a branch not taken may guard a read out of bounds) of a loop whose range is fixed."""
        binders = {k for e in exprs for k in self.body.deps(e)}
        binders |= {n.args[1] for e in exprs for n in self.body.nodes(e) if isinstance(n, forms.Reduction)}
        found: dict = {}
        for e in exprs:
            for n in _costly_inner(self.body, e, binders):
                found.setdefault(n, None)
        by_loop: dict = {}
        for n in found:
            by_loop.setdefault(next(iter(self.body.deps(n))), []).append(n)
        for k, nodes in sorted(by_loop.items(), key=lambda kv: str(kv[0])):
            var, rng = self._range(k, block.pr)
            lo = rng.args[0]
            count = lir.Call(lir.Name("max"), (lir.Lit("0"), minus(rng.args[1], lo)))
            fill = self._point({k: var}, {})
            stores, made = [], []
            for n in sorted(nodes, key=str):
                table = lir.Name(self.fresh("table"))
                made.append(lir.Assign(table, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (count,))))
                stores.append(lir.Assign(lir.Index(table, (minus(var, lo),)), fill.value(n)))
                self.tables.append((n, k, table, lo))
            self._note(fill)
            block.add(made + [lir.For(var, rng, tuple(list(fill.body) + stores))])

    def _note(self, pr) -> None:
        self.loads |= pr.helpers | ({"math"} if pr.uses_math else set())

    def _range(self, k, pr) -> tuple[lir.Name, lir.Expr]:
        a, b, s = (pr.value(x) for x in self.body.deps.ranges[k])
        step = self.body.deps.ranges[k][2]
        word = pr.words.get(k)          # (the user's loop variable)
        name = self.fresh(word if isinstance(word, str) and word.isidentifier() else "k")
        return lir.Name(name), lir.Call(lir.Name("range"), (a, b) if sp.sympify(step) == 1 else (a, b, s))

    def _ensure(self, node, index: dict, block, known: dict) -> None:
        """Compute ``node`` (a reduction or a log-sum-exp) at a point of the loops ``index`` into ``block``,
        after the reductions of the same level it reads; ``known`` and the block's printer then read it."""
        if node in known:
            return
        level = frozenset(index)
        for r in maximal_reductions(self.body, _inside(node)):
            if self.body.deps(r) <= level:
                self._ensure(r, index, block, known)
        if isinstance(node, forms.LogSumExp):
            code = block.pr.value(_inside(node))
            name = lir.Name(self.fresh("lse"))
            block.pr.emit(lir.Assign(name, code))
            known[node] = block.pr.root.memo[node] = name.id
            return
        k = node.args[1]
        acc = lir.Name(self.fresh("acc"))
        var, rng = self._range(k, block.pr)
        inner_index = {**index, k: var}
        inner_known = self._hoisted(block, known, [node.args[0]], level)
        inner = _Block(self._point(inner_index, inner_known))
        for r in maximal_reductions(self.body, node.args[0]):
            self._ensure(r, inner_index, inner, inner_known)
        step = self._accumulate(node.kind, acc, inner.pr.value(node.args[0]))
        self._note(inner.pr)
        if node.kind in ("max", "min"):
            self.loads.add("math")
        block.add([lir.Assign(acc, _START[node.kind]), lir.For(var, rng, tuple(inner.done() + step))])
        known[node] = block.pr.root.memo[node] = acc.id

    def _hoisted(self, block, known: dict, exprs, level: frozenset) -> dict:
        """``known`` and the values of ``exprs`` that an inner loop would compute at every point but that
        vary over the loops ``level`` only (a softmax's shift ``max(m, log(c))`` inside the loop over k):
        computed once, here, by ``block``'s printer."""
        inner = dict(known)
        for e in exprs:
            for n in _invariant(self.body, e, level):
                if n not in inner:
                    code = block.pr.value(n)
                    if not is_atom_code(code):
                        name = lir.Name(self.fresh("t"))
                        block.pr.emit(lir.Assign(name, code))
                        code = name
                    inner[n] = code
        return inner

    def _accumulate(self, kind: str, acc: lir.Name, val: lir.Expr) -> list[lir.Stmt]:
        """One step of a reduction into ``acc``; NumPy's max/min, where a NaN anywhere is the result."""
        if kind in ("sum", "prod"):
            return [lir.AugAssign(acc, "+" if kind == "sum" else "*", val)]
        term = lir.Name(self.fresh("v"))
        test = lir.BoolOp("or", (lir.Compare(">" if kind == "max" else "<", term, acc), lir.Compare("!=", term, term)))
        return [lir.Assign(term, val), lir.If(test, (lir.Assign(acc, term),))]

    def _scatter_nest(self, chain, index: dict, block, known: dict, scatters) -> None:
        """The loops of ``chain`` (outermost first) around the scatters, added in the innermost body; each
        reduction the scatters read computed at the outermost level it can be."""
        level = frozenset(index)
        for t in scatters:
            for e in [t.expr, *map(sp.sympify, t.index)]:
                for r in maximal_reductions(self.body, e):
                    if self.body.deps(r) <= level:
                        self._ensure(r, index, block, known)
        if not chain:
            guarded: dict = {}
            adds = []
            for t in scatters:
                found = guarded_contribution(self.body, t.expr)
                if found is not None:
                    guarded.setdefault(found[0], []).append((t, found[1]))
                    continue
                at = tuple(integer_index(block.pr.value(sp.sympify(x))) for x in t.index)
                adds.append(lir.AugAssign(lir.Index(lir.Name(t.target), at), "+", block.pr.value(t.expr)))
            block.add(adds)
            for cond, items in guarded.items():
                # (a contribution that is 0 outside a branch is added inside it: at the points where the
                # branch is not taken there is nothing to add, as in the user's loop)
                test = block.pr.value(cond)
                arm = self._point(index, dict(block.pr.root.memo))
                stmts = []
                for t, value in items:
                    at = tuple(integer_index(arm.value(sp.sympify(x))) for x in t.index)
                    stmts.append(lir.AugAssign(lir.Index(lir.Name(t.target), at), "+", arm.value(value)))
                self._note(arm)
                block.add([lir.If(test, tuple(list(arm.body) + stmts))])
            return
        k, *rest = chain
        var, rng = self._range(k, block.pr)
        inner_index = {**index, k: var}
        inner_known = self._hoisted(block, known, [e for t in scatters for e in [t.expr, *map(sp.sympify, t.index)]],
                                    level)
        inner = _Block(self._point(inner_index, inner_known))
        self._scatter_nest(rest, inner_index, inner, inner_known, scatters)
        self._note(inner.pr)
        block.add([lir.For(var, rng, tuple(inner.done()))])

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

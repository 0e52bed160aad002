"""Which parts of an SOI are loop nests, and what a nest computes once: the analysis of the numba backend's
``nest`` domain (:mod:`coarsen_nb.lower.numba_nests` prints them).

:func:`nest_domains` picks the targets that run over nested loops (number targets whose reductions nest,
scatters over a chain of loops); :func:`nest_order` puts loops outermost first; :func:`maximal_reductions` and
:func:`reduction_depth` say what each level computes.  Then what a nest computes once rather than at every
point: :func:`costly_inner_values` (tables over an inner loop alone), :func:`loop_invariants` (values of the
outer loops only), :func:`guarded_contribution` (a contribution zero outside a branch).  Every one is a
question about the SOI's SymPy expressions (``fusion_domain.Body``), none about printed code.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower.domain import Domain, Target, loop_nesting
from coarsen_nb.lower.fusion_domain import NOT_ONE_PASS, Body
from coarsen_nb.phi import forms, logsumexp
from coarsen_nb.phi.scans import SCAN_FORMS
from coarsen_nb.symbolic.levels import ELEM

#: the reductions a nest accumulates
KINDS = ("sum", "prod", "max", "min")


def nest_domains(body: Body, targets: list[Target]) -> tuple[list[Domain], list[Target]]:
    """The ``nest`` domains of those ``targets`` that have one (the scatters over one chain of loops share
    a domain, the number targets another: one function computing them shares what they read), and the
    targets left over."""
    groups: dict = {}
    rest: list[Target] = []
    for t in targets:
        key = _scatter_loops(body, t) if t.mode == "scatter" else ("numbers",) if _number_ok(body, t) else None
        if key is None:
            rest.append(t)
        else:
            groups.setdefault(key, []).append(t)
    return [Domain("nest", tuple(group)) for group in groups.values()], rest


def _plain(body: Body, e) -> bool:
    """``e`` holds nothing a nest cannot compute point by point (a log-sum-exp is two reductions)."""
    barred = tuple(c for c in NOT_ONE_PASS if c not in (forms.LogSumExp, forms.ArgOneHot)) + SCAN_FORMS + \
        (forms.ElemSum,)
    if any(isinstance(n, barred) for n in body.nodes(e)):
        return False
    # (an arg-extremum indicator only as a factor of a sum over its own loop: reduction_depth checks that)
    return not any(isinstance(n, forms.ArgOneHot) for n in nodes_outside_reductions(body, e))


def _number_ok(body: Body, t: Target) -> bool:
    """A number target whose reductions each run over a loop whose range and operand read only the loops
    of the reductions around it."""
    if body.deps(t.expr) or not _plain(body, t.expr):
        return False
    tops = maximal_reductions(body, t.expr)
    return bool(tops) and all(reduction_depth(body, r, frozenset()) is not None for r in tops)


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
            if body.deps(r) not in prefixes or reduction_depth(body, r, body.deps(r)) is None:
                return None
    if len(chain) == 1 and not any(maximal_reductions(body, e) for e in exprs):
        return None             # one loop, nothing reduced: the one-loop scatter domain's
    return tuple(chain)


def nest_order(body: Body, binders) -> list | None:
    """``binders`` outermost first, where each range reads only the loops outside it; None otherwise."""
    chain = loop_nesting(body.deps, binders)
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
    # (one or none needs no order: printing a reduction that holds γ's to sort it is most of a cold call)
    return sorted(found, key=str) if len(found) > 1 else list(found)


def computed_inside(node) -> sp.Expr:
    """What computing ``node`` prints: a reduction's operand, a log-sum-exp's max-shifted form."""
    return logsumexp.lowered(node) if isinstance(node, forms.LogSumExp) else node.args[0]


def reduction_depth(body: Body, node, level: frozenset) -> int | None:
    """How many loops deep computing ``node`` at a point of the loops ``level`` goes; None where it cannot
    (a reduction kind other than Σ Π max min, a range or an operand reading a loop not around it)."""
    if isinstance(node, forms.LogSumExp):
        inner = [reduction_depth(body, r, level) for r in maximal_reductions(body, computed_inside(node))]
        return None if not inner or None in inner else max(inner)
    if node.kind not in KINDS:
        return None
    if any(isinstance(n, forms.ArgOneHot) for n in nodes_outside_reductions(body, node.args[0])):
        point = arg_point(body, node)
        if point is None or any(not body.deps(r) <= level for e in (point[0].args[0], point[1])
                                for r in maximal_reductions(body, e)):
            return None         # (a maximum's adjoint: at its one point, nothing reduced over its loop inside)
    k = node.args[1]
    if k not in body.deps.ranges or any(body.deps(b) - level for b in node.args[2:5]):
        return None
    inside = level | {k}
    if body.deps(node.args[0]) - inside:
        return None
    deepest = 0
    for r in maximal_reductions(body, node.args[0]):
        d = body.deps(r)
        around = level if d <= level else inside if d <= inside else None
        found = None if around is None else reduction_depth(body, r, around)
        if found is None:
            return None
        deepest = max(deepest, found if d <= level else found + 1)
    return max(1, deepest)


def costly_inner_values(body: Body, e, binders: set) -> list:
    """The largest parts of ``e`` outside any branch that vary over exactly one loop ``k`` of ``binders`` (not
    the outermost: a table of the outermost loop saves nothing), whose range is fixed (step 1), and that
    call a function (``exp``, ``log``, a power that is not a square); the terms of a reduction or a
    log-sum-exp too (each point of its range computes them)."""
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
        if len(d) == 1 and next(iter(d)) in fixed and calls_a_function(x):
            out.append(x)
            continue
        if isinstance(x, (sp.Piecewise, sp.ITE)) or x.is_Boolean:
            continue        # (a branch's arms are not every point's)
        if isinstance(x, forms.Reduction):
            # (a reduction's terms are every point's of its range: gmm's forward, exp(-2*log_sigma[k]) inside
            # the log-sum-exp over k, was a libm exp at each point of the nest, 8 per data point)
            stack.append(x.args[0])
            continue
        if isinstance(x, forms.LogSumExp):
            stack.extend(x.args[:2])
            continue
        stack.extend(x.args)
    return out


def loop_invariants(body: Body, e, level: frozenset) -> list:
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
        if body.deps(x) <= level and (calls_a_function(x) or x.has(sp.Piecewise)) and not reads_elements(body, x):
            out.append(x)       # (and its parts: the printer may print a part in the loop, -m in g - m)
        if isinstance(x, forms.LogSumExp):
            stack.append(x.args[0])     # (its constant term c: computed wherever the log-sum-exp is)
            continue
        if isinstance(x, (sp.Piecewise, sp.ITE, forms.Reduction)) or x.is_Boolean:
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


def arg_point(body: Body, red):
    """``(hot, h)`` where ``red`` is Σ_k [k = argmax_k g]·h(k) (a maximum's adjoint): ``hot`` the indicator
    ``ArgOneHot(g, k, ...)`` over the sum's own loop, a factor of its operand, ``h`` the other factors; the sum
    is h at that one point.  None otherwise."""
    if not isinstance(red, forms.Reduction) or red.kind != "sum":
        return None
    factors, todo = [], [red.args[0]]
    while todo:
        f = todo.pop()
        if isinstance(f, sp.Symbol) and f in body.temps and isinstance(body.temps[f], sp.Mul):
            todo.append(body.temps[f])
        elif isinstance(f, sp.Mul):
            todo.extend(f.args)
        else:
            factors.append(f)
    hots = [f for f in factors if isinstance(f, forms.ArgOneHot)]
    if len(hots) != 1 or tuple(hots[0].args[1:5]) != tuple(red.args[1:5]):
        return None
    rest = [f for f in factors if f is not hots[0]]
    if any(isinstance(n, forms.ArgOneHot) for f in rest for n in body.nodes(f)):
        return None
    return hots[0], sp.Mul(*rest)


def nodes_outside_reductions(body: Body, e) -> list:
    """The nodes of ``e`` (temps expanded) not inside a reduction or a log-sum-exp: what a point of the loop
    computes itself, a reduction being computed before it."""
    out, stack, seen = [], [sp.sympify(e)], set()
    while stack:
        x = stack.pop()
        if x in seen or isinstance(x, (forms.Reduction, forms.LogSumExp)):
            continue
        seen.add(x)
        out.append(x)
        if isinstance(x, sp.Symbol):
            if x in body.temps:
                stack.append(body.temps[x])
            continue
        stack.extend(x.args)
    return out


def reads_elements(body: Body, e) -> bool:
    """``e`` reads an array element itself (not inside a reduction, which is computed before it)."""
    return any(isinstance(n, sp.Symbol) and n in body.reads for n in nodes_outside_reductions(body, e))


def calls_a_function(x) -> bool:
    """``x`` calls a function: a SymPy function application or a power other than a small integer one."""
    for n in sp.preorder_traversal(x):
        if isinstance(n, sp.Function) and not isinstance(n, forms.Inert):
            return True
        if isinstance(n, sp.Pow) and not (n.exp.is_Integer and abs(n.exp) <= 2):
            return True
    return False

"""``np.log(c + np.sum(np.exp(g)))`` → the max-shifted log-sum-exp, on the gated tree.

The loop form of log-sum-exp is recognized inside a kernel
(:mod:`coarsen_nb.phi.logsumexp`).  Written with arrays, its parts are three
values: ``np.sum`` is an opaque step, so no kernel ever holds the whole
``log(Σ exp(g))``, and evaluated as written ``exp(1000.0)`` overflows and the
gradient is inf/inf.  This pass rewrites the pattern before lifting into the
same shifted form, in steps that exist already::

    $g     = g                                  (when g is not a name)
    $top   = amax($g)
    $shift = max($top, log(c)) if c > 0 else $top     (just $top without c)
    $exp   = exp($g - $shift)                   every element <= 1
    $sum   = sum($exp)
    L      = $shift + log(c·exp(-$shift) + $sum)      (c·exp(-$shift) <= 1 too)

Every step is stable on its own, so the result holds under every selection
(L = 1 and per-block included), and the derivative the ordinary rules give is
the softmax exp(g − L): the adjoint through the shift is zero up to rounding
(L does not depend on it), finite always.  The ``exp`` and ``sum`` values of
the original are dropped when nothing else reads them (otherwise they stay,
and overflow where the program itself does).  Recognized: ``log(s)``,
``log(c + s)``, ``log(s + c)`` and ``log1p(s)`` for s = ``sum(exp(g))`` of an
array g and a scalar c, the log in the region of the sum or one inside it.
"""

from __future__ import annotations

import dataclasses
import itertools

from coarsen_nb import ir
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, defined_names, names_read
from coarsen_nb.phi.types import T, expr_type


def rewrite(g: GatedFunction, types: dict[str, T]) -> tuple[GatedFunction, dict[str, T]]:
    """``g`` with every array log-sum-exp written max-shifted, and ``types`` for the new names."""
    types = dict(types)
    taken = defined_names(g.body) | set(g.params)
    counter = itertools.count(1)
    touched: set[str] = set()
    values: dict[str, ir.Expr] = {}           # every name's value (SSA: one definition each)

    def fresh(hint: str) -> str:
        while True:
            name = f"${hint}{next(counter)}.1"
            if name not in taken:
                taken.add(name)
                return name

    def let(name_hint: str, value: ir.Expr, line: int, out: list) -> ir.Name:
        name = fresh(name_hint)
        types[name] = expr_type(value, types)
        out.append(Let(name, value, line))
        return ir.Name(name)

    def region(nodes, outer_exps=None, outer_sums=None) -> tuple:
        # an inner region (a branch, a loop body) sees the sums of the regions around it
        exps: dict[str, ir.Expr] = dict(outer_exps or {})       # name of an array exp(g) -> g
        sums: dict[str, ir.Expr] = dict(outer_sums or {})       # name of sum(exp(g)) -> g
        out: list = []
        for n in nodes:
            if isinstance(n, Let):
                values[n.name] = n.value
            if isinstance(n, If):
                out.append(If(n.cond, region(n.then, exps, sums), region(n.orelse, exps, sums), n.gammas, n.line))
                continue
            if isinstance(n, Loop):
                out.append(Loop(n.label, n.info, n.mus, region(n.header, exps, sums), n.cond,
                                region(n.body, exps, sums), n.etas))
                continue
            value = n.value
            if _is_call(value, "exp") and types.get(n.name, T("float")).is_array:
                exps[n.name] = value.args[0]
            elif _is_call(value, "sum") and isinstance(value.args[0], ir.Name) and value.args[0].id in exps:
                sums[n.name] = exps[value.args[0].id]
                touched.update((n.name, value.args[0].id))
            elif isinstance(value, ir.Name) and value.id in sums:     # s = np.sum(e) on its own line
                sums[n.name] = sums[value.id]
                touched.add(n.name)
            elif sums:
                value = _replace(value, lambda e, line=n.line: _shifted(e, sums, types, let, line, out, values))
            out.append(Let(n.name, value, n.line) if value is not n.value else n)
        return tuple(out)

    body = region(g.body)
    body = _drop_unread(body, touched, set(ir.names_used(g.result)))
    return GatedFunction(g.name, g.params, body, g.result, g.source, g.words), types


def _is_call(e, func: str) -> bool:
    return isinstance(e, ir.Call) and e.func == func and len(e.args) == 1 and not e.static


def _log_of_sum(e, sums: dict):
    """(name of the sum, c or None) when ``e`` is log(s), log(c + s), log(s + c) or log1p(s)."""
    if _is_call(e, "log1p") and isinstance(e.args[0], ir.Name) and e.args[0].id in sums:
        return e.args[0].id, ir.Const(1.0)
    if not _is_call(e, "log"):
        return None
    arg = e.args[0]
    if isinstance(arg, ir.Name) and arg.id in sums:
        return arg.id, None
    if isinstance(arg, ir.BinOp) and arg.op == "+":
        for s, c in ((arg.left, arg.right), (arg.right, arg.left)):
            if isinstance(s, ir.Name) and s.id in sums and s.id not in ir.names_used(c):
                return s.id, c
    return None


def _already_shifted(g: ir.Expr, values: dict) -> bool:
    """Whether ``g`` is ``x - m`` with ``m = np.max(x)`` of the same array: the user's own max shift
    (``m + np.log(np.sum(np.exp(x - m)))``), whose largest exponent is exactly 0 — the program is stable
    as written, and shifting it again only adds a maximum and its adjoint."""
    def value(e):
        while isinstance(e, ir.Name) and e.id in values:      # through copies (m = $p1; $p1 = amax(x))
            e = values[e.id]
        return e

    g = value(g)
    if not (isinstance(g, ir.BinOp) and g.op == "-"):
        return False
    top = value(g.right)
    return _is_call(top, "amax") and value(top.args[0]) == value(g.left)


def _shifted(e, sums: dict, types: dict, let, line: int, out: list, values: dict):
    """The name of the shifted log-sum-exp that replaces ``e`` (its steps appended to ``out``), or None
    (not a log-sum-exp, or one the program shifts itself)."""
    found = _log_of_sum(e, sums)
    if found is None:
        return None
    s, c = found
    if c is not None and expr_type(c, types).ndim != 0:
        return None
    g = sums[s]
    if _already_shifted(g, values):
        return None
    if not isinstance(g, ir.Name):
        g = let("lse_arg", g, line, out)
    top = let("lse_max", ir.Call("amax", (g,)), line, out)
    shift = top
    if c is not None:
        shift = let("lse_shift", ir.IfExp(ir.Compare(">", c, ir.Const(0.0)),
                                          ir.Call("max", (top, ir.Call("log", (c,)))), top), line, out)
    exps = let("lse_exp", ir.Call("exp", (ir.BinOp("-", g, shift),)), line, out)
    total = let("lse_sum", ir.Call("sum", (exps,)), line, out)
    rest = None if c is None else ir.Call("exp", (ir.UnaryOp("-", shift),))
    if rest is not None and not (isinstance(c, ir.Const) and c.value == 1):
        rest = ir.BinOp("*", c, rest)
    inner = total if rest is None else ir.BinOp("+", rest, total)
    return let("lse", ir.BinOp("+", shift, ir.Call("log", (inner,))), line, out)


def _replace(e: ir.Expr, fn) -> ir.Expr:
    """``e`` with each sub-expression x for which ``fn(x)`` is not None replaced by it (outermost first)."""
    new = fn(e)
    if new is not None:
        return new
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, tuple) and v and all(dataclasses.is_dataclass(x) for x in v):
            w = tuple(_replace(x, fn) for x in v)
        elif dataclasses.is_dataclass(v):
            w = _replace(v, fn)
        else:
            continue
        if w != v:
            changes[f.name] = w
    return dataclasses.replace(e, **changes) if changes else e


def _drop_unread(body: tuple, candidates: set[str], result_reads: set[str]) -> tuple:
    """``body`` without the Lets of ``candidates`` that nothing reads any more (to a fixed point)."""
    while True:
        read = set(names_read(body)) | result_reads
        dead = {n for n in candidates if n not in read}
        if not dead:
            return body
        candidates = candidates - dead
        body = _without(body, dead)


def _without(nodes, dead: set[str]) -> tuple:
    out = []
    for n in nodes:
        if isinstance(n, Let):
            if n.name not in dead:
                out.append(n)
        elif isinstance(n, If):
            out.append(If(n.cond, _without(n.then, dead), _without(n.orelse, dead), n.gammas, n.line))
        else:
            out.append(Loop(n.label, n.info, n.mus, _without(n.header, dead), n.cond, _without(n.body, dead),
                            n.etas))
    return tuple(out)

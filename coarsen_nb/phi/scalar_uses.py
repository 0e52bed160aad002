"""Where Python needs one number and this signature gives an array: refuse before compiling.

The compiler specializes a function to the ranks of its arguments, and array
code is elementwise: given a 2-d ``x``, the row ``x[i]`` lifts to an array
and ``if x[i] > 0`` becomes an elementwise select.  Python's own run of the
function cannot do that — an ``if`` on an array of several elements is a
``ValueError``, ``math.sqrt`` of one a ``TypeError`` — so the compiled
function would return a number where the function it stands for raises: a
silently wrong answer.  :func:`check` runs after type inference and refuses
every such use with a CoarsenError that names the parameter whose rank makes
the value an array, with the rank the function reads it at.

The places where Python needs one number: the condition of ``if`` and
``while``, of a conditional expression, the operands of ``and``/``or``/
``not``, the builtins ``min``/``max`` of several arguments, ``float()`` and
``int()``, and a ``math.`` function (the frontend spells ``math.sqrt`` and
``np.sqrt`` alike, so a call counts as ``math``'s when its line writes
``math.<name>(`` and not the NumPy spelling).  ``range`` bounds are checked by
:func:`coarsen_nb.phi.types.infer` already.

:func:`check_indexing` runs before inference, for the opposite mismatch: a
parameter read with more indices than its argument has dimensions.
"""

from __future__ import annotations

import re

from coarsen_nb import ir, primitives
from coarsen_nb.errors import CoarsenError
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop
from coarsen_nb.phi.types import T, expr_type


def check_indexing(g: GatedFunction, sig: tuple[T, ...]) -> None:
    """Before type inference: a parameter read with more indices than the argument has dimensions
    (``x[i]`` of a number or a 0-d array) is refused at the read, in the user's names (inference would
    only say ``x[i.1]``, without a line)."""
    ranks = {p: t.ndim for p, t in zip(g.params, sig, strict=True) if t.kind != "shape"}

    def exprs(e: ir.Expr, line: int) -> None:
        if isinstance(e, ir.Index) and isinstance(e.value, ir.Name) and e.value.id in ranks:
            p, k = e.value.id, len(e.index)
            if k > ranks[p]:
                text = g.source.line_text(line) if line else None
                col = text.find(f"{p}[") if text else -1
                drop = f", or a number and drop the index{'es' if k > 1 else ''}" if ranks[p] == 0 else ""
                raise CoarsenError(p, line or None, col if col >= 0 else None, text,
                                   f"pass {p!r} as an array with {_dims(k)}{drop}", g.source.filename,
                                   message=f"{p!r} is read with {k} ind{'ex' if k == 1 else 'ices'}, but it was "
                                           f"passed with {_dims(ranks[p])}")
        for c in ir.children(e):
            exprs(c, line)

    def walk(nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                exprs(n.value, n.line)
            elif isinstance(n, If):
                walk(n.then)
                walk(n.orelse)
                for gm in n.gammas:
                    exprs(gm.value, gm.line)
            elif isinstance(n, Loop):
                for m in (*n.mus, *n.etas):
                    exprs(m.value, m.line)
                walk(n.header)
                walk(n.body)

    walk(g.body)
    exprs(g.result, 0)


def check(g: GatedFunction, types: dict[str, T]) -> None:
    """Raise a CoarsenError at the first use of an array where Python needs one number."""
    deps = _param_dependencies(g)
    indices = _index_counts(g)

    def refuse(what: str, t: T, names: list[str], line: int, token: str, instead: str) -> None:
        params = {p for n in names for p in deps.get(n, {n} if n in g.params else set()) if types[p].is_array}
        # The culprit is a parameter with more dimensions than the indices it is read with.
        params = sorted(params, key=lambda p: (types[p].ndim <= indices.get(p, 0), g.params.index(p)))
        text = g.source.line_text(line) if line else None
        col = text.find(token) if text and token in text else None
        if params:
            p = params[0]
            k = indices.get(p, 0)
            why = f": {p!r} was passed with {_dims(types[p].ndim)}"
            hint = (f"pass {p!r} with {_dims(k)} (the function reads it with {k} ind{'ex' if k == 1 else 'ices'}, "
                    "so each read is one number)" if k else f"pass {p!r} as a number") + f", or {instead}"
        else:
            p, why, hint = what, "", instead
        raise CoarsenError(p, line or None, col if col != -1 else None, text, hint, g.source.filename,
                           message=f"{what} needs one number, but here it is an array of rank {t.ndim}{why} "
                                   "(Python raises an error for this)")

    def scalar(e: ir.Expr, what: str, line: int, token: str, instead: str = WHERE) -> None:
        t = expr_type(e, types)
        if t.is_array:
            refuse(what, t, ir.names_used(e), line, token, instead)

    def exprs(e: ir.Expr, line: int) -> None:
        for c in ir.children(e):
            exprs(c, line)
        if isinstance(e, ir.IfExp):
            scalar(e.test, "the condition of `... if ... else ...`", line, " if ")
        elif isinstance(e, ir.BoolOp):
            for v in e.values:
                scalar(v, f"`{e.op}`", line, f" {e.op} ")
        elif isinstance(e, ir.UnaryOp) and e.op == "not":
            scalar(e.operand, "`not`", line, "not ")
        elif isinstance(e, ir.Call):
            _call(e, line, g.source, scalar)

    def walk(nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                exprs(n.value, n.line)
            elif isinstance(n, If):
                scalar(ir.Name(n.cond), "`if`", n.line, "if ")
                walk(n.then)
                walk(n.orelse)
            elif isinstance(n, Loop):
                walk(n.header)
                if n.info.kind == "while":
                    scalar(ir.Name(n.cond), "`while`", n.line, "while ")
                walk(n.body)

    walk(g.body)


WHERE = "write it elementwise with np.where"


def _dims(n: int) -> str:
    return f"{n} dimension{'' if n == 1 else 's'}"


def _call(e: ir.Call, line: int, source: ir.Source, scalar) -> None:
    if e.func in ("min", "max") and len(e.args) >= 2:
        for a in e.args:
            scalar(a, f"`{e.func}` of several values", line, f"{e.func}(",
                   f"write it elementwise with np.{e.func}imum")
    elif e.func in ("float", "int"):
        scalar(e.args[0], f"`{e.func}()`", line, f"{e.func}(", "convert elementwise with .astype")
    elif (prim := primitives.PRIMITIVES.get(e.func)) is not None:     # not the frontend's own checks
        spelled = prim.math
        text = source.line_text(line) if line else None
        if spelled and text and re.search(rf"\bmath\.{spelled}\(", text) and \
                not (prim.numpy and re.search(rf"\b(np|numpy)\.{prim.numpy}\(", text)):
            instead = f"write it elementwise with np.{prim.numpy}" if prim.numpy else \
                f"apply math.{spelled} to one element at a time, in a loop (NumPy has no {spelled})"
            for a in e.args:
                scalar(a, f"`math.{spelled}`", line, f"math.{spelled}(", instead)


def _param_dependencies(g: GatedFunction) -> dict[str, set[str]]:
    """For every SSA name, the parameters its value depends on (data dependence, to a fixed point)."""
    defs: list[tuple[str, ir.Expr]] = []

    def collect(nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                defs.append((n.name, n.value))
            elif isinstance(n, If):
                collect(n.then)
                collect(n.orelse)
                defs.extend((gm.name, gm.value) for gm in n.gammas)
            elif isinstance(n, Loop):
                defs.extend((m.name, m.value) for m in n.mus)
                collect(n.header)
                collect(n.body)
                defs.extend((e.name, e.value) for e in n.etas)

    collect(g.body)
    deps: dict[str, set[str]] = {p: {p} for p in g.params}
    changed = True
    while changed:
        changed = False
        for name, value in defs:
            new = set().union(*(deps.get(u, set()) for u in ir.names_used(value)))
            if not new <= deps.get(name, set()):
                deps[name] = deps.get(name, set()) | new
                changed = True
    return deps


def _index_counts(g: GatedFunction) -> dict[str, int]:
    """How many indices each parameter is read with (the most, where it is read with several)."""
    out: dict[str, int] = {}

    def exprs(e: ir.Expr) -> None:
        if isinstance(e, ir.Index) and isinstance(e.value, ir.Name) and e.value.id in g.params:
            out[e.value.id] = max(out.get(e.value.id, 0), len(e.index))
        for c in ir.children(e):
            exprs(c)

    def walk(nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                exprs(n.value)
            elif isinstance(n, If):
                walk(n.then)
                walk(n.orelse)
                for gm in n.gammas:
                    exprs(gm.value)
            elif isinstance(n, Loop):
                for m in (*n.mus, *n.etas):
                    exprs(m.value)
                walk(n.header)
                walk(n.body)

    walk(g.body)
    return out

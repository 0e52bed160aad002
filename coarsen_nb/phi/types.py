"""Type inference over the gated tree, for one argument signature.

Lifting needs to know, for every SSA value, whether it is a float, an int, a
bool or an array (and of which rank): an array is lifted as an elementwise
symbol, an int has no derivative, a bool is a predicate.  The runtime
specializes a compiled function per signature, so the types here are exact.

A type is a :class:`T`: ``kind`` in ``{"float", "int", "bool", "shape"}`` and
``ndim`` (0 for scalars; for ``"shape"`` the length of the tuple).
"""

from __future__ import annotations

import re

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.unbound import is_bound_check
from coarsen_nb.phi.arg_types import BOOL, BOTTOM, FLOAT, INT, T, signature_of  # noqa: F401 (re-exported)
from coarsen_nb.phi.gate import GatedFunction, If, Let
from coarsen_nb.rules.table import rule


def join(a: T, b: T) -> T:
    if a == BOTTOM:
        return b
    if b == BOTTOM:
        return a
    if a.kind == "shape" or b.kind == "shape":
        return a if a.kind == "shape" else b
    ndim = max(a.ndim, b.ndim)
    if a.kind == b.kind:
        return T(a.kind, ndim)
    if {a.kind, b.kind} <= {"int", "bool"}:
        return T("int", ndim)
    return T("float", ndim)


def infer(g: GatedFunction, sig: tuple[T, ...]) -> dict[str, T]:
    """The type of every name of ``g`` given the parameter types ``sig``."""
    env: dict[str, T] = dict(zip(g.params, sig, strict=True))

    def walk(nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                env[n.name] = _located(lambda n=n: expr_type(n.value, env), n.line, g.source)
            elif isinstance(n, If):
                walk(n.then)
                walk(n.orelse)
                for gm in n.gammas:
                    env[gm.name] = expr_type(gm.value, env)
            else:
                _check_range(n, env)
                for m in n.mus:
                    env[m.name] = expr_type(m.value.init, env)
                for _ in range(4):      # to a fixed point: int counters may become floats, scalars arrays
                    before = {m.name: env[m.name] for m in n.mus}
                    walk(n.header)
                    walk(n.body)
                    for m in n.mus:
                        env[m.name] = join(env[m.name], expr_type(m.value.next, env))
                    if all(before[k] == env[k] for k in before):
                        break
                for e in n.etas:
                    env[e.name] = env[e.value.value.id]

    walk(g.body)
    env["$result"] = expr_type(g.result, env)
    return env


def _check_range(loop, env: dict[str, T]) -> None:
    """``range`` takes integers: a float bound is Python's TypeError, never a silent loop."""
    info = loop.info
    if info.kind != "range":
        return
    for what, e in (("start", info.start), ("stop", info.stop), ("step", info.step)):
        t = expr_type(e, env) if e is not None else INT
        if t.kind not in ("int", "bool", "undef") or t.ndim:
            names = sorted({n.split(".")[0].split(":")[-1] for n in ir.names_used(e) if not n.startswith("$")})
            shown = ", ".join(repr(n) for n in names) or str(e)
            raise CoarsenError("range", info.line, None, None,
                               "pass an int (e.g. 3, not 3.0), or convert with int(...)",
                               message=f"range() {what} must be an integer, but {shown} is {t} "
                                       f"(the loop at line {info.line})")


def expr_type(e: ir.Expr, env: dict[str, T]) -> T:
    if isinstance(e, ir.Name):
        return env.get(e.id, BOTTOM)
    if isinstance(e, ir.Const):
        v = e.value
        return BOOL if isinstance(v, bool) else INT if isinstance(v, int) else FLOAT
    if isinstance(e, ir.Undef):
        return BOTTOM
    if isinstance(e, ir.BinOp):
        a, b = expr_type(e.left, env), expr_type(e.right, env)
        if e.op == "@":
            nd = max(0, a.ndim + b.ndim - 2)
            return T("float", nd)
        t = join(a, b)
        if t.kind == "bool":
            t = T("int", t.ndim)
        if e.op == "/" and t.kind == "int":
            t = T("float", t.ndim)
        return t
    if isinstance(e, ir.UnaryOp):
        t = expr_type(e.operand, env)
        return T("bool", t.ndim) if e.op == "not" else (T("int", t.ndim) if t.kind == "bool" else t)
    if isinstance(e, ir.Compare):
        return T("bool", max(expr_type(e.left, env).ndim, expr_type(e.right, env).ndim))
    if isinstance(e, ir.BoolOp):
        ts = [expr_type(v, env) for v in e.values]
        return T("bool", max(t.ndim for t in ts))
    if isinstance(e, (ir.IfExp, ir.Gamma)):
        a = e.body if isinstance(e, ir.IfExp) else e.if_true
        b = e.orelse if isinstance(e, ir.IfExp) else e.if_false
        t = join(expr_type(a, env), expr_type(b, env))
        # an elementwise choice has the shape of its predicate too (np.where): a γ's, and an ``a if p else
        # b`` whose ``p`` is an array (a loop over the elements run over all its lanes at once,
        # phi/batching.py: ``1.0 if e < t else 2.0`` is one number per lane, though both arms are numbers)
        pred = e.test if isinstance(e, ir.IfExp) else e.pred
        return T(t.kind, max(t.ndim, expr_type(pred, env).ndim))
    if isinstance(e, ir.Index):
        base = expr_type(e.value, env)
        if base.kind == "shape":
            return INT
        if base.kind == "tuple":        # (the frontend takes an element of a tuple written or made in place)
            raise _named(_user_name(e.value), CoarsenError("index of a tuple", hint="unpack it where it is made: "
                         "`a, b = ...`, or index the call itself: `np.linalg.slogdet(A)[1]`",
                         message=f"{_user_name(e.value)!r} is a tuple here; an element of it is not supported"))
        if len(e.index) > base.ndim:
            name = _user_name(e.value)
            what = f"{name!r} is a number" if base.ndim == 0 else f"{name!r} has {base.ndim} dimension" + \
                ("s" if base.ndim > 1 else "")
            raise _named(name, CoarsenError("indexing", hint=f"pass {name} as an array with {len(e.index)} dimension"
                               f"{'s' if len(e.index) > 1 else ''} (a 0-d array is a number), or index it less",
                               message=f"{what} here, but it is indexed with {len(e.index)} "
                                       f"ind{'ices' if len(e.index) > 1 else 'ex'}"))
        kind = base.kind if base.kind != "undef" else "float"
        return T(kind, _indexed_ndim(base.ndim, [expr_type(i, env) for i in e.index]))
    if isinstance(e, ir.Attr):
        base = expr_type(e.value, env)
        return T("shape", base.ndim) if e.attr == "shape" else INT
    if isinstance(e, ir.Update):
        return _update_type(e, env)
    if isinstance(e, ir.Tuple):
        return T("tuple", len(e.elts))
    if isinstance(e, ir.Call) and is_bound_check(e):
        return expr_type(e.args[1], env)        # the checked value itself
    if isinstance(e, ir.Call):
        return _call_type(e, [expr_type(a, env) for a in e.args])
    if isinstance(e, ir.Eta):
        return expr_type(e.value, env)
    raise TypeError(e)


def _update_type(e: ir.Update, env: dict[str, T]) -> T:
    """``array[index] = value`` keeps the array's dtype, as NumPy does: a float written into an array of
    ints is truncated (``np.array([0, 0])[0] = 0.7`` stores 0), and its derivative lost.  That is never what
    a user who differentiates means, so it is refused, with the fix, rather than followed or widened."""
    base, value = expr_type(e.array, env), expr_type(e.value, env)
    if base.kind in ("int", "bool") and value.kind == "float" or base.kind == "bool" and value.kind == "int":
        name = _user_name(e.array)
        raise _named(name, CoarsenError(
            "write into an integer array",
            hint=f"make {name!r} a float array where it is made: float literals (np.array([0.0, 1.0])) "
                 "or np.zeros(n)",
            message=f"{name!r} is an array of {base.kind}s (it was made from {base.kind}s), so NumPy would "
                    f"truncate the {value.kind} written into it here and its derivative would be lost"))
    kind = base.kind if base.kind in ("int", "bool") else "float"
    return T(kind, base.ndim)


def _indexed_ndim(ndim: int, index: list[T]) -> int:
    """The rank of ``x[index]`` by NumPy's rules: a number takes one axis away; an array of ints (a
    gather, ``x[idx]``) takes one and puts back its own rank; a boolean mask takes as many axes as it
    has and puts back one (the selected elements, ``x[x > 0]``)."""
    arrays = [t for t in index if t.is_array]
    if not arrays:
        return ndim - len(index)
    taken = sum(t.ndim if t.is_array and t.kind == "bool" else 1 for t in index)
    added = max(1 if t.kind == "bool" else t.ndim for t in arrays)
    return ndim - taken + added


def _call_type(e: ir.Call, args: list[T]) -> T:
    p = rule(e.func)
    if p.type is not None:
        return T(*p.type(args, dict(e.static or p.static)))
    if p.result == "int":
        return INT
    if p.result == "float":
        return FLOAT
    if p.kind == "reduction":
        return FLOAT
    if p.kind == "constructor":
        a = args[0]
        nd = a.ndim if a.kind == "shape" or e.func.endswith("_like") or e.func == "copy" else 0 if \
            a.kind == "tuple" else 1
        if a.kind == "tuple":
            nd = a.ndim
        return T("float", nd if e.func.endswith("_like") or e.func == "copy" or a.kind in ("shape", "tuple") else 1)
    if e.func in ("array_literal", "array_literal_2d"):
        if e.func == "array_literal_2d":
            args = args[1:]         # the row length first
        if any(a.ndim for a in args):
            raise CoarsenError("list of arrays", hint="only a list of numbers makes an array here; build a 2-D "
                               "array in a loop over np.zeros_like(...)", message="a list or tuple literal of "
                               "arrays (a 2-D array literal)")
        return T("int" if all(a.kind == "int" for a in args) else "float", 1 if e.func == "array_literal" else 2)
    if p.kind == "reshape":
        a = args[0]
        return T(a.kind if a.kind == "int" else "float", max(a.ndim, int(e.func[-2])))
    if e.func in ("dot", "matmul"):
        return T("float", max(0, args[0].ndim + args[1].ndim - 2))
    nd = max((a.ndim for a in args if a.kind != "shape"), default=0)
    if p.result == "int of ints" and all(a.kind == "int" for a in args):
        return T("int", nd)
    return T("float", nd)


def _user_name(e: ir.Expr) -> str:
    """The user's name for an SSA value (``x.2`` → ``x``, ``h1:x.1`` → ``x``), or its text."""
    if not isinstance(e, ir.Name):
        return str(e)
    return e.id.split(":")[-1].split(".")[0].lstrip("$")


def _located(thunk, line: int, source: ir.Source):
    """``thunk()``, with a CoarsenError it raises without a position given the statement's line."""
    try:
        return thunk()
    except CoarsenError as err:
        if err.line is not None or not line:
            raise
        text = source.line_text(line)
        name = getattr(err, "user_name", None)
        found = re.search(rf"\b{re.escape(name)}\s*\[", text) or re.search(rf"\b{re.escape(name)}\b", text) \
            if name and text else None
        raise CoarsenError(err.construct, line, found.start() if found else None, text, err.hint, source.filename,
                           err.message) from None


def _named(name: str, err: CoarsenError) -> CoarsenError:
    """``err``, knowing which of the user's names it is about (to put the caret under it)."""
    err.user_name = name
    return err

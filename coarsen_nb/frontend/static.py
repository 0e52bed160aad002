"""Compile-time parameters of a call: ``np.sum(X, axis=0)``, ``np.cumsum(x, 0)``, ``X.max(axis=1, keepdims=True)``.

An ``axis``, a ``keepdims`` or a ``mode`` changes what a call computes (its shape, which elements it
combines), not a value the program differentiates.  A registration lists such parameters, in NumPy's
order and with their defaults (:attr:`~coarsen_nb.rules.record.Primitive.static`); here each one a
call gives is read from the source, by keyword or by position after the operands, as the constant it
must be (a number, ``True``/``False``, ``None``, a string, or a tuple of these).  The IR call carries
them (:attr:`~coarsen_nb.ir.Call.static`) and every later stage passes them on to the registration's
rules, so a parameter needs no code anywhere else.

A call that gives each parameter its default is the plain call, so ``np.sum(x, axis=None)`` is
``np.sum(x)``.  What is not a constant written in the source (``axis=k``) is a CoarsenError at the
value, saying to write the number itself.
"""

from __future__ import annotations

import ast

from coarsen_nb.rules.record import Primitive
from coarsen_nb.rules.table import spelled


def static_parameters(unit, prim: Primitive, node: ast.Call) -> tuple[tuple[str, object], ...]:
    """The compile-time parameters ``node`` (a call of ``prim``) gives, as ``ir.Call.static``."""
    names = [k for k, _ in prim.static]
    values = dict(prim.static)
    given: set[str] = set()
    fn = spelled(prim)
    extra = node.args[max(prim.nargs):]
    if len(extra) > len(names):
        raise unit.error(f"{fn} with {len(node.args)} arguments", extra[len(names)],
                         f"{fn} takes {' or '.join(map(str, prim.nargs))} array arguments, then "
                         f"{', '.join(names)}", message=f"too many arguments to {fn}")
    for name, arg in zip(names, extra, strict=False):      # (extra may stop first)
        values[name] = _constant(unit, fn, name, arg)
        given.add(name)
    for kw in node.keywords:
        if kw.arg is None:
            raise unit.error(f"{fn}(**...)", kw, f"pass {', '.join(names)} by name, each written out",
                             message=f"{fn}(**...) is not supported")
        if kw.arg not in values:
            raise unit.error(f"{fn}(..., {kw.arg}=...)", kw, f"{fn} takes {', '.join(n + '=' for n in names)} "
                             f"here; leave {kw.arg}= out or compute this call outside the compiled function",
                             message=f"{fn}(..., {kw.arg}=...) is not supported yet")
        if kw.arg in given:
            raise unit.error(f"{fn}(..., {kw.arg}=...)", kw, f"give {kw.arg} once",
                             message=f"{fn} got multiple values for {kw.arg!r}")
        values[kw.arg] = _constant(unit, fn, kw.arg, kw.value)
        given.add(kw.arg)
    if all(_same(values[k], default) for k, default in prim.static):
        return ()
    return tuple((k, values[k]) for k in names)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _constant(unit, fn: str, name: str, node: ast.expr):
    """The constant ``node`` writes (``0``, ``-1``, ``True``, ``None``, ``"valid"``, ``(0, 1)``)."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return -node.operand.value
    if isinstance(node, ast.Tuple):
        return tuple(_constant(unit, fn, name, e) for e in node.elts)
    raise unit.error(f"{name}= of {fn}", node, f"write the value itself, e.g. {name}=0: {fn}'s {name} must be "
                     "known when the function is compiled", message=f"{fn}'s {name} must be a constant written "
                     "in the source")

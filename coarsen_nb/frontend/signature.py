"""Parameters with default values, and calls of helpers by keyword.

``def helper(x, scale=2.0)`` called as ``helper(v)``, ``helper(v, 3.0)`` or ``helper(v, scale=3.0)``:
a helper is inlined (:meth:`coarsen_nb.frontend.builder.BuilderState.inline`), so binding the call's
arguments to its parameters is all there is to do, here, before any IR is emitted — Python's own rules
(positional first, then keywords, then defaults; an unknown keyword, a parameter given twice or
one left without a value is Python's TypeError, reported as a CoarsenError at the call).

A default must be a constant — a number, ``True``/``False``, a global number, ``math.pi`` — because
Python evaluates it once, when the ``def`` runs, in the cell's namespace: a constant is the one case
where reading it at the call gives the same value.

The compiled function's own defaults are checked the same way and reported by
:func:`parameter_defaults`; the runtime binds a call of the compiled function to them
(:func:`coarsen_nb.checks.bind`), by position, keyword and default, as Python would.
"""

from __future__ import annotations

import ast

from coarsen_nb import primitives
from coarsen_nb.frontend.source import MISSING, Unit, unit_from_function, units_from_source

_CONSTANT_HINT = ("use a number as the default (a literal, a global number or math.pi), or pass the "
                  "value at every call")


def parameter_defaults(unit: Unit) -> dict[str, object]:
    """Parameter → its default value (a Python number or bool), for the parameters that have one.

    Raises a CoarsenError at the first default that is not a constant.

    Example
    -------
    >>> from coarsen_nb.frontend.source import units_from_source
    >>> parameter_defaults(units_from_source("def f(x, a=2.0, b=-1):\\n    return x\\n")["f"])
    {'a': 2.0, 'b': -1}
    """
    args = unit.node.args
    params = args.args[len(args.args) - len(args.defaults):]
    return {p.arg: _constant(unit, d) for p, d in zip(params, args.defaults, strict=True)}


def defaults_of(fn_or_source, name: str | None = None, namespace: dict | None = None) -> dict[str, object]:
    """The compiled function's own defaults (what :func:`~.parse.parse` would compile), for a caller
    that binds arguments: parameter → number (the runtime's signature of the compiled function).

    Example
    -------
    >>> defaults_of("def f(x, a=2.0):\\n    return x * a\\n")
    {'a': 2.0}
    """
    if isinstance(fn_or_source, str):
        units = units_from_source(fn_or_source, namespace)
        unit = units[name if name is not None else list(units)[-1]]
    else:
        unit = unit_from_function(fn_or_source)
    return parameter_defaults(unit)


def _constant(unit: Unit, node: ast.expr):
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = MISSING
    if value is MISSING:
        if isinstance(node, ast.Name):
            value = unit.resolve.constant(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and unit.resolve.module(node.value.id) is not None and node.attr in primitives.CONSTANTS:
            value = primitives.CONSTANTS[node.attr]
    if isinstance(value, (bool, int, float)) and value is not MISSING:
        return value
    raise unit.error("default parameter value that is not a number", node, _CONSTANT_HINT,
                     message=f"the default value {ast.unparse(node)!r} is not a number")


def bind_call(caller: Unit, helper: Unit, node: ast.Call) -> list[ast.expr | object]:
    """One entry per parameter of ``helper``: the argument's AST (positional or keyword), or the
    parameter's default value (a number).  Errors point at ``node`` (or the keyword) in ``caller``."""
    fdef = helper.node
    name = fdef.name
    params = [a.arg for a in fdef.args.args]
    defaults = parameter_defaults(helper)
    if len(node.args) > len(params):
        raise caller.error(f"call to {name}", node, f"{name} takes {len(params)} arguments: {', '.join(params)}",
                           message=f"wrong number of arguments to {name}: {len(node.args)} given")
    bound: dict[str, ast.expr | object] = dict(zip(params, node.args, strict=False))
    for kw in node.keywords:
        if kw.arg is None:
            raise caller.error("**kwargs", kw, "pass each argument by name or by position")
        if kw.arg not in params:
            raise caller.error(f"call to {name}", kw, f"the parameters of {name} are: {', '.join(params)}",
                               message=f"{name}() got an unexpected keyword argument {kw.arg!r}")
        if kw.arg in bound:
            raise caller.error(f"call to {name}", kw, f"pass {kw.arg!r} once, by position or by name",
                               message=f"{name}() got multiple values for argument {kw.arg!r}")
        bound[kw.arg] = kw.value
    missing = [p for p in params if p not in bound and p not in defaults]
    if missing:
        raise caller.error(f"call to {name}", node, f"pass {', '.join(repr(p) for p in missing)}",
                           message=f"wrong number of arguments to {name}: missing {', '.join(missing)}")
    return [bound[p] if p in bound else defaults[p] for p in params]

"""Array methods, ``x.sum()`` … ``x.dot(y)``, translated as the ``np`` functions they stand for.

NumPy defines ``x.sum()`` as ``np.sum(x)``, ``x.max()`` as ``np.max(x)``, ``x.dot(y)`` as
``np.dot(x, y)``: the same values, the same derivatives.  So a method call is desugared here into
the primitive call the rest of the compiler already lifts, differentiates and lowers, and no later
stage knows methods exist.  A method takes the compile-time parameters its function's registration
lists (``x.sum(axis=0)``, :mod:`coarsen_nb.frontend.static`); any other argument (an ``axis`` a
registration does not list, ``out``, ``dtype``) is a CoarsenError saying that form is not supported yet.

Attributes need no desugaring: ``x.shape``, ``x.size`` and ``x.ndim`` are read from the specialized
argument shapes (:class:`~coarsen_nb.ir.Attr`), like ``len(x)``.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir, primitives

#: method → (the ``np`` function it is, how many positional arguments besides the array).
METHODS = {
    "sum": ("sum", 0), "mean": ("mean", 0), "prod": ("prod", 0),
    "max": ("max", 0), "min": ("min", 0), "std": ("std", 0), "var": ("var", 0), "dot": ("dot", 1),
    "copy": ("copy", 0), "clip": ("clip", 2), "cumsum": ("cumsum", 0), "cumprod": ("cumprod", 0),
    "trace": ("trace", 0),
    "transpose": ("transpose", None),   # X.transpose(), X.transpose(1, 0), X.transpose((1, 0))
    "reshape": ("reshape", None),       # any number of sizes (frontend/arrays.py)
}

_ALL_HINT = "reduce over the whole array, x.{m}(), or write the reduction over one axis as a loop"


class MethodTranslator:
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator`: ``base.method(...)`` calls."""

    def method_call(self, node: ast.Call) -> ir.Expr:
        """``node`` (a call of an attribute of a value, not of a module) as a primitive call."""
        func = node.func
        base, method = func.value, func.attr
        where = f"{ast.unparse(base)}.{method}"
        if method not in METHODS:
            prim = primitives.lookup("np", method)
            hint = (f"call the function instead: np.{method}({ast.unparse(base)})" if prim is not None
                    else f"there is no supported function {method!r}")
            raise self.unit.error("method call", node, f"{hint}; the supported methods are "
                                  f"{', '.join('.' + m + '()' for m in METHODS)}",
                                  message=f"unsupported method call {where}(...)")
        if self.is_list(base):
            raise self.unit.error(f"method .{method}() of a list", node,
                                  f"make it an array first: np.array(...).{method}(), or call "
                                  f"np.{method}(...) of the list", message=f"a Python list has no method .{method}()"
                                  if method != "copy" else None)
        np_name, nargs = METHODS[method]
        prim = primitives.lookup("np", np_name)
        args = node.args
        if method == "transpose" and len(args) > 1:     # X.transpose(1, 0): the axes as separate arguments
            args = [ast.copy_location(ast.Tuple(elts=list(args), ctx=ast.Load()), args[0])]
        if prim.static or nargs is None:    # x.sum(axis=0) (frontend/static.py), x.reshape(n, m) (arrays.py)
            call = ast.copy_location(ast.Call(func=func, args=[base, *args], keywords=node.keywords), node)
            return self._primitive(prim.name, call)
        if node.keywords:
            kw = node.keywords[0]
            label = f"{where}({kw.arg}=...)" if kw.arg else f"{where}(**...)"
            raise self.unit.error(label, kw, _ALL_HINT.format(m=method) if nargs == 0 else
                                  f"pass the argument by position: {where}(y)",
                                  message=f"{label} is not supported yet")
        if len(node.args) != nargs:
            if nargs == 0:
                label = f"{where}(...) with arguments"
                raise self.unit.error(label, node.args[0], _ALL_HINT.format(m=method),
                                      message=f"{where}(...) with an axis or other arguments is not supported yet")
            raise self.unit.error(f"{where}(...)", node, f"{where}(y) takes one array argument",
                                  message=f"wrong number of arguments to {where}")
        call = ast.copy_location(ast.Call(func=func, args=[base, *node.args], keywords=[]), node)
        return self._primitive(prim.name, call)

    # Implemented by ExprTranslator and LiteralTranslator.
    def _primitive(self, name: str, node: ast.Call) -> ir.Expr:  # pragma: no cover - overridden
        raise NotImplementedError

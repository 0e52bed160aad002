"""``sum(expr for k in it if cond)`` (or of a list comprehension), desugared to an accumulation loop.

Python's ``sum(g, start=0)`` is ``acc = start`` then ``acc = acc + e`` for each element e of g, in
order.  The desugaring builds exactly those statements as Python AST,

    $accN = start
    for k in it:            # one loop per ``for`` of the comprehension, nested as written
        if cond:            # one ``if`` per filter
            $accN = $accN + expr

and hands them to the CFG builder as if the user had written them, so the loop reaches the lifter
as an ordinary accumulation (a Σ closed form) and nothing after the frontend knows comprehensions.
Anything a ``for`` statement iterates over works here too (:mod:`.loops`).

Comprehension variables are local to the comprehension in Python 3: ``k`` inside does not change a
``k`` outside.  So each is renamed, for the duration of the comprehension, to a variable of its own
(``sumN:k``, shown to the user as ``k``).  A comprehension variable that the first iterable also
reads (``sum(k for k in range(k))``, which reads the *outer* ``k`` there) is refused rather than
guessed.  Other comprehensions (a list comprehension assigned to a name, ``any(...)``) stay refused:
they have no value the compiler can represent, or no accumulation to desugar to.

``max(g)`` and ``min(g)`` (of a generator or list comprehension) are the same loop as an extremum,
which the lifter recognizes as a max/min reduction, with a count of the elements beside it::

    $accN = -inf                # +inf for min
    $cntN = 0
    for k in it:
        if cond:
            $accN = max($accN, expr)
            $cntN = $cntN + 1

Python's max of an empty iterable raises ValueError; so does NumPy's max of an empty array, so the
value is ``np.max(np.zeros($cntN) + $accN)``: ``$accN`` when there are elements, NumPy's ValueError
(at the user's line) when there are none.  ``max(g, default=d)`` is ``$accN if $cntN > 0 else d``.
A ``key=`` is refused.
"""

from __future__ import annotations

import ast
import math

from coarsen_nb import ir


def _names_in(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


class ComprehensionTranslator:
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator`: ``sum`` of a comprehension."""

    def reduction_of_comprehension(self, node: ast.Call) -> ir.Expr:
        """``node`` is ``sum``, ``max`` or ``min`` of a generator or list comprehension."""
        if node.func.id == "sum":
            return self.sum_of_comprehension(node)
        return self._extremum_of_comprehension(node, node.func.id)

    def _extremum_of_comprehension(self, node: ast.Call, which: str) -> ir.Expr:
        hint = f"write {which}(... for ...) or {which}(... for ..., default=d)"
        for kw in node.keywords:
            if kw.arg != "default":
                raise self.unit.error(f"{which}({kw.arg}=...) of a generator" if kw.arg else f"{which}(**...)", kw,
                                      f"compute the values in the generator itself: {which}(f(v) for v in ...)"
                                      if kw.arg == "key" else hint)
        if len(node.args) > 1:
            raise self.unit.error(f"{which} of a generator and other arguments", node.args[1], hint)
        default = next((kw.value for kw in node.keywords), None)
        default_value = self.expr(default) if default is not None else None
        n = next(self.counter)
        acc, cnt = f"$acc{n}", f"$cnt{n}"
        frame = self.frame
        self.emit(frame.prefix + acc, ir.Const(-math.inf if which == "max" else math.inf), node)
        self.emit(frame.prefix + cnt, ir.Const(0), node)
        step = ast.Call(ast.Name(which, ast.Load()), [ast.Name(acc, ast.Load()), node.args[0].elt], [])
        count = ast.BinOp(ast.Name(cnt, ast.Load()), ast.Add(), ast.Constant(1))
        self._comprehension_loop(node, n, [(acc, step), (cnt, count)], which)
        total, count_value = ir.Name(frame.prefix + acc), ir.Name(frame.prefix + cnt)
        if default_value is not None:
            return self.temp(ir.IfExp(ir.Compare(">", count_value, ir.Const(0)), total, default_value), "t", node)
        # np.max of an empty array raises ValueError, as max() of an empty iterable does
        spread = self.temp(ir.BinOp("+", self.temp(ir.Call("zeros", (count_value,)), "p", node), total), "a", node)
        return self.temp(ir.Call("amax" if which == "max" else "amin", (spread,)), "p", node)

    def sum_of_comprehension(self, node: ast.Call) -> ir.Expr:
        """``node`` is ``sum(<genexp or listcomp>)`` or ``sum(<...>, start)``: emit the loop, return the total."""
        comp = node.args[0]
        if node.keywords and (len(node.keywords) > 1 or node.keywords[0].arg != "start" or len(node.args) > 1):
            raise self.unit.error("sum with these arguments", node.keywords[0], "write sum(... for ...) or "
                                  "sum(... for ..., start)")
        if len(node.args) > 2:
            raise self.unit.error("sum with these arguments", node, "write sum(... for ...) or sum(... for ..., start)")
        start_node = node.args[1] if len(node.args) == 2 else node.keywords[0].value if node.keywords else None
        start = self.expr(start_node) if start_node is not None else ir.Const(0)
        n = next(self.counter)
        acc = f"$acc{n}"
        self.emit(self.frame.prefix + acc, start, node)
        step = ast.BinOp(ast.Name(acc, ast.Load()), ast.Add(), comp.elt)
        self._comprehension_loop(node, n, [(acc, step)], "sum")
        return ir.Name(self.frame.prefix + acc)

    def _comprehension_loop(self, node: ast.Call, n: int, updates: list[tuple[str, ast.expr]], what: str) -> None:
        """The loop of the comprehension ``node.args[0]``, assigning each ``(name, value)`` of ``updates``
        for every element, with the comprehension's variables local to it."""
        comp = node.args[0]
        frame = self.frame
        first = {x.id for x in ast.walk(comp.generators[0].iter) if isinstance(x, ast.Name)}
        shadowed = [v for gen in comp.generators for v in _names_in(gen.target) if v in first]
        if shadowed:
            raise self.unit.error("comprehension variable read by its own iterable", comp.generators[0].iter,
                                  f"rename the comprehension variable {shadowed[0]!r}: Python reads the outer "
                                  f"{shadowed[0]!r} here and the comprehension's own one inside")
        for gen in comp.generators:
            if gen.is_async:
                raise self.unit.error("async function", gen, "write a plain `for`")
        hidden = {name for name, _ in updates}
        variables = {v for gen in comp.generators for v in _names_in(gen.target)} | hidden
        saved = {v: frame.rename.get(v) for v in variables}
        was_local = {v for v in variables if v in frame.locals}
        for v in variables:
            frame.rename[v] = frame.prefix + (v if v in hidden else f"{what}{n}:{v}")
            frame.locals.add(v)
        try:
            self.stmts([self._accumulation(comp, updates)])
        finally:
            for v, old in saved.items():
                if old is None:
                    frame.rename.pop(v, None)
                else:
                    frame.rename[v] = old
                if v not in was_local:
                    frame.locals.discard(v)

    @staticmethod
    def _accumulation(comp: ast.GeneratorExp | ast.ListComp, updates: list[tuple[str, ast.expr]]) -> ast.stmt:
        """The statements of the desugaring, as AST at the comprehension's position."""
        assigns: list[ast.stmt] = []
        for name, value in updates:
            for sub in ast.walk(value):
                if not hasattr(sub, "lineno"):
                    ast.copy_location(sub, comp.elt)
            assigns.append(ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value),
                                             comp.elt))
        body: list[ast.stmt] = assigns
        for gen in reversed(comp.generators):
            for cond in reversed(gen.ifs):
                body = [ast.copy_location(ast.If(test=cond, body=body, orelse=[]), cond)]
            body = [ast.copy_location(ast.For(target=gen.target, iter=gen.iter, body=body, orelse=[]), gen.target)]
        ast.fix_missing_locations(body[0])
        return body[0]

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
guessed.  Other comprehensions (``max(v for v in x)``, a list comprehension assigned to a name) stay
refused: they have no value the compiler can represent, or no accumulation to desugar to.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir


def _names_in(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


class ComprehensionTranslator:
    """Mixin of :class:`~coarsen_nb.frontend.exprs.ExprTranslator`: ``sum`` of a comprehension."""

    def sum_of_comprehension(self, node: ast.Call) -> ir.Expr:
        """``node`` is ``sum(<genexp or listcomp>)`` or ``sum(<...>, start)``: emit the loop, return the total."""
        comp = node.args[0]
        if node.keywords and (len(node.keywords) > 1 or node.keywords[0].arg != "start" or len(node.args) > 1):
            raise self.unit.error("sum with these arguments", node.keywords[0], "write sum(... for ...) or "
                                  "sum(... for ..., start)")
        if len(node.args) > 2:
            raise self.unit.error("sum with these arguments", node, "write sum(... for ...) or sum(... for ..., start)")
        start_node = node.args[1] if len(node.args) == 2 else node.keywords[0].value if node.keywords else None
        for gen in comp.generators:
            if gen.is_async:
                raise self.unit.error("async function", gen, "write a plain `for`")
        first = {n.id for n in ast.walk(comp.generators[0].iter) if isinstance(n, ast.Name)}
        shadowed = [v for gen in comp.generators for v in _names_in(gen.target) if v in first]
        if shadowed:
            raise self.unit.error("comprehension variable read by its own iterable", comp.generators[0].iter,
                                  f"rename the comprehension variable {shadowed[0]!r}: Python reads the outer "
                                  f"{shadowed[0]!r} here and the comprehension's own one inside")
        start = self.expr(start_node) if start_node is not None else ir.Const(0)
        n = next(self.counter)
        frame = self.frame
        acc = f"$acc{n}"
        variables = {v for gen in comp.generators for v in _names_in(gen.target)} | {acc}
        saved = {v: frame.rename.get(v) for v in variables}
        was_local = {v for v in variables if v in frame.locals}
        self.emit(frame.prefix + acc, start, node)
        for v in variables:
            frame.rename[v] = frame.prefix + (acc if v == acc else f"sum{n}:{v}")
            frame.locals.add(v)
        try:
            self.stmts([self._accumulation(comp, acc, node)])
        finally:
            for v, old in saved.items():
                if old is None:
                    frame.rename.pop(v, None)
                else:
                    frame.rename[v] = old
                if v not in was_local:
                    frame.locals.discard(v)
        return ir.Name(frame.prefix + acc)

    @staticmethod
    def _accumulation(comp: ast.GeneratorExp | ast.ListComp, acc: str, node: ast.Call) -> ast.stmt:
        """The statements of the desugaring, as AST at the comprehension's position."""
        body: ast.stmt = ast.copy_location(ast.Assign(
            targets=[ast.Name(acc, ast.Store())],
            value=ast.BinOp(ast.Name(acc, ast.Load()), ast.Add(), comp.elt)), comp.elt)
        for gen in reversed(comp.generators):
            for cond in reversed(gen.ifs):
                body = ast.copy_location(ast.If(test=cond, body=[body], orelse=[]), cond)
            body = ast.copy_location(ast.For(target=gen.target, iter=gen.iter, body=[body], orelse=[]), gen.target)
        ast.fix_missing_locations(body)
        return body

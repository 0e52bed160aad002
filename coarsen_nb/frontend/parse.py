"""Python source → a structured CFG of basic blocks (:class:`coarsen_nb.ir.Function`).

The pass checks the supported subset (DESIGN.md, "Supported Python") and
raises :class:`~coarsen_nb.errors.CoarsenError` at the first construct outside
it.  It keeps control flow *structured*, which later passes rely on:

* every ``if`` is a diamond: a block ending in ``branch``, two arms, one join;
* every loop has a pre-header, one header (the only block with a back edge
  into it, two predecessors) whose ``branch`` is the only way out, a latch
  that jumps back, and one exit;
* ``break``, ``continue`` and ``return`` set boolean flags (``$brk1``,
  ``$cont1``, ``$done``) instead of jumping; the statements after one run under
  ``if not flag``, and loop conditions test the flags.  This is how a
  ``while`` with a ``break`` becomes a loop whose trip count N is data
  dependent (the forward run records it) while every join keeps an exact
  two-way predicate for gating;
* several ``return`` s assign ``$ret``; the single exit block returns it;
* helper functions of the same source, and ``def`` s nested in the function
  (:mod:`.nested`), are inlined at their call sites with their variables
  prefixed (``h1:x``), so no call survives except primitives;
* ``for i in range(a, b, s)`` evaluates a, b, s once in the pre-header and
  counts with a hidden counter ``$kN``; ``for v in x``, ``enumerate`` and ``zip`` count over the
  length and read element k (:mod:`.loops`).
  The header carries a :class:`~coarsen_nb.ir.LoopInfo` saying so.

The statements are here; the builder's blocks, temporaries, frames and helper inlining are
:mod:`.builder`'s, the loop statements :mod:`.loops`' and the expressions :mod:`.exprs`'.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend import words
from coarsen_nb.frontend.builder import BuilderState
from coarsen_nb.frontend.inplace import refuse_inplace_parameter
from coarsen_nb.frontend.slices import has_slice
from coarsen_nb.frontend.source import unit_from_function, units_from_source


def parse(fn_or_source, name: str | None = None, namespace: dict | None = None) -> ir.Function:
    """Translate a function (object or source text) to a structured CFG.

    Parameters
    ----------
    fn_or_source : function or str
        A plain Python function, or source text (e.g. a notebook cell) holding
        one or more ``def`` s; the others are helpers that get inlined.
    name : str, optional
        With source text, which function to compile (default: the last one).
    namespace : dict, optional
        With source text, the namespace it runs in (numeric globals, helpers).

    Example
    -------
    >>> fn = parse("def f(x):\\n    return x * x\\n")
    >>> print(fn)  # doctest: +NORMALIZE_WHITESPACE
    def f(x):
    entry:
        $ret = undef
        $done = False
        $ret = x * x
        $done = True
        jump exit
    exit:
        return $ret
    """
    if isinstance(fn_or_source, str):
        units = units_from_source(fn_or_source, namespace)
        if not units:
            raise CoarsenError("no function", hint="the cell must define a function with `def`",
                               message="no function definition found")
        if name is None:
            name = list(units)[-1]
        if name not in units:
            raise CoarsenError(name, hint=f"functions defined here: {', '.join(units)}",
                               message=f"no function named {name!r}")
        unit = units[name]
    else:
        unit = unit_from_function(fn_or_source)
    return _Builder(unit).build()


class _Builder(BuilderState):
    """The statements: each ``_s_<Node>`` lowers one into the current block (loops: :mod:`.loops`)."""

    def stmts(self, body: list[ast.stmt]) -> set[str]:
        """Lower ``body``; return the exits (break/continue/return) it may take."""
        exits: set[str] = set()
        for k, s in enumerate(body):
            taken, definite = self.stmt(s)
            exits |= taken
            rest = body[k + 1:]
            if definite or not rest:
                break
            if taken:
                flags = self._flags(taken)
                cond = ir.UnaryOp("not", flags[0] if len(flags) == 1 else ir.BoolOp("or", tuple(flags)))
                exits |= self._guarded(cond, rest, s)
                break
        return exits

    def _flags(self, taken: set[str]) -> list[ir.Expr]:
        out = []
        if "break" in taken:
            out.append(ir.Name(self.frame.loops[-1][0]))
        if "continue" in taken:
            out.append(ir.Name(self.frame.loops[-1][1]))
        if "return" in taken:
            out.append(ir.Name(self.frame.done))
        return out

    def _guarded(self, cond: ir.Expr, rest: list[ast.stmt], node: ast.AST) -> set[str]:
        n = next(self.counter)
        then, join = self.new_block(f"rest{n}"), f"rest{n}.join"
        c = self.temp(cond, "c", None)
        self.terminate(ir.Branch(c, then, join, 0))
        self.cur = then
        exits = self.stmts(rest)
        self._jump(join)
        self.new_block(join)
        self.cur = join
        return exits

    def stmt(self, s: ast.stmt) -> tuple[set[str], bool]:
        method = getattr(self, "_s_" + type(s).__name__, None)
        if method is None:
            construct, hint = _STMT_REJECT.get(type(s), (type(s).__name__, "rewrite it with the supported subset"))
            raise self.unit.error(construct, s, hint)
        with self.slice_setups(s):
            return method(s)

    def _s_Pass(self, s):
        return set(), False

    def _s_Expr(self, s: ast.Expr):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return set(), False     # a string used as a comment
        self.expr(s.value)          # checked, then dropped: it has no effect
        return set(), False

    def _s_Assign(self, s: ast.Assign):
        if len(s.targets) > 1:
            value = self.temp(self.expr(s.value), "t", s)
            for t in s.targets:
                self._assign(t, value, s)
        else:
            self._assign(s.targets[0], None, s)
        return set(), False

    def _s_AnnAssign(self, s: ast.AnnAssign):
        if s.value is not None:
            self._assign(s.target, None, s, value_node=s.value)
        return set(), False

    def _assign(self, target: ast.AST, value: ir.Expr | None, s: ast.stmt, value_node: ast.AST | None = None):
        value_node = value_node if value_node is not None else getattr(s, "value", None)
        if isinstance(target, ast.Name):
            v = value if value is not None else self.expr(value_node)
            self.emit(self.rename.get(target.id, target.id), v, s)
        elif isinstance(target, ast.Tuple):
            for e in target.elts:
                if not isinstance(e, ast.Name):
                    construct = "starred assignment" if isinstance(e, ast.Starred) else "nested tuple assignment"
                    raise self.unit.error(construct, e, "assign each name separately")
            if value is None and isinstance(value_node, ast.Tuple):
                parts = [self.expr(e) for e in value_node.elts]
            elif value is None and isinstance(value_node, ast.Attribute) and value_node.attr == "shape":
                parts = self._shape_parts(value_node, len(target.elts))
            else:
                v = value if value is not None else self.expr(value_node)
                if not isinstance(v, ir.Tuple):
                    raise self.unit.error("tuple unpacking", s,
                                          "unpack only a tuple written out (`a, b = b, a`) or a helper's tuple return")
                parts = list(v.elts)
            if len(parts) != len(target.elts):
                raise self.unit.error("tuple unpacking", s, "use as many names as values",
                                      message=f"cannot unpack {len(parts)} values into {len(target.elts)} names")
            # Every value is copied first: `a, b = b, a` must read both before writing either.
            temps = [p if isinstance(p, ir.Const) else self._copy(p, s) for p in parts]
            for e, t in zip(target.elts, temps, strict=True):
                self.emit(self.rename.get(e.id, e.id), t, s)
        elif isinstance(target, ast.Subscript):
            self._store(target, value if value is not None else self.expr(value_node), s)
        elif isinstance(target, ast.Attribute):
            raise self.unit.error("attribute assignment", target, "assign to a plain variable")
        elif isinstance(target, ast.Starred):
            raise self.unit.error("starred assignment", target, "name each value")
        else:
            raise self.unit.error(type(target).__name__ + " assignment", target, "assign to a plain variable")

    def _shape_parts(self, node: ast.Attribute, count: int) -> list[ir.Expr]:
        """``n, m = X.shape``: one size per name, ``X.shape[0]``, ``X.shape[1]``.  The number of names must be
        the array's number of dimensions, as Python's unpacking says; that is known once the argument
        types are.  The sizes are read from the checked shape (``unpack_shape``, the shape itself or a
        CoarsenError at this line), so the check lives as long as any size is used (all IR is pure: an
        unpacking none of whose names is read is dropped, check and all)."""
        shape = self.temp(ir.Call("unpack_shape", (self.expr(node),), (("count", count),)), "p", node,
                          words.join(words.expr_word(node), "checked"))
        axes = ("rows", "cols") if count == 2 else tuple(f"dim{k}" for k in range(count))
        of = words.expr_word(node.value if isinstance(node, ast.Attribute) and node.attr == "shape" else node)
        return [self.temp(ir.Index(shape, (ir.Const(k),)), "len", node, words.join("n", of, axes[k]))
                for k in range(count)]

    def _store(self, target: ast.Subscript, value: ir.Expr, s: ast.stmt) -> None:
        if not isinstance(target.value, ast.Name):
            raise self.unit.error("nested subscript assignment", target, "write `out[i, j] = v`")
        name = target.value.id
        if name in self.frame.closure:
            raise self.unit.error("write into an enclosing function's array", target,
                                  f"pass {name!r} to {self.unit.node.name} as a parameter and return the new "
                                  "values, or write the loop in the enclosing function",
                                  message=f"the nested function {self.unit.node.name!r} writes into {name!r}, "
                                  "an array of the function around it")
        is_param = name in {a.arg for a in self.unit.node.args.args}
        if is_param and target.lineno > self.frame.private.get(name, target.lineno):
            is_param = False        # rebound before: a write into the function's own array
        if name not in self.locals or is_param:
            raise self.unit.error("write into a parameter array", target,
                                  f"Python would change the caller's array here, and compiled code does not "
                                  f"(it computes values, and their gradients, without side effects): write into "
                                  f"a private copy, made by `{name} = {name}.copy()` as the function's first line",
                                  message=f"write into the parameter array {name!r}")
        self.frame.written.add(name)
        if has_slice(target.slice):
            return self.slice_store(target, value, s)
        index = self.index(target.slice)
        var = self.rename.get(name, name)
        self.emit(var, ir.Update(ir.Name(var), index, self.temp(value, "v", s)), s)

    def _s_AugAssign(self, s: ast.AugAssign):
        from coarsen_nb.frontend.exprs import BINOPS, BITWISE
        if isinstance(s.op, BITWISE):
            raise self.unit.error("bitwise operator", s, "use arithmetic operators")
        op = BINOPS[type(s.op)]
        self.refuse_list_operands([s.target, s.value], "augmented assignment")
        rhs = self.expr(s.value)
        if isinstance(s.target, ast.Name):
            refuse_inplace_parameter(self.unit, self.frame.private, s.target)
            current = self.expr(ast.copy_location(ast.Name(s.target.id, ast.Load()), s.target))
            self.emit(self.rename.get(s.target.id, s.target.id), ir.BinOp(op, current, rhs), s)
        elif isinstance(s.target, ast.Subscript):
            load = ast.copy_location(ast.Subscript(s.target.value, s.target.slice, ast.Load()), s.target)
            self._store(s.target, ir.BinOp(op, self.expr(load), rhs), s)
        else:
            raise self.unit.error("attribute assignment", s.target, "assign to a plain variable")
        return set(), False

    def _s_Return(self, s: ast.Return):
        if s.value is None:
            raise self.unit.error("return without a value", s, "return the value to differentiate")
        f = self.frame
        if f.arity:
            # a tuple: one return slot per element, so each is a value of its own (lifted, differentiated,
            # joined by its own γ where several returns meet); build() and inline() check the arity
            parts = [self.expr(e) for e in s.value.elts]
            for name, p in zip(f.ret, parts, strict=True):
                self.emit(name, p, s)
        else:
            self.emit(f.ret[0], self.expr(s.value), s)
        self.emit(f.done, ir.Const(True), s)
        return {"return"}, True

    def _s_Break(self, s):
        if not self.frame.loops:
            raise self.unit.error("break outside a loop", s, "remove it")
        self.emit(self.frame.loops[-1][0], ir.Const(True), s)
        return {"break"}, True

    def _s_Continue(self, s):
        if not self.frame.loops:
            raise self.unit.error("continue outside a loop", s, "remove it")
        self.emit(self.frame.loops[-1][1], ir.Const(True), s)
        return {"continue"}, True

    def _s_If(self, s: ast.If):
        n = next(self.counter)
        cond = self.branch_test(self.expr(s.test), s.test)
        then, other, join = f"if{n}.then", f"if{n}.else", f"if{n}.join"
        self.terminate(ir.Branch(cond, then, other if s.orelse else join, self._line(s)))
        self.new_block(then)
        self.cur = then
        t_exits, t_def = self._arm(s.body)
        self._jump(join)
        e_exits, e_def = set(), False
        if s.orelse:
            self.new_block(other)
            self.cur = other
            e_exits, e_def = self._arm(s.orelse)
            self._jump(join)
        self.new_block(join)
        self.cur = join
        return t_exits | e_exits, t_def and e_def

    def _arm(self, body):
        exits = self.stmts(body)
        definite = bool(body) and _ends_definitely(body)
        return exits, definite


def _ends_definitely(body: list[ast.stmt]) -> bool:
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If) and last.orelse:
        return _ends_definitely(last.body) and _ends_definitely(last.orelse)
    return False


_STMT_REJECT = {
    ast.Try: ("try/except", "remove it; guard risky operations with if/else"),
    ast.TryStar: ("try/except", "remove it; guard risky operations with if/else"),
    ast.With: ("with", "remove the with-block; compile only the numeric code"),
    ast.AsyncWith: ("async function", "write a plain synchronous function"),
    ast.AsyncFor: ("async function", "write a plain synchronous function"),
    ast.AsyncFunctionDef: ("nested function", "define the helper at the top level of the cell"),
    ast.ClassDef: ("class definition", "define classes outside the compiled function"),
    ast.Global: ("global", "pass the value as a parameter and return the new value"),
    ast.Nonlocal: ("nonlocal", "pass the value as a parameter and return the new value"),
    ast.Delete: ("del", "just stop using the variable"),
    ast.Import: ("import", "import at the top of the cell, outside the function"),
    ast.ImportFrom: ("import", "import at the top of the cell, outside the function"),
    ast.Raise: ("raise", "check inputs before calling the compiled function"),
    ast.Assert: ("assert", "check inputs before calling the compiled function"),
    ast.Match: ("match", "use if/elif/else"),
}

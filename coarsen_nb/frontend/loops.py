"""The ``while`` and ``for`` statements, and what a ``for`` loop iterates over, desugared to a counted
loop: ``range``, arrays, rows, ``enumerate`` and ``zip``.

A loop is a pre-header, a header whose ``branch`` is the only way out, the body, a latch jumping back
and one exit; ``break``, ``continue`` and ``return`` inside it set flags (``$brkN``, ``$contN``,
``$done``) that the header's condition tests (:mod:`.parse` says why).

Every ``for`` becomes the one loop shape the later passes know (:mod:`.parse`): a hidden counter
``$kN`` from ``start`` to ``stop`` by ``step``, and the loop variables assigned from it at the top of
the body.  ``for i in range(a, b, s)`` counts i itself.  Everything else counts k = 0, 1, … over the
iterable's length and reads element k:

* an array ``x`` (a name, subscript or attribute): ``x[k]`` — an element of a 1-D array, a row of a
  2-D one — over ``len(x)``;
* ``enumerate(it, start=0)``: the pair ``(start + k, it[k])`` over ``len(it)``;
* ``zip(a, b, …)``: the tuple ``(a[k], b[k], …)`` over the shortest length (``min`` of them), as
  Python's zip stops at the shortest;
* ``range(a, b, s)`` inside ``enumerate``/``zip``: ``a + s·k`` over Python's ``len(range(a, b, s))``.

A tuple target unpacks the element's structure, nested as written (``for i, (a, b) in
enumerate(zip(x, y))``).  So ``enumerate`` and ``zip`` reach the lifter as ordinary indexed reads
``x[k]`` of a counted loop — the form its closed forms (Σ, Π, recurrences) already recognize.  The
iterable's operands are evaluated once, before the loop, as Python evaluates them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from coarsen_nb import ir
from coarsen_nb.frontend.slices import ceil_quotient, has_slice
from coarsen_nb.frontend.source import walk_no_defs

_ITER_HINT = ("loop over range(...), over an array (`for v in x`, `for row in X`), or over enumerate(...) "
              "or zip(...) of those")


@dataclass(frozen=True)
class _Iter:
    """An iterable: its length, and element k (an IR expression, or a tuple of nested _Iter reads)."""

    length: ir.Expr
    element: Callable[[ir.Expr], object]     # k → ir.Expr | tuple
    what: str                                # how the user wrote it, for errors


def _affine(start: ir.Expr, step: ir.Expr, k: ir.Expr) -> ir.Expr:
    """Element k of a range: ``start + step·k``, without the terms that are 0 or 1."""
    term = k if step == ir.Const(1) else ir.BinOp("*", step, k)
    return term if start == ir.Const(0) else ir.BinOp("+", start, term)


def _scan(body: list[ast.stmt]) -> set[str]:
    """Which of break/continue/return can leave ``body`` (not counting nested loops' own)."""
    found: set[str] = set()
    for s in body:
        for node in walk_no_defs(s):
            if isinstance(node, ast.Return):
                found.add("return")
        found |= _scan_loop_exits(s)
    return found


def _scan_loop_exits(s: ast.stmt) -> set[str]:
    if isinstance(s, ast.Break):
        return {"break"}
    if isinstance(s, ast.Continue):
        return {"continue"}
    if isinstance(s, (ast.For, ast.While)):
        return set()
    out: set[str] = set()
    for child in ast.iter_child_nodes(s):
        if isinstance(child, ast.stmt):
            out |= _scan_loop_exits(child)
    return out


class LoopTranslator:
    """Mixin of the CFG builder: the ``while`` and ``for`` statements as the one loop shape, the iteration
    of a ``for`` loop and the binding of its target."""

    def iteration(self, s: ast.For):
        """``(start, stop, step, bind)`` of the loop ``s``: ``bind(counter)`` assigns its target."""
        it = s.iter
        if self._is_builtin_call(it, "range"):
            start, stop, step = self._range_args(it)
            if not isinstance(s.target, ast.Name):
                raise self.unit.error("tuple target over a range", s.target,
                                      "a range gives one integer at a time: `for i in range(n)`",
                                      message="cannot unpack an integer of a range into several names")
            return start, stop, step, lambda counter: self._bind(s.target, counter)
        source = self._iterable(it)
        stop = self.temp(source.length, "stop", it)
        return ir.Const(0), stop, ir.Const(1), lambda counter: self._bind(s.target, source.element(counter), source)

    # -- iterables ----------------------------------------------------------------------------

    def _is_builtin_call(self, node: ast.AST, name: str) -> bool:
        """``name(...)`` of the builtin: not a local; for enumerate and zip not a helper of that name."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
            and name not in self.locals and (name == "range" or self.unit.resolve.helper(name) is None)

    def _range_args(self, it: ast.Call):
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.unit.error("range with these arguments", it, "use range(stop), range(start, stop) "
                                  "or range(start, stop, step)")
        for a in it.args:
            if isinstance(a, ast.Subscript) and has_slice(a.slice):
                raise self.unit.error("slice as a loop bound", a, f"a slice is an array, not a number: loop to "
                                      f"its length, range(len({ast.unparse(a)})), or over it, `for v in "
                                      f"{ast.unparse(a)}`")
        args = [self.expr(a) for a in it.args]
        if len(args) == 1:
            args = [ir.Const(0), args[0]]
        if len(args) == 2:
            args.append(ir.Const(1))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            raise self.unit.error("range with step 0", it.args[2], "use a non-zero step")
        return tuple(self.temp(a, kind, it) for a, kind in zip(args, ("start", "stop", "step"), strict=True))

    def _iterable(self, it: ast.AST) -> _Iter:
        what = ast.unparse(it)
        if self._is_builtin_call(it, "enumerate"):
            return self._enumerate(it, what)
        if self._is_builtin_call(it, "zip"):
            if it.keywords:
                raise self.unit.error("zip(..., strict=...)", it.keywords[0], "write zip(a, b) of arrays of one "
                                      "length", message="keyword arguments of zip are not supported yet")
            if not it.args:
                raise self.unit.error("zip()", it, "zip at least one array")
            parts = [self._iterable(a) for a in it.args]
            length = parts[0].length if len(parts) == 1 else \
                self.temp(ir.Call("min", tuple(self.temp(p.length, "len", it) for p in parts)), "len", it)
            return _Iter(length, lambda k: tuple(p.element(k) for p in parts), what)
        if self._is_builtin_call(it, "range"):
            start, stop, step = self._range_args(it)
            return _Iter(self._range_length(it, start, stop, step), lambda k: _affine(start, step, k), what)
        if isinstance(it, (ast.Name, ast.Subscript, ast.Attribute)):
            seq = self.temp(self.expr(it), "seq", it)
            return _Iter(ir.Call("len", (seq,)), lambda k: ir.Index(seq, (k,)), what)
        raise self.unit.error("for over a non-range iterable", it, _ITER_HINT)

    def _enumerate(self, it: ast.Call, what: str) -> _Iter:
        args = list(it.args)
        for kw in it.keywords:
            if kw.arg != "start":
                raise self.unit.error(f"enumerate({kw.arg}=...)", kw, "write enumerate(x) or enumerate(x, start)")
            args.append(kw.value)
        if not 1 <= len(args) <= 2:
            raise self.unit.error("enumerate with these arguments", it, "write enumerate(x) or enumerate(x, start)")
        inner = self._iterable(args[0])
        start = self.temp(self.expr(args[1]), "start", it) if len(args) == 2 else ir.Const(0)
        return _Iter(inner.length, lambda k: (k if start == ir.Const(0) else ir.BinOp("+", k, start),
                                              inner.element(k)), what)

    def _range_length(self, it: ast.Call, start: ir.Expr, stop: ir.Expr, step: ir.Expr) -> ir.Expr:
        """Python's ``len(range(start, stop, step))``: ``max(0, ⌈(stop - start) / step⌉)``."""
        if not isinstance(step, ir.Const):
            raise self.unit.error("range with a variable step inside enumerate or zip", it,
                                  "use a constant step, or loop over the range itself")
        s = step.value
        span = ir.BinOp("-", stop, start) if s > 0 else ir.BinOp("-", start, stop)
        span = ceil_quotient(self.temp, self.temp(span, "len", it), abs(s), it)
        return self.temp(ir.Call("max", (ir.Const(0), self.temp(span, "len", it))), "len", it)

    # -- targets ------------------------------------------------------------------------------

    def _bind(self, target: ast.AST, value, source: _Iter | None = None) -> None:
        """Assign ``value`` (an IR expression or a tuple of them, nested) to the loop target."""
        if isinstance(target, ast.Name):
            if isinstance(value, tuple):
                raise self.unit.error("one name for several values", target,
                                      f"unpack each element of {source.what}: `for "
                                      f"{', '.join(f'{target.id}{j}' for j in range(len(value)))} in ...`",
                                      message=f"the loop variable {target.id!r} would be a tuple of "
                                      f"{len(value)} values, and tuples are not supported as values")
            self.emit(self.rename.get(target.id, target.id), value, target)
            return
        if not isinstance(target, (ast.Tuple, ast.List)):
            raise self.unit.error(f"for with a {type(target).__name__.lower()} target", target,
                                  "loop with plain names: `for v in x`, `for i, v in enumerate(x)`")
        if not isinstance(value, tuple):
            raise self.unit.error("unpacking an array element in a for loop", target,
                                  "index the row instead: `for row in X:` then `row[0]`, `row[1]`",
                                  message="cannot unpack an element of an array into several names")
        if len(value) != len(target.elts):
            raise self.unit.error("tuple unpacking", target, "use as many names as values",
                                  message=f"cannot unpack {len(value)} values into {len(target.elts)} names")
        for t, v in zip(target.elts, value, strict=True):
            if isinstance(t, ast.Starred):
                raise self.unit.error("starred assignment", t, "name each value")
            self._bind(t, v, source)

    def _s_While(self, s: ast.While):
        if s.orelse:        # at the else block: the loop itself is fine
            raise self.unit.error("while/else", s.orelse[0], "set a flag in the loop and test it after the loop",
                                  message="unsupported construct 'while/else' (the else block of a loop)")
        n = next(self.counter)
        exits = _scan(s.body)
        brk, cont = self.frame.prefix + f"$brk{n}", self.frame.prefix + f"$cont{n}"
        if "break" in exits:
            self.emit(brk, ir.Const(False))
        head, body, latch, exit_ = f"while{n}.head", f"while{n}.body", f"while{n}.latch", f"while{n}.exit"
        self._jump(head)
        self.new_block(head)
        self.cur = head
        test = self.expr(s.test)
        if self.cur != head:
            raise self.unit.error("helper with control flow in a while condition", s.test,
                                  "compute the condition into a variable before the loop and at the end of the "
                                  "loop body (a helper with an if or a loop, or sum(... for ...), runs "
                                  "statements of its own)")
        cond = self.branch_test(self._loop_cond(test, exits, brk), s.test)
        self.terminate(ir.Branch(cond, body, exit_, self._line(s)))
        self.blocks[head]["loop"] = ir.LoopInfo("while", s.lineno + self.unit.source.first_line - 1,
                                                body, latch, exit_, early_exit="break" in exits or "return" in exits)
        self._loop_body(s, body, latch, head, brk, cont, exits)
        self.new_block(exit_)
        self.cur = exit_
        return exits - {"break", "continue"}, False

    def _loop_cond(self, test: ir.Expr, exits: set[str], brk: str) -> ir.Expr:
        guards = []
        if "return" in exits:
            guards.append(ir.UnaryOp("not", ir.Name(self.frame.done)))
        if "break" in exits:
            guards.append(ir.UnaryOp("not", ir.Name(brk)))
        return ir.BoolOp("and", (*guards, test)) if guards else test

    def _loop_body(self, s, body, latch, head, brk, cont, exits):
        self.new_block(body)
        self.cur = body
        if "continue" in exits:
            self.emit(cont, ir.Const(False))
        self.frame.loops.append((brk, cont))
        if isinstance(s, ast.For):
            self._for_bind(ir.Name(self._for_counter[0]))     # the loop variables, from the counter
        self.stmts(s.body)
        self.frame.loops.pop()
        self._jump(latch)
        self.new_block(latch)
        self.cur = latch
        if isinstance(s, ast.For):
            counter, step = self._for_counter
            self.emit(counter, ir.BinOp("+", ir.Name(counter), step))
        self.terminate(ir.Jump(head))

    def _s_For(self, s: ast.For):
        if s.orelse:
            raise self.unit.error("for/else", s.orelse[0], "set a flag in the loop and test it after the loop",
                                  message="unsupported construct 'for/else' (the else block of a loop)")
        n = next(self.counter)
        counter = self.frame.prefix + f"$k{n}"
        self.name_temp(counter, self.word_of(ir.Name(self.rename.get(s.target.id, s.target.id)))
                       if isinstance(s.target, ast.Name) else None)
        start, stop, step, bind = self.iteration(s)
        exits = _scan(s.body)
        brk, cont = self.frame.prefix + f"$brk{n}", self.frame.prefix + f"$cont{n}"
        if "break" in exits:
            self.emit(brk, ir.Const(False))
        self.emit(counter, start)
        head, body, latch, exit_ = f"for{n}.head", f"for{n}.body", f"for{n}.latch", f"for{n}.exit"
        self._jump(head)
        self.new_block(head)
        self.cur = head
        if isinstance(step, ir.Const):
            test = ir.Compare("<" if step.value > 0 else ">", ir.Name(counter), stop)
        else:
            test = ir.BoolOp("or", (
                ir.BoolOp("and", (ir.Compare(">", step, ir.Const(0)), ir.Compare("<", ir.Name(counter), stop))),
                ir.BoolOp("and", (ir.Compare("<", step, ir.Const(0)), ir.Compare(">", ir.Name(counter), stop)))))
        cond = self.temp(self._loop_cond(test, exits, brk), "c", s.iter, "more")
        self.terminate(ir.Branch(cond, body, exit_, self._line(s)))
        self.blocks[head]["loop"] = ir.LoopInfo(
            "range", s.lineno + self.unit.source.first_line - 1, body, latch, exit_, counter, start, stop, step,
            early_exit="break" in exits or "return" in exits)
        saved = getattr(self, "_for_counter", None)
        self._for_counter = (counter, step)
        self._for_bind = bind
        self._loop_body(s, body, latch, head, brk, cont, exits)
        self._for_counter = saved
        self.new_block(exit_)
        self.cur = exit_
        return exits - {"break", "continue"}, False

    # Implemented by the CFG builder and ExprTranslator.
    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None,  # pragma: no cover
             word: str | None = None) -> ir.Expr:
        raise NotImplementedError

    def branch_test(self, value: ir.Expr, node: ast.AST) -> ir.Name:  # pragma: no cover
        raise NotImplementedError

    def name_temp(self, name: str, word: str | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def word_of(self, value: ir.Expr) -> str | None:  # pragma: no cover
        raise NotImplementedError

    def emit(self, target: str, value: ir.Expr, node: ast.AST | None = None) -> None:  # pragma: no cover
        raise NotImplementedError

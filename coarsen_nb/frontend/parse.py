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
"""

from __future__ import annotations

import ast
import itertools

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend import words
from coarsen_nb.frontend.exprs import ExprTranslator
from coarsen_nb.frontend.inplace import refuse_inplace_parameter
from coarsen_nb.frontend.literals import list_names
from coarsen_nb.frontend.loops import LoopTranslator
from coarsen_nb.frontend.nested import NestedDefs
from coarsen_nb.frontend.signature import bind_call, parameter_defaults
from coarsen_nb.frontend.slices import has_slice, sliced_name
from coarsen_nb.frontend.source import Unit, unit_from_function, units_from_source
from coarsen_nb.frontend.unbound import FALLS_OFF, FRAME, returns_on_every_path

_CONSTRUCTORS = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "copy")


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


def _scan(body: list[ast.stmt]) -> set[str]:
    """Which of break/continue/return can leave ``body`` (not counting nested loops' own)."""
    found: set[str] = set()
    for s in body:
        for node in _walk_no_defs(s):
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


def _walk_no_defs(node: ast.AST):
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _walk_no_defs(child)


def _assigned_names(fdef: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fdef.args.args + fdef.args.posonlyargs}
    for node in _walk_no_defs(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


class _Frame:
    """What the builder knows about the function (or inlined helper) being translated."""

    def __init__(self, unit: Unit, prefix: str, ret_arity: int = 0):
        self.unit = unit
        self.prefix = prefix
        self.locals = _assigned_names(unit.node)
        self.rename = {v: prefix + v for v in self.locals} if prefix else {}
        self.arity = ret_arity            # 0: one value; n: every return is a tuple of n values
        self.ret = [prefix + "$ret"] if ret_arity == 0 else [f"{prefix}$ret{k}" for k in range(ret_arity)]
        self.done = prefix + "$done"
        self.loops: list[tuple[str, str]] = []   # (break flag, continue flag) of enclosing loops
        self.written: set[str] = set()
        self.private = _private_parameters(unit.node)
        self.list_names = list_names(unit.node)
        self.nested: dict = {}                   # nested defs run so far, by name (frontend/nested.py)
        self.closure: set[str] = set()           # free names bound to an enclosing function's variables


def _private_parameters(fdef: ast.FunctionDef) -> dict[str, int]:
    """Parameter → the last line of the first top-level statement that rebinds it (``x = x.copy()``).

    Writes after that line go into the function's own array, not the caller's; a rebinding inside an
    ``if`` or a loop may not run, so only the function body's own statements count.  (A plain alias,
    ``x = y``, is refused by the alias check.)
    """
    params = {a.arg for a in fdef.args.args}
    out: dict[str, int] = {}
    for s in fdef.body:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
        for t in targets:
            for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(n, ast.Name) and n.id in params and n.id not in out:
                    out[n.id] = s.end_lineno
    return out


class _Builder(NestedDefs, LoopTranslator, ExprTranslator):
    def __init__(self, unit: Unit):
        self.frame = _Frame(unit, "")
        self.order: list[str] = []
        self.blocks: dict[str, dict] = {}
        self.counter = itertools.count(1)
        self.cur: str | None = None
        self.inlining: tuple[str, ...] = ()
        self.nested_units: dict = {}
        self.words: dict[str, str] = {}     # temporary -> the word it prints as (frontend/words.py)

    # ExprTranslator reads these three from the current frame.
    @property
    def unit(self) -> Unit:
        return self.frame.unit

    @property
    def locals(self) -> set[str]:
        return self.frame.locals

    @property
    def rename(self) -> dict[str, str]:
        return self.frame.rename

    # -- blocks ----------------------------------------------------------------

    def new_block(self, label: str) -> str:
        self.order.append(label)
        self.blocks[label] = {"stmts": [], "term": None, "loop": None}
        return label

    def fresh(self, kind: str) -> str:
        return f"{kind}{next(self.counter)}"

    def emit(self, target: str, value: ir.Expr, node: ast.AST | None = None) -> None:
        line = (node.lineno + self.unit.source.first_line - 1) if node is not None and hasattr(node, "lineno") else 0
        col = node.col_offset + self.unit.indent if node is not None and hasattr(node, "col_offset") else 0
        self.blocks[self.cur]["stmts"].append(ir.Assign(target, value, line, col))

    def terminate(self, term: ir.Terminator) -> None:
        self.blocks[self.cur]["term"] = term

    def _copy(self, value: ir.Expr, node: ast.AST | None) -> ir.Name:
        name = self.frame.prefix + f"$t{next(self.counter)}"
        self.emit(name, value, node)
        self.name_temp(name, self.word_of(value) or words.expr_word(node))
        return ir.Name(name)

    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None, word: str | None = None) -> ir.Expr:
        """``value`` as a name (constants and names stay as they are), printed as ``word``, else as what
        ``node`` computes (:func:`.words.expr_word`), else as its kind."""
        if isinstance(value, (ir.Const, ir.Name)):
            return value
        name = self.frame.prefix + f"${kind}{next(self.counter)}"
        self.emit(name, value, node)
        self.name_temp(name, word or words.temp_word(kind, node))
        return ir.Name(name)

    def name_temp(self, name: str, word: str | None) -> None:
        """Record the word temporary ``name`` prints as (frontend/words.py)."""
        if word and word.strip("_"):        # (`for _ in ...`: no word; the namer's is k)
            self.words[name] = word

    def word_of(self, value: ir.Expr) -> str | None:
        """The word of ``value`` where it is a temporary or a user's variable, else None."""
        if not isinstance(value, ir.Name):
            return None
        return self.words.get(value.id) or (value.id.split(":")[-1] if "$" not in value.id else None)

    # -- the function ------------------------------------------------------------

    def build(self) -> ir.Function:
        node = self.unit.node
        self._check_signature(node)
        self.cur = self.new_block("entry")
        body = self._body_without_docstring(node.body)
        generator = next((n for n in _walk_no_defs(node) if isinstance(n, (ast.Yield, ast.YieldFrom))), None)
        if generator is not None:       # before "no return": a generator's problem is the yield
            self.expr(generator)
        if not any(isinstance(n, ast.Return) for n in _walk_no_defs(node)):
            raise self.unit.error("missing return", node, "return the value to differentiate",
                                  message=f"function {node.name!r} has no return statement")
        returns = [r for r in _walk_no_defs(node) if isinstance(r, ast.Return) and r.value is not None]
        arities = [len(r.value.elts) if isinstance(r.value, ast.Tuple) else 0 for r in returns]
        for r, a in zip(returns, arities, strict=True):
            if a != arities[0]:
                raise self.unit.error("returns of different arities", r,
                                      "return one value, or tuples of one length, on every path")
        self.frame = _Frame(self.unit, "", arities[0] if arities else 0)
        self._start_frame()
        self.stmts(body)
        self._check_writes(node)
        exit_label = self.new_block("exit")
        self._jump(exit_label)
        self.cur = exit_label
        rets = [ir.Name(r) for r in self.frame.ret]
        self.terminate(ir.Return(ir.Tuple(tuple(rets)) if self.frame.arity else rets[0]))
        blocks = tuple(ir.Block(lbl, tuple(b["stmts"]), b["term"], (), b["loop"]) for lbl, b in
                       ((lbl, self.blocks[lbl]) for lbl in self.order))
        params = tuple(a.arg for a in node.args.args)
        return ir.Function(node.name, params, blocks, "entry", self.unit.source, words=dict(self.words))

    def _line(self, node: ast.AST) -> int:
        """``node``'s line in the user's numbering (file or cell), as every IR position is."""
        return node.lineno + self.unit.source.first_line - 1

    def _start_frame(self) -> None:
        # `$ret = undef` kills liveness: without it a helper inlined in a loop
        # would carry its stale return value around the loop as a φ.
        for r in self.frame.ret:
            self.emit(r, ir.Undef())
        self.emit(self.frame.done, ir.Const(False))
        # Markers for the checks of possibly-unbound reads (frontend/unbound.py), gone after SSA: which
        # function a helper's prefix stands for, and whether it can reach its end without a return.
        fdef = self.frame.unit.node
        if self.frame.prefix:
            self.emit(self.frame.prefix + FRAME, ir.Const(fdef.name))
        if not returns_on_every_path(self._body_without_docstring(fdef.body)):
            self.emit(self.frame.prefix + FALLS_OFF, ir.Const(True))

    def _check_signature(self, node: ast.FunctionDef) -> None:
        a = node.args
        if a.vararg:
            raise self.unit.error("*args", a.vararg, "list every parameter by name")
        if a.kwarg:
            raise self.unit.error("**kwargs", a.kwarg, "list every parameter by name")
        if a.kwonlyargs:
            raise self.unit.error("keyword-only parameters", a.kwonlyargs[0], "make them positional")
        names = [p.arg for p in a.args]
        for k, p in enumerate(a.args):
            if p.arg in names[:k]:
                raise self.unit.error("duplicate parameter", p, f"rename the second {p.arg!r}")
        parameter_defaults(self.unit)     # constants only (frontend/signature.py)
        if a.posonlyargs:
            raise self.unit.error("positional-only marker", a.posonlyargs[0], "remove the `/`")

    @staticmethod
    def _body_without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[1:]
        return body

    def _jump(self, target: str) -> None:
        if self.cur is not None and self.blocks[self.cur]["term"] is None:
            self.terminate(ir.Jump(target))

    # -- statements ---------------------------------------------------------------

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
        cond = self.temp(self.expr(s.test), "c", s.test)
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

    # -- loops ---------------------------------------------------------------------

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
        cond = self.temp(self._loop_cond(test, exits, brk), "c", s.test)
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

    # -- helpers ---------------------------------------------------------------------

    def inline(self, helper: Unit, node: ast.Call) -> ir.Expr:
        fdef = helper.node
        params = [a.arg for a in fdef.args.args]
        args = [ir.Const(a) if not isinstance(a, ast.AST) else self.expr(a) for a in bind_call(self.unit, helper, node)]
        returns = [r for r in _walk_no_defs(fdef) if isinstance(r, ast.Return)]
        arities = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else 0 for r in returns if r.value}
        if not returns or len(arities) != 1:
            raise helper.error("helper returns", fdef, "return one value, or tuples of one length, on every path")
        arity = arities.pop()
        prefix = f"{fdef.name}{next(self.counter)}:"
        outer = self.frame
        # Parameter bindings belong to the call site (the caller's line numbers).
        for p, a in zip(params, args, strict=True):
            self.emit(prefix + p, a, node)
        self.frame = _Frame(helper, prefix, arity)
        self.enter_nested(helper)
        self.inlining = (*self.inlining, outer.unit.node.name)
        try:
            self._check_signature(fdef)
            self._start_frame()
            self.stmts(self._body_without_docstring(fdef.body))
            self._check_writes(fdef)
            rets = [ir.Name(r) for r in self.frame.ret]
        finally:
            self.frame = outer
            self.inlining = self.inlining[:-1]
        return rets[0] if arity == 0 else ir.Tuple(tuple(rets))

    def _check_writes(self, fdef: ast.FunctionDef) -> None:
        """A written array must be fresh: no alias of it may be read after a write."""
        for node in _walk_no_defs(fdef):
            source = _aliased(node.value) if isinstance(node, ast.Assign) else None
            names = [t.id for t in node.targets if isinstance(t, ast.Name)] if source is not None else []
            if source is not None and (names or sliced_name(node.value) is None):   # u[1:] = u[:-1] copies
                if source in self.frame.written or any(n in self.frame.written for n in names):
                    shared = source if sliced_name(node.value) is None else ast.unparse(node.value)
                    raise self.unit.error("array alias", node,
                                          f"write `np.copy({shared})`: plain assignment would share the "
                                          "array, and writes into it would change both names")


#: Calls that return their array operand itself (NumPy makes no copy), so the result aliases it.
_ALIASING_CALLS = ("asarray", "atleast_1d", "atleast_2d", "atleast_3d")


def _aliased(value: ast.expr) -> str | None:
    """The variable ``value`` shares its array with: ``x`` for ``x``, ``np.asarray(x)`` and a slice
    ``x[a:b]`` (a view in NumPy, a copy here), else None."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in _ALIASING_CALLS and len(value.args) == 1:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else sliced_name(value)


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

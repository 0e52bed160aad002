"""The CFG builder's state: blocks, temporaries, the frame of the function being translated, and the
inlining of helpers (:class:`BuilderState`).

:mod:`.parse` builds on it with the statements, :mod:`.loops` adds the loops and :mod:`.exprs` the
expressions; :func:`coarsen_nb.frontend.parse.parse` says what the built CFG looks like.  A frame is
what the builder knows about the function, or the inlined helper, it is translating: the prefix of its
variables (``h1:x``), its return slots and ``$done`` flag, the enclosing loops' flags, the arrays it
wrote.
"""

from __future__ import annotations

import ast
import itertools

from coarsen_nb import ir
from coarsen_nb.frontend import words
from coarsen_nb.frontend.exprs import ExprTranslator
from coarsen_nb.frontend.literals import list_names
from coarsen_nb.frontend.loops import LoopTranslator
from coarsen_nb.frontend.nested import NestedDefs
from coarsen_nb.frontend.signature import bind_call, parameter_defaults
from coarsen_nb.frontend.slices import sliced_name
from coarsen_nb.frontend.source import Unit, walk_no_defs
from coarsen_nb.frontend.unbound import FALLS_OFF, FRAME, returns_on_every_path


def _assigned_names(fdef: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fdef.args.args + fdef.args.posonlyargs}
    for node in walk_no_defs(fdef):
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



class BuilderState(NestedDefs, LoopTranslator, ExprTranslator):
    """Blocks, temporaries and frames; the whole function (:meth:`build`) and a helper's body inlined at a
    call (:meth:`inline`).  The statements are :class:`coarsen_nb.frontend.parse`'s."""

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

    def branch_test(self, value: ir.Expr, node: ast.AST) -> ir.Name:
        """The name a branch tests: ``value``'s temp, a constant's too (``if False:``, ``while 0:``), since
        the gating (:mod:`coarsen_nb.phi.gate`) branches on names."""
        if isinstance(value, ir.Const):
            name = self.frame.prefix + f"$c{next(self.counter)}"
            self.emit(name, value, node)
            self.name_temp(name, words.temp_word("c", node))
            return ir.Name(name)
        return self.temp(value, "c", node)

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
        generator = next((n for n in walk_no_defs(node) if isinstance(n, (ast.Yield, ast.YieldFrom))), None)
        if generator is not None:       # before "no return": a generator's problem is the yield
            self.expr(generator)
        if not any(isinstance(n, ast.Return) for n in walk_no_defs(node)):
            raise self.unit.error("missing return", node, "return the value to differentiate",
                                  message=f"function {node.name!r} has no return statement")
        returns = [r for r in walk_no_defs(node) if isinstance(r, ast.Return) and r.value is not None]
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

    # -- helpers ---------------------------------------------------------------------

    def inline(self, helper: Unit, node: ast.Call) -> ir.Expr:
        fdef = helper.node
        params = [a.arg for a in fdef.args.args]
        args = [ir.Const(a) if not isinstance(a, ast.AST) else self.expr(a) for a in bind_call(self.unit, helper, node)]
        returns = [r for r in walk_no_defs(fdef) if isinstance(r, ast.Return)]
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
        for node in walk_no_defs(fdef):
            source = _aliased(node.value) if isinstance(node, ast.Assign) else None
            names = [t.id for t in node.targets if isinstance(t, ast.Name)] if source is not None else []
            if source is not None and (names or sliced_name(node.value) is None):   # u[1:] = u[:-1] copies
                if source in self.frame.written or any(n in self.frame.written for n in names):
                    shared = source if sliced_name(node.value) is None else ast.unparse(node.value)
                    raise self.unit.error("array alias", node,
                                          f"write `np.copy({shared})`: plain assignment would share the "
                                          "array, and writes into it would change both names")

    # Implemented by the statement builder (frontend/parse.py).
    def stmts(self, body: list[ast.stmt]) -> set[str]:  # pragma: no cover - overridden
        raise NotImplementedError


#: Calls that return their array operand itself (NumPy makes no copy), so the result aliases it.
_ALIASING_CALLS = ("asarray", "atleast_1d", "atleast_2d", "atleast_3d")


def _aliased(value: ast.expr) -> str | None:
    """The variable ``value`` shares its array with: ``x`` for ``x``, ``np.asarray(x)`` and a slice
    ``x[a:b]`` (a view in NumPy, a copy here), else None."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in _ALIASING_CALLS and len(value.args) == 1:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else sliced_name(value)

"""Random programs inside the supported subset, for property-based tests.

:func:`programs` is a Hypothesis strategy of ``(source, args)``: the text of a
cell (sometimes a helper ``def`` and then the main ``def``, always last) and
inputs for the main function.  :func:`program_cases` gives the same programs
as :class:`Program` records that also name the parameters to differentiate.

What the programs contain: expression trees over ``+ - *``, ``/`` with a
denominator ``1 + e*e``, ``math.sin``/``cos``/``tanh``, ``exp`` of a bounded
argument, ``log(abs(e) + 1)``, ``min``/``max``/``abs``, conditional
expressions; ``if``/``elif``/``else`` on comparisons joined by
``and``/``or``/``not``; ``for`` over ``range`` (1–3 arguments) accumulating
sums, products and linear recurrences; ``for v in x``; nested loops,
triangular ones included; ``while`` loops with a bounded trip count and a
``break``; loops that never run (an empty ``range``, a ``while`` false at entry:
a bound of 0, or a condition that folds to False, ``k < n and (a - a) > 0.0``);
``continue``; early ``return`` s (also from loops); tuple and augmented
assignment; array reads ``x[i]`` by a loop index; calls to a helper.
``program_cases(extended=True)`` also draws numbers made by NumPy code over
``x`` (sums of slices and reversals, ``np.where``, ``axis=`` reductions of an
outer product, ``np.max``/``np.min``) and helpers that return from inside a
loop or from nested branches.

Safety by construction: every loop runs at most 6 times (12 for ``while``), a
loop-carried value is updated only through a bounded function (``tanh``,
``sin``, a contraction), so no program overflows or divides by zero.
Everything is smooth except at branch boundaries, ``abs``, ``min`` and
``max``, so gradients w.r.t. the float parameters exist almost everywhere.
Parameters: floats ``a``, ``b``, ``c`` (1–3 of them), optionally a float
array ``x`` (3–6 elements) and an int ``n`` (0–5).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

__all__ = ["programs", "program_cases", "Program", "main_function", "run_source"]

_FLOATS = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False, allow_infinity=False)
_CONSTS = (0.5, 1.0, 1.5, 2.0, 0.25, 3.0, 0.1)


@dataclass(frozen=True)
class Program:
    source: str
    args: tuple
    params: tuple[str, ...]
    wrt: tuple[str, ...]     # the float parameters: scalars and the array x


def main_function(source: str, name: str | None = None):
    """The main (last, or ``name``) function of ``source``, as plain Python."""
    namespace: dict = {"math": math, "np": np}
    exec(compile(source, "<program>", "exec"), namespace)
    if name is None:
        name = [line[4:line.index("(")] for line in source.splitlines() if line.startswith("def ")][-1]
    return namespace[name]


def run_source(source: str, args: tuple, name: str | None = None):
    """Run the main (last, or ``name``) function of ``source`` as plain Python."""
    return main_function(source, name)(*args)


@dataclass
class _Scope:
    floats: list[str]                                    # float variables readable here
    indices: list[str] = field(default_factory=list)     # int loop variables (numbers)
    x_indices: list[str] = field(default_factory=list)   # loop variables valid as x[i]
    loop_depth: int = 0
    in_while: bool = False

    def inner(self, index: str | None = None, x_index: bool = False, floats=(), in_while=False) -> _Scope:
        return _Scope(self.floats + list(floats),
                      self.indices + ([index] if index else []),
                      self.x_indices + ([index] if index and x_index else []),
                      self.loop_depth + 1, in_while)


class _Writer:
    """Writes one program's text, drawing every choice from Hypothesis."""

    def __init__(self, draw, has_x: bool, has_n: bool, helper: str | None, extended: bool = False):
        self.draw = draw
        self.extended = extended
        self.has_x = has_x
        self.has_n = has_n
        self.helper = helper
        self.lines: list[str] = []
        self.ids = itertools.count()

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    def flip(self, p_true: int = 1, out_of: int = 2) -> bool:
        return self.draw(st.integers(0, out_of - 1)) < p_true

    def fresh(self, stem: str = "t") -> str:
        return f"{stem}{next(self.ids)}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # -- expressions -----------------------------------------------------------

    def leaf(self, scope: _Scope) -> str:
        kinds = ["var", "var", "const"]
        if scope.indices:
            kinds.append("index")
        if scope.x_indices:
            kinds += ["x", "x"]
        if self.has_n:
            kinds.append("n")
        kind = self.choice(kinds)
        if kind == "var":
            return self.choice(scope.floats)
        if kind == "const":
            return repr(self.choice(_CONSTS))
        if kind == "index":
            return f"({self.choice(scope.indices)} * 0.25)"
        if kind == "n":
            return "(0.5 * n)"
        return f"x[{self.choice(scope.x_indices)}]"

    def expr(self, scope: _Scope, depth: int = 2) -> str:
        if depth <= 0 or self.flip(1, 4):
            return self.leaf(scope)
        d = depth - 1
        kind = self.choice(["+", "-", "*", "/", "sin", "cos", "tanh", "exp", "log", "ifexp",
                            "minmax", "abs", "helper", "+", "*"])
        if kind in ("+", "-", "*"):
            return f"({self.expr(scope, d)} {kind} {self.expr(scope, d)})"
        if kind == "/":
            den = self.expr(scope, d)
            return f"({self.expr(scope, d)} / (1.0 + {den} * {den}))"
        if kind in ("sin", "cos", "tanh"):
            return f"math.{kind}({self.expr(scope, d)})"
        if kind == "exp":
            return f"math.exp({self.choice(['math.sin', 'math.tanh', 'math.cos'])}({self.expr(scope, d)}))"
        if kind == "log":
            return f"math.log(abs({self.expr(scope, d)}) + 1.0)"
        if kind == "ifexp":
            return f"({self.expr(scope, d)} if {self.pred(scope, d)} else {self.expr(scope, d)})"
        if kind == "minmax":
            return f"{self.choice(['min', 'max'])}({self.expr(scope, d)}, {self.expr(scope, d)})"
        if kind == "abs":
            return f"abs({self.expr(scope, d)})"
        if self.helper is None:
            return self.leaf(scope)
        return f"{self.helper}({self.expr(scope, d)}, {self.expr(scope, d)})"

    def _no_helper(self, make, *args) -> str:
        """``make(*args)`` without helper calls: the frontend wants a while condition in one block."""
        saved, self.helper = self.helper, None
        try:
            return make(*args)
        finally:
            self.helper = saved

    def bounded(self, scope: _Scope) -> str:
        """An expression in [-1, 1] (or (0, e]): safe to add to a loop-carried value."""
        f = self.choice(["math.tanh", "math.sin", "math.cos"])
        return f"{f}({self.expr(scope)})"

    def pred(self, scope: _Scope, depth: int = 1) -> str:
        kind = self.choice(["cmp", "cmp", "cmp", "and", "or", "not", "chain"])
        if depth <= 0 or kind == "cmp":
            return f"{self.expr(scope, 1)} {self.choice(['<', '>', '<=', '>='])} {self.expr(scope, 1)}"
        if kind == "chain":
            return f"{self.expr(scope, 0)} < {self.expr(scope, 1)} < {self.expr(scope, 0)}"
        if kind == "not":
            return f"not {self.expr(scope, 1)} > {self.expr(scope, 1)}"
        return f"({self.pred(scope, 0)}) {kind} ({self.pred(scope, 0)})"

    # -- statements ---------------------------------------------------------------

    def block(self, scope: _Scope, indent: int, count: int, can_exit: bool) -> None:
        """``count`` statements at ``indent``; new variables join ``scope.floats``."""
        for k in range(count):
            last = k == count - 1
            self.stmt(scope, indent, can_exit and not last)

    def stmt(self, scope: _Scope, indent: int, can_exit: bool) -> None:
        kinds = ["assign", "assign", "aug", "if", "tuple"]
        if scope.loop_depth < 2:
            kinds += ["for_sum", "for_rec", "for_array", "while"]
            if self.has_x:
                kinds.append("triangular")
        if can_exit:
            kinds.append("return")
            if scope.loop_depth:
                kinds += ["continue", "break"]
        if self.extended and self.has_x:
            kinds += ["array", "array"]
        getattr(self, "_s_" + self.choice(kinds))(scope, indent)

    def _s_assign(self, scope, indent):
        name = self.fresh()
        self.emit(indent, f"{name} = {self.expr(scope)}")
        scope.floats.append(name)

    def _s_aug(self, scope, indent):
        name = self.choice(scope.floats)
        op = self.choice(["+=", "-=", "*="])
        rhs = self.bounded(scope) if op != "*=" else f"(1.0 + 0.5 * {self.bounded(scope)})"
        self.emit(indent, f"{name} {op} {rhs}")

    def _s_tuple(self, scope, indent):
        u, w = self.fresh(), self.fresh()
        self.emit(indent, f"{u}, {w} = {self.expr(scope)}, {self.expr(scope)}")
        if self.flip():
            self.emit(indent, f"{u}, {w} = {w}, {u}")       # a pure swap: no temporary needed in Python
        else:
            self.emit(indent, f"{u}, {w} = {w}, {u} + 0.5 * {self.bounded(scope)}")
        scope.floats += [u, w]

    def _s_if(self, scope, indent):
        target = self.fresh()
        arms = self.draw(st.integers(1, 3))     # if / if-else / if-elif-else
        if arms == 1:
            self.emit(indent, f"{target} = {self.expr(scope)}")
        for k in range(arms):
            head = "if" if k == 0 else ("else" if k == arms - 1 else "elif")
            self.emit(indent, f"{head} {self.pred(scope)}:" if head != "else" else "else:")
            inner = _Scope(list(scope.floats), scope.indices, scope.x_indices, scope.loop_depth,
                           scope.in_while)
            if self.flip(1, 3):
                self.block(inner, indent + 1, 1, can_exit=False)
            self.emit(indent + 1, f"{target} = {self.expr(inner)}")
            if self.flip(1, 5) and not scope.in_while:
                self._exit_stmt(inner, indent + 1)
        scope.floats.append(target)

    def _exit_stmt(self, scope, indent):
        """An early exit at the end of an arm: return, or break/continue inside a loop."""
        kinds = ["return"] + (["break", "continue"] if scope.loop_depth else [])
        getattr(self, "_s_" + self.choice(kinds))(scope, indent)

    def _s_return(self, scope, indent):
        self.emit(indent, f"if {self.pred(scope)}:")
        self.emit(indent + 1, f"return {self.expr(scope)}")

    def _s_break(self, scope, indent):
        self.emit(indent, f"if {self.pred(scope)}:")
        self.emit(indent + 1, "break")

    def _s_continue(self, scope, indent):
        if scope.in_while:      # a `continue` before `k += 1` would loop forever
            return self._s_break(scope, indent)
        self.emit(indent, f"if {self.pred(scope)}:")
        self.emit(indent + 1, "continue")

    def _range(self) -> tuple[str, bool]:
        """A range(...) call with at most 6 iterations, and whether its values index x."""
        if self.flip(1, 8):     # one with none
            return self.choice(["range(0)", "range(3, 3)", "range(2, 0)", "range(4, 1, 2)"]), False
        if self.has_x and self.flip():
            return self.choice(["range(len(x))", "range(1, len(x))", "range(x.shape[0] - 1, -1, -1)",
                                "range(0, len(x), 2)"]), True
        if self.has_n:
            return self.choice(["range(n)", "range(1, n + 1)", "range(n, 0, -1)", "range(0, n, 2)"]), False
        return self.choice(["range(4)", "range(2, 6)", "range(5, 0, -2)"]), False

    def _loop_body(self, scope, indent, acc_update):
        count = self.draw(st.integers(0, 2))
        self.block(scope, indent, count, can_exit=True)
        acc_update(scope)

    def _s_for_sum(self, scope, indent):
        acc, i = self.fresh("s"), self.fresh("i")
        rng, xi = self._range()
        self.emit(indent, f"{acc} = {self.expr(scope, 1)}")
        self.emit(indent, f"for {i} in {rng}:")
        inner = scope.inner(i, xi)
        op = self.choice(["+=", "-=", "sum", "prod", "max"])
        updates = {
            "+=": lambda s: self.emit(indent + 1, f"{acc} += {self.bounded(s)}"),
            "-=": lambda s: self.emit(indent + 1, f"{acc} -= {self.bounded(s)}"),
            "sum": lambda s: self.emit(indent + 1, f"{acc} = {acc} + {self.bounded(s)}"),
            "prod": lambda s: self.emit(indent + 1, f"{acc} = {acc} * (1.0 + 0.5 * {self.bounded(s)})"),
            "max": lambda s: self.emit(indent + 1, f"{acc} = max({acc}, {self.expr(s)})"),
        }
        self._loop_body(inner, indent + 1, updates[op])
        scope.floats.append(acc)

    def _s_for_rec(self, scope, indent):
        v, i = self.fresh("v"), self.fresh("i")
        rng, xi = self._range()
        a = self.choice(["0.5", "-0.75", "0.9", self.choice(scope.floats) + " * 0.25"])
        self.emit(indent, f"{v} = {self.expr(scope, 1)}")
        self.emit(indent, f"for {i} in {rng}:")
        inner = scope.inner(i, xi)
        self._loop_body(inner, indent + 1,
                        lambda s: self.emit(indent + 1, f"{v} = {a} * {v} + {self.bounded(s)}"))
        scope.floats.append(v)

    def _s_for_array(self, scope, indent):
        if not self.has_x:
            return self._s_for_sum(scope, indent)
        acc, item = self.fresh("s"), self.fresh("e")
        self.emit(indent, f"{acc} = 0.0")
        self.emit(indent, f"for {item} in x:")
        inner = scope.inner(floats=[item])
        self._loop_body(inner, indent + 1,
                        lambda s: self.emit(indent + 1, f"{acc} += {self.bounded(s)}"))
        scope.floats.append(acc)

    def _s_triangular(self, scope, indent):
        acc, i, j = self.fresh("s"), self.fresh("i"), self.fresh("j")
        self.emit(indent, f"{acc} = 0.0")
        self.emit(indent, f"for {i} in range(len(x)):")
        self.emit(indent + 1, f"for {j} in range({i} + 1, len(x)):")
        inner = scope.inner(i, True).inner(j, True)
        self._loop_body(inner, indent + 2,
                        lambda s: self.emit(indent + 2, f"{acc} += x[{i}] * x[{j}] * {self.bounded(s)}"))
        scope.floats.append(acc)

    def _s_array(self, scope, indent):
        """A number made by NumPy code over ``x``: a slice, a reversal, ``np.where``, an axis reduction."""
        name, e = self.fresh(), self.expr(scope, 1)
        u = self.choice(["x", "x[1:]", "x[:-1]", "x[::-1]", "x[::2]"])
        kind = self.choice(["slice", "where", "axis", "extremum", "pair"])
        if kind == "slice":
            text = f"np.sum(np.tanh({u} * {e}))"
        elif kind == "where":
            text = f"np.sum(np.where({u} > {e}, {u} * {e}, np.sin({u})))"
        elif kind == "axis":
            axis = self.choice(["0", "1"])
            text = f"np.sum(np.sum(np.tanh(x[:, None] * x[None, :] + {e}), axis={axis}) * x)"
        elif kind == "extremum":
            text = f"np.{self.choice(['max', 'min'])}(np.sin({u} + {e}))"
        else:
            text = f"np.sum(x[1:] * x[:-1] * np.cos({e}))"
        self.emit(indent, f"{name} = {text}")
        scope.floats.append(name)

    def _s_while(self, scope, indent):
        w, k = self.fresh("w"), self.fresh("k")
        limit = "n" if self.has_n and self.flip() else str(self.draw(st.integers(0, 12)))
        self.emit(indent, f"{w} = {self.expr(scope, 1)}")
        self.emit(indent, f"{k} = 0")
        guard = f" and {self._no_helper(self.pred, scope, 0)}" if self.flip(1, 3) else ""
        never = self.flip(1, 6)
        if never:   # false at entry: a bound of 0, or a guard the lift folds to the constant False
            f = self.choice(scope.floats)
            limit, guard = self.choice([("0", ""), (limit, f" and ({f} - {f}) > 0.0"), (limit, f" and {f} < {f}")])
        if not never and self.flip(1, 4):
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"if {k} >= {limit}:")
            self.emit(indent + 2, "break")
        else:
            self.emit(indent, f"while {k} < {limit}{guard}:")
        self.emit(indent + 1, f"{k} += 1")
        inner = scope.inner(k, floats=[], in_while=True)
        self.emit(indent + 1, f"{w} = 0.8 * {w} + {self.bounded(inner)}")
        self.block(inner, indent + 1, self.draw(st.integers(0, 1)), can_exit=False)
        self.emit(indent + 1, f"if {w} > {self.expr(inner, 1)}:")
        self.emit(indent + 2, "break")
        scope.floats.append(w)


def _helper_def(draw, extended: bool = False) -> str:
    """``def h(p, q)``: straight-line, or with an ``if`` and two returns; ``extended``: also a loop whose
    body may return (several returns inside a loop), or nested branches that return."""
    w = _Writer(draw, has_x=False, has_n=False, helper=None)
    scope = _Scope(["p", "q"])
    w.emit(0, "def h(p, q):")
    form = draw(st.sampled_from(["loop", "nested", "plain"])) if extended else "plain"
    if form == "loop":
        i = w.fresh("i")
        w.emit(1, f"for {i} in {w.choice(['range(3)', 'range(1, 4)', 'range(0)'])}:")
        inner = scope.inner(i)
        for _ in range(draw(st.integers(1, 2))):
            w.emit(2, f"if {w.pred(inner)}:")
            w.emit(3, f"return {w.expr(inner)}")
        w.emit(2, f"p = {w.bounded(inner)} + 0.5 * p")
    elif form == "nested":
        w.emit(1, f"if {w.pred(scope)}:")
        w.emit(2, f"if {w.pred(scope)}:")
        w.emit(3, f"return {w.expr(scope)}")
        w.emit(2, f"q = {w.bounded(scope)}")
    if draw(st.booleans()):
        w.emit(1, f"if {w.pred(scope)}:")
        w.emit(2, f"return {w.expr(scope)}")
    w.emit(1, f"return {w.expr(scope)}")
    return "\n".join(w.lines) + "\n"


@st.composite
def program_cases(draw, extended: bool = False) -> Program:
    """A random :class:`Program` of the subset (see the module docstring).  ``extended`` also draws NumPy
    statements over ``x`` (``_Writer._s_array``) and helpers that return from a loop or a nested branch;
    the default draws exactly what it drew before, so the derandomized tests keep their examples."""
    floats = ["a", "b", "c"][: draw(st.integers(1, 3))]
    has_x, has_n = draw(st.booleans()), draw(st.booleans())
    helper = _helper_def(draw, extended) if draw(st.integers(0, 3 - 2 * extended)) == 0 else None
    w = _Writer(draw, has_x, has_n, "h" if helper else None, extended)
    params = [*floats, *(["x"] if has_x else []), *(["n"] if has_n else [])]
    w.emit(0, f"def main({', '.join(params)}):")
    scope = _Scope(list(floats))
    w.block(scope, 1, draw(st.integers(1, 4)), can_exit=True)
    w.emit(1, f"return {w.expr(scope)}")
    source = (helper + "\n\n" if helper else "") + "\n".join(w.lines) + "\n"
    args: list = [draw(_FLOATS) for _ in floats]
    if has_x:
        args.append(np.array(draw(st.lists(_FLOATS, min_size=3, max_size=6)), dtype=float))
    if has_n:
        args.append(draw(st.integers(0, 5)))
    wrt = (*floats, *(["x"] if has_x else []))
    return Program(source, tuple(args), tuple(params), wrt)


def programs() -> st.SearchStrategy[tuple[str, tuple]]:
    """Strategy of ``(source, args)``: a random program of the subset and inputs for it."""
    return program_cases().map(lambda p: (p.source, p.args))

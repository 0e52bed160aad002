"""Every kernel's main function stays inside coarsen_nb's supported subset.

The kernels are benchmarks *of coarsen_nb*: a kernel that quietly used a
slice, a keyword argument or a list would measure nothing (the frontend would
reject it).  This is a static check of the rules in DESIGN.md "Supported
Python" and the kernel brief, written against the AST so that it holds
before, and independently of, the frontend; the primitive calls are looked up
in coarsen_nb's own primitive table, the one table every stage uses.
"""

import ast
import inspect
import textwrap

import pytest

from coarsen_nb.kernels import KERNELS, NAMES, function
from coarsen_nb.primitives import CONSTANTS, lookup

BUILTIN_CALLS = {"len", "abs", "min", "max", "float", "int"}
MODULES = {"np", "math"}
CONSTRUCTORS = {"zeros", "ones", "empty", "zeros_like"}

ALLOWED_NODES = (
    ast.FunctionDef, ast.arguments, ast.arg, ast.Assign, ast.AugAssign, ast.If, ast.IfExp,
    ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Compare, ast.For, ast.While, ast.Break, ast.Continue,
    ast.Return, ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Tuple, ast.Call,
    ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)


def _tree(fn):
    return ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]


def _helpers_called(fn, mod):
    """Module functions ``fn`` calls by name (to be inlined), transitively."""
    seen, todo = {}, [fn]
    while todo:
        f = todo.pop()
        for node in ast.walk(_tree(f)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                obj = getattr(mod, node.func.id, None)
                if inspect.isfunction(obj) and obj.__module__ == mod.__name__ and obj.__name__ not in seen:
                    seen[obj.__name__] = obj
                    todo.append(obj)
    return seen


class _Checker:
    def __init__(self, mod, tree, helpers):
        self.mod, self.tree, self.helpers = mod, tree, helpers
        self.params = {a.arg for a in tree.args.args}
        self.locals = set(self.params)
        self.loop_indices = set()    # targets of `for ... in range(...)`
        self.fresh_arrays = set()    # arrays the function created with a constructor
        self.problems = []

    def bad(self, node, what):
        self.problems.append(f"{self.tree.name}:{getattr(node, 'lineno', '?')}: {what}")

    def run(self):
        a = self.tree.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            self.bad(self.tree, "only plain positional parameters")
        # first pass: names bound in the function
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.locals.add(node.id)
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range":
                self.loop_indices.add(node.target.id)
            if isinstance(node, ast.Assign) and self._is_constructor(node.value):
                self.fresh_arrays.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(self.tree):
            self.visit(node)
        if self.tree.name in self.helpers and self.tree.name == self.mod.META["name"]:
            self.bad(self.tree, "recursion")
        return self.problems

    def _is_constructor(self, node):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"
                and node.func.attr in CONSTRUCTORS)

    def _index_ok(self, node):
        if isinstance(node, ast.Tuple):
            return len(node.elts) == 2 and all(self._index_ok(e) for e in node.elts)
        if isinstance(node, ast.Name):
            return node.id in self.loop_indices
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            # i ± c, and i + k (± c): a window of a convolution, two loop indices added
            window = isinstance(node.op, ast.Add) and isinstance(node.right, ast.Name) \
                and node.right.id in self.loop_indices
            return self._index_ok(node.left) and not isinstance(node.left, ast.Tuple) and (
                window or isinstance(node.right, ast.Constant) and type(node.right.value) is int)
        return False

    def visit(self, node):
        if not isinstance(node, ALLOWED_NODES):
            self.bad(node, f"construct {type(node).__name__} is outside the subset")
            return
        if isinstance(node, ast.Constant) and type(node.value) not in (int, float, bool):
            self.bad(node, f"constant {node.value!r}: only numbers")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            known = self.locals | MODULES | BUILTIN_CALLS | {"range"} | set(self.helpers)
            if node.id not in known:
                self.bad(node, f"free name {node.id!r} (a global): write the literal or pass it")
        if isinstance(node, ast.Attribute):
            self._attribute(node)
        if isinstance(node, ast.Call):
            self._call(node)
        if isinstance(node, ast.Subscript):
            self._subscript(node)
        if isinstance(node, ast.For):
            it = node.iter
            by_range = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            if not (by_range or (isinstance(it, ast.Name) and it.id in self.params)):
                self.bad(node, "for over range(...) or over an array parameter's elements only")
            if not isinstance(node.target, ast.Name) or node.orelse:
                self.bad(node, "for target must be one name, no else clause")
        if isinstance(node, ast.While) and node.orelse:
            self.bad(node, "while ... else")
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript):
                    if not (isinstance(t.value, ast.Name) and t.value.id in self.fresh_arrays):
                        self.bad(t, "writes only into arrays the function created with np.zeros/ones/...")

    def _attribute(self, node):
        v = node.value
        if isinstance(v, ast.Name) and v.id in MODULES:
            if lookup(v.id, node.attr) is None and node.attr not in CONSTANTS:
                self.bad(node, f"{v.id}.{node.attr} is not in the primitive table")
        elif node.attr == "shape":
            pass                         # x.shape[0]: checked where subscripted
        elif node.attr != "copy":
            self.bad(node, f"attribute .{node.attr}")

    def _call(self, node):
        if node.keywords:
            self.bad(node, "keyword arguments")
        f = node.func
        if isinstance(f, ast.Name):
            if f.id not in BUILTIN_CALLS | {"range"} and f.id not in self.helpers:
                self.bad(node, f"call of {f.id!r}")
        elif isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id in MODULES:
                if isinstance(f.value, ast.Name) and lookup(f.value.id, f.attr) is None:
                    self.bad(node, f"{f.value.id}.{f.attr}(...) is not a primitive")
            elif f.attr != "copy" or node.args:
                self.bad(node, f"method call .{f.attr}(...)")
        else:
            self.bad(node, "call of a computed callee")

    def _subscript(self, node):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            if not (isinstance(node.slice, ast.Constant) and node.slice.value in (0, 1)):
                self.bad(node, "x.shape[0] or x.shape[1] only")
            return
        if not isinstance(node.value, ast.Name):
            self.bad(node, "subscript of a computed value")
        if not self._index_ok(node.slice):
            self.bad(node, f"index {ast.unparse(node.slice)!r}: loop index ± constant, a sum of loop indices, "
                           "or another loop index")


@pytest.mark.parametrize("name", NAMES)
def test_main_function_and_its_helpers_stay_in_the_subset(name):
    mod = KERNELS[name]
    fn = function(mod)
    helpers = _helpers_called(fn, mod)
    problems = []
    for f in [fn, *helpers.values()]:
        tree = _tree(f)
        if ast.get_docstring(tree) is not None:
            problems.append(f"{f.__name__}: docstring (a string constant) in a function coarsen_nb compiles")
        problems += _Checker(mod, tree, helpers).run()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_main_function_returns_once_at_the_end(name):
    """One float out: the last statement is the (only) return, of a scalar expression."""
    tree = _tree(function(KERNELS[name]))
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    assert len(returns) == 1 and tree.body[-1] is returns[0] and returns[0].value is not None


def test_checker_rejects_what_the_subset_excludes():
    """The checker itself must see the constructs it exists to catch."""
    import types

    src = textwrap.dedent('''
        def bad(x, n):
            s = sum([v for v in x])
            t = x[1:3]
            u = np.sum(x, axis=0)
            x[0] = 1.0
            w = x.mean()
            return s + t + u + w + "a" + GLOBAL
    ''')
    mod = types.ModuleType("fake")
    mod.META = {"name": "bad"}
    problems = _Checker(mod, ast.parse(src).body[0], {}).run()
    text = "\n".join(problems)
    for needle in ("ListComp", "index", "keyword", "writes only", "method call", "constant", "GLOBAL"):
        assert needle in text, needle


@pytest.mark.parametrize("name", NAMES)
def test_frontend_accepts_the_main_function(name):
    """Beyond the static rules: coarsen_nb's own frontend parses each kernel to a verified SSA form."""
    from coarsen_nb.frontend.parse import parse
    from coarsen_nb.frontend.ssa import to_ssa, verify

    verify(to_ssa(parse(function(KERNELS[name]))))

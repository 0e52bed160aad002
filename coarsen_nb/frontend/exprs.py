"""Python expressions → IR expressions, with the subset check.

The translator is a base class of the CFG builder in :mod:`.parse`: a call to
a helper function defined in the same source is inlined, which emits blocks,
so expression translation needs the builder.  Everything outside the subset
raises :class:`~coarsen_nb.errors.CoarsenError` at the offending node.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir, primitives
from coarsen_nb.frontend.arrays import SHAPED_CALLS, ArrayCallTranslator
from coarsen_nb.frontend.call_targets import module_function, submodule_function, unsupported_hint
from coarsen_nb.frontend.comprehensions import ComprehensionTranslator
from coarsen_nb.frontend.literals import LIST_SAFE_BUILTINS, LiteralTranslator
from coarsen_nb.frontend.methods import MethodTranslator
from coarsen_nb.frontend.slices import SliceTranslator, has_slice
from coarsen_nb.frontend.source import MISSING, Unit
from coarsen_nb.frontend.static import operand_nodes, static_parameters

#: Python binary operators and their IR spelling (shared with the parser).
BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@"}
BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

#: ``yield`` makes a generator, which has no single value to differentiate.
_GENERATOR_HINT = ("generators are not supported: return the value to differentiate (accumulate what you "
                   "would yield in a loop and return the total, or fill an array and return it)")

_REJECT = {
    ast.Lambda: ("lambda", "define a helper function with `def` in the same cell; it is inlined"),
    ast.GeneratorExp: ("generator expression", "only sum, max and min of a generator, sum(... for ...), are "
                       "supported: write a `for` loop that accumulates the result"),
    ast.ListComp: ("list comprehension", "only sum, max and min of a list comprehension, sum([... for ...]), are "
                   "supported: fill an array made by np.zeros(n) in a `for` loop"),
    ast.SetComp: ("set comprehension", "write a `for` loop"),
    ast.DictComp: ("dict comprehension", "write a `for` loop"),
    ast.Dict: ("dict literal", "use separate variables"),
    ast.Set: ("set literal", "use separate variables"),
    ast.JoinedStr: ("string literal", "remove strings from the function; print outside it"),
    ast.NamedExpr: ("walrus (:=)", "assign the value in its own statement first"),
    ast.Await: ("await", "write a plain synchronous function"),
    ast.Yield: ("yield", _GENERATOR_HINT),
    ast.YieldFrom: ("yield", _GENERATOR_HINT),
    ast.Starred: ("starred assignment", "name each value"),
    ast.Slice: ("slice", "loop over the indices instead (`for i in range(a, b)`)"),
}


class ExprTranslator(LiteralTranslator, MethodTranslator, ComprehensionTranslator, SliceTranslator,
                     ArrayCallTranslator):
    """Mixin: ``self.unit`` is the function being translated, ``self.locals`` its variable names."""

    unit: Unit
    locals: set[str]
    rename: dict[str, str]

    # -- entry point ---------------------------------------------------------

    def expr(self, node: ast.AST) -> ir.Expr:
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is None:
            construct, hint = _REJECT.get(type(node), (type(node).__name__, "rewrite it with the supported subset"))
            raise self.unit.error(construct, node, hint)
        return method(node)

    # -- atoms ---------------------------------------------------------------

    def _e_Constant(self, node: ast.Constant) -> ir.Expr:
        v = node.value
        if isinstance(v, (bool, int, float)):
            return ir.Const(v)
        if isinstance(v, str):
            raise self.unit.error("string literal", node, "remove strings from the function")
        if v is None:
            raise self.unit.error("None", node, "use a number; None has no derivative")
        raise self.unit.error(type(v).__name__ + " literal", node, "use a float")

    def _e_Name(self, node: ast.Name) -> ir.Expr:
        name = node.id
        if name in self.locals:
            return ir.Name(self.rename.get(name, name))
        if name in ("True", "False"):
            return ir.Const(name == "True")
        value = self.unit.resolve.constant(name)
        if value is not MISSING:
            return ir.Const(value)
        raise self.unit.error(f"unknown name {name!r}", node,
                              "pass it as a parameter, or define it as a number before the function",
                              message=f"unknown name {name!r}")

    # -- operators -----------------------------------------------------------

    def _e_BinOp(self, node: ast.BinOp) -> ir.Expr:
        if isinstance(node.op, BITWISE):
            raise self.unit.error("bitwise operator", node, "use `and`/`or`/`not` for conditions")
        op = BINOPS[type(node.op)]
        self.refuse_list_operands([node.left, node.right], "arithmetic")
        left, right = self.expr(node.left), self.expr(node.right)
        if op == "@":
            operands = self.temp(left, "a", node.left), self.temp(right, "a", node.right)
            return self.temp(ir.BinOp(op, *operands), "p", node)
        return ir.BinOp(op, left, right)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> ir.Expr:
        if isinstance(node.op, ast.Invert):
            raise self.unit.error("bitwise operator", node, "use `not` for conditions")
        op = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}[type(node.op)]
        self.refuse_list_operands([node.operand], "arithmetic" if op != "not" else "a condition")
        operand = self.expr(node.operand)
        if op == "-" and isinstance(operand, ir.Const) and not isinstance(operand.value, bool):
            return ir.Const(-operand.value)
        return ir.UnaryOp(op, operand)

    def _e_Compare(self, node: ast.Compare) -> ir.Expr:
        parts = []
        self.refuse_list_operands([node.left, *node.comparators], "a comparison")
        left = self.expr(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.Is, ast.IsNot)):
                raise self.unit.error("'is' comparison", node, "compare numbers with == or !=")
            if isinstance(op, (ast.In, ast.NotIn)):
                raise self.unit.error("'in' comparison", node, "compare with == in a loop")
            right = self.expr(right_node)
            if len(parts) < len(node.ops) - 1:
                right = self.temp(right, "t", right_node)   # `a < b < c` reads b twice, evaluates it once
            parts.append(ir.Compare(_CMPOPS[type(op)], left, right))
            left = right
        return parts[0] if len(parts) == 1 else ir.BoolOp("and", tuple(parts))

    def _e_BoolOp(self, node: ast.BoolOp) -> ir.Expr:
        op = "and" if isinstance(node.op, ast.And) else "or"
        return ir.BoolOp(op, tuple(self.expr(v) for v in node.values))

    def _e_IfExp(self, node: ast.IfExp) -> ir.Expr:
        return ir.IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))

    # -- indexing and attributes ----------------------------------------------

    def _e_Subscript(self, node: ast.Subscript) -> ir.Expr:
        element = self.literal_element(node)
        if element is not None:
            return self.expr(element)
        if has_slice(node.slice):
            self.refuse_list_operands([node.value], "a slice")
            return self.slice_read(node)
        value = self.expr(node.value)
        if isinstance(value, ir.Tuple):     # np.linalg.slogdet(A)[1]: an element of a tuple-valued call
            return self._tuple_element(value, node)
        return ir.Index(value, self.index(node.slice))

    def _tuple_element(self, value: ir.Tuple, node: ast.Subscript) -> ir.Expr:
        k = node.slice
        k = -k.operand.value if isinstance(k, ast.UnaryOp) and isinstance(k.op, ast.USub) else getattr(k, "value", None)
        if type(k) is not int or not -len(value.elts) <= k < len(value.elts):
            raise self.unit.error("index of a tuple", node.slice, f"index it with a number written out, 0 to "
                                  f"{len(value.elts) - 1}, or unpack it: `a, b = ...`",
                                  message=f"a tuple of {len(value.elts)} values indexed with {ast.unparse(node.slice)}")
        return value.elts[k]

    def index(self, node: ast.AST) -> tuple[ir.Expr, ...]:
        elts = node.elts if isinstance(node, ast.Tuple) else [node]
        out = []
        for e in elts:
            if isinstance(e, ast.Slice):
                raise self.unit.error("slice", e, "loop over the indices instead (`for i in range(a, b)`)")
            self.refuse_list_index(e)
            out.append(self.expr(e))
        return tuple(out)

    def _e_Attribute(self, node: ast.Attribute) -> ir.Expr:
        if isinstance(node.value, ast.Name) and node.value.id not in self.locals:
            mod = self.unit.resolve.module(node.value.id)
            if mod is not None:
                if node.attr in primitives.CONSTANTS:
                    return ir.Const(primitives.CONSTANTS[node.attr])
                raise self.unit.error(f"{node.value.id}.{node.attr}", node,
                                      "call it, or use one of the supported functions",
                                      message=f"unsupported use of {node.value.id}.{node.attr}")
        if node.attr in ("shape", "size", "ndim"):
            return self.temp(ir.Attr(self.expr(node.value), node.attr), "p", node)
        if node.attr == "T":        # X.T is np.transpose(X)
            return self._primitive("transpose", ast.copy_location(ast.Call(node, [node.value], []), node))
        raise self.unit.error(f"attribute '{node.attr}'", node, "only .T, .shape, .size and .ndim are supported")

    # -- calls ---------------------------------------------------------------

    def _e_Call(self, node: ast.Call) -> ir.Expr:
        if node.keywords and not self._takes_keywords(node):
            raise self.unit.error("keyword arguments", node.keywords[0] if hasattr(node.keywords[0], "lineno")
                                  else node, "pass arguments by position")
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.unit.error("*args", a, "pass each argument by position")
        func = node.func
        if isinstance(func, ast.Attribute):
            base = func.value
            mod = self.unit.resolve.module(base.id) if isinstance(base, ast.Name) and base.id not in self.locals \
                else None
            if mod == "np" and func.attr in primitives.OPERATOR_UFUNCS:
                return self._operator_ufunc(func.attr, node)
            if mod == "np" and func.attr == "asarray" and len(node.args) == 1 and not node.keywords:
                return self.expr(node.args[0])      # of an array, the array itself; of a number, the number
            if mod is not None:
                prim = primitives.lookup(mod, func.attr)
                if mod == "math":
                    self.refuse_list_operands(node.args, f"math.{func.attr}(...)")
                elif prim is not None and prim.kind == "constructor" and prim.name != "copy":
                    self._refuse_shape_tuple(node)
                if prim is None:
                    raise self.unit.error(f"unknown function '{base.id}.{func.attr}'", node,
                                          "use a supported math/np function, or write it with loops",
                                          message=f"unsupported function {base.id}.{func.attr}")
                return self._primitive(prim.name, node)
            submodule = submodule_function(func, self.unit.resolve, self.locals)
            if submodule is not None:
                root, _, rest = submodule.partition(".")
                path, _, attr = rest.rpartition(".")
                prim = primitives.lookup(f"{self.unit.resolve.module(root)}.{path}", attr)
                if prim is not None:        # np.linalg.solve: a registration with a dotted NumPy name
                    return self._primitive(prim.name, node)
                raise self.unit.error(submodule, node, unsupported_hint(submodule),
                                      message=f"unsupported function {submodule}")
            imported = module_function(func, self.unit.resolve, self.locals)
            if imported is not None:
                dotted, prim = imported
                if prim is None:
                    raise self.unit.error(dotted, node, unsupported_hint(dotted),
                                          message=f"unsupported function {dotted}")
                return self._primitive(prim.name, node)
            return self.method_call(node)
        if isinstance(func, ast.Name):
            name = func.id
            if name in self.locals:
                raise self.unit.error("method call", node, "call only named functions, not variables")
            if name == self.unit.node.name or name in self.inlining:
                raise self.unit.error("recursion", node, "write the recursion as a loop")
            helper = self.nested_def(name, node) or self.unit.resolve.helper(name)
            if helper is not None:
                self.refuse_list_operands([*node.args, *(k.value for k in node.keywords)],
                                          f"a call of the helper {name}")
                return self.inline(helper, node)
            imported = self.unit.resolve.imported_primitive(name)
            if self._is_sum_of_comprehension(node):
                return self.reduction_of_comprehension(node)
            if imported in primitives.OPERATOR_UFUNCS:
                return self._operator_ufunc(imported, node)
            prim = self.unit.resolve.imported_function(name) if imported else primitives.lookup(None, name)
            if name == "range":
                raise self.unit.error("range outside a for loop", node, "use range only as `for i in range(...)`")
            if prim is None:
                raise self.unit.error(f"unknown function '{name}'", node,
                                      "only math/np functions, abs/min/max/len and helpers defined in the same "
                                      "cell can be called", message=f"unknown function {name!r}")
            if not imported and name not in LIST_SAFE_BUILTINS:
                self.refuse_list_operands(node.args, f"{name}(...)")
            return self._primitive(prim.name, node)
        raise self.unit.error("call of an expression", node, "call a named function")

    def _is_sum_of_comprehension(self, node: ast.Call) -> bool:
        """The builtin ``sum``, ``max`` or ``min`` (not a helper, not NumPy's) of a generator or list
        comprehension."""
        f = node.func
        return isinstance(f, ast.Name) and f.id in ("sum", "max", "min") and f.id not in self.locals \
            and bool(node.args) and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)) \
            and self.unit.resolve.helper(f.id) is None and self.unit.resolve.imported_primitive(f.id) is None

    def _takes_keywords(self, node: ast.Call) -> bool:
        """Calls whose keywords a later step handles: a helper's (bound to its parameters), a method's
        (refused there, naming the method)."""
        func = node.func
        if self._is_sum_of_comprehension(node):
            return True
        if isinstance(func, ast.Attribute):
            base = func.value
            mod = self.unit.resolve.module(base.id) if isinstance(base, ast.Name) and base.id not in self.locals \
                else None
            if mod is None:
                return True
            prim = primitives.lookup(mod, func.attr) if func.attr not in primitives.OPERATOR_UFUNCS else None
            return prim is not None and bool(prim.static)
        if not isinstance(func, ast.Name) or func.id in self.locals:
            return False
        if (self.nested_def(func.id, node) or self.unit.resolve.helper(func.id)) is not None:
            return True
        imported = self.unit.resolve.imported_primitive(func.id)
        prim = self.unit.resolve.imported_function(func.id) if imported and imported not in \
            primitives.OPERATOR_UFUNCS else None
        return prim is not None and bool(prim.static)

    def _refuse_shape_tuple(self, node: ast.Call) -> None:
        for a in node.args:
            if isinstance(a, (ast.List, ast.Tuple)):
                raise self.unit.error("shape tuple", a, "only 1-D arrays are made here: give the length as one "
                                      "int, e.g. np.zeros(n)")

    def _operator_ufunc(self, name: str, node: ast.Call) -> ir.Expr:
        """``np.multiply(a, b)`` translated as ``a * b``: the operator's IR, lifting and adjoints."""
        template = ast.parse(primitives.OPERATOR_UFUNCS[name], mode="eval").body
        params = sorted({n.id for n in ast.walk(template) if isinstance(n, ast.Name)})
        if len(node.args) != len(params):
            raise self.unit.error(f"np.{name} with {len(node.args)} arguments", node,
                                  f"np.{name} takes {len(params)} positional argument{'s' * (len(params) > 1)}",
                                  message=f"wrong number of arguments to np.{name}")
        bound = dict(zip(params, node.args, strict=True))

        class _Bind(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                return bound[n.id]

        for n in ast.walk(template):
            ast.copy_location(n, node)
        return self.expr(_Bind().visit(template))

    def _primitive(self, name: str, node: ast.Call) -> ir.Expr:
        if name in SHAPED_CALLS:        # np.concatenate([x, y]), x.reshape(n, m): frontend/arrays.py
            return self.shaped_call(name, node)
        prim = primitives.PRIMITIVES[name]
        if name == "copy" and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], (ast.List, ast.Tuple)):
            # np.array([2, 0]): the literal is a fresh array already, of NumPy's dtype (ints stay ints)
            return self.expr(node.args[0])
        static = static_parameters(self.unit, prim, node) if prim.static else ()
        arg_nodes = list(operand_nodes(prim, node))
        args = tuple(self.expr(a) for a in arg_nodes)
        arg_nodes += [node] * (len(args) - len(arg_nodes))
        if len(args) not in prim.nargs and not (name in ("min", "max") and len(args) >= 2):
            raise self.unit.error(f"{name} with {len(args)} arguments", node,
                                  f"{name} takes {' or '.join(map(str, prim.nargs))} positional arguments",
                                  message=f"wrong number of arguments to {name}")
        if name in ("min", "max") and len(args) == 1:
            name = "amin" if name == "min" else "amax"
        if prim.parts:      # a tuple-valued call: the tuple of one call per element (rules/record.py)
            args = tuple(self.temp(a, "a", e) for a, e in zip(args, arg_nodes, strict=False))
            return ir.Tuple(tuple(self.temp(ir.Call(p, args, static), "p", node) for p in prim.parts))
        if primitives.PRIMITIVES[name].kind in ("reduction", "constructor", "opaque", "reshape") \
                or name in ("len", "int"):
            # A-normal form for opaque steps: the step and each operand get their own
            # names, so the arithmetic around and inside stays symbolic.
            args = tuple(self.temp(a, "a", e) for a, e in zip(args, arg_nodes, strict=False))
            return self.temp(ir.Call(name, args, static), "p", node)
        return ir.Call(name, args, static)

    # Implemented by the CFG builder.
    inlining: tuple[str, ...] = ()

    def temp(self, value: ir.Expr, kind: str = "t", node: ast.AST | None = None) -> ir.Expr:  # pragma: no cover
        raise NotImplementedError

    def inline(self, helper: Unit, node: ast.Call) -> ir.Expr:  # pragma: no cover - overridden
        raise NotImplementedError

    def nested_def(self, name: str, call: ast.Call) -> Unit | None:  # pragma: no cover - overridden
        raise NotImplementedError

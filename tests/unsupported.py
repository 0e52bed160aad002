"""Programs outside the supported subset, one construct each, with where the error must point.

Each :class:`UnsupportedCase` holds source text (a cell), the construct name
the frontend must report (``CoarsenError.construct``, verbatim), and the
1-based line and 0-based column of the offending AST node in that text.
``node`` names the AST node type found at that position, so the expected
position can be checked against :mod:`ast` itself, independently of the
frontend.

Which node is "offending": the statement for statements (``try``, ``with``,
``global`` ...), the first statement of the ``else`` block for ``for``/``else`` and ``while``/``else``
(the loop itself is fine); the expression for expressions (``lambda``,
a literal, a comparison, a call); the ``arg`` for parameters; the inner
``def`` for nested functions; the call for recursion; the decorator
expression for decorators; the assignment target for writes.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class UnsupportedCase:
    id: str
    construct: str
    source: str
    line: int
    col: int
    node: str       # the ast node type at (line, col)


def _case(id_, construct, source, line, col, node):
    return UnsupportedCase(id_, construct, textwrap.dedent(source), line, col, node)


UNSUPPORTED: list[UnsupportedCase] = [
    _case("try", "try/except", """\
        def f(x):
            try:
                y = 1.0 / x
            except ZeroDivisionError:
                y = 0.0
            return y
        """, 2, 4, "Try"),
    _case("try_star", "try/except", """\
        def f(x):
            y = x
            try:
                y = 1.0 / x
            except* ZeroDivisionError:
                y = 0.0
            return y
        """, 3, 4, "TryStar"),
    _case("with", "with", """\
        def f(x):
            with x:
                y = x * 2.0
            return y
        """, 2, 4, "With"),
    _case("lambda", "lambda", """\
        def f(x):
            g = lambda t: t * 2.0
            return x
        """, 2, 8, "Lambda"),
    _case("nested_def_in_if", "nested function inside a block", """\
        def f(x):
            y = x + 1.0
            if x > 0.0:
                def g(t):
                    return t * t
                y = g(y)
            return y
        """, 4, 8, "FunctionDef"),
    _case("nested_def_writes_enclosing", "write into an enclosing function's array", """\
        def f(x):
            out = np.zeros(3)
            def put(i, v):
                out[i] = v
                return v
            put(0, x)
            return np.sum(out)
        """, 4, 8, "Subscript"),
    _case("class", "class definition", """\
        def f(x):
            class Box:
                pass
            return x
        """, 2, 4, "ClassDef"),
    _case("genexp", "generator expression", """\
        def f(x):
            squares = (v * v for v in x)
            return x[0]
        """, 2, 14, "GeneratorExp"),
    _case("listcomp", "list comprehension", """\
        def f(x):
            ys = [2.0 * v for v in x]
            return x[0]
        """, 2, 9, "ListComp"),
    _case("setcomp", "set comprehension", """\
        def f(x):
            s = {v for v in x}
            return x[0]
        """, 2, 8, "SetComp"),
    _case("dictcomp", "dict comprehension", """\
        def f(x):
            d = {v: v for v in x}
            return x[0]
        """, 2, 8, "DictComp"),
    _case("global", "global", """\
        SCALE = 2.0


        def f(x):
            global SCALE
            return x * SCALE
        """, 5, 4, "Global"),
    _case("nonlocal", "nonlocal", """\
        def f(x):
            nonlocal y
            y = x
            return y
        """, 2, 4, "Nonlocal"),
    _case("recursion", "recursion", """\
        def f(x, n):
            if n <= 0:
                return x
            return f(x * 0.5, n - 1)
        """, 4, 11, "Call"),
    _case("recursion_mutual", "recursion", """\
        def g(x):
            return 2.0 * f(x)


        def f(x):
            return g(x) + 1.0
        """, 2, 17, "Call"),
    _case("yield", "yield", """\
        def f(x):
            yield x
            return x
        """, 2, 4, "Yield"),
    _case("yield_without_return", "yield", """\
        def f(x):
            for i in range(3):
                yield x * i
        """, 3, 8, "Yield"),
    _case("del", "del", """\
        def f(x):
            y = x * 2.0
            del y
            return x
        """, 3, 4, "Delete"),
    _case("attr_assign", "attribute assignment", """\
        def f(x):
            out = np.zeros(3)
            out.flags = 1.0
            return x
        """, 3, 4, "Attribute"),
    _case("varargs", "*args", """\
        def f(x, *rest):
            return x
        """, 1, 10, "arg"),
    _case("kwargs", "**kwargs", """\
        def f(x, **opts):
            return x
        """, 1, 11, "arg"),
    _case("kwonly", "keyword-only parameters", """\
        def f(x, *, scale):
            return x * scale
        """, 1, 12, "arg"),
    _case("default_not_a_number", "default parameter value that is not a number", """\
        def f(x, scale=[2.0]):
            return x * scale[0]
        """, 1, 15, "List"),
    _case("helper_unknown_keyword", "call to g", """\
        def g(t, scale=2.0):
            return t * scale
        def f(x):
            return g(x, factor=3.0)
        """, 4, 16, "keyword"),
    _case("import", "import", """\
        def f(x):
            import math
            return math.sin(x)
        """, 2, 4, "Import"),
    _case("import_from", "import", """\
        def f(x):
            from math import sin
            return sin(x)
        """, 2, 4, "ImportFrom"),
    _case("raise", "raise", """\
        def f(x):
            if x < 0.0:
                raise ValueError(x)
            return x
        """, 3, 8, "Raise"),
    _case("assert", "assert", """\
        def f(x):
            assert x > 0.0
            return x
        """, 2, 4, "Assert"),
    _case("async_def", "async function", """\
        async def f(x):
            return x
        """, 1, 0, "AsyncFunctionDef"),
    _case("await", "await", """\
        def f(x):
            y = await x
            return y
        """, 2, 8, "Await"),
    _case("string", "string literal", """\
        def f(x):
            label = "energy"
            return x
        """, 2, 12, "Constant"),
    _case("list_arithmetic", "list in arithmetic", """\
        def f(x):
            v = [x, 2.0 * x]
            return x * (v * 2)[0]
        """, 3, 16, "Name"),
    _case("list_literal_arithmetic", "list in arithmetic", """\
        def f(x):
            return [x, x] + [x]
        """, 2, 11, "List"),
    _case("list_augassign", "list in augmented assignment", """\
        def f(x):
            v = [x]
            v += [x]
            return v[1]
        """, 3, 4, "Name"),
    _case("list_math", "list in math.exp(...)", """\
        import math


        def f(x):
            return math.exp([x, x])[0]
        """, 5, 20, "List"),
    _case("list_to_helper", "list in a call of the helper _h", """\
        def _h(v):
            return v * 2

        def f(x):
            return _h([x, x])[0]
        """, 5, 14, "List"),
    _case("ragged_list", "ragged list literal", """\
        import numpy as np


        def f(x):
            return np.sum(np.array([[x, x], [x]]))
        """, 5, 27, "List"),
    _case("nested_list_3d", "nested list literal", """\
        import numpy as np


        def f(x):
            return np.sum(np.array([[[x]], [[x]]]))
        """, 5, 29, "List"),
    _case("list_index", "list of indices", """\
        def f(x):
            return x[[0, 2]]
        """, 2, 13, "List"),
    _case("shape_tuple", "shape tuple", """\
        import numpy as np


        def f(x, n):
            return np.sum(np.zeros((n, 2)))
        """, 5, 27, "Tuple"),
    _case("dict_literal", "dict literal", """\
        def f(x):
            d = {1: x}
            return x
        """, 2, 8, "Dict"),
    _case("slice_variable_step", "slice with a variable step", """\
        def f(x, k):
            y = np.sum(x[1:9:k])
            return y
        """, 2, 21, "Name"),
    _case("slice_zero_step", "slice step of zero", """\
        def f(x):
            return np.sum(x[::0])
        """, 2, 22, "Constant"),
    _case("slice_newaxis_write", "new axis (None / np.newaxis) in an index", """\
        def f(x):
            u = x.copy()
            u[:, None] = 1.0
            return np.sum(u)
        """, 3, 9, "Constant"),
    _case("slice_np_newaxis_write", "new axis (None / np.newaxis) in an index", """\
        import numpy as np


        def f(x):
            u = x.copy()
            u[np.newaxis, :] = 2.0
            return np.sum(u)
        """, 6, 6, "Attribute"),
    _case("slice_ellipsis", "Ellipsis (...) in an index", """\
        def f(x):
            return np.sum(x[..., 0])
        """, 2, 20, "Constant"),
    _case("slice_3d", "slice of an array of more than 2 dimensions", """\
        def f(t):
            return np.sum(t[:, 0, 1:])
        """, 2, 18, "Subscript"),
    _case("slice_of_list", "list in a slice", """\
        def f(x):
            v = [x, 2.0 * x, 3.0]
            return np.sum(v[1:])
        """, 3, 18, "Name"),
    _case("slice_write_parameter", "write into a parameter array", """\
        def f(x):
            x[1:] = 0.0
            return np.sum(x)
        """, 2, 4, "Subscript"),
    _case("slice_alias_written", "array alias", """\
        def f(x):
            u = np.zeros(len(x))
            tail = u[1:]
            tail[0] = x[0]
            return np.sum(u)
        """, 3, 4, "Assign"),
    _case("for_zip_one_name", "one name for several values", """\
        def f(x, y):
            s = 0.0
            for a in zip(x, y):
                s += 1.0
            return s
        """, 3, 8, "Name"),
    _case("for_sorted", "for over a non-range iterable", """\
        def f(x):
            s = 0.0
            for a in sorted(x):
                s += a
            return s
        """, 3, 13, "Call"),
    _case("for_unpack_row", "unpacking an array element in a for loop", """\
        def f(m):
            s = 0.0
            for a, b in m:
                s += a * b
            return s
        """, 3, 8, "Tuple"),
    _case("for_else", "for/else", """\
        def f(x):
            s = 0.0
            for i in range(3):
                s += x
            else:
                s = -s
            return s
        """, 6, 8, "Assign"),
    _case("while_else", "while/else", """\
        def f(x):
            k = 0
            while k < 3:
                k += 1
            else:
                k = -1
            return x * k
        """, 6, 8, "Assign"),
    _case("walrus", "walrus (:=)", """\
        def f(x):
            if (y := x * 2.0) > 1.0:
                return y
            return x
        """, 2, 8, "NamedExpr"),
    _case("match", "match", """\
        def f(x, n):
            match n:
                case 1:
                    return x
            return -x
        """, 2, 4, "Match"),
    _case("keyword_args", "keyword arguments", """\
        def f(x):
            return np.exp(x, out=x)
        """, 2, 21, "keyword"),
    _case("unknown_keyword", "np.sum(..., dtype=...)", """\
        def f(x):
            return np.sum(x, dtype=float)
        """, 2, 21, "keyword"),
    _case("print", "unknown function 'print'", """\
        def f(x):
            print(x)
            return x
        """, 2, 4, "Call"),
    _case("sorted", "unknown function 'sorted'", """\
        def f(x):
            y = sorted(x)
            return y[0]
        """, 2, 8, "Call"),
    _case("method_where", "np.sum(..., where=...)", """\
        def f(x):
            return x.sum(where=x > 0)
        """, 2, 17, "keyword"),
    _case("method_positional_argument", "x.copy(...) with arguments", """\
        def f(x):
            return x.copy(0)
        """, 2, 18, "Constant"),
    _case("unknown_method", "method call", """\
        def f(x):
            return x.foo()
        """, 2, 11, "Call"),
    _case("linalg_eigh", "np.linalg.eigh", """\
        import numpy as np


        def f(A, b):
            return np.sum(np.linalg.eigh(A)[0])
        """, 5, 18, "Call"),
    _case("linalg_cholesky", "np.linalg.cholesky", """\
        import numpy as np


        def f(A):
            return np.linalg.cholesky(A * A)
        """, 5, 11, "Call"),
    _case("not_numpy_erf", "unknown function 'np.erf'", """\
        import numpy as np


        def f(x):
            return np.sum(np.erf(x))
        """, 5, 18, "Call"),
    _case("random_inside", "np.random.normal", """\
        import numpy as np


        def f(x):
            return np.sum(x + np.random.normal(0.0, 1.0))
        """, 5, 22, "Call"),
    _case("bitwise", "bitwise operator", """\
        def f(n):
            return n & 1
        """, 2, 11, "BinOp"),
    _case("bitwise_aug", "bitwise operator", """\
        def f(n):
            n |= 1
            return n
        """, 2, 4, "AugAssign"),
    _case("is", "'is' comparison", """\
        def f(x, y):
            if x is y:
                return x
            return y
        """, 2, 7, "Compare"),
    _case("in", "'in' comparison", """\
        def f(x, y):
            if x in y:
                return x
            return 0.0
        """, 2, 7, "Compare"),
    _case("starred", "starred assignment", """\
        def f(x):
            a, *b = x
            return a
        """, 2, 7, "Starred"),
    _case("param_write", "write into a parameter array", """\
        def f(x):
            x[0] = 1.0
            return x[0]
        """, 2, 4, "Subscript"),
    _case("param_write_aug", "write into a parameter array", """\
        def f(x, n):
            for i in range(n):
                x[i] += 1.0
            return x[0]
        """, 3, 8, "Subscript"),
    _case("param_write_after_conditional_copy", "write into a parameter array", """\
        def f(x, a):
            if a > 0.0:
                x = x.copy()
            x[0] = a
            return x[0]
        """, 4, 4, "Subscript"),
    _case("asarray_alias_write", "array alias", """\
        import numpy as np


        def f(x):
            y = np.asarray(x)
            y[0] = 1.0
            return y[0]
        """, 5, 4, "Assign"),
    _case("decorator", "decorator", """\
        @staticmethod
        def f(x):
            return x
        """, 1, 1, "Name"),
    _case("in_helper", "lambda", """\
        def h(t):
            g = lambda u: u
            return t


        def f(x):
            return h(x) * 2.0
        """, 2, 8, "Lambda"),
]

UNSUPPORTED_IDS: list[str] = [c.id for c in UNSUPPORTED]

assert len(set(UNSUPPORTED_IDS)) == len(UNSUPPORTED_IDS), "case ids must be unique"

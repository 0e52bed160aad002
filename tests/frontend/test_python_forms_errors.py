"""The variants of issue 15's Python forms that stay outside the subset: a CoarsenError that names the
construct in the user's words, at its line and column (checked against :mod:`ast`), with what to do."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from refusals import assert_refused

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.parse import parse


def _error(src: str) -> CoarsenError:
    with pytest.raises(CoarsenError) as info:
        parse(src)
    return info.value


# (id, source, line, node type at the error, its text, words the message must hold)
CASES = [
    ("method-dtype-keyword", "def f(x):\n    return x.sum(dtype=float)\n", 2, "keyword", "dtype=float",
     ("np.sum(..., dtype=...)", "not supported yet", "axis=, keepdims=")),
    ("axis-not-constant", "def f(x, k):\n    return np.sum(x, axis=k)\n", 2, "Name", "k",
     ("axis must be a constant", "axis=0")),
    ("axis-given-twice", "def f(x):\n    return np.sum(x, 0, axis=1)\n", 2, "keyword", "axis=1",
     ("multiple values", "'axis'")),
    ("method-out-keyword", "def f(x, y):\n    return x.mean(axis=0, out=y)\n", 2, "keyword", "out=y",
     ("np.mean(..., out=...)", "not supported yet", "axis=, keepdims=")),
    ("method-too-many-positional", "def f(x):\n    return x.prod(0, True, 1)\n", 2, "Constant", "1",
     ("too many arguments to np.prod", "then axis, keepdims")),
    ("method-unknown", "def f(x):\n    return x.argsort()\n", 2, "Call", "x.argsort",
     ("x.argsort", "supported methods")),
    ("method-of-list", "def f(a, b):\n    v = [a, b]\n    return v.sum()\n", 3, "Call", "v.sum",
     ("list", ".sum()")),
    ("dot-arity", "def f(x, y):\n    return x.dot(y, y)\n", 2, "Call", "x.dot", ("x.dot", "arguments")),
    ("default-not-number", "def g(t, w=np.ones(3)):\n    return t\ndef f(x):\n    return g(x)\n", 1, "Call",
     "np.ones", ("default value", "not a number")),
    ("keyword-unknown", "def g(t, w=1.0):\n    return t * w\ndef f(x):\n    return g(x, width=2.0)\n", 4,
     "keyword", "width", ("unexpected keyword argument 'width'",)),
    ("keyword-twice", "def g(t, w=1.0):\n    return t * w\ndef f(x):\n    return g(x, 2.0, w=2.0)\n", 4,
     "keyword", "w=", ("multiple values", "'w'")),
    ("keyword-missing", "def g(t, w):\n    return t * w\ndef f(x):\n    return g(x)\n", 4, "Call", "g(x)",
     ("missing w",)),
    ("zip-strict", "def f(x, y):\n    s = 0.0\n    for a, b in zip(x, y, strict=True):\n        s += a * b\n"
     "    return s\n", 3, "keyword", "strict", ("zip", "not supported yet")),
    ("range-tuple-target", "def f(x):\n    s = 0.0\n    for i, j in range(3):\n        s += x\n    return s\n",
     3, "Tuple", "i, j", ("cannot unpack", "range")),
    ("enumerate-arity", "def f(x):\n    s = 0.0\n    for i, v in enumerate():\n        s += v\n    return s\n",
     3, "Call", "enumerate", ("enumerate",)),
    ("zip-arity-mismatch", "def f(x, y):\n    s = 0.0\n    for a, b, c in zip(x, y):\n        s += a\n"
     "    return s\n", 3, "Tuple", "a, b, c", ("cannot unpack 2 values into 3 names",)),
    ("zip-variable-step", "def f(x, n):\n    s = 0.0\n    for i, v in zip(range(0, 9, n), x):\n        s += v\n"
     "    return s\n", 3, "Call", "range", ("variable step",)),
    ("generator-assigned", "def f(x):\n    g = (v * v for v in x)\n    return x[0]\n", 2, "GeneratorExp", "(v * v",
     ("generator expression", "sum(... for ...)")),
    ("max-of-generator-key", "def f(x):\n    return max((v for v in x), key=abs)\n", 2, "keyword", "key",
     ("key=", "max(f(v) for v in ...)")),
    ("min-of-generator-arguments", "def f(x):\n    return min((v for v in x), 0.0)\n", 2, "Constant", "0.0",
     ("min of a generator and other arguments", "default=d")),
    ("listcomp-assigned", "def f(x):\n    ys = [2.0 * v for v in x]\n    return ys[0]\n", 2, "ListComp", "[2.0",
     ("list comprehension", "sum([... for ...])")),
    ("np-sum-of-generator", "def f(x):\n    return np.sum(v for v in x)\n", 2, "GeneratorExp", "(v for",
     ("generator expression",)),
    ("comprehension-shadow", "def f(x, k):\n    return sum(x[k] for k in range(k))\n", 2, "Call", "range",
     ("comprehension variable", "'k'")),
    ("sum-three-arguments", "def f(x):\n    return sum((v for v in x), 1.0, 2.0)\n", 2, "Call", "sum(",
     ("sum with these arguments",)),
    ("nested-def-twice", "def f(x):\n    def g(t):\n        return t\n    def g(t):\n        return 2 * t\n"
     "    return g(x)\n", 4, "FunctionDef", "def g", ("defined twice", "'g'")),
    ("nested-def-and-variable", "def f(x):\n    def g(t):\n        return t\n    g = x\n    return g\n", 2,
     "FunctionDef", "def g", ("defined twice",)),
    ("nested-def-decorator", "def f(x):\n    @staticmethod\n    def g(t):\n        return t\n    return g(x)\n",
     2, "Name", "staticmethod", ("decorator",)),
    ("nested-def-recursion", "def f(x):\n    def g(t):\n        return g(t - 1.0)\n    return g(x)\n", 3,
     "Call", "g(t", ("recursion",)),
    ("nested-def-called-before", "def f(x):\n    y = g(x)\n    def g(t):\n        return t\n    return y\n", 2,
     "Call", "g(x)", ("called before", "def g")),
    ("keyword-list-literal", "def g(t, w=1.0):\n    return t * w\ndef f(x):\n    return g(x, w=[1.0, 2.0])\n", 4,
     "List", "[1.0", ("list", "a call of the helper g")),
    ("keyword-of-primitive", "def f(x):\n    return np.exp(x, out=x)\n", 2, "keyword", "out",
     ("keyword arguments",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_with_construct_position_and_hint(case):
    assert_refused(case)


def test_the_compiled_function_binds_arguments_as_python_does():
    """Defaults and keywords of the compiled function itself: bound by Python's rules (the plain function
    is the reference), for the value and every derivative entry point; Python's TypeErrors are
    CoarsenErrors naming the function and showing its signature."""
    import inspect

    src = "def f(x, a=2.0, n=3):\n    return x * a ** n\n"
    ns: dict = {}
    exec(src, ns)
    py, f = ns["f"], cn.coarsen(src)
    assert inspect.signature(f) == inspect.signature(py)
    for args, kwargs in [((1.5,), {}), ((1.5, 3.0), {}), ((), {"x": 1.5, "n": 2}), ((1.5,), {"a": -0.5})]:
        assert f(*args, **kwargs) == py(*args, **kwargs)
        bound = inspect.signature(py).bind(*args, **kwargs)
        bound.apply_defaults()
        x, a, n = bound.args
        assert f.grad(*args, **kwargs) == pytest.approx((a ** n, n * x * a ** (n - 1)))
        assert f.value_and_grad(*args, **kwargs)[1] == f.grad(*args, **kwargs)
        assert f.vjp(*args, **kwargs)[1](1.0) == f.grad(*args, **kwargs)
    assert f.jvp((1.5,), (1.0, 0.0)) == pytest.approx((py(1.5), 2.0 ** 3))
    for args, kwargs, words in [((), {}, "missing a required argument: 'x'"),
                                ((1.5,), {"b": 1.0}, "unexpected keyword argument 'b'"),
                                ((1.5, 2.0), {"x": 1.0}, "multiple values for argument 'x'"),
                                ((1.5, 2.0, 3, 4), {}, "too many positional arguments")]:
        with pytest.raises(CoarsenError, match="f\\(\\) takes 1 to 3 arguments \\(x, a, n\\)") as info:
            f(*args, **kwargs)
        assert words in str(info.value) and "f(x, a=2.0, n=3)" in info.value.hint
        with pytest.raises(TypeError):      # Python's own error for the same call
            py(*args, **kwargs)


def test_the_defaults_a_runtime_would_bind_are_pythons():
    """``defaults_of`` (for the runtime to bind omitted arguments) agrees with Python's own signature."""
    import inspect

    from corpus_python_forms import own_defaults

    from coarsen_nb.frontend.signature import defaults_of
    want = {p.name: p.default for p in inspect.signature(own_defaults).parameters.values()
            if p.default is not inspect.Parameter.empty}
    assert defaults_of(own_defaults) == want and want
    src = "SCALE = 3\ndef f(x, a=-2.5, b=SCALE, c=math.pi, d=True):\n    return x\n"
    namespace = {"math": math}
    exec(src, namespace)
    assert defaults_of(src, namespace=namespace) == dict(zip("abcd", namespace["f"].__defaults__, strict=True))


def test_a_chained_comparison_evaluates_its_middle_operand_once():
    fn = parse("def f(x):\n    return 1.0 if 0.0 < x * x < 3.0 else 0.0\n")
    assert str(fn).count("x * x") == 1, str(fn)


def test_a_comprehension_variable_does_not_leak():
    """Python 3 scopes ``k`` to the comprehension: the ``k`` outside keeps its value."""
    src = "def f(x):\n    k = 1\n    s = sum(x[k] for k in range(3))\n    return s + x[k]\n"
    x = np.array([0.5, 2.0, -1.0, 4.0])
    namespace: dict = {}
    exec(src, namespace)            # the plain Python function is the oracle
    assert cn.coarsen(src)(x) == namespace["f"](x)


def test_sum_of_a_generator_in_a_while_condition_says_how_to_rewrite():
    src = "def f(x):\n    n = 0\n    while sum(v for v in x) > n:\n        n += 1\n    return n * x[0]\n"
    err = _error(src)
    assert err.line == 3 and "sum(... for ...)" in err.hint


NESTED = """def f(x, a):
    b = 2.0 * a

    def inner(t):
        return b * t

    def outer(t, w=1.0):
        return w * inner(t) + a

    s = 0.0
    for v in x:
        s += outer(v) + outer(v, w=b)
    b = 0.5
    return s + outer(a)
"""


def test_nested_defs_call_each_other_and_read_enclosing_locals_when_called():
    namespace: dict = {}
    exec(NESTED, namespace)         # the plain Python function is the oracle
    f = cn.coarsen(NESTED)
    x, a = np.array([0.3, -1.2, 2.0]), 0.7
    assert abs(f(x, a) - namespace["f"](x, a)) < 1e-12
    for k, g in enumerate(f.grad(x, a)):
        assert_close(g, finite_difference(namespace["f"], (x, a), k), rtol=1e-6, atol=1e-7, what=f"d/d{'xa'[k]}")


def test_methods_are_the_np_functions():
    x = np.array([0.3, -1.2, 2.5, 0.7])
    f = cn.coarsen("def f(x):\n    return x.max() * x.sum() - x.min() + x.prod() / x.mean()\n")
    g = cn.coarsen("def f(x):\n    return np.max(x) * np.sum(x) - np.min(x) + np.prod(x) / np.mean(x)\n")
    assert f(x) == g(x)
    np.testing.assert_array_equal(f.grad(x), g.grad(x))

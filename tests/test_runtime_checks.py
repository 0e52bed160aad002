"""What the runtime refuses before it runs generated code: bad options, bad ``wrt``, tangents and
cotangents that do not match their primal (issue 12, items 3 and 8).

Before, a tangent of the wrong shape broadcast into a plausible number, ``wrt=("a", "a")`` made the
generated module a SyntaxError, and ``max_soi=0`` or ``reuse=-1`` were accepted silently.  Each bad
input must be a CoarsenError that names what the user passed; each good one must still give the
derivative that finite differences give.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb import CoarsenError

SRC = """
def f(a, x):
    s = 0.0
    for i in range(len(x)):
        s = s + a * x[i] * x[i]
    return s
"""
ARRAY_SRC = """
def g(a, x):
    return a * x * x
"""
TUPLE_SRC = """
def h(a, x):
    return a * a, a * x
"""
X = np.array([0.5, -1.0, 2.0])


def _plain(src, name):
    ns: dict = {}
    exec(src, ns)
    return ns[name]


# -- item 3: tangents ------------------------------------------------------------------------------

@pytest.mark.parametrize("tangents, named", [
    ((0.0, np.ones(5)), "'x'"),            # longer than x: broadcast into a number before
    ((0.0, np.ones(1)), "'x'"),            # shorter: a raw IndexError before
    ((np.ones(3), np.ones(3)), "'a'"),     # an array for the float a: a number before
    ((0.0, 1.0), "'x'"),                   # a number for the array x
    ((0.0, np.ones((3, 1))), "'x'"),
    ((0.0, "1"), "'x'"),
    ((True, np.ones(3)), "'a'"),
    ((0.0, np.ones(3, dtype=complex)), "'x'"),
])
def test_jvp_tangent_of_the_wrong_shape_is_refused(tangents, named):
    f = cn.coarsen(SRC)
    with pytest.raises(CoarsenError, match=f"tangent of {named}"):
        f.jvp((0.3, X), tangents)


def test_jvp_tangents_of_the_primal_shape_still_match_finite_differences():
    f, plain = cn.coarsen(SRC), _plain(SRC, "f")
    ta, tx = 0.7, np.array([1.0, -2.0, 0.5])
    eps = 1e-6
    fd = (plain(0.3 + eps * ta, X + eps * tx) - plain(0.3 - eps * ta, X - eps * tx)) / (2 * eps)
    for t in ((ta, tx), (np.float64(ta), tx), (np.asarray(ta), tx)):    # a number or a 0-d array for a
        value, tangent = f.jvp((0.3, X), t)
        assert_close(value, plain(0.3, X), rtol=1e-12, what="value")
        assert_close(tangent, fd, rtol=1e-6, what="jvp")


# -- item 3: cotangents ----------------------------------------------------------------------------

def test_vjp_cotangent_of_an_array_for_a_scalar_result_is_refused():
    f = cn.coarsen(SRC)
    _, pullback = f.vjp(0.3, X)
    with pytest.raises(CoarsenError, match="cotangent must be a number"):
        pullback(np.ones(3))


@pytest.mark.parametrize("cotangent", [1.0, np.ones(2), np.ones((3, 1))])
def test_vjp_cotangent_of_the_wrong_shape_for_an_array_result_is_refused(cotangent):
    f = cn.coarsen(ARRAY_SRC)
    _, pullback = f.vjp(0.3, X)
    with pytest.raises(CoarsenError, match=r"cotangent must be an array of shape \(3,\)"):
        pullback(cotangent)


@pytest.mark.parametrize("cotangent, match", [
    ((1.0, 1.0), "element 1 of the cotangent"),
    ((np.ones(3), np.ones(3)), "element 0 of the cotangent"),
    ((1.0,), "tuple of 2"),
    (1.0, "tuple of 2"),
])
def test_vjp_cotangent_of_a_tuple_result_is_checked_per_element(cotangent, match):
    f = cn.coarsen(TUPLE_SRC)
    _, pullback = f.vjp(0.3, X)
    with pytest.raises(CoarsenError, match=match):
        pullback(cotangent)


def test_vjp_cotangents_of_the_value_shape_still_match_finite_differences():
    plain = _plain(ARRAY_SRC, "g")
    w = np.array([1.0, 2.0, -1.0])
    _, pullback = cn.coarsen(ARRAY_SRC).vjp(0.3, X)
    ga, gx = pullback(w)
    projected = lambda a, x: float(np.sum(w * plain(a, x)))     # noqa: E731
    assert_close(ga, finite_difference(projected, (0.3, X), 0), rtol=1e-6, what="d/da")
    assert_close(gx, finite_difference(projected, (0.3, X), 1), rtol=1e-6, what="d/dx")
    _, pullback = cn.coarsen(SRC).vjp(0.3, X)
    ga, _ = pullback(np.asarray(2.0))                               # a 0-d cotangent of a scalar result
    assert_close(ga, 2.0 * finite_difference(_plain(SRC, "f"), (0.3, X), 0), rtol=1e-6, what="0-d cotangent")


# -- item 8: options -------------------------------------------------------------------------------

def test_wrt_naming_a_parameter_twice_is_refused():
    with pytest.raises(CoarsenError, match="wrt names 'a' twice"):
        cn.coarsen(SRC, wrt=("a", "a"))
    with pytest.raises(CoarsenError, match="wrt names 'x' twice"):
        cn.coarsen(SRC, wrt="x, a, x")


@pytest.mark.parametrize("option, value", [
    ("max_soi", 0), ("max_soi", -3), ("max_soi", "big"), ("max_soi", 2.5), ("max_soi", True),
    ("max_soi", math.nan), ("reuse", -1), ("reuse", "1"), ("reuse", 0.5), ("per_block", 1),
    ("per_block", "yes"), ("backend", "torch"),
])
def test_bad_option_is_refused_naming_it(option, value):
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(SRC, **{option: value})
    assert option in str(err.value) and "hint:" in str(err.value)
    f = cn.coarsen(SRC)
    f.grad(0.3, X)
    if option != "backend" and value is not math.nan:     # retune's nan means "keep the current one"
        with pytest.raises(CoarsenError) as err:
            f.retune(**{option: value})
        assert option in str(err.value)


@pytest.mark.parametrize("options", [
    {"max_soi": 1}, {"max_soi": 2.0}, {"max_soi": math.inf}, {"max_soi": np.int64(3)},
    {"reuse": 0}, {"reuse": 2.0}, {"reuse": math.inf}, {"per_block": np.bool_(True)},
])
def test_valid_options_give_the_finite_difference_gradient(options):
    plain = _plain(SRC, "f")
    for f in (cn.coarsen(SRC, **options), cn.coarsen(SRC).retune(**options)):
        ga, gx = f.grad(0.3, X)
        assert_close(ga, finite_difference(plain, (0.3, X), 0), rtol=1e-6, what=f"{options} d/da")
        assert_close(gx, finite_difference(plain, (0.3, X), 1), rtol=1e-6, what=f"{options} d/dx")


def test_whole_float_options_are_stored_as_ints():
    f = cn.coarsen(SRC, max_soi=4.0, reuse=2.0)       # what the CLI's float options pass
    assert (f.max_soi, f.reuse) == (4, 2) and type(f.max_soi) is int and type(f.reuse) is int


# -- item 9: arguments whose shapes do not fit what the function does -------------------------------

LOOP_SRC = """
def loop(a, x, n):
    s = 0.0
    for i in range(n):
        s = s + a * x[i] * x[i]
    return s
"""


def _line_of(src: str, text: str) -> int:
    return next(k for k, ln in enumerate(src.splitlines(), start=1) if text in ln)


def _python_raises(fn, *args) -> type:
    try:
        fn(*args)
    except Exception as exc:        # noqa: BLE001 - the oracle: whatever Python itself raises
        return type(exc)
    raise AssertionError("the plain function did not raise: not a bad-input case")


@pytest.mark.parametrize("how", ["call", "grad", "value_and_grad", "vjp", "jvp"])
def test_array_shorter_than_its_loop_is_a_coarsen_error_at_the_users_line(how):
    f, plain = cn.coarsen(LOOP_SRC, wrt=("a", "x")), _plain(LOOP_SRC, "loop")
    args = (0.3, np.ones(3), 5)
    assert _python_raises(plain, *args) is IndexError
    run = {"call": lambda: f(*args), "grad": lambda: f.grad(*args), "value_and_grad": lambda: f.value_and_grad(*args),
           "vjp": lambda: f.vjp(*args)[1](1.0), "jvp": lambda: f.jvp(args, (1.0, np.ones(3)))}[how]
    with pytest.raises(CoarsenError) as err:
        run()
    e = err.value
    assert isinstance(e, IndexError), "it is still the IndexError Python raises, for except clauses"
    assert isinstance(e.__cause__, IndexError) and "out of bounds" in str(e)
    assert e.line == _line_of(LOOP_SRC, "x[i] * x[i]") and "x[i] * x[i]" in str(e)
    assert "'x' of shape (3,)" in str(e)
    assert "coarsen_nb_" not in str(e) and "_t" not in str(e) and "x_1" not in str(e), "internal names shown"


def test_array_read_in_a_hoisted_loop_sum_is_reported_at_the_read():
    """bgd_hyperopt's inner sums are hoisted out of the while loop: the error is at the read, not the loop."""
    from corpus import CORPUS

    entry = next(e for e in CORPUS if e.name == "bgd_hyperopt")
    args = list(entry.make_args(np.random.default_rng(0)))
    args[2] = args[2][:-2]                                  # y shorter than x
    assert _python_raises(entry.fn, *args) is IndexError
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(entry.fn).grad(*args)
    source = inspect.getsource(entry.fn)
    first = entry.fn.__code__.co_firstlineno
    assert err.value.line == first - 1 + _line_of(source, "g += (w * x[i] - y[i]) * x[i]")
    assert "'y' of shape" in str(err.value)


def test_operands_that_do_not_broadcast_are_a_coarsen_error_naming_both():
    src = "import numpy as np\ndef dot(x, y):\n    return np.sum(x * y)\n"
    args = (np.ones(3), np.ones(4))
    assert _python_raises(_plain(src, "dot"), *args) is ValueError
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(src).grad(*args)
    assert isinstance(err.value, ValueError) and err.value.line == 3
    assert "'x' of shape (3,)" in str(err.value) and "'y' of shape (4,)" in str(err.value)



@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_gradient_without_the_product_names_both_operands(backend):
    """np.sum(X * Y)'s gradient computes no X * Y (each adjoint is the other operand): the shapes are
    checked where the first adjoint is summed to its operand's shape, on the line that reads both."""
    pytest.importorskip(backend)
    src = "import numpy as np\ndef dot(X, Y):\n    return np.sum(X * Y)\n"
    args = (np.ones((2, 3)), np.ones((3, 2)))
    assert _python_raises(_plain(src, "dot"), *args) is ValueError
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(src, backend=backend).grad(*args)
    assert isinstance(err.value, ValueError) and err.value.line == 3
    assert "'X' of shape (2, 3)" in str(err.value) and "'Y' of shape (3, 2)" in str(err.value)

SCALAR_USES = {
    "if": ("""
def f(x):
    s = 0.0
    for v in x:
        if v > 0.0:
            s += v * v
    return s
""", "if v > 0.0", "`if`"),
    "math_sqrt": ("""import math
def f(x):
    s = 0.0
    for i in range(len(x)):
        s += math.sqrt(1.0 + x[i] * x[i])
    return s
""", "math.sqrt(", "`math.sqrt`"),
    "builtin_max": ("""
def f(x):
    m = x[0]
    for i in range(len(x)):
        m = max(m, x[i])
    return m
""", "max(m, x[i])", "`max`"),
    "while": ("""
def f(x):
    k = 0
    s = 0.0
    while x[k] < 10.0 and k < 2:
        s += x[k]
        k += 1
    return s
""", "while", None),
    "conditional_expression": ("""
def f(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] if x[i] > 0.0 else -x[i]
    return s
""", "if x[i] > 0.0 else", "`... if ... else ...`"),
    "float": ("""
def f(x):
    return float(x[0]) * 2.0
""", "float(x[0])", "`float()`"),
}


@pytest.mark.parametrize("name", sorted(SCALAR_USES))
def test_row_of_a_2d_array_where_python_needs_a_number_is_refused(name):
    """Before, the row lifted elementwise and the compiled function returned a value where Python raises."""
    src, at, construct = SCALAR_USES[name]
    x = np.array([[0.5, -1.0], [2.0, 3.0], [-0.5, 1.5]])
    _python_raises(_plain(src, "f"), x)
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(src, wrt="x")(x)
    message = str(err.value)
    assert err.value.line == _line_of(src, at) and "'x' was passed with 2 dimensions" in message
    assert construct is None or construct in message
    assert "pass 'x' with 1 dimension" in message
    f = cn.coarsen(src, wrt="x")                            # the 1-d call the function is written for still works
    assert_close(f(x[:, 0]), _plain(src, "f")(x[:, 0]), rtol=1e-12, what=name)


def test_rows_read_where_python_allows_arrays_still_match_python():
    src = "import numpy as np\ndef rows(x, w):\n    s = np.zeros(2)\n    for i in range(len(x)):\n" \
          "        s = s + np.sqrt(1.0 + x[i] * x[i]) * w\n    return s\n"
    x, w = np.array([[0.5, -1.0], [2.0, 3.0], [-0.5, 1.5]]), 0.7
    assert_close(cn.coarsen(src)(x, w), _plain(src, "rows")(x, w), rtol=1e-12, what="rows")


def test_jvp_arguments_not_given_as_a_tuple_are_refused():
    """``f.jvp(0.3, 1.0)`` was a raw TypeError ('float' object is not iterable) from tuple()."""
    f = cn.coarsen("def sq(a):\n    return a * a\n")
    with pytest.raises(CoarsenError, match="as one tuple"):
        f.jvp(0.3, 1.0)
    value, tangent = f.jvp((0.3,), (1.0,))
    assert_close((value, tangent), (0.09, 0.6), rtol=1e-12, what="jvp of a * a")


def test_error_from_generated_code_survives_pickling():
    """Its class is made at run time; multiprocessing and joblib pickle exceptions back to the parent."""
    import pickle

    with pytest.raises(CoarsenError) as err:
        cn.coarsen(LOOP_SRC)(0.3, np.ones(3), 5)
    again = pickle.loads(pickle.dumps(err.value))
    assert type(again) is type(err.value) and isinstance(again, IndexError)
    assert str(again) == str(err.value) and again.line == err.value.line


@pytest.mark.parametrize("arg", [np.asarray(2.0), 2.0, np.ones(3)])
def test_parameter_indexed_beyond_its_rank_is_reported_in_the_users_names(arg):
    """A 0-d array for ``x[i]`` said ``too many indices for an array of rank 0: x[i.1]``: an SSA name, no line."""
    src = "def f(x):\n    s = 0.0\n    for i in range(2):\n        s = s + x[i, 0]\n    return s\n"
    _python_raises(_plain(src, "f"), arg)
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(src)(arg)
    e = err.value
    assert (e.line, e.col) == (4, src.splitlines()[3].index("x[i, 0]"))
    assert f"'x' is read with 2 indices, but it was passed with {np.ndim(arg)} dimension" in str(e)
    assert "i.1" not in str(e) and "x[i" in str(e)          # the source line, not the SSA form


@pytest.mark.parametrize("kwargs", [{"backend": ["numpy"]}, {"wrt": 3}, {"wrt": ""}, {"wrt": ()}, {"wrt": ("x", 1)}])
def test_options_of_the_wrong_type_are_a_coarsen_error_naming_them(kwargs):
    with pytest.raises(cn.CoarsenError) as info:
        cn.coarsen("def f(x, y):\n    return x * y\n", **kwargs)
    assert next(iter(kwargs)) in str(info.value)


def test_docstring_is_the_functions_not_strs():
    def sq(x):
        """The square."""
        return x * x

    assert cn.coarsen(sq).__doc__ == "The square."
    assert cn.coarsen("def sq(x):\n    return x * x\n").__doc__ is None      # it was str's docstring

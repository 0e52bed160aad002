"""What the runtime refuses before it runs generated code: bad options, bad ``wrt``, tangents and
cotangents that do not match their primal (issue 12, items 3 and 8).

Before, a tangent of the wrong shape broadcast into a plausible number, ``wrt=("a", "a")`` made the
generated module a SyntaxError, and ``max_soi=0`` or ``reuse=-1`` were accepted silently.  Each bad
input must be a CoarsenError that names what the user passed; each good one must still give the
derivative that finite differences give.
"""

from __future__ import annotations

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

"""A write into an array of ints keeps NumPy's dtype: a float written there is refused (NumPy would truncate it
and its derivative would be lost), an int written there stays an int, as the plain function computes."""

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError


def float_into_ints(a):
    y = np.array([0, 0])
    y[0] = a
    return y[0] * 2.0 + a


def float_into_arange(x):
    k = np.arange(len(x))
    for i in range(len(x)):
        k[i] = x[i] * 0.5
    return np.sum(k * x)


@pytest.mark.parametrize("fn, args, line_text", [
    (float_into_ints, (0.7,), "y[0] = a"),
    (float_into_arange, (np.array([1.0, 3.0, 5.0]),), "k[i] = x[i] * 0.5"),
])
def test_a_float_written_into_an_int_array_is_refused_at_the_write(fn, args, line_text):
    f = cn.coarsen(fn)
    with pytest.raises(CoarsenError) as info:
        f.grad(*args)
    text = str(info.value)
    assert line_text in text and "^" in text
    assert "truncate" in text and "float array" in text
    name = line_text.split("[")[0]
    caret_line = text.splitlines()[text.splitlines().index(next(ln for ln in text.splitlines()
                                                                if line_text in ln)) + 1]
    assert caret_line.index("^") == next(ln for ln in text.splitlines() if line_text in ln).index(name)


def ints_into_ints(x, m):
    k = np.array([0, 0, 0])
    k[1] = m
    k[2] = m * 3
    return np.sum(k * x)


def test_an_int_written_into_an_int_array_stays_an_int_and_matches_python():
    x = np.array([0.5, -1.25, 2.0])
    f = cn.coarsen(ints_into_ints, wrt=("x",))
    assert f(x, 2) == pytest.approx(ints_into_ints(x, 2), abs=1e-12)
    h, eye = 1e-6, np.eye(3)
    fd = [(ints_into_ints(x + h * e, 2) - ints_into_ints(x - h * e, 2)) / (2 * h) for e in eye]
    np.testing.assert_allclose(f.grad(x, 2), fd, atol=1e-8)


def floats_into_floats(a):
    y = np.array([0.0, 0.0])
    y[0] = a
    return y[0] * 2.0 + a


def test_the_fix_the_hint_names_works():
    f = cn.coarsen(floats_into_floats)
    assert f(0.7) == pytest.approx(floats_into_floats(0.7), abs=1e-15)
    h = 1e-6
    assert f.grad(0.7) == pytest.approx((floats_into_floats(0.7 + h) - floats_into_floats(0.7 - h)) / (2 * h),
                                        rel=1e-8)

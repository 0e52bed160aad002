"""``log(1 + x)`` is computed as the user wrote it, so a comparison on it takes the user's branch.

``math.log1p(x)`` is more accurate, but it is not the user's number: at a = 5.33e-33, ``abs(a) + 1.0`` rounds to 1
and its log is 0, while ``log1p(a)`` is a, so ``a > math.log(abs(a) + 1.0)`` is True for the user and was False
for the compiled code, which then returned a instead of cos(a) (found by test_random_programs).
"""

import math

import numpy as np
import pytest

import coarsen_nb as cn

SOURCE = '''def main(a):
    s0 = a
    for i1 in range(4):
        if not a > a:
            t2 = math.sin(math.log(abs(a) + 1.0))
            if not a > math.log(abs(a) + 1.0):
                return a
        s0 += math.tanh(a)
    return math.cos(a)
'''


def _plain():
    ns = {"math": math}
    exec(SOURCE, ns)
    return ns["main"]


@pytest.mark.parametrize("a", [5.3348982033356e-33, 1e-17, 1e-3, 0.5, -0.25])
def test_a_branch_on_log_of_one_plus_follows_the_users_value(a):
    f = cn.coarsen(SOURCE, backend="numpy")
    assert f(a) == _plain()(a)


def test_the_value_of_log_of_one_plus_is_the_users_to_the_bit():
    src = "def g(x):\n    return math.log(1.0 + x * x)\n"
    ns = {"math": math}
    exec(src, ns)
    f = cn.coarsen(src, backend="numpy")
    for x in (1e-9, 3e-8, 0.1, 2.0):
        assert f(x) == ns["g"](x)
        np.testing.assert_allclose(f.grad(x), 2.0 * x / (1.0 + x * x), rtol=1e-12)     # d/dx by hand

"""Found by the random programs of ``tests/vector_program_gen.py`` (stop 43), older than it, not fixed: a branch one
of whose arms reads an array that slice writes filled falls back to the per-block selection.

``u = np.zeros(len(x)); u[:2] = b`` and then ``if a > 0.3: v = x * a else: v = np.sin(u)`` raises the documented
limit "nested-write" (``errors.SEGMENT_LIMITS``: "an array written element by element inside a loop nested in
another closed-form loop"), though no loop is nested: the slice write's loop is a top-level one.  The values and
gradients are right (the per-block selection computes them), but a fallback is a bug here.  Without the branch
(``np.sum(np.sin(u))``) nothing falls back.  The test fails on the fallback (strict xfail: it says so when fixed).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from program_gen import main_function

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning

SOURCE = """import numpy as np


def f(x, a, b):
    u = np.zeros(len(x))
    u[:2] = b
    if a > 0.3:
        v = x * a
    else:
        v = np.sin(u)
    return np.sum(v)
"""


@pytest.mark.allows_fallback("the reproduction of a fallback found by the random programs (not fixed)")
@pytest.mark.xfail(strict=True, raises=FallbackWarning, reason="a branch after a slice write: 'nested-write'")
@pytest.mark.parametrize("a", [0.6, 0.1])
def test_a_branch_reading_a_slice_written_array_does_not_fall_back(a):
    x, b = np.array([-0.52, 0.1, 0.29, 0.2, 0.96]), -1.48
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        value, grads = cn.coarsen(SOURCE, name="f").value_and_grad(x, a, b)
    plain = main_function(SOURCE, "f")
    assert_close(value, plain(x, a, b), rtol=1e-12, atol=1e-12, what="value")
    for i, g in enumerate(grads):
        assert_close(g, finite_difference(plain, (x, a, b), i), rtol=1e-6, atol=1e-7, what=f"gradient {i}")


def test_the_per_block_selection_computes_it_right():
    x, b = np.array([-0.52, 0.1, 0.29, 0.2, 0.96]), -1.48
    plain = main_function(SOURCE, "f")
    for a in (0.6, 0.1):
        value, grads = cn.coarsen(SOURCE, name="f", per_block=True).value_and_grad(x, a, b)
        assert_close(value, plain(x, a, b), rtol=1e-12, atol=1e-12, what="value")
        for i, g in enumerate(grads):
            assert_close(g, finite_difference(plain, (x, a, b), i), rtol=1e-6, atol=1e-7, what=f"gradient {i}")

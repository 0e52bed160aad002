"""Programs the mixed-style property test (test_mixed_programs.py) found wrong, kept as plain regressions:

* a slice read inside an arm of ``np.where`` (``np.where(c, u, u[::-1])``) had no form at the default
  selection (the slice, an array written element by element, was made inside the masked arm) and fell
  back to the per-block selection;
* **a silently wrong gradient**: a one-element slice broadcast against the whole array in one segment
  (``x * b + a * x[1:2]``) passed its cotangent's first element back instead of its sum;
* an elementwise value that simplifies to a number (``x - x``, ``np.maximum(x - x, x * a)`` at L = 1) was
  printed as that number, so ``u[:, None]`` of it failed and L = 1 raised an internal error.

Each is compared with the plain function and central differences under all three selections, and no
selection may fall back.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradcheck import finite_difference

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning

PROGRAMS = {
    "one_element_slice_broadcast": """
import numpy as np

def f(x, a, b):
    u1 = x * b + a * x[1:2]
    return np.sum(u1 * u1)
""",
    "short_slice_broadcast_in_a_where_arm": """
import numpy as np

def f(x, a, b):
    u1 = np.where(x > b, x, a * x[1:2])
    return np.sum(u1 * u1)
""",
    "slice_in_where_arm": """
import numpy as np

def f(x, a, b):
    u0 = x * b
    u1 = np.where(u0 > 0.2, u0, u0[::-1] * a)
    return np.sum(u1 * u1)
""",
    "slices_in_both_arms_after_an_outer_product": """
import numpy as np

def f(x, a, b):
    u0 = np.sum(np.tanh(x[:, None] * x[None, :]), axis=1) * 0.5
    u1 = np.where(u0[::-1] > b, u0 * x, a * u0[1:2])
    return np.sum(u1 * u1)
""",
    "difference_of_itself_keeps_its_shape": """
import numpy as np

def f(x, a, b):
    u2 = x - x
    u4 = np.sum(np.tanh(u2[:, None] * x[None, :] + a), axis=0) * 0.5
    return np.sum(u4 * u4) + len(u2) * b
""",
    "maximum_with_a_zero_array": """
import numpy as np

def f(x, a, b):
    u2 = np.maximum(x - x, x * a)
    return np.sum(u2 * u2) + b
""",
}


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_value_and_gradient_without_fallback(name, selection):
    source = PROGRAMS[name]
    ns: dict = {}
    exec(source, ns)
    plain = ns["f"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        f = cn.coarsen(source, name="f", **selection)
        for args in ((np.array([0.3, -0.45, 0.9, 0.15, -0.7]), 0.7, 0.1),
                     (np.array([1.2, 0.05, -0.3, 0.8]), -0.4, 0.35)):
            np.testing.assert_allclose(f(*args), plain(*args), rtol=1e-12, atol=1e-14)
            for i, g in enumerate(f.grad(*args)):
                np.testing.assert_allclose(g, finite_difference(plain, args, i, eps=1e-6), rtol=1e-6, atol=1e-8)

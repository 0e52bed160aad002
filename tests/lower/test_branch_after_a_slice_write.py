"""Found by the random programs of ``tests/vector_program_gen.py`` (stop 43), older than it; fixed in stop 44: a
branch one of whose arms reads an array that slice writes filled fell back to the per-block selection.

``u = np.zeros(len(x)); u[:2] = b`` and then ``if a > 0.3: v = x * a else: v = np.sin(u)`` raised the documented
limit "nested-write" (``errors.SEGMENT_LIMITS``), though no loop is nested: the slice write's loop is a top-level
one.  The ``if`` on the number ``a`` sits inside the elementwise level (its arms are arrays), and ``u``, read in an
arm, was printed there, as a write inside that level.  It is now computed before the ``if``, at the root, as the
user's program computes it (``BranchChoice.wholes`` of a scalar branch, ``lower/soi_levels.py``,
``lower/branches.py``), as a masked branch's arms already had it.  Each case runs under the NumPy and the numba
backend with fallbacks as errors, against the plain function and central differences.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from program_gen import main_function

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

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


#: the same shape with the write read in the first arm, in an elif chain, and written at the end of the array
MORE = {
    "first_arm": SOURCE.replace("        v = x * a\n    else:\n        v = np.sin(u)",
                                "        v = np.cos(u) * a\n    else:\n        v = x * b"),
    "elif": """import numpy as np


def f(x, a, b):
    u = np.zeros(len(x))
    u[:2] = b
    if a > 0.3:
        v = x * a
    elif a > 0.0:
        v = np.sin(u) * x
    else:
        v = u * u
    return np.sum(v)
""",
    "tail_write": SOURCE.replace("u[:2] = b", "u[-3:] = b * x[:3]"),
}
CASES = [("first", SOURCE)] + sorted(MORE.items())


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("a", [0.6, 0.1, -0.4])
@pytest.mark.parametrize("name,source", CASES, ids=[c[0] for c in CASES])
def test_a_branch_reading_a_slice_written_array_does_not_fall_back(name, source, a, backend):
    x, b = np.array([-0.52, 0.1, 0.29, 0.2, 0.96]), -1.48
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        warnings.simplefilter("error", NumbaFallbackWarning)
        value, grads = cn.coarsen(source, name="f", backend=backend).value_and_grad(x, a, b)
    plain = main_function(source, "f")
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

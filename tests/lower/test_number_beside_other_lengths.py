"""A number summed over the elements of one array, in a kernel that also holds arrays of another length.

``np.sum(x + a) + np.sum(y * y)`` with ``x`` and ``y`` of different lengths is one kernel (one SOI) whose
arrays do not broadcast: ``a``'s adjoint is ``len(x)``, the count of the elements ``a`` met, and was printed
as the sum of 1 broadcast to the kernel's elementwise shape, the broadcast of ``x`` and ``y`` ("shapes ((6,),
(4,)) do not broadcast", a ``CoarsenValueError`` at the user's line: 8 of these 20 programs were refused).
``Deps.reduce_to`` now holds the number at the elements of the value it meets (``BroadcastLike``), and the
printer sums it over that value's shape.  Each program: the value equals the plain function's, the gradient
central differences of it, under the NumPy and the numba backends, with no fallback.
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

#: name -> (parameters, body): ``x`` (6), ``y`` (4), ``M`` (3 x 5), ``a`` a number
PROGRAMS = {
    "two_inputs_two_lengths": ("x, y, a", "return np.sum(x + a) + np.sum(y * y)"),
    "two_inputs_number_times": ("x, y, a", "return np.sum(a * x) * np.sum(y)"),
    "two_inputs_mean": ("x, y, a", "return np.mean(x - a) + np.mean(y * a)"),
    "matrix_and_vector": ("M, y, a", "return np.sum(M + a) + np.sum(y - a)"),
    "axis_sum_plus": ("M, y, a", "return np.sum(np.sum(M + a, axis=0) ** 2) + np.sum(y)"),
    "axis_mean_minus": ("M, y, a", "return np.sum(np.mean(M - a, axis=1) * np.sum(y))"),
    "slices_two_sums": ("x, y, a", "return np.sum(x[1:] + a) + np.sum(x + a * a)"),
    "prod_of_a_slice": ("x, y, a", "return np.prod(x[1:] * 0.5 + a) + np.sum(x)"),
    "method_sum_of_a_slice": ("x, y, a", "return (x[1:] - a).sum() + np.sum(x * x)"),
    "where_a_number": ("x, y, a", "return np.sum(np.where(x > 0, x, a)) + np.sum(y[1:] * y[:-1])"),
    "outer_plus": ("x, y, a", "return np.sum(np.tanh(x[:, None] + a * y[None, :] + a))"),
    "max_and_min": ("x, y, a", "return np.max(x + a) + np.min(y - a)"),
    "a_sum_added": ("x, y, a", "s = np.sum(y * y)\n    return np.sum((x + s) ** 2)"),
    "dot_plus": ("x, y, a", "return np.sum(x[:4] * y + a) + np.dot(x[2:], x[:-2])"),
    "loop_sum_added": ("x, y, a", "s = 0.0\n    for i in range(len(y)):\n        s += y[i] * a\n"
                                  "    return np.sum(x + s) + np.sum(y)"),
    "cumsum_plus": ("x, y, a", "return np.sum(np.cumsum(x) + a) + np.sum(y)"),
    "concatenation": ("x, y, a", "u = np.concatenate([x, y]) + a\n    return np.sum(u * u) + np.sum(x + a)"),
    "var_plus": ("x, y, a", "return np.var(x + a) + np.sum(y + a)"),
    "std_times": ("x, y, a", "return np.std(x * a) + np.sum(y - a)"),
    "row_sums_times_plus": ("M, y, a", "return np.sum(np.sum(M, axis=1, keepdims=True) * M + a) + np.sum(y)"),
}


def _args(params: str) -> tuple:
    rng = np.random.default_rng(1)
    x, y, M = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 4), rng.uniform(-1, 1, (3, 5))
    return (M if params.startswith("M") else x, y, 0.4)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_numbers_gradient_counts_the_elements_it_met(name, backend):
    params, body = PROGRAMS[name]
    source = f"import numpy as np\n\n\ndef f({params}):\n    {body}\n"
    args = _args(params)
    plain = main_function(source, "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        warnings.simplefilter("error", NumbaFallbackWarning)
        value, grads = cn.coarsen(source, name="f", backend=backend).value_and_grad(*args)
    assert_close(value, plain(*args), rtol=1e-12, atol=1e-12, what=f"{name} value")
    for i, (g, wrt) in enumerate(zip(grads, params.split(", "), strict=True)):
        assert_close(g, finite_difference(plain, args, i), rtol=1e-6, atol=1e-7, what=f"{name} d/d{wrt}")

"""``backend="dask"`` called with NumPy arrays, on a function whose gradient selects the maximum or the minimum.

A call the chunk schedule refuses runs the dask module on its NumPy arguments (``dask_arrays``): ``dask.array``
takes NumPy arrays everywhere but in its arg reductions, which read ``x.chunks``, so the adjoint's
``xp.argmax(v, keepdims=True)`` of a NumPy ``v`` stopped the gradient with an internal compiler error
("'numpy.ndarray' object has no attribute 'chunks'"), for ``np.max(x)`` alone as for ``np.max(x + a)`` beside
other arrays.  The namespace's ``argmax``/``argmin`` take either (``lower/dask_xp.py``).  Checked: the value and
the gradient equal the NumPy backend's, with NumPy and with Dask arguments.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

import coarsen_nb as cn

PROGRAMS = {
    "max_plus_min": "np.max(x + a) + np.min(y - a)",
    "max_of_a_sum": "np.max(x + a)",
    "max_beside_a_sum": "np.max(x) + np.sum(y)",
    "min_of_a_product": "np.min(x * y[0]) * a",
}


@pytest.fixture(autouse=True)
def _local_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _computed(v):
    return tuple(_computed(g) for g in v) if isinstance(v, tuple) else np.asarray(dask.compute(v)[0])


@pytest.mark.parametrize("arguments", ["numpy", "dask"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_gradient_of_an_extremum_equals_the_numpy_backends(name, arguments):
    source = f"import numpy as np\n\n\ndef f(x, y, a):\n    return {PROGRAMS[name]}\n"
    x, y = np.array([0.3, -0.7, 1.1, 0.2, -1.3, 0.9]), np.array([-0.5, 0.6, 0.1, -0.2])
    want_value, want_grads = cn.coarsen(source, name="f", backend="numpy").value_and_grad(x, y, 0.4)
    arrays = (x, y) if arguments == "numpy" else (da.from_array(x, chunks=4), da.from_array(y, chunks=3))
    value, grads = _computed(cn.coarsen(source, name="f", backend="dask").value_and_grad(*arrays, 0.4))
    np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-15)
    for got, want in zip(grads, want_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)

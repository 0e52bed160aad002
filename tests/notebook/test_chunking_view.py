"""The notebook shows how the last call on Dask arrays was chunked, under the function's header (no browser:
the widgets' values, as tests/notebook/test_views.py reads them), and the terminal summary says it too.

Reference: the Dask arrays' own chunks and blocks' ``nbytes``; the view must say what ``f.chunking`` says
and be empty after a call on NumPy arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from coarsen_nb.notebook.bound import Bound
from coarsen_nb.notebook.text import summary
from coarsen_nb.notebook.widgets import CoarsenView
from coarsen_nb.runtime import coarsen

da = pytest.importorskip("dask.array", reason="the Dask extra is not installed (pip install coarsen-nb[dask])")
dask = pytest.importorskip("dask")

MEAN = '''
def mean_sq(w, X):
    s = 0.0
    for i in range(len(X)):
        s += math.exp(w * X[i]) - w * X[i]
    return s / len(X)
'''

MIRRORED = '''
def mirrored(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * x[len(x) - 1 - i] * x[i]
    return s
'''


def test_the_view_shows_the_chunks_of_the_last_dask_call_and_clears_after_a_numpy_call():
    bound = Bound(coarsen(MEAN, wrt=("w",), backend="numpy", namespace={"math": math}))
    view = CoarsenView(bound)
    x = np.linspace(-1.0, 1.0, 9)
    want = bound.grad(0.3, x)
    assert view.chunking.value == ""
    xd = da.from_array(x, chunks=4)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_allclose(bound.grad(0.3, xd), want, rtol=1e-12)
    shown = view.chunking.value
    assert "chunk by chunk" in shown and f"X: {len(xd.chunks[0])} chunks" in shown
    assert f"({xd.blocks[0].nbytes} B)" in shown and "sum over 3 blocks" in shown
    assert f"the graph has {bound.compiled.chunking.tasks} tasks" in shown
    # a call with other chunks redraws it (the compiled code is the same: only the chunks changed)
    with dask.config.set(scheduler="threads"):
        bound.grad(0.3, da.from_array(x, chunks=2))
    assert "X: 5 chunks" in view.chunking.value and "(16 B)" in view.chunking.value
    text = summary(bound.compiled)
    assert "chunk by chunk" in text and "X: 5 chunks" in text
    bound.grad(0.3, x)
    assert view.chunking.value == "" and "chunk" not in summary(bound.compiled)


def test_the_view_says_why_a_call_ran_the_dask_module_in_the_users_names():
    bound = Bound(coarsen(MIRRORED, backend="numpy"))
    view = CoarsenView(bound)
    x = np.linspace(0.5, 1.5, 8)
    with dask.config.set(scheduler="threads"):
        bound.grad(da.from_array(x, chunks=3), 0.3)
    shown = view.chunking.value
    assert "dask module" in shown and "it reads x at [len(x) - 1 - i]: not record i&#x27;s own row" in shown
    assert "$" not in shown

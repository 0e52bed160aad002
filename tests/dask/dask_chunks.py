"""Dask arrays cut into chunks for the Dask tests, results made NumPy values, and the programs two test
files share (imported by name: a
``from conftest import`` would find whichever conftest module pytest imported first under that name)."""

from __future__ import annotations

import linecache
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the Dask extra is not installed (pip install coarsen-nb[dask])")

#: the chunkings every equality test runs: one chunk, uneven chunks (3, 3, ..., rest), one element each
CHUNKINGS = ("one", "uneven", "single")


#: a mean loss over records ``X[i], y[i]`` (a sum over the records, weighted by ``1/(n - 1)``): the chunk-sum form
MEAN_LOSS = '''
def mean_loss(w, b, X, y):
    n = X.shape[0]
    s = 0.0
    for i in range(n):
        z = b
        for j in range(len(w)):
            z += X[i, j] * w[j]
        s += (z - y[i]) ** 2 if z > y[i] else math.log1p(math.exp(z - y[i]))
    return s / (n - 1)
'''

#: a sum that reads the records from both ends (``x[len(x) - 1 - i]``): no fixed shift from record ``i``, so
#: refused chunk by chunk (a halo serves ``x[i + 1]`` only), run as the dask module
MIRRORED = '''
def mirrored(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * x[len(x) - 1 - i] * x[i]
    return s
'''

#: a sum that reads the next record (``x[i + 1]``): run chunk by chunk, each chunk with the next one's first row
SHIFTED = '''
def shifted(x, a):
    s = 0.0
    for i in range(len(x) - 1):
        s += a * x[i + 1] * x[i]
    return s
'''


def chunked(a, how: str, axis: int = 0):
    """``a`` (a NumPy array) as a Dask array cut along ``axis`` only (every other axis one chunk): one
    chunk, chunks of 3 with a shorter last one (uneven), or one element per chunk."""
    n = a.shape[axis]
    size = {"one": n, "uneven": 3, "single": 1}[how]
    sizes = tuple(min(size, n - s) for s in range(0, n, size)) or (0,)
    chunks = tuple(sizes if d == axis else (a.shape[d],) for d in range(a.ndim))
    return da.from_array(a, chunks=chunks)


def computed(value):
    """A result as NumPy values (a Dask array computed; tuples element by element)."""
    if isinstance(value, tuple):
        return tuple(computed(v) for v in value)
    return np.asarray(value.compute()) if isinstance(value, da.Array) else value


def assert_equal_to(value, grads, want):
    """``value, grads`` (Dask results computed here) equal ``want``, the NumPy backend's, to 1e-12."""
    np.testing.assert_allclose(value, want[0], rtol=1e-12, atol=1e-12)
    for g, w_ in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


def assert_chunks_kept(f, wrt, dargs, grads):
    """Each gradient of a Dask argument is a Dask array with that argument's chunks."""
    for g, a in zip(grads, (a for p, a in zip(f.params, dargs, strict=True) if p in wrt), strict=True):
        assert not isinstance(a, da.Array) or (isinstance(g, da.Array) and g.chunks == a.chunks)


def assert_chunk_sum_equals_numpy(f, args, dargs):
    """On Dask's threaded scheduler, ``f`` (a NumPy-backend function) on ``dargs`` runs chunk by chunk (no
    refusal) and its value and gradients, its VJP with a cotangent and its value equal ``f`` on ``args``."""
    import dask

    want = f.value_and_grad(*args)
    want_vjp = f.vjp(*args)[1](1.5)
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*dargs)
        assert f._specialize(dargs).vjp.chunk_refusal(dargs) == ""
        assert_equal_to(value, grads, want)
        _, pullback = f.vjp(*dargs)
        for g, w_ in zip(pullback(1.5), want_vjp, strict=True):
            np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(f(*dargs), want[0], rtol=1e-12, atol=1e-12)


class EarlyComputes:
    """A Dask scheduler (``dask.config.set(scheduler=EarlyComputes(...))``) that records every compute made
    while an entry builds its result, and runs them on ``get`` (Dask's synchronous or threaded ``get``).

    The one compute that is not early is the runtime's own at return (``dask_arrays._Run._shaped``'s
    ``dask.compute(*pending)``: the scalar value and the gradients of NumPy arguments, all at once); any other
    (a Python ``if`` or ``float()`` on a 0-d Dask array, NumPy indexed by a Dask array) is recorded as the
    generated line it ran from.  With ``fail=True`` an early compute raises at once instead."""

    def __init__(self, get, fail: bool = False):
        self.get, self.fail, self.early = get, fail, []

    def __call__(self, dsk, keys, **kwargs):
        frame, lines = sys._getframe(1), []
        while frame is not None:
            code = frame.f_code
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            if code.co_name == "_shaped" and code.co_filename.endswith("dask_arrays.py"):
                if "dask.compute(" in line:
                    return self.get(dsk, keys, **kwargs)
                break
            if not any(part in code.co_filename for part in ("site-packages", "/tests/", "/lib/python3")):
                lines.append(f"{code.co_name}: {line}")
            frame = frame.f_back
        where = lines[0] if lines else "outside the runtime's call"
        if self.fail:
            raise AssertionError(f"computed while the result was being built, at {where}")
        self.early.append(where)
        return self.get(dsk, keys, **kwargs)

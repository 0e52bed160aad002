"""An entry point called from several threads at once, before anything is compiled, compiles once and runs
compiled in every thread: no thread's compile finds Numba's compiling switched off by another's and falls
back to the NumPy code (Dask's threaded scheduler calls an entry point from its threads this way)."""

from __future__ import annotations

import threading
import warnings

import numpy as np

import coarsen_nb as cn
from coarsen_nb.numba_loader import NumbaFallbackWarning

SOURCE = '''
def loss(x, a):
    s = 0.0
    for i in range(len(x)):
        s += math.log(1.0 + (a * x[i]) ** 2)
    return s
'''


def test_first_calls_from_many_threads_compile_once_and_none_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    import math

    f = cn.coarsen(SOURCE, backend="numba", namespace={"math": math})
    x, a = np.linspace(-2.0, 3.0, 50), 0.7
    f(x, a)                                  # (the module loaded; its gradient entry not compiled yet)
    start = threading.Barrier(6)
    results: list = []
    errors: list = []

    def run():
        try:
            start.wait()
            results.append(f.grad(x, a))
        except Exception as exc:  # noqa: BLE001 - every thread's failure is reported below
            errors.append(exc)

    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        threads = [threading.Thread(target=run) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    want = (2 * a * a * x / (1 + (a * x) ** 2), float(np.sum(2 * a * x * x / (1 + (a * x) ** 2))))
    for got in results:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)

"""An entry point called from several threads at once, before anything is compiled, compiles once and runs
compiled in every thread: no thread's compile finds Numba's compiling switched off by another's and falls
back to the NumPy code (Dask's threaded scheduler calls an entry point from its threads this way)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

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


def test_a_module_loaded_from_many_threads_at_once_is_whole_in_each(tmp_path, monkeypatch):
    """Dask's threaded scheduler runs a chunk module's first chunks in threads of one process, each loading
    the module (``dask_chunk_runs.loaded_functions``). A module is in ``sys.modules`` before its body has run
    (Numba's cache imports it by name), so a thread that found it there could take it half executed: a
    KeyError for an entry point defined further down. Every thread gets every entry point, and they run."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    import math

    from coarsen_nb import numba_loader

    kept = []

    def keep(parts, *args, **kwargs):
        kept.append(parts)
        raise ImportError("kept, not loaded")

    f = cn.coarsen(SOURCE, wrt=("x", "a"), backend="numba", namespace={"math": math})
    x, a = np.linspace(-2.0, 3.0, 50), 0.7
    with monkeypatch.context() as patched, warnings.catch_warnings():
        patched.setattr(numba_loader, "load", keep)
        warnings.simplefilter("ignore")
        with pytest.raises(cn.CoarsenError, match="kept, not loaded"):
            f._specialize((x, a))           # (the module's parts kept, nothing loaded)
    entries = ("loss", "loss_vjp", "loss_grad", "loss_jvp")
    threads_, got, errors = 8, [], []
    barrier = threading.Barrier(threads_)

    def no_numpy_module():
        raise AssertionError("the NumPy module was asked for")

    def load():
        barrier.wait()
        try:
            env = numba_loader.load(kept[-1], "coarsen_nb_generated_loaded_in_threads", entries, no_numpy_module)
        except BaseException as exc:        # noqa: BLE001 (reported below, with the thread's others)
            errors.append(exc)
        else:
            got.append(env)

    runners = [threading.Thread(target=load) for _ in range(threads_)]
    for t in runners:
        t.start()
    for t in runners:
        t.join()
    assert not errors, errors
    assert len(got) == threads_ and all(set(entries) <= set(env) for env in got)
    want = sum(math.log(1.0 + (a * v) ** 2) for v in x)
    assert math.isclose(got[0]["loss"](x, a), want, rel_tol=1e-12)

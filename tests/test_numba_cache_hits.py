"""A warm process loads its compiled code without Numba's first-load initialization
(coarsen_nb/numba_cache_hits.py), and a compilation after that still sees Numba's whole context.

Each check runs fresh processes on one ``COARSEN_NB_CACHE``: the first compiles and writes Numba's disk cache,
the second loads from it.  ``numba.np.random.legacy`` stands for the registries: only Numba's
``BaseContext.refresh`` imports it, so it is absent after a load that skipped the refresh and present once
anything was compiled.  Gradients are checked against central differences of the plain Python function.
"""

from __future__ import annotations

import os

import numpy as np
from numba_child import central, energy, run_child

_PROCESS = '''
    x = np.linspace(-1.0, 2.0, 7) ** 2
    with event.install_listener("numba:compile", Count()):
        f = cn.coarsen(SOURCE, backend="numba")
        gx, gw = f.grad(x, 1.5)
        loaded = dict(compiled=len(compiled), registries="numba.np.random.legacy" in sys.modules)
        fresh = SOURCE.replace("0.5", sys.argv[1])         # a module this process is the first to meet
        again = cn.coarsen(fresh, backend="numba").grad(x, 1.5)
    print(json.dumps(dict(loaded, compiled_after=len(compiled), gx=list(gx), gw=gw, again=[list(again[0]), again[1]],
                          registries_after="numba.np.random.legacy" in sys.modules)))
'''


def test_a_warm_process_loads_without_the_registries_and_compiles_with_them_after(tmp_path):
    # (the whole-pipeline cache off: the second process also lifts and prints, and only Numba's cache is warm)
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="0")
    scales = ("0.25", "0.75")
    cold, warm = [run_child(_PROCESS, scale, env=env) for scale in scales]
    assert cold["compiled"] > 0 and cold["registries"]
    assert warm["compiled"] == 0                    # everything came from Numba's disk cache ...
    assert not warm["registries"]                   # ... without Numba's first-load refresh
    assert warm["compiled_after"] > 0 and warm["registries_after"]  # a module met later: compiled with them
    x = np.linspace(-1.0, 2.0, 7) ** 2
    for out, scale in zip((cold, warm), scales, strict=True):
        rx, rw = central(energy(0.5), x, 1.5)
        np.testing.assert_allclose(out["gx"], rx, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(out["gw"], rw, rtol=1e-6)
        ax, aw = central(energy(float(scale)), x, 1.5)
        np.testing.assert_allclose(out["again"][0], ax, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(out["again"][1], aw, rtol=1e-6)

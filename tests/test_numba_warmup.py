"""``python -m coarsen_nb warmup`` compiles the numba backend's shared helpers into Numba's disk cache, for the
argument types generated code passes (:mod:`coarsen_nb.numba_warmup`): a later process that compiles a function
calling them loads them from there instead of compiling them (issue 14's cold start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# a function whose gradient calls the shared ``_take`` (x[:3], start 0), ``_sum_to`` and ``_scatter_add``
_AFTER = '''
import json
import numpy as np
import coarsen_nb as cn
from coarsen_nb import backends, numba_loader

SRC = """
def head_and_sum(x, w):
    t = x[:3] * w
    return np.sum(t) + np.sum(x * x)
"""
x, w = np.arange(5.0), np.array([0.5, -1.0, 2.0])
got = cn.coarsen(SRC, wrt=("x", "w"), backend="numba").grad(x, w)
want = (2 * x + np.concatenate([w, np.zeros(2)]), x[:3])
assert all(np.allclose(g, e, rtol=1e-12) for g, e in zip(got, want))
shared = numba_loader.shared_module(backends.NUMBA.prologue.strip("\\n"))
print(json.dumps({name: [[str(k) for k in shared.__dict__[name].stats.cache_hits],
                         [str(k) for k in shared.__dict__[name].stats.cache_misses]]
                  for name in ("_take", "_sum_to", "_scatter_add")}))
'''


def _run(args: list[str], cache) -> subprocess.CompletedProcess:
    env = dict(os.environ, COARSEN_NB_CACHE=str(cache), PYTHONPATH=_ROOT, COARSEN_NB_PIPELINE_CACHE="0")
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=600, cwd=_ROOT)


def _stats(cache) -> dict:
    done = _run(["-c", _AFTER], cache)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_warmup_a_function_loads_the_shared_helpers_from_disk(tmp_path):
    cold = _stats(tmp_path / "cold")
    assert cold["_take"][0] == [] and cold["_take"][1], "without warmup, compiled in the function's own compile"
    done = _run(["-m", "coarsen_nb", "warmup"], tmp_path / "warm")
    assert done.returncode == 0, done.stderr
    assert "_take:" in done.stdout and "_scatter_add:" in done.stdout
    warm = _stats(tmp_path / "warm")
    for name in ("_take", "_sum_to", "_scatter_add"):
        hits, misses = warm[name]
        assert hits and not misses, f"{name}: loaded {hits}, compiled {misses}"

"""The generated module is the same text in every process: NumPy and CuPy (with its CUDA kernels).

A cache keyed by the source, an export diffed against the last one and the golden tests all need it.
SymPy's default "lex" order of a sum's terms depends on the hash seed (``2.0*a_ - 4.0*pow(a_, 1.0)*x``
in one process, ``-4.0*pow(a_, 1.0)*x + 2.0*a_`` in another); found on ``named_ufuncs_array``.
Each entry is compiled in two fresh processes with different ``PYTHONHASHSEED``s.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SCRIPT = r"""
import hashlib, sys, warnings
sys.path.insert(0, {tests!r})
import numpy as np
import coarsen_nb as cn
from corpus import CORPUS
warnings.simplefilter("ignore")
out = []
for e in CORPUS:
    if e.name not in {names!r}:
        continue
    for backend in ("numpy", "cupy"):
        f = cn.coarsen(e.fn, wrt=e.wrt or None, backend=backend)
        try:
            f(*e.make_args(np.random.default_rng(0)))
        except cn.CoarsenError:
            pass                     # the cupy module cannot load here; its source exists
        out.append(e.name + "/" + backend + " " + hashlib.sha256(f.source.encode()).hexdigest())
print("\n".join(out))
"""

_NAMES = ("named_ufuncs_array", "named_ufuncs_scalar", "poly2", "math_mix")


@pytest.mark.parametrize("seeds", [("1", "2"), ("3", "4")])
def test_generated_source_does_not_depend_on_the_hash_seed(seeds):
    script = _SCRIPT.format(tests=os.path.dirname(_HERE), names=_NAMES)
    runs = []
    for seed in seeds:
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        runs.append(r.stdout.split())
    assert runs[0] and runs[0] == runs[1]

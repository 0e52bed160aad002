"""Values and gradients of one checkout's corpus and the 13 first kernels, computed by two checkouts of coarsen_nb.

    python tests/values_across_trees.py BASE_TREE NOW_TREE

The corpus is BASE_TREE's own ``tests/corpus.py`` (what existed then: a later entry may use what the base does
not support), each entry and kernel under the default selection, L = 1 and per-block, NumPy backend, run by each
tree's coarsen_nb in its own process.  Prints how many numbers were compared, the worst relative gap, and every
one over 1e-12; exit 1 on any.  Issue 13's "values and gradients equal today's to 1e-12" was checked with it
against the issue's base (6e55b32) at stop 38.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

KERNELS = ("bgd_hyperopt", "black_scholes", "brachistochrone", "gmm", "hmc", "hookean_spring", "horner_fit",
           "logreg_nll", "pairwise_energy", "pendulum", "pendulum_batch", "piecewise_sum", "rosenbrock")

_WORKER = r'''
import importlib, pickle, sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[2])
from corpus import CORPUS
import coarsen_nb as cn

KERNELS = sys.argv[3].split(",")
SEL = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}

def kernel(name):
    try:
        return importlib.import_module(f"coarsen_nb.kernels.{name}")
    except ImportError:
        return importlib.import_module(f"kernels.{name}")

def arr(v):
    return tuple(arr(x) for x in v) if isinstance(v, tuple) else np.array(v, dtype=float, copy=True)

cases = [(f"corpus/{e.name}", e.fn, e.wrt, e.make_args(np.random.default_rng(0)), e.differentiable) for e in CORPUS]
for k in KERNELS:
    m = kernel(k)
    cases.append((f"kernel/{k}", getattr(m, k), tuple(m.META["wrt"]), m.make_inputs(m.META["test_size"]), True))
warnings.simplefilter("ignore")
backend = {"backend": "numpy"} if "backend" in cn.coarsen.__code__.co_varnames else {}
out = {}
for name, fn, wrt, args, diff in cases:
    for sel, kw in SEL.items():
        try:
            f = cn.coarsen(fn, wrt=wrt or None, **backend, **kw)
            out[(name, sel)] = ("ok", arr(f(*args)), arr(f.grad(*args)) if diff and wrt else None)
        except Exception as exc:
            out[(name, sel)] = ("error", type(exc).__name__, str(exc)[:120])
with open(sys.argv[1], "wb") as fh:
    pickle.dump(out, fh)
'''


def run(tree: str, corpus_dir: str, out: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), COARSEN_NB_CACHE=tempfile.mkdtemp())
    subprocess.run([sys.executable, "-c", _WORKER, out, corpus_dir, ",".join(KERNELS)], cwd=tree, env=env,
                   check=True)
    with open(out, "rb") as fh:
        return pickle.load(fh)


def _flat(v) -> list:
    if v is None:
        return []
    if isinstance(v, tuple):
        return [x for y in v for x in _flat(y)]
    return list(np.ravel(v))


def main(base: str, now: str) -> int:
    corpus_dir = os.path.join(os.path.abspath(base), "tests")
    with tempfile.TemporaryDirectory() as tmp:
        a = run(base, corpus_dir, os.path.join(tmp, "base.pkl"))
        b = run(now, corpus_dir, os.path.join(tmp, "now.pkl"))
    numbers, worst, bad, failed = 0, 0.0, [], []
    for key, x in a.items():
        y = b[key]
        if x[0] != "ok" or y[0] != "ok":
            if x[0] != y[0]:
                failed.append((key, x[1:], y[1:]))
            continue
        for u, v in ((x[1], y[1]), (x[2], y[2])):
            fu, fv = _flat(u), _flat(v)
            if len(fu) != len(fv):
                bad.append((key, "shape"))
                continue
            for p, q in zip(fu, fv, strict=True):
                numbers += 1
                if p == q or np.isnan(p) and np.isnan(q):
                    continue
                rel = abs(p - q) / max(abs(p), abs(q))
                worst = max(worst, rel)
                if rel > 1e-12:
                    bad.append((key, p, q))
    print(f"{len(a)} cases, {numbers} numbers compared, worst relative gap {worst:.2e}; "
          f"over 1e-12: {len(bad)}; failing in one tree only: {len(failed)}")
    for item in bad + failed:
        print("  ", item)
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

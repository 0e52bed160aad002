"""A scalar choice on reduced values, computed early (an ``if``) or kept lazy (``xp.where``), on two checkouts.

Issue 18's early computes: the NumPy printer's ``if t2: choice = m_1 else: choice = t`` between two reduced
values (a maximum, ``m = max(m, v)``) made the dask module compute its graph up to ``t2`` while building the
gradient's graph, and again in the one ``dask.compute`` at return (the graph is not shared between the
two).  Stop 39 prints ``choice = xp.where(t2, m_1, t)`` for the dask backend.  This times the gradient of
``logsumexp`` and ``running_max`` (the corpus's entries, written here) on a Dask array of ``--size`` values in
chunks of ``--chunk`` on Dask's threaded scheduler, in a fresh process per checkout and repeat, the checkouts
alternated (``--trees BASE NEW``), and counts the computes each call made (one: lazy).  Each process times
``--calls`` warm calls (the least is kept) after one untimed call that compiles; the in-memory numba gradient
on the same values (computed into one NumPy array) is timed beside it, on the first tree::

    python -m coarsen_nb.benchmarks.dask_lazy_ab --out /tmp/lazy --trees /tmp/base /work/wt --size 1e7
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SOURCES = {
    "logsumexp": '''
def logsumexp(x):
    m = x[0]
    for v in x:
        m = max(m, v)
    s = 0.0
    for v in x:
        s += math.exp(v - m)
    return m + math.log(s)
''',
    "running_max": '''
def running_max(x):
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    return m
''',
}


def _one(tree: str, name: str, size: int, chunk: int, calls: int, numba: bool) -> dict:
    """Run in a process whose ``sys.path`` starts with ``tree``: the times of one checkout."""
    import math

    import dask
    import dask.array as da
    import numpy as np

    import coarsen_nb as cn

    assert Path(cn.__file__).resolve().is_relative_to(Path(tree).resolve()), cn.__file__
    x = da.random.default_rng(0).standard_normal(size, chunks=chunk)
    x = x.persist()
    f = cn.coarsen(SOURCES[name], namespace={"math": math})
    computes = []

    def counting(dsk, keys, **kwargs):
        computes.append(1)
        return dask.threaded.get(dsk, keys, **kwargs)

    with dask.config.set(scheduler=counting):
        want = f.grad(x)
        want = np.asarray(want.compute() if hasattr(want, "compute") else want)
        computes.clear()
        best = math.inf
        for _ in range(calls):
            t0 = time.perf_counter()
            g = f.grad(x)
            g = g.compute() if hasattr(g, "compute") else g
            best = min(best, time.perf_counter() - t0)
        per_call = len(computes) / calls
    out = {"dask_s": best, "computes_per_call": per_call, "chunks": x.npartitions}
    if numba:
        xs = x.compute()
        fn = cn.coarsen(SOURCES[name], namespace={"math": math}, backend="numba")
        ref = fn.grad(xs)
        nb = math.inf
        for _ in range(calls):
            t0 = time.perf_counter()
            fn.grad(xs)
            nb = min(nb, time.perf_counter() - t0)
        out["numba_s"] = nb
        out["gap"] = float(np.max(np.abs(np.asarray(ref) - np.asarray(g))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--trees", nargs=2, required=True, metavar=("BASE", "NEW"))
    ap.add_argument("--size", type=float, default=1e7)
    ap.add_argument("--chunk", type=float, default=2e6)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3, help="processes per tree, the trees alternated")
    ap.add_argument("--names", default=",".join(SOURCES))
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        tree, name, numba, calls = opts.child
        print(json.dumps(_one(tree, name, int(opts.size), int(opts.chunk), int(calls), numba == "1")))
        return
    rows = []
    for name in opts.names.split(","):
        for r in range(opts.rounds):
            for t, tree in enumerate(opts.trees):
                load = Path("/proc/loadavg").read_text().split()[0]
                # (this file run by its path: the base checkout need not have it; coarsen_nb is the tree's)
                cmd = [sys.executable, str(Path(__file__).resolve()), "--out", opts.out,
                       "--trees", *opts.trees, "--size", str(opts.size), "--chunk", str(opts.chunk),
                       "--child", tree, name, "1" if t == 0 and r == 0 else "0", str(opts.calls)]
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=tree,
                                      env={**os.environ, "PYTHONPATH": tree}, check=True)
                row = {"name": name, "tree": tree, "round": r, "load": float(load),
                       **json.loads(done.stdout.strip().splitlines()[-1])}
                rows.append(row)
                print(json.dumps(row), flush=True)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "lazy_ab.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

"""The time a call on Dask arrays spends building its graph, before anything is computed (issue 18: "the
graph is built once per signature and chunk structure, and cached").

logreg_nll's gradient (numba module, the chunk-sum path) on lazy records freshly generated for every call
(new names, the same chunks): the least and median over ``--calls`` calls of

* "graph": the specialization lookup with its chunk check, the chunk-sum refusal check and the graph of
  the chunks (``ChunkSchedule.call``): what the runtime builds per call;
* "call without compute": ``f.grad`` with ``dask.compute`` replaced by a stub (the graph, the result's
  shaping and ``f.chunking``'s description; nothing computed).

It runs on any checkout (``PYTHONPATH`` says which), so that an old and a new tree can be compared
alternately in one shell loop::

    for t in OLD NEW OLD NEW; do PYTHONPATH=$t python coarsen_nb/benchmarks/dask_graph_time.py \\
        --chunks 8,200 --out /tmp/graph_time/$(basename $t).jsonl; done
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np


def measure(chunks: int, calls: int, rows_per_chunk: int = 1000) -> dict:
    import dask
    import dask.array as da

    import coarsen_nb as cn
    from coarsen_nb.kernels.logreg_nll import logreg_nll

    f = cn.coarsen(logreg_nll, wrt=("w", "b"), backend="numba")
    w, b = np.full(10, 0.1), 0.05

    def data(seed):
        rng = da.random.default_rng(seed)
        X = rng.standard_normal((chunks * rows_per_chunk, 10), chunks=(rows_per_chunk, 10))
        y = (rng.random(chunks * rows_per_chunk, chunks=rows_per_chunk) > 0.5).astype(float)
        return X, y

    with dask.config.set(scheduler="synchronous"):       # compile, load, wire the first chunking
        f.grad(w, b, *data(0))
        f.grad(w, b, *data(1))

    def graph(args):
        run = f._specialize(args).grad
        assert run.chunk_refusal(args) == "", run.chunk_refusal(args)
        return run.chunkwise.call("grad", args)

    built = []
    for k in range(calls):
        args = (w, b, *data(100 + k))
        t = time.perf_counter()
        graph(args)
        built.append(time.perf_counter() - t)
    whole = []
    real = dask.compute
    dask.compute = lambda *a, **kw: tuple(0.0 for _ in a)
    try:
        for k in range(calls):
            args = (w, b, *data(1000 + k))
            t = time.perf_counter()
            f.grad(*args)
            whole.append(time.perf_counter() - t)
    finally:
        dask.compute = real
    ms = 1e3
    return {"chunks": chunks, "calls": calls, "graph_min_ms": min(built) * ms,
            "graph_median_ms": statistics.median(built) * ms, "call_without_compute_min_ms": min(whole) * ms,
            "call_without_compute_median_ms": statistics.median(whole) * ms, "checkout": cn.__file__}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="a JSON-lines file the figures are appended to")
    p.add_argument("--chunks", default="8,200")
    p.add_argument("--calls", type=int, default=30)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for c in a.chunks.split(","):
        r = measure(int(c), a.calls)
        print(json.dumps(r), flush=True)
        with out.open("a") as fh:
            fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()

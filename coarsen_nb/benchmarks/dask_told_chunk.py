"""One chunk's gradient through the chunks' told module against the in-memory module, in one process (issue 18).

    COARSEN_NB_CACHE=$(mktemp -d) PYTHONPATH=. python -m coarsen_nb.benchmarks.dask_told_chunk [--rows 2e6]

The corpus's ``horner`` (``dask_kernel_scale.PROGRAMS``): its chunks' numba module is told the block's first
index and the call's number of records (:mod:`coarsen_nb.dask_chunk_index`).  On one block of ``--rows`` rows,
the told module's gradient (the block taken as the third of five) and the in-memory numba ``f.grad`` on the
same rows, alternated, process CPU time, the least and the median of ``--repeat``: what a chunk's task costs
beside the function's own module, without the cluster.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=float, default=2e6)
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args(argv)
    import dask.array as da

    import coarsen_nb as cn
    from coarsen_nb.benchmarks.dask_kernel_scale import PROGRAMS
    from coarsen_nb.dask_chunk_runs import loaded_functions

    source, wrt = PROGRAMS["horner"]
    f = cn.coarsen(source, wrt=wrt, backend="numba")
    m = int(a.rows)
    c, t = np.random.default_rng(0).standard_normal(m), 1.0 - 1e-7
    dargs = (da.from_array(np.zeros(5 * m), chunks=m), t)
    (told,) = f._specialize(dargs).grad.chunkwise.told
    grad = loaded_functions(told)["horner_grad"]
    runs = {"told": lambda: grad(c, t, 2 * m, 5 * m), "memory": lambda: f.grad(c, t)}
    for run in runs.values():      # (compiled and warm)
        run()
    times: dict = {k: [] for k in runs}
    for _ in range(a.repeat):
        for k, run in runs.items():
            start = time.process_time()
            run()
            times[k].append(time.process_time() - start)
    for k, v in times.items():
        print(f"{k}: least {min(v):.4f} s, median {sorted(v)[len(v) // 2]:.4f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

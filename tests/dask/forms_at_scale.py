"""The forms of lower/dask_xp_forms.py at a size where chunks matter (a script, not a test).

matched_filter and smoothed_signal (``correlate``/``convolve`` and their adjoints, the kernel in one block) at
n = 10**6 in 10 chunks, triangular_sum (``repeat`` by counts built from shapes, 1.1e6 pairs) at n = 1500 in 5:
the dask module on Dask's threaded scheduler against the NumPy backend on the same NumPy arrays, CPU time of
this process (best of 3, the dask module compiled first), and the largest relative difference of the value
and gradient.  ``PYTHONPATH=. python tests/dask/forms_at_scale.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import CORPUS  # noqa: E402
from corpus_arrays import ARRAYS  # noqa: E402

import coarsen_nb as cn  # noqa: E402


def main() -> None:
    entries = {e.name: e for e in ARRAYS + CORPUS}
    rng = np.random.default_rng(0)
    cases = {
        "matched_filter": ((rng.normal(size=1_000_000) * 0.01, rng.normal(size=64) * 0.01), 100_000),
        "smoothed_signal": ((rng.normal(size=1_000_000), rng.uniform(0.5, 1.0, size=31)), 100_000),
        "triangular_sum": ((rng.normal(size=1500),), 300),
    }
    for name, (args, chunk) in cases.items():
        f = cn.coarsen(entries[name].fn, wrt=entries[name].wrt or None, backend="numpy")
        value, grads = f.value_and_grad(*args)
        t0 = time.process_time()
        f.value_and_grad(*args)
        numpy_cpu = time.process_time() - t0
        dargs = tuple(da.from_array(a, chunks=chunk) if a.shape[0] > 100 else a for a in args)
        with dask.config.set(scheduler="threads"):
            f.value_and_grad(*dargs)                     # (compiles the dask module)
            cpu = []
            for _ in range(3):
                t0 = time.process_time()
                got_value, got_grads = f.value_and_grad(*dargs)
                got_grads = dask.compute(*got_grads)
                cpu.append(time.process_time() - t0)
        diff = max([abs(got_value - value) / (1 + abs(value))] + [
            float(np.max(np.abs(g - w) / (1 + np.abs(w)))) for g, w in zip(got_grads, grads, strict=True)])
        print(f"{name}: n = {args[0].shape[0]} in chunks of {chunk}: dask {min(cpu):.3f} s CPU, "
              f"NumPy backend {numpy_cpu:.3f} s; largest relative difference {diff:.1e}")


if __name__ == "__main__":
    main()

"""The dask printer's pointwise reads (``_gather_points``, lower/dask_printing.py) at n = 600 (a script, not a test).

A triangle ``m[i, j] * m[j, i]`` (index arrays built from shapes: ``m.vindex``) and ``m[rows[k], k]`` (one index
array an argument's data: the checked flat read), the rows of ``m`` in 4 chunks: the dask module on Dask's
threaded scheduler against the NumPy backend on the same NumPy arrays, CPU time of this process (best of 3, the
dask module compiled first), and the largest relative difference of the value and gradient.
``PYTHONPATH=. python tests/dask/points_at_scale.py``
"""

from __future__ import annotations

import time

import dask
import dask.array as da
import numpy as np

import coarsen_nb as cn

TRIANGLE = '''
def triangle(m):
    return sum(m[i, j] * m[j, i] for i in range(m.shape[0]) for j in range(i, m.shape[1]))
'''

PICKED = '''
def picked(m, rows):
    return sum(m[rows[k], k] ** 2 for k in range(len(rows)))
'''


def best_cpu(call, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t = time.process_time()
        call()
        times.append(time.process_time() - t)
    return min(times)


def main(n: int = 600) -> None:
    rng = np.random.default_rng(0)
    m, rows = rng.normal(size=(n, n)), rng.integers(0, n, size=n)
    for name, src, args in (("triangle", TRIANGLE, (m,)), ("picked", PICKED, (m, rows))):
        f, ref = cn.coarsen(src, wrt="m"), cn.coarsen(src, wrt="m", backend="numpy")
        want = ref.value_and_grad(*args)
        dargs = tuple(da.from_array(a, chunks=(n // 4,) + a.shape[1:]) for a in args)
        with dask.config.set(scheduler="threads"):
            got = f.value_and_grad(*dargs)
            dask_s = best_cpu(lambda: f.value_and_grad(*dargs))     # noqa: B023 (called at once)
        numpy_s = best_cpu(lambda: ref.value_and_grad(*args))       # noqa: B023
        grad = np.asarray(got[1][0])
        diff = max(abs(float(got[0]) - want[0]) / abs(want[0]),
                   float(np.max(np.abs(grad - want[1][0])) / np.max(np.abs(want[1][0]))))
        assert "_gather_points" in f.source and not f.chunking.chunkwise
        print(f"{name}: n={n}, 4 chunks: dask module {dask_s:.3f} s, NumPy backend {numpy_s:.3f} s, "
              f"largest relative difference {diff:.1e}")


if __name__ == "__main__":
    main()

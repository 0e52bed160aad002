"""The same computation written in loop style and in vectorized style, and their gradient times (issue 15:
"the vectorized style is not slower").

``PAIRS`` holds ``(loop function, vectorized function, make_inputs(rng, n))``; tests/lower/
test_loop_vectorized_pairs.py checks that the two compile to the same values and gradients.  Run as
``python -m coarsen_nb.benchmarks.style_pairs [--size N] [--repeats R]``: for each pair, the compiled
gradients of both styles are checked against each other, then timed interleaved (loop, vectorized, loop,
...; each sample a batch of calls of at least 20 ms), and the medians printed with their ratio (vectorized ÷
loop: at most 1 is "not slower").
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np


def energy_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += (x[i + 1] - x[i]) ** 2
    return s


def energy_vec(x):
    return np.sum(np.diff(x) ** 2)


def logsumexp_loop(x):
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def logsumexp_vec(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def cumulative_loop(r):
    acc = 0.0
    tot = 0.0
    for i in range(len(r)):
        acc += r[i]
        tot += acc * acc
    return tot


def cumulative_vec(r):
    return np.sum(np.cumsum(r) ** 2)


def smoothing_loop(x, w):
    n = len(x) - len(w) + 1
    s = 0.0
    for i in range(n):
        acc = 0.0
        for k in range(len(w)):
            acc += w[k] * x[i + k]
        s += acc * acc
    return s


def smoothing_vec(x, w):
    return np.sum(np.correlate(x, w, mode="valid") ** 2)


def rows_loop(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += math.log(1.0 + math.exp(z))
    return s


def rows_vec(X, w):
    return np.sum(np.log(1.0 + np.exp(X @ w)))


def hinge_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.2:
            s += x[i] - 0.2
    return s


def hinge_vec(x):
    return np.sum(np.where(x > 0.2, x - 0.2, 0.0))


def _away(rng, n):
    v = rng.uniform(-1.0, 1.0, size=n)
    v[np.abs(v - 0.2) < 0.05] += 0.1
    return v


def energy_slices(x):
    return np.sum((x[1:] - x[:-1]) ** 2)


def softplus_rows_axis(X, w):
    return np.sum(np.log(1.0 + np.exp(np.sum(X * w, axis=1))))


#: (loop style, vectorized style, inputs of about n elements)
PAIRS = [
    (energy_loop, energy_vec, lambda r, n: (r.normal(size=max(n, 2)),)),
    (energy_loop, energy_slices, lambda r, n: (r.normal(size=max(n, 2)),)),
    (logsumexp_loop, logsumexp_vec, lambda r, n: (r.normal(size=max(n, 1)),)),
    (cumulative_loop, cumulative_vec, lambda r, n: (r.normal(size=max(n, 1)),)),
    (smoothing_loop, smoothing_vec, lambda r, n: (r.normal(size=max(n, 5)), r.normal(size=min(4, max(n, 5) - 1)))),
    (rows_loop, rows_vec, lambda r, n: (r.normal(size=(max(n // 3, 1), 3)), r.normal(size=3))),
    (rows_loop, softplus_rows_axis, lambda r, n: (r.normal(size=(max(n // 3, 1), 3)), r.normal(size=3))),
    (hinge_loop, hinge_vec, lambda r, n: (_away(r, max(n, 1)),)),
]




def _grads(f, args):
    g = f.grad(*args)
    return g if isinstance(g, tuple) else (g,)


def measure(size: int = 10**5, repeats: int = 7, only: tuple[str, ...] = ()) -> list[dict]:
    """Each pair's gradient times at ``size``: the medians of ``repeats`` interleaved batches of calls
    (``only``: the pairs whose vectorized style is named there; all when empty)."""
    import coarsen_nb as cn
    out = []
    for loop, vec, make in PAIRS:
        if only and vec.__name__ not in only:
            continue
        args = make(np.random.default_rng(0), size)
        f_loop, f_vec = cn.coarsen(loop, backend="numpy"), cn.coarsen(vec, backend="numpy")
        for a, b in zip(_grads(f_loop, args), _grads(f_vec, args), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * (1.0 + float(np.max(np.abs(b)))))
        # a sample is a batch of calls lasting >= 20 ms (one call of a millisecond measures the allocator's
        # state as much as the code: fresh pages for every large temporary), batches interleaved
        t = time.perf_counter()
        f_loop.grad(*args)
        batch = max(1, int(0.02 / max(time.perf_counter() - t, 1e-6)))
        times: dict = {"loop": [], "vectorized": []}
        for _ in range(repeats):
            for label, f in (("loop", f_loop), ("vectorized", f_vec)):
                t = time.perf_counter()
                for _ in range(batch):
                    f.grad(*args)
                times[label].append((time.perf_counter() - t) / batch)
        med = {k: float(np.median(v)) for k, v in times.items()}
        out.append({"loop_style": loop.__name__, "vectorized_style": vec.__name__, **med,
                    "ratio": med["vectorized"] / med["loop"]})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10**5)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--only", default="", help="comma-separated vectorized styles to measure (default: all)")
    a = p.parse_args(argv)
    print(f"n = {a.size}\n")
    print("| loop style | vectorized style | loop gradient | vectorized gradient | vectorized ÷ loop |")
    print("|---|---|---:|---:|---:|")
    for r in measure(a.size, a.repeats, tuple(filter(None, a.only.split(",")))):
        times = f"{r['loop'] * 1e3:.3g} ms | {r['vectorized'] * 1e3:.3g} ms"
        print(f"| {r['loop_style']} | {r['vectorized_style']} | {times} | {r['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

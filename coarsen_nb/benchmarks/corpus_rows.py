"""The matrix corpora at ~N elements under ``backend="numba"`` against ``backend="numpy"`` (issue 14).

:mod:`coarsen_nb.benchmarks.corpus_backends` resizes 1-D arrays only, so the programs users write over the
rows of a matrix (softmax and log-softmax over rows, a mixture's responsibilities, hinge margins, layer
norms) were never in its table, and those are where the default backend was slower than NumPy.  This script
takes every entry of the vectorized corpora (``tests/corpus_reductions.py``, ``corpus_arrays.py``,
``corpus_linalg.py``, ``corpus_slices.py``, ``corpus_special.py``) whose first array is a matrix, and
grows its **rows**: every array whose leading axis has the first matrix's row count ``n`` (and every
vector of length ``n``) is tiled along that axis to ``R`` rows, ``R`` chosen so the first matrix holds
~N elements; the short axes stay as the entry draws them.  A draw whose ``n`` also appears as another axis
length (a square matrix, a weight vector over the columns) is redrawn with the next seed, so only the
rows grow.  A ramp of 1e-7 of the array's scale per row keeps the rows distinct (a column's extremum
unique) without reordering any row.

Each entry is then checked and timed as ``corpus_backends.run_entry`` does (skipped where the plain
function raises or is not finite, where the cost grows faster than linearly, where numba's result is not
numpy's to 1e-10), but timed in **process CPU time** (the machine is shared), the two backends alternated,
the median of ``--repeat`` calls each.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python -m coarsen_nb.benchmarks.corpus_rows --n 1000000 --out DIR
    PYTHONPATH=. python -m coarsen_nb.benchmarks.corpus_rows --only softmax_rows hinge_margins
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from coarsen_nb.benchmarks import corpus_backends


def _corpora():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tests"))
    from corpus_arrays import ARRAYS
    from corpus_linalg import LINALG
    from corpus_reductions import REDUCTIONS
    from corpus_slices import SLICES
    from corpus_special import SPECIAL
    return [*REDUCTIONS, *ARRAYS, *LINALG, *SLICES, *SPECIAL]


def _arrays(args):
    return [a for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0]


def row_count(args):
    """The first matrix's row count where no other axis has that length, else None (the draw is ambiguous)."""
    arrays = _arrays(args)
    first = next((a for a in arrays if a.ndim >= 2), None)
    if first is None:
        return None
    n = first.shape[0]
    others = [d for a in arrays if a.ndim >= 2 for d in a.shape[1:]]
    return None if n in others else n


def draw(entry, tries=40):
    """The entry's arguments at the first seed whose row count is unambiguous, or None."""
    for seed in range(tries):
        args = entry.make_args(np.random.default_rng(seed))
        if row_count(args) is not None:
            return args
    return None


def scaled_rows(args, n):
    """``args`` with the rows grown so the first matrix holds about ``n`` elements (see the module's doc)."""
    rows = row_count(args)
    first = next(a for a in _arrays(args) if a.ndim >= 2)
    target = max(rows, n // (first.size // rows))
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim >= 1 and a.shape[0] == rows:
            span = float(np.max(np.abs(a))) or 1.0
            ramp = span * 1e-7 * np.arange(target) / target
            a = a[np.arange(target) % rows] + ramp.reshape((target,) + (1,) * (a.ndim - 1))
        out.append(a)
    return tuple(out)


def _cpu(call, args):
    t = time.process_time()
    call(*args)
    return time.process_time() - t


def median_cpu(made, args, repeat):
    """Each backend's median process CPU time (s) over ``repeat`` calls, the two alternated."""
    times = {"numba": [], "numpy": []}
    for _ in range(repeat):
        for be in ("numba", "numpy"):
            times[be].append(_cpu(made[be], args))
    return {be: statistics.median(t) for be, t in times.items()}


def run(entry, n, repeat, max_seconds):
    if not any(a.ndim >= 2 for a in _arrays(entry.make_args(np.random.default_rng(0)))):
        return None             # (no matrix: corpus_backends grows its vectors)
    base = draw(entry)
    if base is None:
        return {"skipped": "no draw with an unambiguous row count"}
    r = corpus_backends.run_entry(entry, n, repeat, max_seconds, base=base, scale=scaled_rows,
                                  measure=median_cpu)
    if "ratio" in r:
        r["shape"] = list(next(a for a in _arrays(scaled_rows(base, n)) if a.ndim >= 2).shape)
    return r


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10**6)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--max-seconds", type=float, default=3.0)
    p.add_argument("--only", nargs="*", help="entry names (default: all)")
    p.add_argument("--out", default=None, help="a directory for corpus_rows.json")
    a = p.parse_args(argv)
    results = corpus_backends.survey(_corpora(), lambda entry: run(entry, a.n, a.repeat, a.max_seconds), a.only)
    timed = sorted((k for k, r in results.items() if "ratio" in r), key=lambda k: -results[k]["ratio"])
    print(f"N ~ {a.n:,} elements, CPU ms, median of {a.repeat}, load {os.getloadavg()[0]:.1f}")
    print(f"{'entry':28s} {'shape':>14s} {'numba ms':>10s} {'numpy ms':>10s} {'numba/numpy':>12s}")
    for k in timed:
        r = results[k]
        note = " (fallback)" if r["fallback"] else ("" if r["call"] == "grad" else " (value)")
        shape = "x".join(map(str, r["shape"]))
        print(f"{k:28s} {shape:>14s} {r['numba_ms']:10.2f} {r['numpy_ms']:10.2f} {r['ratio']:12.2f}{note}")
    slow = [k for k in timed if results[k]["ratio"] > 1.0]
    print(f"{len(timed)} timed, {len(slow)} slower under numba")
    for k, r in results.items():
        if "skipped" in r:
            print(f"skipped {k}: {r['skipped']}")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "corpus_rows.json"), "w") as fh:
            json.dump({"n": a.n, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()

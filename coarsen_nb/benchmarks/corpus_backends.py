"""The corpus at N elements under ``backend="numba"`` against ``backend="numpy"`` (issue 14).

The default backend is numba; it should never be much slower than the NumPy module it is compiled from.
The 19 kernels say little about that (they are what numba was tuned on), so this script takes every entry
of ``tests/corpus.py``'s CORPUS whose arguments include 1-D float arrays, scales those arrays to N elements
(``np.resize`` plus a tiny increasing ramp, so repeated values stay distinct and an arg-max unique; the
other arguments are kept), and compares the two backends' gradients (``f.grad``; the value ``f(...)`` for
an entry without ``wrt``): equal to 1e-10 first, then timed, the two alternated, min of ``--repeat``.

An entry is skipped, with the reason printed, where the plain function raises or is not finite at a small
size, where the NumPy module raises or is not finite at N (the NumPy module's value is the plain function's,
which the tests check; running the plain Python loops at N would take minutes), where the cost grows faster
than linearly (a nest: 4x the elements costing more than 8x the time, 1,000 against 4,000), or where
the NumPy call at N would take more than ``--max-seconds``.  A numba module that fell back to NumPy code
(Numba's named fallback) is marked ``fallback``.

    PYTHONPATH=. python -m coarsen_nb.benchmarks.corpus_backends --n 1000000 --out /tmp/NAME-corpus
    PYTHONPATH=. python -m coarsen_nb.benchmarks.corpus_backends --n 10000000 --only running_max logsumexp

Prints the entries sorted by numba / numpy (worst first) and writes ``corpus_backends.json`` under ``--out``.
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np


def _corpus():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tests"))
    from corpus import CORPUS  # (tests/corpus.py: the plain functions and their argument makers)
    return CORPUS


def scaled(args, n):
    """``args`` with each 1-D float array resized to ``n`` elements (distinct values kept distinct)."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind == "f" and a.size > 0:
            span = float(np.max(np.abs(a))) or 1.0
            a = np.resize(a, n) + span * 1e-7 * np.arange(n) / n
        out.append(a)
    return tuple(out)


def _has_vector(args):
    return any(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind == "f" and a.size > 0 for a in args)


def _finite(value):
    if isinstance(value, tuple):
        return all(_finite(v) for v in value)
    return bool(np.all(np.isfinite(np.asarray(value, dtype=float))))


def _close(a, b, tol=1e-10):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(_close(x, y, tol) for x, y in zip(a, b, strict=True))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def _best(call, args):
    t = time.perf_counter()
    call(*args)
    return time.perf_counter() - t


def fastest(made, args, repeat):
    """Each backend's fastest wall time (s) over ``repeat`` calls, the two alternated."""
    times = {"numpy": math.inf, "numba": math.inf}
    for _ in range(repeat):
        for be in ("numba", "numpy"):
            times[be] = min(times[be], _best(made[be], args))
    return times


def run_entry(entry, n, repeat, max_seconds, base=None, scale=scaled, measure=fastest):
    """A result dict for one entry: its times, or ``skipped`` with why.

    ``base`` (default: the entry's draw at seed 0) is grown to size ``n`` by ``scale(base, n)`` and timed by
    ``measure(made, args, repeat)`` (seconds by backend): :mod:`corpus_rows` grows the rows of matrices and
    times in CPU time."""
    import coarsen_nb as cn
    if base is None:
        base = entry.make_args(np.random.default_rng(0))
        if not _has_vector(base):
            return None
    try:
        small = scale(base, 200)
        if not _finite(entry.fn(*small)):
            return {"skipped": "the plain function is not finite at 200 elements"}
    except Exception as exc:
        return {"skipped": f"the plain function raises at 200 elements ({type(exc).__name__})"}
    wrt = entry.wrt if entry.differentiable and entry.wrt else None
    made = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for be in ("numpy", "numba"):
            f = cn.coarsen(entry.fn, wrt=wrt, backend=be)
            made[be] = f.grad if wrt else f
        try:
            # the growth of the NumPy module's cost (and the numba module's compile, at a small size)
            t_small = min(_best(made["numpy"], scale(base, 1000)) for _ in range(3))
            t_big = min(_best(made["numpy"], scale(base, 4000)) for _ in range(3))
            made["numba"](*scale(base, 1000))
        except Exception as exc:
            return {"skipped": f"raises at 1,000 elements ({type(exc).__name__}: {str(exc)[:80]})"}
    fallback = any("runs as NumPy code" in str(w.message) for w in caught)
    if t_big > 8 * max(t_small, 5e-5):
        return {"skipped": f"superlinear ({t_small * 1e3:.2f} ms at 1,000, {t_big * 1e3:.2f} ms at 4,000)"}
    if t_big * n / 4000 > max_seconds:
        return {"skipped": f"would take ~{t_big * n / 4000:.1f} s a call at N"}
    args = scale(base, n)
    try:
        ref = made["numpy"](*args)
    except Exception as exc:
        return {"skipped": f"the NumPy module raises at N ({type(exc).__name__})"}
    if not _finite(ref):
        return {"skipped": "not finite at N"}
    got = made["numba"](*args)
    if not _close(got, ref):
        return {"skipped": "numba's result differs from numpy's (1e-10)", "mismatch": True}
    times = measure(made, args, repeat)
    return {"numba_ms": times["numba"] * 1e3, "numpy_ms": times["numpy"] * 1e3,
            "ratio": times["numba"] / times["numpy"], "fallback": fallback, "call": "grad" if wrt else "value"}


def survey(entries, run, only=None) -> dict:
    """``{name: run(entry)}`` over ``entries`` (those named in ``only``, if given), each reported on stderr as it
    ends; an entry ``run`` answers None for is left out, and one whose run raises is recorded as skipped with
    the error: a bug in one entry must not end the survey, and is said, not hidden."""
    results = {}
    for entry in entries:
        if only and entry.name not in only:
            continue
        t = time.perf_counter()
        try:
            r = run(entry)
        except Exception as exc:
            r = {"skipped": f"error: {type(exc).__name__}: {str(exc)[:100]}"}
        if r is None:
            continue
        results[entry.name] = r
        print(f"  {entry.name}: {r.get('ratio', r.get('skipped'))} ({time.perf_counter() - t:.1f} s)",
              file=sys.stderr, flush=True)
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10**6)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=3.0)
    p.add_argument("--only", nargs="*", help="entry names (default: all)")
    p.add_argument("--out", default=None, help="a directory for corpus_backends.json")
    a = p.parse_args(argv)
    results = survey(_corpus(), lambda entry: run_entry(entry, a.n, a.repeat, a.max_seconds), a.only)
    timed = sorted((k for k, r in results.items() if "ratio" in r), key=lambda k: -results[k]["ratio"])
    print(f"N = {a.n:,}, min of {a.repeat}, load {os.getloadavg()[0]:.1f}")
    print(f"{'entry':28s} {'numba ms':>10s} {'numpy ms':>10s} {'numba/numpy':>12s}")
    for k in timed:
        r = results[k]
        note = " (fallback)" if r["fallback"] else ("" if r["call"] == "grad" else " (value)")
        print(f"{k:28s} {r['numba_ms']:10.2f} {r['numpy_ms']:10.2f} {r['ratio']:12.2f}{note}")
    slow = [k for k in timed if results[k]["ratio"] > 1.5]
    print(f"{len(timed)} timed, {len(slow)} more than 1.5x slower under numba")
    for k, r in results.items():
        if "skipped" in r:
            print(f"skipped {k}: {r['skipped']}")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "corpus_backends.json"), "w") as fh:
            json.dump({"n": a.n, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()

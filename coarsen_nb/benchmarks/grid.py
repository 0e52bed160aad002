"""The (L, R) grid: gradient time of every SOI selection on kernels/, and which one is best.

Not a unit test: run ``python -m coarsen_nb.benchmarks.grid [--quick]``.  For each
kernel (at its smallest benchmark size) and each (L, R) in the grid it
compiles ``coarsen(fn, max_soi=L, reuse=R)`` and checks the gradient agrees
with the default selection's.  Settings that generate the *same code* are
timed once and share the figure (a cell marked ``=`` is code-identical to the
default): two timings of one module differ only by machine noise, and an
earlier grid reported such noise as a 1.4-1.5x "loss" of the default.  The
distinct modules are timed in interleaved rounds (each round times every
module once, as a batch of calls lasting at least ``BATCH_S``), and each keeps
its fastest per-call time, so load that comes and goes on a shared machine is
not charged to one setting.  It prints a Markdown table, the best setting per
kernel and how far the default (L = ∞, R = DEFAULT_REUSE) is from it.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.soi.select import DEFAULT_REUSE

GRID_L = (1, 8, 32, math.inf)
GRID_R = (1, 2, 4, math.inf)
QUICK_L = (1, 32, math.inf)
QUICK_R = (1, 2, math.inf)
DEFAULT = (math.inf, DEFAULT_REUSE)


def _label(v) -> str:
    return "∞" if v == math.inf else str(v)


BATCH_S = 0.005


def _batch(f, args) -> int:
    """How many calls make one timed batch of at least BATCH_S."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f.grad(*args)
        if time.perf_counter() - t >= BATCH_S or n >= 1 << 12:
            return n
        n *= 2


def _time_interleaved(fns: dict, args, rounds: int) -> dict:
    """Fastest per-call gradient time of each compiled function, over interleaved rounds."""
    numbers = {k: _batch(f, args) for k, f in fns.items()}
    best = dict.fromkeys(fns, math.inf)
    for _ in range(rounds):
        for k, f in fns.items():
            t = time.perf_counter()
            for _ in range(numbers[k]):
                f.grad(*args)
            best[k] = min(best[k], (time.perf_counter() - t) / numbers[k])
    return best


def _code(f) -> str:
    """The generated module without its header (which names the options)."""
    src = f.source
    return src[src.index("\ndef ") if "\ndef " in src else 0:]


def _agrees(ref, g, single: bool) -> bool:
    pairs = zip(np.atleast_1d(ref), np.atleast_1d(g), strict=True) if single else zip(ref, g, strict=True)
    return all(np.allclose(a, b, rtol=1e-6, atol=1e-9) for a, b in pairs)


def kernel_row(name: str, settings: list, rounds: int) -> dict:
    """{(L, R): seconds or an error text} for one kernel, plus ``"same"``: the settings whose code equals
    the default's."""
    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["quick_sizes"][0], seed=0)
    single = len(mod.META["wrt"]) == 1
    times, ref, by_code, fns = {}, None, {}, {}
    for L, R in [DEFAULT] + [s for s in settings if s != DEFAULT]:
        try:
            f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numpy", max_soi=L, reuse=R)
            g = np.asarray(f.grad(*args), dtype=float) if single else [np.asarray(x, dtype=float)
                                                                       for x in f.grad(*args)]
            ref = g if ref is None else ref
            if not _agrees(ref, g, single):
                times[(L, R)] = "gradient differs"
                continue
            code = _code(f)
            by_code.setdefault(code, []).append((L, R))
            fns.setdefault(code, f)
        except Exception as e:                     # a setting that does not compile is reported, not hidden
            times[(L, R)] = f"error: {type(e).__name__}"
    timed = _time_interleaved(fns, args, rounds)
    for code, group in by_code.items():
        for s in group:
            times[s] = timed[code]
    same = set(next(g for g in by_code.values() if DEFAULT in g)) if DEFAULT in {s for g in by_code.values()
                                                                                   for s in g} else set()
    return {"times": {s: times[s] for s in settings if s in times}, "same": same, "distinct": len(by_code)}


def _name(best, same) -> str:
    if best is None:
        return "-"
    return "default" if best in same else f"L={_label(best[0])} R={_label(best[1])}"


def run(quick: bool) -> str:
    ls, rs = (QUICK_L, QUICK_R) if quick else (GRID_L, GRID_R)
    settings = [(L, R) for L in ls for R in rs]
    if DEFAULT not in settings:
        settings.append(DEFAULT)
    head = ("| kernel | " + " | ".join(f"L={_label(L)} R={_label(R)}" for L, R in settings) +
            " | distinct codes | best | default/best |")
    rows = [head, "|" + "---|" * (len(settings) + 4)]
    for name in KERNELS:
        row = kernel_row(name, settings, 15 if quick else 25)
        times, same = row["times"], row["same"]
        ok = {k: v for k, v in times.items() if isinstance(v, float)}
        best = min(ok, key=lambda s: (ok[s], s not in same)) if ok else None   # the default wins ties
        cells = [(f"{v * 1e3:.3f} ms" + (" =" if s in same and s != DEFAULT else "")) if isinstance(v, float)
                 else v for s, v in times.items()]
        ratio = f"{ok[DEFAULT] / ok[best]:.2f}×" if best and DEFAULT in ok else "-"
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {row['distinct']} | "
                    f"{_name(best, same)} | {ratio} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a 3×3 grid and fewer repeats")
    print(run(p.parse_args(argv).quick))


if __name__ == "__main__":
    main()

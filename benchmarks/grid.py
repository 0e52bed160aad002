"""The (L, R) grid: gradient time of every SOI selection on kernels/, and which one is best.

Not a unit test: run ``python -m benchmarks.grid [--quick]``.  For each
kernel (at its smallest benchmark size) and each (L, R) in the grid it
compiles ``coarsen(fn, max_soi=L, reuse=R)``, checks the gradient agrees
with the default selection's, and times ``grad`` (best of several
repeats).  It prints a Markdown table, the best setting per kernel and how
far the default (L = ∞, R = 2) is from it.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import coarsen_nb as cn
from kernels import KERNELS, function

GRID_L = (1, 8, 32, math.inf)
GRID_R = (1, 2, 4, math.inf)
QUICK_L = (1, 32, math.inf)
QUICK_R = (1, 2, math.inf)
DEFAULT = (math.inf, 2)


def _label(v) -> str:
    return "∞" if v == math.inf else str(v)


def _time(f, args, repeats: int) -> float:
    f.grad(*args)
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        f.grad(*args)
        best = min(best, time.perf_counter() - t)
    return best


def run(quick: bool) -> str:
    ls, rs = (QUICK_L, QUICK_R) if quick else (GRID_L, GRID_R)
    settings = [(L, R) for L in ls for R in rs]
    if DEFAULT not in settings:
        settings.append(DEFAULT)
    head = "| kernel | " + " | ".join(f"L={_label(L)} R={_label(R)}" for L, R in settings) + " | best | default/best |"
    rows = [head, "|" + "---|" * (len(settings) + 3)]
    for name, mod in KERNELS.items():
        args = mod.make_inputs(mod.META["quick_sizes"][0], seed=0)
        times, ref = {}, None
        for L, R in settings:
            try:
                f = cn.coarsen(function(mod), wrt=mod.META["wrt"], max_soi=L, reuse=R)
                g = np.asarray(f.grad(*args), dtype=float) if len(mod.META["wrt"]) == 1 else \
                    [np.asarray(x, dtype=float) for x in f.grad(*args)]
                ref = g if ref is None else ref
                if not all(np.allclose(a, b, rtol=1e-6, atol=1e-9) for a, b in zip(np.atleast_1d(ref) if
                           len(mod.META["wrt"]) == 1 else ref, np.atleast_1d(g) if len(mod.META["wrt"]) == 1
                           else g, strict=True)):
                    times[(L, R)] = "gradient differs"
                    continue
                times[(L, R)] = _time(f, args, 3 if quick else 7)
            except Exception as e:                     # a setting that does not compile is reported, not hidden
                times[(L, R)] = f"error: {type(e).__name__}"
        ok = {k: v for k, v in times.items() if isinstance(v, float)}
        best = min(ok, key=ok.get) if ok else None
        cells = [f"{v * 1e3:.2f} ms" if isinstance(v, float) else v for v in times.values()]
        ratio = f"{ok[DEFAULT] / ok[best]:.2f}×" if best and DEFAULT in ok else "-"
        rows.append(f"| {name} | " + " | ".join(cells) +
                    f" | {'L=' + _label(best[0]) + ' R=' + _label(best[1]) if best else '-'} | {ratio} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a 3×3 grid and fewer repeats")
    print(run(p.parse_args(argv).quick))


if __name__ == "__main__":
    main()

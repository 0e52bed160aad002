"""Two checkouts of coarsen_nb against each other: each kernel's NumPy-backend gradient over its hand-written one.

Run as ``python -m coarsen_nb.benchmarks.tree_ab BASE_TREE NOW_TREE [--kernels K1,K2] [--rounds R]``.  Each tree
runs in its own worker process (``PYTHONPATH`` that tree, a fresh ``COARSEN_NB_CACHE``, ``OPENBLAS_NUM_THREADS=1``);
a tree's kernels are ``coarsen_nb.kernels.NAME`` or, in an older checkout, ``kernels.NAME``.  For each kernel at
its largest size both workers first check their gradient against the hand-written one (rtol 1e-6 of its
largest element), then time ``f.grad`` and the hand-written gradient in ``--rounds`` rounds, the trees' order
alternating; a figure is the best batch of ~4 ms over the rounds (the one least moved by other load on a shared
machine), the ratio is to the hand-written gradient of the same process.  Issue 13's "NumPy ratios no worse
than the issue's base" was measured with it (RESULTS.md, stop 38).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SIZES = {"bgd_hyperopt": 2000, "black_scholes": 10**6, "brachistochrone": 1000, "gmm": 10**5, "hmc": 10**5,
         "hookean_spring": 40, "horner_fit": 10**5, "logreg_nll": 10**5, "pairwise_energy": 1000, "pendulum": 10**5,
         "piecewise_sum": 10**5, "rosenbrock": 10**5}

_WORKER = r'''
import importlib, json, sys, time
import numpy as np
import coarsen_nb as cn

def load(kernel):
    try:
        return importlib.import_module(f"coarsen_nb.kernels.{kernel}")
    except ImportError:
        return importlib.import_module(f"kernels.{kernel}")

def tup(g):
    return tuple(np.asarray(x, dtype=float) for x in (g if isinstance(g, tuple) else (g,)))

def best(fn, budget=0.004):
    fn(); t0 = time.perf_counter(); fn(); one = time.perf_counter() - t0
    reps = max(1, int(budget / max(one, 1e-7)))
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps

state = {}
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "setup":
        mod = load(cmd[1]); args = mod.make_inputs(int(cmd[2]))
        kw = {"backend": "numpy"} if "backend" in cn.coarsen.__code__.co_varnames else {}
        f = cn.coarsen(getattr(mod, cmd[1]), wrt=tuple(mod.META["wrt"]), **kw)
        state = dict(hand=lambda: mod.grad(*args), ours=lambda: f.grad(*args))
        gh, go = tup(state["hand"]()), tup(state["ours"]())
        err = max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300)) if a.size else 0.0
                  for a, b in zip(gh, go))
        print(json.dumps({"err": err}), flush=True)
    elif cmd[0] == "time":
        print(json.dumps({"hand": best(state["hand"]), "ours": best(state["ours"])}), flush=True)
'''


def compare(trees: dict[str, str], kernels: list[str], rounds: int, progress=print) -> dict:
    """``{kernel: {tree label: {"hand": s, "ours": s}}}``, each the best batch over the rounds."""
    procs = {}
    for label, path in trees.items():
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path), COARSEN_NB_CACHE=tempfile.mkdtemp(),
                   OPENBLAS_NUM_THREADS="1")
        procs[label] = subprocess.Popen([sys.executable, "-c", _WORKER], cwd=path, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def ask(label, line):
        procs[label].stdin.write(line + "\n")
        procs[label].stdin.flush()
        return json.loads(procs[label].stdout.readline())

    out = {}
    labels = list(trees)
    for k in kernels:
        for label in labels:
            err = ask(label, f"setup {k} {SIZES[k]}")["err"]
            if err > 1e-6:
                raise SystemExit(f"{label}'s {k} gradient is off the hand-written one by {err:.2e}")
        best = {label: {"hand": float("inf"), "ours": float("inf")} for label in labels}
        for r in range(rounds):
            for label in labels if r % 2 == 0 else labels[::-1]:
                got = ask(label, "time")
                for m in got:
                    best[label][m] = min(best[label][m], got[m])
        out[k] = best
        if progress:
            a, b = (best[label]["ours"] / best[label]["hand"] for label in labels)
            cells = [f"{best[label]['hand'] * 1e3:.3g} ms, {best[label]['ours'] * 1e3:.3g} ms "
                     f"({best[label]['ours'] / best[label]['hand']:.2f}×)" for label in labels]
            progress(f"| {k} {SIZES[k]} | " + " | ".join(cells) + f" | {b / a:.2f} |")
    for p in procs.values():
        p.stdin.close()
        p.wait()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coarsen_nb.benchmarks.tree_ab", description=__doc__.split("\n")[0])
    parser.add_argument("base")
    parser.add_argument("now")
    parser.add_argument("--kernels", default=",".join(SIZES))
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--json")
    a = parser.parse_args(argv)
    print("| kernel | base: hand-written, coarsen_nb (ratio) | now: hand-written, coarsen_nb (ratio) | now ÷ base |")
    print("|---|---|---|---:|")
    out = compare({"base": a.base, "now": a.now}, a.kernels.split(","), a.rounds)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

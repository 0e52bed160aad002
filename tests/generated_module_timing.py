"""Two checkouts' generated gradients, timed in one process: does a change make the generated code slower?

Issue 13 asks that the NumPy benchmark ratios be no worse after a refactor of the back half.  The harness's
ratios move by more than that between runs on a shared machine, so this tool compares the *generated
modules* instead: each checkout writes every kernel's module (NumPy backend, default selection, largest size),
then one process loads both, checks that their gradients agree, and times them in alternating rounds (best
of 9 batches of at least 50 ms each)::

    PYTHONPATH=/path/to/old/checkout python tests/generated_module_timing.py dump /tmp/old.json
    python tests/generated_module_timing.py dump /tmp/new.json
    OPENBLAS_NUM_THREADS=1 python tests/generated_module_timing.py compare /tmp/old.json /tmp/new.json

Not a test module (no ``test_`` prefix): speed lives in benchmarks, never in timed tests.
"""

from __future__ import annotations

import argparse
import json
import time
import types
import warnings

import numpy as np


def dump(path: str) -> None:
    """Every kernel's generated module, as the importable coarsen_nb writes it, into ``path``."""
    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS, function

    warnings.simplefilter("ignore")
    out = {}
    for name, mod in KERNELS.items():
        size = mod.META["sizes"][-1]
        f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numpy")
        f.grad(*mod.make_inputs(size, seed=0))
        out[name] = {"source": f.source, "name": f.name, "size": size, "coarsen_nb": cn.__file__}
    with open(path, "w") as fh:
        json.dump(out, fh)
    print(f"{len(out)} modules from {cn.__file__} -> {path}")


def _grad(entry: dict, tag: str):
    module = types.ModuleType(tag)
    exec(compile(entry["source"], tag, "exec"), module.__dict__)     # noqa: S102 (our generated module)
    return getattr(module, entry["name"] + "_grad")


def _best(f, args) -> float:
    reps, start = 0, time.perf_counter()
    while True:
        f(*args)
        reps += 1
        if time.perf_counter() - start > 0.05:
            return (time.perf_counter() - start) / reps


def compare(old_path: str, new_path: str, rounds: int = 9) -> None:
    """The table of new/old gradient times, kernel by kernel (gradients checked equal first)."""
    from coarsen_nb.kernels import KERNELS

    with open(old_path) as fh:
        old = json.load(fh)
    with open(new_path) as fh:
        new = json.load(fh)
    print("| kernel | size | new/old | old | new |\n|---|---:|---:|---:|---:|")
    for name in old.keys() & new.keys():
        args = KERNELS[name].make_inputs(old[name]["size"], seed=0)
        f_old, f_new = _grad(old[name], "old_" + name), _grad(new[name], "new_" + name)
        for a, b in zip(f_old(*args), f_new(*args), strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, err_msg=name)
        times: dict = {"old": [], "new": []}
        for _ in range(rounds):
            times["old"].append(_best(f_old, args))
            times["new"].append(_best(f_new, args))
        o, n = min(times["old"]), min(times["new"])
        print(f"| {name} | {old[name]['size']} | {n / o:.2f} | {o * 1e3:.3g} ms | {n * 1e3:.3g} ms |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every kernel's generated module to a JSON file")
    d.add_argument("out")
    c = sub.add_parser("compare", help="time two dumps' gradients in one process")
    c.add_argument("old")
    c.add_argument("new")
    a = p.parse_args()
    dump(a.out) if a.command == "dump" else compare(a.old, a.new)


if __name__ == "__main__":
    main()

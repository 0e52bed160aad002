"""What coarsen_nb's own call path costs around a small compiled gradient (issue 14: the cost of a call).

Run as ``python -m coarsen_nb.benchmarks.call_overhead [--kernels K1,K2] [--backends numpy,numba] [--calls N]
[--rounds R] [--profile]``.

For each kernel at its smallest benchmark size and each backend, three ways to get the same gradient are
timed, interleaved (one loop of ``--calls`` calls of each, then the next round), after checking each one's
gradient against the kernel's hand-written ``grad`` (rtol 1e-6):

* ``f.grad``: the public call, ``f.grad(*args)`` (argument checks, specialization lookup, error mapping);
* ``module``: the generated module's ``NAME_grad`` for that signature, called directly (for numba the
  loader's wrapper around Numba's dispatcher);
* ``dispatcher`` (numba only): Numba's dispatcher itself, the floor.

Each figure is the median over the rounds of the µs per call; ``overhead`` is ``f.grad`` less ``module``,
what the runtime adds.  The machine is shared and noisy: compare figures of one run, not across runs.
``--profile`` also prints cProfile's ten most expensive functions of a loop of ``f.grad``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

DEFAULT_KERNELS = ("brachistochrone", "hookean_spring", "pendulum")


def _same(got, expected) -> bool:
    import numpy as np

    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    return len(got) == len(expected) and all(
        np.allclose(g, e, rtol=1e-6, atol=1e-9) for g, e in zip(got, expected, strict=True))


def methods(name: str, backend: str) -> tuple[dict, tuple]:
    """``({method: callable}, args)`` for ``name`` at its smallest size under ``backend``, each callable's
    gradient checked against the hand-written one."""
    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS

    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["sizes"][0])
    f = cn.coarsen(getattr(mod, name), wrt=tuple(mod.META["wrt"]), backend=backend)
    expected = mod.grad(*args)
    f.grad(*args)
    compiled = f._specialize(args)          # (the specialization f.grad runs: its generated function)
    if compiled.grad is None:
        raise RuntimeError(f"{name} has no gradient-only function under {backend}")

    def module(*a):
        grads = compiled.grad(*a)
        return grads[0] if len(grads) == 1 else grads

    found = {"f.grad": f.grad, "module": module}
    dispatcher = getattr(compiled.grad, "dispatcher", None)
    if dispatcher is not None:
        def numba_floor(*a):
            grads = dispatcher(*a)
            return grads[0] if len(grads) == 1 else grads

        found["dispatcher"] = numba_floor
    for method, fn in found.items():
        if not _same(fn(*args), expected):
            raise AssertionError(f"{name} ({backend}, {method}): the gradient differs from the hand-written one")
    return found, args


def _per_call(fn, args: tuple, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls * 1e6


def measure(names, backends, calls: int, rounds: int) -> list[dict]:
    """One row per (kernel, backend): the median µs per call of each method, methods interleaved."""
    setups = {(n, b): methods(n, b) for n in names for b in backends}
    times: dict = {key: {m: [] for m in found} for key, (found, _) in setups.items()}
    for _ in range(rounds):
        for key, (found, args) in setups.items():
            for method, fn in found.items():
                times[key][method].append(_per_call(fn, args, calls))
    rows = []
    for (name, backend), per_method in times.items():
        row = dict(kernel=name, backend=backend, **{m: statistics.median(v) for m, v in per_method.items()})
        row["overhead"] = row["f.grad"] - row["module"]
        rows.append(row)
    return rows


def profile(names, backends, calls: int) -> None:
    import cProfile
    import pstats

    for name in names:
        for backend in backends:
            found, args = methods(name, backend)
            print(f"\n## {name}, {backend}: f.grad, {calls} calls")
            prof = cProfile.Profile()
            prof.runcall(_per_call, found["f.grad"], args, calls)
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coarsen_nb.benchmarks.call_overhead",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help="comma-separated kernel names")
    parser.add_argument("--backends", default="numpy,numba", help="comma-separated backends")
    parser.add_argument("--calls", type=int, default=100_000, help="calls in one timed loop")
    parser.add_argument("--rounds", type=int, default=3, help="timed loops of each method (median reported)")
    parser.add_argument("--profile", action="store_true", help="also print cProfile's view of f.grad")
    options = parser.parse_args(argv)
    names, backends = options.kernels.split(","), options.backends.split(",")
    from coarsen_nb.backends import BACKENDS
    from coarsen_nb.kernels import NAMES

    unknown = [n for n in names if n not in NAMES] + [b for b in backends if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown kernels or backends: {', '.join(unknown)}")
    rows = measure(names, backends, options.calls, options.rounds)
    print(f"µs per call, median of {options.rounds} interleaved loops of {options.calls} calls "
          "(a shared, noisy machine: compare within one run)")
    print("| kernel | backend | f.grad | module | dispatcher | overhead (f.grad - module) |\n"
          "|---|---|---:|---:|---:|---:|")
    for r in rows:
        floor = f"{r['dispatcher']:.2f}" if "dispatcher" in r else "–"
        print(f"| {r['kernel']} | {r['backend']} | {r['f.grad']:.2f} | {r['module']:.2f} | {floor} | "
              f"{r['overhead']:.2f} |")
    if options.profile:
        profile(names, backends, min(options.calls, 20_000))
    return 0


if __name__ == "__main__":
    sys.exit(main())

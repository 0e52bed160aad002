"""How long ``backend="numba"`` takes to get to its first gradient, cold and warm (issue 14: "compile plus first
call ≤ 2 s for each kernel in a fresh process, and ≤ 0.5 s with a warm cache").

Run as ``python -m coarsen_nb.benchmarks.compile_times [--kernels K1,K2] [--size N] [--timeout S] [--json OUT]
[--primed-by KERNEL|warmup] [--base DIR [--rounds R]]``.  With ``--base``, cold starts only, of another tree's
coarsen_nb and of this one, alternately (:func:`compare`).
For each kernel, two fresh Python processes run one after the other with the same, initially empty
``COARSEN_NB_CACHE`` directory: the first is a *cold* start (nothing on disk), the second a *warm* one (a
restarted kernel: the generated module and Numba's machine code from the first are on disk).  Each process
times, separately,

* ``import``: NumPy, Numba and coarsen_nb (what every process pays before anything is compiled);
* ``build``: ``coarsen(fn, backend="numba")`` and the pipeline for the arguments' signature (parse, SSA,
  lifting, selection, lowering, loading the module; a hit in the whole-pipeline cache skips all but loading:
  no parsing, no SymPy, :mod:`coarsen_nb.front_cache`);
* ``compile``: Numba compiling ``NAME_grad`` for the argument types, or loading it from its disk cache;
* ``first call``: the first ``f.grad(*args)`` after that (the compiled code's own run time, at ``--size``);

and checks the gradient against the kernel's hand-written ``grad`` (rtol 1e-6) before it reports anything.
A process that falls back to NumPy code (a ``NumbaFallbackWarning``) or that returns a wrong gradient is
reported as a failure, not timed.  The sum of the four is the issue's "compile plus first call"; the
parent also reports each process's wall time (interpreter start included).

The processes import coarsen_nb from bytecode, as an installed package does (pip writes it at install):
the measured tree is byte-compiled first, and ``PYTHONDONTWRITEBYTECODE`` is not passed on (with it every
process compiled coarsen_nb's 125 modules from source: 0.15 s of "import" that no user pays).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

_CHILD_FLAG = "--child"
PHASES = ("import", "build", "compile", "first call")
#: ``--primed-by warmup``: the cache primed by ``python -m coarsen_nb warmup`` instead of another kernel
WARMUP = "warmup"


def _child(name: str, size: int | None) -> dict:
    """One process's figures (run with ``COARSEN_NB_CACHE`` set by the parent)."""
    import warnings

    t0 = time.perf_counter()
    import numba  # noqa: F401
    import numpy as np

    import coarsen_nb as cn
    from coarsen_nb import numba_loader
    t1 = time.perf_counter()
    from importlib import import_module

    mod = import_module(f"coarsen_nb.kernels.{name}")
    args = mod.make_inputs(size or mod.META["test_size"])
    expected = mod.grad(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", numba_loader.NumbaFallbackWarning)
        t2 = time.perf_counter()
        f = cn.coarsen(getattr(mod, name), wrt=tuple(mod.META["wrt"]), backend="numba")
        compiled = f._specialize(args, "grad")      # the pipeline, and the module f.grad runs loaded (not compiled)
        t3 = time.perf_counter()
        c3 = time.process_time()
        with _counting_compilations() as compilations:
            if not compiled.grad._compile(args):    # Numba: compile NAME_grad, or load it from disk
                raise RuntimeError(f"Numba cannot compile {name}_grad: {compiled.grad.fallback}")
        t4 = time.perf_counter()
        c4 = time.process_time()
        got = f.grad(*args)
        t5 = time.perf_counter()
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected, strict=True):
        if not np.allclose(g, e, rtol=1e-6, atol=1e-9):
            raise AssertionError(f"{name}: the numba gradient differs from the hand-written one")
    figures = dict(zip(PHASES, (t1 - t0, t3 - t2, t4 - t3, t5 - t4), strict=True))
    figures["cpu"] = time.process_time()         # (the whole process's; steadier than wall time on a loaded machine)
    figures["compile cpu"] = c4 - c3             # (the compile phase's CPU time alone)
    figures["compilations"] = compilations[0]    # (Numba's compilations in it: none where its disk cache serves)
    return figures


@contextlib.contextmanager
def _counting_compilations():
    """Count the functions Numba compiles inside the block (its ``numba:compile`` events; a function loaded
    from Numba's disk cache is not compiled)."""
    from numba.core import event

    count = [0]

    class Counter(event.Listener):
        def on_start(self, ev):
            count[0] += 1

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Counter()):
        yield count


def _run_one(name: str, cache: str, size: int | None, timeout: float, tree: str | None = None) -> dict:
    """One fresh process for ``name`` with ``cache``: its phases, total and wall time, or its error.
    ``tree``: a directory holding another copy of coarsen_nb, which that process imports instead."""
    env = dict(os.environ, COARSEN_NB_CACHE=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree:
        env["PYTHONPATH"] = os.path.abspath(tree)
    _byte_compile(tree)
    command = [sys.executable, "-m", "coarsen_nb.benchmarks.compile_times", _CHILD_FLAG, name]
    if size:
        command += ["--size", str(size)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=tree)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:g} s"}
    wall = time.perf_counter() - start
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        return {"error": lines[-1] if lines else f"exit status {done.returncode}"}
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["total"] = sum(figures[p] for p in PHASES)
    figures["wall"] = wall
    return figures


_COMPILED: set = set()


def _byte_compile(tree: str | None) -> None:
    """coarsen_nb's bytecode in ``tree`` (this package where None), written once per run: what ``pip install``
    leaves beside an installed package's modules."""
    import compileall

    import coarsen_nb

    package = os.path.join(os.path.abspath(tree), "coarsen_nb") if tree else os.path.dirname(coarsen_nb.__file__)
    if package not in _COMPILED:
        compileall.compile_dir(package, quiet=1)
        _COMPILED.add(package)


def measure(names: list[str], size: int | None = None, timeout: float = 180.0, primed_by: str | None = None,
            progress=print) -> dict:
    """``{kernel: {"cold": figures, "warm": figures}}``, each kernel in its own empty cache directory.

    With ``primed_by``, the cold process runs in a directory where that kernel ran first (its process not
    timed): what a new function costs once another one has compiled the shared ``xp`` namespace's
    helpers on this machine (``numba_loader``).  The kernel itself is primed by rosenbrock instead.
    ``primed_by="warmup"``: ``python -m coarsen_nb warmup`` ran there first (:mod:`coarsen_nb.numba_warmup`)."""
    results = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix="coarsen_nb_compile_") as cache:
            if primed_by == WARMUP:
                subprocess.run([sys.executable, "-m", "coarsen_nb", WARMUP], capture_output=True, timeout=timeout,
                               env=dict(os.environ, COARSEN_NB_CACHE=cache), check=True)
            elif primed_by:
                _run_one(primed_by if primed_by != name else "rosenbrock", cache, size, timeout)
            cold = _run_one(name, cache, size, timeout)
            warm = _run_one(name, cache, size, timeout) if "error" not in cold else {"error": "(cold failed)"}
        results[name] = {"cold": cold, "warm": warm}
        if progress:
            progress(_row(name, results[name]))
    return results


def compare(names: list[str], base: str, rounds: int = 2, size: int | None = None, timeout: float = 180.0,
            progress=print) -> dict:
    """``{kernel: {"base": [cold figures], "this": [cold figures]}}``: cold starts of the coarsen_nb in
    ``base`` (another tree, e.g. ``git archive COMMIT | tar -x -C DIR``) and of this one, alternately (which
    goes first alternates by round), each in its own empty cache directory: a change's effect measured on
    a shared machine, where figures taken minutes apart are not comparable."""
    results: dict = {name: {"base": [], "this": []} for name in names}
    for round_ in range(rounds):
        for name in names:
            order = (("base", base), ("this", None)) if round_ % 2 == 0 else (("this", None), ("base", base))
            for label, tree in order:
                with tempfile.TemporaryDirectory(prefix="coarsen_nb_compile_") as cache:
                    results[name][label].append(_run_one(name, cache, size, timeout, tree))
            if progress:
                progress(f"| {name} | round {round_ + 1} | " + " | ".join(
                    _cpu(results[name][label][-1]) for label in ("base", "this")) + " |")
    return results


def _cpu(figures: dict) -> str:
    return figures["error"] if "error" in figures else f"{figures['cpu']:.2f}"


_COLUMNS = (*PHASES, "total", "wall", "cpu")


def _cells(figures: dict) -> list[str]:
    if "error" in figures:
        return [figures["error"]] + [""] * (len(_COLUMNS) - 1)
    return [f"{figures[k]:.2f}" for k in _COLUMNS]


def _row(name: str, r: dict) -> str:
    return "| " + " | ".join([name] + _cells(r["cold"]) + _cells(r["warm"])) + " |"


HEADER = ("| kernel | cold import | build | compile | first call | **total** | wall | cpu "
          "| warm import | build | compile | first call | **total** | wall | cpu |\n"
          "|---|" + "---:|" * 14)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coarsen_nb.benchmarks.compile_times",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    parser.add_argument("--size", type=int, help="the kernels' input size (default: each kernel's test size)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds one process may take")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--primed-by", metavar="KERNEL",
                        help="run KERNEL (or 'warmup': python -m coarsen_nb warmup) in each cache directory first "
                             "(the shared helpers compiled once)")
    parser.add_argument("--base", metavar="DIR",
                        help="compare cold starts with the coarsen_nb in DIR, alternately (CPU seconds)")
    parser.add_argument("--rounds", type=int, default=2, help="with --base: rounds of alternation")
    parser.add_argument(_CHILD_FLAG, metavar="KERNEL", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        print(json.dumps(_child(options.child, options.size)))
        return 0
    from coarsen_nb.kernels import NAMES

    names = options.kernels.split(",") if options.kernels else list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        parser.error(f"unknown kernels: {', '.join(unknown)}")
    if options.primed_by and options.primed_by not in (*NAMES, WARMUP):
        parser.error(f"unknown kernel: {options.primed_by}")
    if options.base:
        print("cold CPU seconds of each process (empty COARSEN_NB_CACHE), alternately")
        print(f"| kernel | round | {options.base} | this tree |\n|---|---|---:|---:|")
        results = compare(names, options.base, options.rounds, options.size, options.timeout)
        if options.json:
            with open(options.json, "w") as out:
                json.dump(results, out, indent=1)
        return 0
    cold = f"after {options.primed_by} in the same one" if options.primed_by else "empty COARSEN_NB_CACHE"
    print(f"seconds; cold: {cold}; warm: a second process with the same one; cpu: the process's CPU time")
    print(HEADER)
    results = measure(names, options.size, options.timeout, options.primed_by)
    if options.json:
        with open(options.json, "w") as out:
            json.dump(results, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

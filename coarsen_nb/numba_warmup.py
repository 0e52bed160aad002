"""``python -m coarsen_nb warmup``: compile the numba backend's shared helpers once per machine, ahead of need.

The helpers every generated numba module calls (``_take``, ``_scatter_add``, ``_put``, ``_flat_as``,
``_sum_to``, the pairwise sum behind ``xp.sum``, ``_trig``, ...) live in one module shared by
all generated modules, and Numba caches what it compiles of them on disk beside that module's file
(:func:`coarsen_nb.numba_loader.shared_module`).  On a machine where nothing was compiled yet, the first
function's cold start still compiles them inside its own compile: 2-4 s of gmm's or pendulum_batch's (issue
14 asks ≤ 2 s).  This command compiles them for the argument types the generated code passes most (float64
C arrays of rank 1 and 2, the constant start 0 and step 1 it prints), so that the first function only loads
them.  Measured by ``python -m coarsen_nb.benchmarks.compile_times --primed-by warmup``.

Why a command rather than a background process started at the first compile (or at ``%load_ext``): a
process compiling beside the user's own compile competes for the same cores (Numba's typing holds the GIL
and its compiler lock, so a thread buys nothing), and two processes that save into one Numba cache index at
once may each number their entry the same (Numba's cache is not made for concurrent writers).  Run it once
after installing, or after upgrading Numba or coarsen_nb (the shared module's text is then another file).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _signatures() -> dict[str, list[tuple]]:
    """helper -> the argument types to compile it for: those the kernels' generated code asks for (gathered
    from Numba's compile events over ``coarsen_nb.kernels``), and their rank-2 forms where the helper has one."""
    from numba.core import types as nt

    f8, i8 = nt.float64, nt.int64
    a1, a2 = nt.Array(f8, 1, "C"), nt.Array(f8, 2, "C")
    zero, one = nt.literal(0), nt.literal(1)
    shape1, shape2 = nt.UniTuple(i8, 1), nt.UniTuple(i8, 2)
    return {
        "_pairwise_sum": [(a1, zero, i8)],
        "_take": [(a1, zero, i8, one)],
        "_scatter_add": [(a1, zero, i8, one, a1)],
        "_put": [(a1, nt.UniTuple(nt.Array(i8, 1, "C"), 1), a1)],
        "_flat_as": [(a1, shape1), (a2, shape2)],
        "_sum_to": [(a1, shape1), (a2, shape2)],
        # (``_exp``/``_log``/``_erf_scalar`` are intrinsics, written into each caller: nothing to compile ahead)
        # (``_sin``/``_cos`` are inlined into the loops that call them: what is compiled once is their ``_trig``, for
        # the constant quarter each passes, as Numba types it)
        "_trig": [(f8, nt.literal(0)), (f8, nt.literal(3))],
        "_ipow": [(f8, i8)],
    }


def warm(progress: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Compile (or load from Numba's disk cache) the shared helpers for their common argument types, in the
    cache directory this process uses (``COARSEN_NB_CACHE``).  Returns helper -> seconds it took.
    Raises ``ImportError`` where Numba is not installed."""
    import numba  # noqa: F401 (ImportError: the command says to install it)

    from coarsen_nb import backends, numba_loader

    shared = numba_loader.shared_module(backends.NUMBA.prologue.strip("\n"))
    seconds = {}
    for name, signatures in _signatures().items():
        start = time.perf_counter()
        for signature in signatures:
            shared.__dict__[name].compile(signature)
        seconds[name] = time.perf_counter() - start
        if progress:
            progress(name, seconds[name])
    return seconds


def main(argv: list[str] | None = None) -> int:
    """The command: compile, print each helper's seconds; 0, or 2 where Numba is not installed."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m coarsen_nb warmup", description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    from coarsen_nb import numba_loader

    print(f"compiling the numba backend's shared helpers into {numba_loader.cache_dir()}")
    try:
        seconds = warm(lambda name, s: print(f"  {name}: {s:.2f} s"))
    except ImportError:
        print("coarsen-nb: warmup needs Numba (pip install numba)", file=sys.stderr)
        return 2
    print(f"done in {sum(seconds.values()):.1f} s")
    return 0

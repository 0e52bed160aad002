"""glibc's malloc told once, when a numba module loads, to keep freed arrays of up to 32 MB for reuse.

Why: Numba allocates every array a compiled function returns or uses as a temporary with ``malloc`` and
frees it with ``free`` at the end of the call.  glibc serves a request over its mmap threshold (128 kB at
start, raised to the size of the largest mmapped chunk freed so far) with a fresh ``mmap``, and returns the
top of its heap to the system whenever more than twice that threshold is free there (``M_TRIM_THRESHOLD``).
A gradient holds several arrays of the same length at once (conv1d at 10**5 samples: the cotangents, the
forward values, the correlation's result, the glue's copies, 800 kB each), frees them all on return, and
the heap's top, 2 to 5 MB, is over the trim threshold: glibc gives it back, and the next call takes every
page again through a page fault the kernel zero-fills.  Measured (``getrusage``, 300 calls, load 5–8 on
2 cores): 554–913 minor faults per call, 0.5–0.9 ms of system time, of a 1.1–1.5 ms gradient; with the
settings below no fault at all and 0.53–0.55 ms (the hand-written NumPy gradient in the same process:
0.42 ms; JAX's allocator keeps its buffers, which was much of what JAX was ahead by).

The settings are the state glibc's own heuristic reaches after a program frees one mmapped array of
32 MB (its largest dynamic threshold, ``DEFAULT_MMAP_THRESHOLD_MAX``): arrays up to 32 MB come from the heap,
and up to 64 MB of free memory stays at its top instead of going back to the system.  Larger arrays are
still mmapped and unmapped.  What it costs: a process keeps up to 64 MB more resident after its peak than
it would have otherwise.  ``COARSEN_NB_MALLOC=system`` leaves malloc as it is; where the C library is not
glibc (macOS, musl, Windows) nothing is done, nor where glibc's own ``MALLOC_*_`` variables of these
settings are in the environment (the user's choice stands).  Set once per process, by the numba loader.
"""

from __future__ import annotations

import ctypes
import os
import platform

#: glibc's ``mallopt`` parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: arrays up to this many bytes come from the heap and are reused (glibc's largest dynamic threshold)
MMAP_THRESHOLD = 32 << 20
#: free memory at the heap's top kept for reuse instead of being returned to the system
TRIM_THRESHOLD = 64 << 20
#: the environment variable that leaves malloc's own settings (value ``system``)
SWITCH = "COARSEN_NB_MALLOC"
#: glibc's own variables for these settings: where the user set one, theirs stand
GLIBC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_done: bool | None = None


def keep_freed_memory() -> bool:
    """Tell glibc's malloc the thresholds above, once per process; True where they are in force (set now or
    before), False where nothing was done (switched off, the user's own settings, not glibc, mallopt failed)."""
    global _done
    if _done is None:
        _done = _apply()
    return _done


def _apply() -> bool:
    if os.environ.get(SWITCH, "").strip().lower() == "system":
        return False
    if any(v in os.environ for v in GLIBC_VARIABLES):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # (the mmap threshold first: setting either fixes both, and glibc stops adjusting them)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))

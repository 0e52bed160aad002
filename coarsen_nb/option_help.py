"""The help of the compile options, shared by the ``%%coarsen`` magic and the ``coarsen-nb`` command.

One text per option, so that the two never disagree about what an option
does or what its default is (they did: the magic said ``--wrt`` defaulted to
"all", the command "floats", where both take every float parameter, as
:func:`coarsen_nb.coarsen` does).  The defaults of L and R are those of
:mod:`coarsen_nb.soi.select`, read from there.
"""

from __future__ import annotations

from coarsen_nb.soi.select import DEFAULT_MAX_SOI, DEFAULT_REUSE


def _knob(value) -> str:
    return "no cap" if value is None else str(value)


WRT = "parameters to differentiate with respect to, comma-separated (default: every float parameter)"
BACKEND = ("where the generated code runs: numba (the same code compiled: loops and scalar code at machine "
           "speed; an export needs NumPy and Numba), numpy (an export needs only NumPy) or cupy (a GPU). "
           "Default: auto, which is $COARSEN_NB_BACKEND where set, else numba where Numba imports, else numpy")
MAX_SOI = f"size cap L of a segment of interest; 1 is operator-level AD (default: {_knob(DEFAULT_MAX_SOI)})"
REUSE = (f"reuse threshold R: a value read more than R times is computed once, not inlined "
         f"(default: {_knob(DEFAULT_REUSE)})")
PER_BLOCK = "never let an SOI cross a basic block (the per-block AD baseline)"
PARALLEL = ("numba backend: run the fused loops whose iterations are independent (elementwise maps, sums, "
            "products) on threads (numba.prange; NUMBA_NUM_THREADS sets how many)")
OVERWRITE = "allow --export to replace an existing file"

"""Loop states the numba tape need not store: a state whose next value is an input element at the counter.

A filter keeps the previous input sample as a state (``x1 = x[i]`` at the end of its body, read as
``b1 * x1`` in the next iteration).  Its value at the start of iteration k is ``x[start + k - 1]`` — the
element iteration k - 1 read — and at the start of iteration 0 its initial value.  The array is still
there in the reverse sweep, unchanged, so the tape (:class:`coarsen_nb.lower.numba_tape.ArrayTape`) keeps
no array for such a state: the reverse sweep loads the element again (``x1 = x[start + k - 1] if k > 0
else first``, ``first`` the state's value before the loop, kept in a scalar).  On the IIR filter of
``benchmarks/scalar_loops`` that halves the tape (800 kB less written and read back per call at 10⁵
samples), the difference between the tape and the input fitting the core's cache or not.

The element read back is the one the forward sweep read (the same index, ``start + k - 1`` being the
counter's value at iteration k - 1, negative indices wrapping alike); the conditions make it the same
number: the counter is the tape's (stepped by ``+ 1`` from ``start``), the read's only index is the
counter itself, the array is neither a state of the loop nor defined inside it (nothing in the loop
writes it), and the state's kind is the array's element kind (float, int or bool).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.plan import IterStep, KernelStep


def element_states(writer, s: IterStep, kinds: dict[str, str], counter: str) -> dict[str, str]:
    """{state: the array (its SSA name)} for each state of ``kinds`` (the loop ``s``'s stored states and
    their kinds) whose next value is that array's element at ``counter`` (module docstring)."""
    inside = {n for n, _, _ in s.mus} | set(writer._defined(list(s.header) + list(s.body)))
    out = {}
    for n, _, nxt in s.mus:
        if n not in kinds or not hasattr(nxt, "id"):
            continue
        array = _element_at_counter(s, nxt.id, counter)
        t = writer.plan.types.get(array) if array is not None else None
        if array is not None and array not in inside and t is not None and t.ndim == 1 and t.kind == kinds[n]:
            out[n] = array
    return out


def _element_at_counter(s: IterStep, name: str, counter: str) -> str | None:
    """The array whose element at ``counter`` the body's top-level kernel assigns to ``name``, or None."""
    for st in s.body:
        if not (isinstance(st, KernelStep) and name in st.kernel.output_names):
            continue
        kernel = st.kernel
        expr = kernel.exprs()[name]
        read = next((r for r in kernel.reads if r.symbol == expr), None) if isinstance(expr, sp.Symbol) else None
        if read is None or len(read.index) != 1:
            return None
        index = read.index[0]
        if isinstance(index, sp.Symbol) and kernel.scalars.get(index) == counter:
            return read.array
        return None
    return None

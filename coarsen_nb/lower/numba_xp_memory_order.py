"""More of the numba ``xp`` namespace: an element loop over a matrix in the matrix's own memory order.

An element loop of the numba backend reads its arrays as one flat row-major row each (``xp.flat_as``) and
returns each result reshaped to the loop's shape, C-ordered.  Over a transposed view (``X.T``, ``np.transpose(T,
(1, 0, 2))``) that row is a strided gather into a copy, and the result is C-ordered where the view was not: the
adjoint added back through the inverse transpose (``b_X += xp.transpose(b_T_X)``) is strided again.  NumPy's
elementwise operators run in the operand's memory order and give the result the operand's strides (order
``'K'``), so both passes are sequential there (the matrix corpora's ``transposes``, ``transpose_method_axes``:
benchmarks/RESULTS.md, stop 45, rows20).

So an element loop that reads one array of two axes or more (``numba_loops``) flattens it with
``memory_flat(x)``: x's axes ordered from the largest stride to the smallest (a stable sort: equal strides keep
their order), the view transposed so, as one C-ordered row (the view itself where it is contiguous, else a
copy in that order).  Each result is ``memory_shaped(out, x)``: the row reshaped to the permuted shape and
transposed back, so it has x's shape and x's memory order.  Each element is computed from the same element as
before, by the same operations: the values are the same; only the order the loop visits them and the result's
strides change.  Where x's type says C-contiguous both are what the loop printed before (``x.reshape(-1)``,
``out.reshape(x.shape)``, typed 'C'), so code over C arrays types as it did.

In a generated module this file's text follows the other numba_xp files' (``Backend.prologue``); it is also
importable, for the tests.  NumPy and Numba only; no ``__future__`` import.
"""

# <own-module>
from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001

_implements, _np, _nt, xp = _base._implements, _base._np, _base._nt, _base.xp
# </own-module>


def _axes_by_stride_lines(rank, indent="    "):
    """Lines that set ``a0 .. a{rank-1}`` to x's axes from the largest stride to the smallest: a bubble sort of
    the strides, swapping only where the later is larger (so equal strides, the axes of length 1 among
    them, keep their order)."""
    axes = [f"a{k}" for k in range(rank)]
    strides = [f"s{k}" for k in range(rank)]
    # (by the strides' size: a reversed axis's is negative)
    lines = [f"{indent}{s} = abs(x.strides[{k}])" for k, s in enumerate(strides)]
    lines += [f"{indent}{', '.join(axes)}, = {tuple(range(rank))}"]
    for done in range(rank - 1):
        for k in range(rank - 1 - done):
            lines += [f"{indent}if s{k} < s{k + 1}:",
                      f"{indent}    s{k}, s{k + 1}, a{k}, a{k + 1} = s{k + 1}, s{k}, a{k + 1}, a{k}"]
    return lines


def _memory_compiled(lines, name):
    namespace = {"_np": _np}
    exec("\n".join(lines), namespace)
    return namespace[name]


def _in_c_order(x) -> bool:
    return x.layout == "C" or x.ndim < 2


@_implements("memory_flat", cache=False)
def _memory_flat(x):
    """``memory_flat(x)``: x's elements as one C-ordered row, in x's memory order (see the module's doc)."""
    if not isinstance(x, _nt.Array):
        return None
    if _in_c_order(x):
        lines = ["def memory_flat(x):", "    return x.reshape(-1)" if x.ndim != 1 else "    return x"]
        return _memory_compiled(lines, "memory_flat")
    rank = x.ndim
    axes = ", ".join(f"a{k}" for k in range(rank))
    lines = ["def memory_flat(x):", *_axes_by_stride_lines(rank),
             f"    return _np.ascontiguousarray(x.transpose(({axes},))).reshape(-1)"]
    return _memory_compiled(lines, "memory_flat")


@_implements("memory_shaped", cache=False)
def _memory_shaped(out, x):
    """``memory_shaped(out, x)``: ``memory_flat(x)``'s row of results ``out`` as an array of x's shape, in x's
    memory order (a view of ``out``)."""
    if not (isinstance(out, _nt.Array) and isinstance(x, _nt.Array)):
        return None
    if _in_c_order(x):
        return _memory_compiled(["def memory_shaped(out, x):", "    return out.reshape(x.shape)"], "memory_shaped")
    rank = x.ndim
    shape = ", ".join(f"x.shape[a{k}]" for k in range(rank))
    # (the inverse permutation: axis k of x is axis j of the permuted view where a_j == k)
    inverse = ", ".join(" ".join(f"{j} if a{j} == {k} else" for j in range(rank - 1)) + f" {rank - 1}"
                        for k in range(rank))
    lines = ["def memory_shaped(out, x):", *_axes_by_stride_lines(rank),
             f"    return out.reshape(({shape},)).transpose(({inverse},))"]
    return _memory_compiled(lines, "memory_shaped")

# <own-module>
"""More of the numba ``xp`` namespace: ``zeros`` and ``zeros_like`` of float64 as a loop nest over ``empty``.

Numba's ``np.zeros`` and ``np.zeros_like`` are each an implementation of their own over others (``empty`` or
``empty_like``, then the ``_zero_fill`` method's memset): two or three functions to type and lower in every
fresh process that calls them, for an entry point's glue (pendulum_batch's ``omega = np.zeros_like(theta0)``,
conv1d's adjoints ``zeros(x.shape)``).  For float64, the common case, here each is ``out = _np.empty(shape)``
then a loop nest storing 0.0 (1-D: ``empty(n)``, the very call the generated loop functions make for their
outputs, so one compiled implementation of Numba's serves both); LLVM makes the loop a memset (an overload's
implementation has no bounds checks).  The values are NumPy's (+0.0 everywhere, float64, C order).
Any other argument (another dtype, a number to ``zeros_like``, a 0-d shape) is Numba's own function, as before.

As numba_xp_axes, the text is pasted after the files before it in ``Backend.prologue`` (this block left out);
imported on its own (the tests), it takes numba_xp's names.  NumPy and Numba only; no ``__future__`` import.
"""

from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001

_implements, _omitted, _np, _nt, xp = _base._implements, _base._omitted, _base._np, _base._nt, _base.xp
# </own-module>


def _is_float64(dtype):
    """``dtype`` (a type Numba gives a dtype argument: ``xp.float64``, ``float``, ``np.dtype('float64')``) is
    float64's."""
    if isinstance(dtype, _nt.NumberClass):
        return dtype.instance_type == _nt.float64
    if isinstance(dtype, _nt.DType):
        return dtype.dtype == _nt.float64
    return isinstance(dtype, _nt.Function) and dtype.typing_key is float


def _zeroed(name, rank, shape):
    """``def name(ARG, dtype=None)``: ``_np.empty(shape)`` (``shape`` an expression of ARG) then a loop nest over its
    ``rank`` axes storing 0.0 (1-D: ``shape`` is the number of elements, so that ``empty(n)`` is the loops' call)."""
    arg = "a" if name == "zeros_like" else "shape"
    lines = [f"def {name}({arg}, dtype=None):", f"    out = _np.empty({shape})"]
    sizes = [f"out.shape[{axis}]" for axis in range(rank)]
    lines += [f"    {'    ' * axis}for i{axis} in range({size}):" for axis, size in enumerate(sizes)]
    lines += [f"    {'    ' * rank}out[{', '.join(f'i{axis}' for axis in range(rank))}] = 0.0", "    return out"]
    namespace = {"_np": _np}
    exec("\n".join(lines), namespace)
    return namespace[name]


@_implements("zeros", cache=False)
def _zeros(shape, dtype=None):
    """``zeros(shape)``: float64 zeros of ``n`` (a number) or of a tuple of lengths as a loop nest; else Numba's
    own."""
    if _omitted(dtype) or _is_float64(dtype):
        # (a negative length raises in ``empty``, NumPy's ValueError)
        if isinstance(shape, _nt.Integer):
            return _zeroed("zeros", 1, "shape")
        if isinstance(shape, _nt.UniTuple) and shape.count >= 1 and isinstance(shape.dtype, _nt.Integer):
            return _zeroed("zeros", shape.count, "shape[0]" if shape.count == 1 else "shape")
    if _omitted(dtype):
        def numba_own(shape, dtype=None):
            return _np.zeros(shape)
        return numba_own

    def numba_own_typed(shape, dtype=None):
        return _np.zeros(shape, dtype)
    return numba_own_typed


@_implements("zeros_like", cache=False)
def _zeros_like(a, dtype=None):
    """``zeros_like(a)``: for a float64 array of rank 1 or more (or any array and float64), its shape in zeros as a
    loop nest; else Numba's own."""
    if isinstance(a, _nt.Array) and a.ndim >= 1 and (
            (_omitted(dtype) and a.dtype == _nt.float64) or (not _omitted(dtype) and _is_float64(dtype))):
        return _zeroed("zeros_like", a.ndim, "a.shape[0]" if a.ndim == 1 else "a.shape")
    if _omitted(dtype):
        def numba_own(a, dtype=None):
            return _np.zeros_like(a)
        return numba_own

    def numba_own_typed(a, dtype=None):
        return _np.zeros_like(a, dtype)
    return numba_own_typed

# <own-module>
"""More of the numba ``xp`` namespace: ``zeros`` and ``zeros_like`` of a 1-D float array as a loop over ``empty(n)``.

Numba's ``np.zeros`` and ``np.zeros_like`` are each an implementation of their own over others (``empty`` or
``empty_like``, then the ``_zero_fill`` method's memset): two or three functions to type and lower in every
fresh process that calls them, for an entry point's glue (pendulum_batch's ``omega = np.zeros_like(theta0)``,
conv1d's adjoints ``zeros(x.shape)``).  For the common case, a 1-D array of floats, here each is
``out = _np.empty(n)`` then a loop storing 0.0: the very ``empty(n)`` the generated loop functions call for
their outputs, so one compiled implementation of Numba's serves both, and LLVM makes the loop a memset (an
overload's implementation has no bounds checks).  The values are NumPy's (+0.0 everywhere, float64, C order).
Any other argument (another rank or dtype, a number) is Numba's own function, as before.

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


@_implements("zeros", cache=False)
def _zeros(shape, dtype=None):
    """``zeros(shape)``: a float64 vector of ``n`` (a number or a 1-tuple) zeros as a loop; else Numba's own."""
    vector = isinstance(shape, _nt.Integer) or (isinstance(shape, _nt.UniTuple) and shape.count == 1
                                                 and isinstance(shape.dtype, _nt.Integer))
    if vector and (_omitted(dtype) or _is_float64(dtype)):
        # (a negative length raises in ``empty``, NumPy's ValueError)
        if isinstance(shape, _nt.Integer):
            def of_length(shape, dtype=None):
                out = _np.empty(shape)
                for i in range(shape):
                    out[i] = 0.0
                return out
            return of_length

        def of_shape(shape, dtype=None):
            out = _np.empty(shape[0])
            for i in range(shape[0]):
                out[i] = 0.0
            return out
        return of_shape
    if _omitted(dtype):
        def numba_own(shape, dtype=None):
            return _np.zeros(shape)
        return numba_own

    def numba_own_typed(shape, dtype=None):
        return _np.zeros(shape, dtype)
    return numba_own_typed


@_implements("zeros_like", cache=False)
def _zeros_like(a, dtype=None):
    """``zeros_like(a)``: for a 1-D float64 array (or a 1-D array and float64), its length in zeros as a loop;
    else Numba's own."""
    if isinstance(a, _nt.Array) and a.ndim == 1 and (
            (_omitted(dtype) and a.dtype == _nt.float64) or (not _omitted(dtype) and _is_float64(dtype))):
        def of_vector(a, dtype=None):
            out = _np.empty(a.shape[0])
            for i in range(a.shape[0]):
                out[i] = 0.0
            return out
        return of_vector
    if _omitted(dtype):
        def numba_own(a, dtype=None):
            return _np.zeros_like(a)
        return numba_own

    def numba_own_typed(a, dtype=None):
        return _np.zeros_like(a, dtype)
    return numba_own_typed

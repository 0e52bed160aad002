# <own-module>
"""More of the numba ``xp`` namespace: ``empty``, ``zeros`` and ``zeros_like`` as intrinsics, written into the caller.

Numba's ``np.empty`` is an ``@overload`` whose implementation Numba compiles in every fresh process (~0.05 s), over
the allocator it compiles per error model of its caller (~0.025 s); ``np.zeros`` (or the loop nest over it this
file wrote before, ~0.035 s) another.  Every generated gradient allocates (an entry point's ``xp.zeros(x.shape)``,
a loop function's ``xp.empty(n)``, the xp implementations' outputs), so every cold start paid them.  Here each is
an intrinsic: Numba types the call (the shape an integer or a tuple of integers, the dtype as ``np.empty`` reads
it, float64 where none is given) and the code is written into the caller, Numba's own ``np.empty`` code with its
allocator called directly (:func:`_allocated`), then for the zeros a memset of the data as Numba's ``np.zeros``
does.  The arrays are C-ordered; ``zeros_like`` too (NumPy's keeps an F-ordered argument's order: the values are
the same); ``zeros_like`` of a number is a 0-d array, as NumPy's.

The lengths stored in the array are hidden from LLVM (:func:`_opaque`), as they were behind Numba's ``np.empty``
call: a chunk buffer's constant length 256 written in made black_scholes' gradient 23 -> 58 ms.  Numba indexes
``terms[k - chunk]`` with a wraparound ``select(i < 0, n, 0)``; with ``n`` a known power of two, InstCombine
rewrites it as ``(i >> 55) & 256`` before the loop passes prove ``i >= 0``, which they then cannot undo, and the
vectorizer cannot bound the stores ("cannot identify array bounds"): the loop stayed scalar.

As numba_xp_axes, the text is pasted after the files before it in ``Backend.prologue`` (this block left out);
imported on its own (the tests), it takes numba_xp's names.  NumPy and Numba only; no ``__future__`` import.
"""

from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001

_omitted, _np, _nt, xp = _base._omitted, _base._np, _base._nt, _base.xp
# </own-module>

import numba.extending  # noqa: E402
from llvmlite import ir as _llvm_ir  # noqa: E402
from numba.core import cgutils as _cgutils  # noqa: E402
from numba.core.typing.npydecl import parse_dtype as _parse_dtype  # noqa: E402
from numba.core.typing.npydecl import parse_shape as _rank_of_shape  # noqa: E402
from numba.np.arrayobj import get_itemsize as _itemsize  # noqa: E402
from numba.np.arrayobj import make_array as _make_array  # noqa: E402
from numba.np.arrayobj import populate_array as _populate  # noqa: E402


def _element_type(dtype, default):
    """The Numba type of the elements a ``dtype`` argument asks for (``xp.float64``, ``float``, ``x.dtype``, a
    dtype's name), ``default`` where it is omitted; None where it names none."""
    if _omitted(dtype):
        return default
    if isinstance(dtype, _nt.Function) and dtype.typing_key is float:
        return _nt.float64
    return _parse_dtype(dtype)


def _dtype_argument(dtype):
    """The type of the call's ``dtype`` argument in its signature: an omitted one too (Numba passes the default
    of an omitted parameter by its type)."""
    return _nt.Omitted(None) if dtype is None else dtype


def _opaque(builder, value):
    """``value`` through an empty inline assembly, which LLVM cannot see through: an array's lengths are then
    what they are behind Numba's own ``np.empty`` call, numbers LLVM knows nothing of, so that a length that is a
    constant power of two does not turn the wraparound of a signed index into bit arithmetic that the loop passes
    cannot analyse (see the module's docstring).  The assembly emits no instruction; ``"=r,0"``: the output is
    the input's register."""
    return builder.asm(_llvm_ir.FunctionType(value.type, [value.type]), "", "=r,0", [value], False)


def _allocated(context, builder, array_type, shapes, fill):
    """A new C-ordered array of ``array_type`` and ``shapes`` (lowered lengths), its bytes zeroed where ``fill``:
    the code of Numba's ``np.empty`` (``arrayobj._empty_nd_impl``: a negative length's and the size's overflow
    checks, with NumPy's messages (Numba's says "negative dimensions not allowed"),
    the aligned allocation), then ``np.zeros``' memset.  Numba's reaches the allocator through a function it
    compiles per error model of the caller (``_call_allocator``: ``Array._allocate``, whose code is this one
    call); here the call is written directly, so a loop function (NumPy's error model) and an entry point
    (Python's) compile nothing for it."""
    intp = context.get_value_type(_nt.intp)
    for s in shapes:
        with builder.if_then(builder.icmp_signed("<", s, _llvm_ir.Constant(intp, 0)), likely=False):
            context.call_conv.return_user_exc(builder, ValueError, ("negative dimensions are not allowed",))
    itemsize = context.get_constant(_nt.intp, _itemsize(context, array_type))
    length, overflow = context.get_constant(_nt.intp, 1), _llvm_ir.Constant(_llvm_ir.IntType(1), 0)
    for s in shapes:
        product = builder.smul_with_overflow(length, s)
        length = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    strides = [itemsize]
    for s in reversed(shapes[1:]):
        strides.append(builder.mul(strides[-1], s))
    strides = tuple(reversed(strides)) if shapes else ()
    size = builder.smul_with_overflow(length, itemsize)
    overflow = builder.or_(overflow, builder.extract_value(size, 1))
    with builder.if_then(overflow, likely=False):
        context.call_conv.return_user_exc(builder, ValueError, (
            "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.",))
    align = context.get_constant(_nt.uint32, context.get_preferred_array_alignment(array_type.dtype))
    meminfo = context.nrt.meminfo_alloc_aligned(builder, builder.extract_value(size, 0), align)
    pointer = context.get_data_type(array_type.dtype).as_pointer()
    data = builder.bitcast(context.nrt.meminfo_data(builder, meminfo), pointer)
    array = _make_array(array_type)(context, builder)
    shapes = [_opaque(builder, s) for s in shapes]
    _populate(array, data=data, shape=_cgutils.pack_array(builder, shapes, ty=intp),
              strides=_cgutils.pack_array(builder, strides, ty=intp), itemsize=itemsize, meminfo=meminfo)
    if fill:
        _cgutils.memset(builder, array.data, builder.extract_value(size, 0), 0)
    return array._getvalue()


def _lengths(context, builder, shape_type, shape):
    """The lowered lengths (intp) of a ``shape`` argument, an integer or a tuple of integers (checked where they
    are used: :func:`_allocated`)."""
    if isinstance(shape_type, _nt.Integer):
        return [context.cast(builder, shape, shape_type, _nt.intp)]
    values = _cgutils.unpack_tuple(builder, shape, count=shape_type.count)
    return [context.cast(builder, v, t, _nt.intp) for v, t in zip(values, shape_type, strict=True)]


def _allocation(fill):
    """The typing and code of ``empty(shape, dtype=None)`` (``fill`` False) or ``zeros`` (True)."""
    def typing(typingctx, shape, dtype=None):
        element, rank = _element_type(dtype, _nt.float64), _rank_of_shape(shape)
        if element is None or rank is None:
            return None
        array_type = _nt.Array(element, rank, "C")

        def code(context, builder, signature, args):
            shapes = _lengths(context, builder, signature.args[0], args[0])
            return _allocated(context, builder, signature.return_type, shapes, fill)
        return array_type(shape, _dtype_argument(dtype)), code
    return typing


def _zeros_like(typingctx, a, dtype=None):
    """``zeros_like(a, dtype=None)``: zeros of ``a``'s shape (a 0-d array for a number), of ``a``'s element type
    where no dtype is given."""
    if isinstance(a, _nt.Array):
        element, rank = _element_type(dtype, a.dtype), a.ndim
    elif isinstance(a, (_nt.Number, _nt.Boolean)):
        element, rank = _element_type(dtype, a), 0
    else:
        return None
    if element is None:
        return None
    array_type = _nt.Array(element, rank, "C")

    def code(context, builder, signature, args):
        shapes = ()
        if rank:
            shapes = _cgutils.unpack_tuple(builder, _make_array(signature.args[0])(context, builder, args[0]).shape,
                                           count=rank)
        return _allocated(context, builder, signature.return_type, shapes, True)
    return array_type(a, _dtype_argument(dtype)), code


def _named(function, name):
    function.__name__ = function.__qualname__ = name
    return function


xp.empty = numba.extending.intrinsic(_named(_allocation(False), "empty"))
xp.zeros = numba.extending.intrinsic(_named(_allocation(True), "zeros"))
xp.zeros_like = numba.extending.intrinsic(_named(_zeros_like, "zeros_like"))

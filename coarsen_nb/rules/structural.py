"""The primitives SymPy does not see into, and those without a value to differentiate: shapes,
constructors, reshapes and opaque steps (a matrix product, an array literal).  One registration each."""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.build import XP, Attr, Index, Lit, called, dim, num, op, xp_call, zeros_like_shape
from coarsen_nb.rules.record import Primitive, Spelling

FLOAT64 = Attr(XP, "float64")


def _array_literal(args, xp):
    return xp.asarray(args) if all(isinstance(a, int) for a in args) else xp.asarray(args, dtype=float)


def _array_literal_2d(args, xp):
    return xp.reshape(_array_literal(args[1:], xp), (-1, args[0]))


# -- derivative rules of opaque steps (see record.py: the sweep's methods) --------------------------------


def _through(s, a, bar):
    """The cotangent passes through unchanged (``sum`` of a broadcast, ``copy``, ``float``)."""
    return [(a[0], bar)]


def _matmul_jvp(s, a):
    return op("+", xp_call("matmul", s.array_tangent_expr(a[0]), s.expr(a[1])),
              xp_call("matmul", s.expr(a[0]), s.array_tangent_expr(a[1])))


def _copy_jvp(s, a):
    # asarray(...).shape: np.array(a) of a number copies a float, which has no .shape (and the array API
    # has no xp.shape)
    return op("+", xp_call("asarray", s.d_expr(a[0]), dtype=FLOAT64),
              zeros_like_shape(xp_call("asarray", s.expr(a[0]))))


def _copied(args, xp, static):
    """The spelling ``xp.asarray(a, dtype=xp.float64, copy=True)``."""
    return xp_call("asarray", args[0], dtype=FLOAT64, copy=Lit("True"))


def _length(args, xp, static):
    """The spelling of ``len(a)``: ``a.shape[0]``."""
    return dim(args[0], 0)


def _itself(args, xp, static):
    """The spelling of ``n, m = X.shape``: the shape itself."""
    return args[0]


def _first_nonzero(args, xp, static):
    """The spelling ``xp.nonzero(m)[0]``."""
    return Index(xp_call("nonzero", args[0]), (num(0),))


def _matmul_vjp(s, a, bar):
    s.matmul_reverse(a[0], a[1], bar)
    return []


_MATMUL = {"vjp": _matmul_vjp, "jvp": _matmul_jvp}


def _row(name, kind, nargs, numpy=None, **kw) -> Primitive:
    """A registration whose NumPy attribute is its name unless given, spelled ``xp.<array>`` in array code."""
    numpy = numpy or name
    spelling = kw.pop("spelling", Spelling(array=numpy))
    return Primitive(name, kind, nargs if isinstance(nargs, tuple) else (nargs,), numpy, spelling=spelling, **kw)


def _unpack_shape_type(args, static) -> tuple[str, int]:
    """``n, m = X.shape`` names as many sizes as ``X`` has dimensions (Python's unpacking rule)."""
    ndim, count = args[0].ndim, static["count"]
    if ndim != count:
        err = CoarsenError("tuple unpacking", hint=f"unpack as many names as the array has dimensions (here "
                           f"{ndim}), or read one size, as X.shape[0]",
                           message=f"{'too many' if ndim > count else 'not enough'} values to unpack (expected "
                                   f"{count}, got {ndim}): the array has {ndim} dimension{'s' * (ndim != 1)}")
        err.user_name = "shape"
        raise err
    return "shape", ndim


def _unpack_shape(args, xp, count):
    if len(args[0]) != count:
        raise ValueError(f"cannot unpack a shape of {len(args[0])} entries into {count} names")
    return args[0]


STRUCTURAL: tuple[Primitive, ...] = (
    _row("len", "shape", 1, evaluate=lambda args, xp: len(args[0]), spelling=Spelling(step=_length),
         total=True, differentiable=False, result="int"),
    # the positions a 1-D boolean mask selects: x[x > 0] is read as x[flatnonzero(x > 0)] (phi/indexing.py)
    _row("flatnonzero", "opaque", 1, spelling=Spelling(array=_first_nonzero), total=True,
         differentiable=False, type=lambda args, static: ("int", 1)),
    # the lanes of a loop run over all its iterations at once (phi/batching.py): its counter as an array
    _row("lanes", "opaque", 3, evaluate=lambda args, xp: xp.arange(*args), spelling=Spelling(array="arange"),
         total=True, differentiable=False, type=lambda args, static: ("int", 1)),
    # ``n, m = X.shape`` (frontend/parse.py): the shape itself, whose type rule checks the count of names
    _row("unpack_shape", "shape", 1, evaluate=_unpack_shape, spelling=Spelling(step=_itself), total=True,
         differentiable=False, static=(("count", 0),), type=_unpack_shape_type),
    _row("int", "shape", 1, evaluate=lambda args, xp: int(args[0]), spelling=Spelling(step=called("int")),
         differentiable=False, result="int"),
    # fresh arrays
    _row("zeros", "constructor", 1, differentiable=False),
    _row("ones", "constructor", 1, differentiable=False),
    _row("empty", "constructor", 1, differentiable=False),
    _row("full", "constructor", 2, vjp=lambda s, a, bar: [(a[1], xp_call("sum", bar))],
         jvp=lambda s, a: xp_call("full", s.expr(a[0]), s.d_expr(a[1]))),
    _row("zeros_like", "constructor", 1, total=True, differentiable=False),
    _row("ones_like", "constructor", 1, total=True, differentiable=False),
    _row("empty_like", "constructor", 1, total=True, differentiable=False),
    _row("copy", "constructor", 1, aliases=("array",),
         evaluate=lambda args, xp: xp.array(args[0], dtype=float, copy=True),
         spelling=Spelling(step=_copied), total=True, vjp=_through, jvp=_copy_jvp, vjp_shaped=True),
    # the same values, shaped as NumPy's rule says for the operand's rank (lower/reshapes.py prints them)
    _row("atleast_1d", "reshape", 1, total=True),
    _row("atleast_2d", "reshape", 1, total=True),
    _row("atleast_3d", "reshape", 1, total=True),
    # SymPy cannot see into these: they end a segment
    _row("dot", "opaque", 2, spelling=Spelling(array="matmul"), total=True, **_MATMUL),
    # a list or tuple literal of numbers, as the 1-D array NumPy makes of it (frontend/literals.py, printed
    # by lower/literals.py); no function of np or math is spelled so: the frontend makes it, lookup() never
    # finds it
    _row("array_literal", "opaque", (), "asarray", evaluate=_array_literal, total=True),
    _row("array_literal_2d", "opaque", (), "asarray", evaluate=_array_literal_2d, total=True),  # (ncols, rows...)
    _row("matmul", "opaque", 2, total=True, **_MATMUL),
)

"""The reductions: ``np.sum``, ``mean``, ``prod``, ``max``, ``min``; over the whole array, or over
``axis=`` with ``keepdims=`` (compile-time parameters, :mod:`coarsen_nb.frontend.static`).

A reduction over axes is an opaque step like the whole-array one.  Its value's rank is the operand's
less the reduced axes (unless ``keepdims``), and its cotangent reaches the operand broadcast back
over the reduced axes: the cotangent re-shaped with those axes kept as length 1
(:func:`kept`), which NumPy's broadcasting in ``b_x += ...`` then spreads over them.  The JVP is
the same reduction of the tangent.
"""

from __future__ import annotations

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.record import Primitive, Spelling

AXIS = (("axis", None), ("keepdims", False))


def axes(axis, ndim: int, fn: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple, negative counting from the end) as sorted axes of an array
    of ``ndim`` dimensions; a CoarsenError naming ``fn`` when one is out of range or repeated (its
    caret, placed by the type pass, under the word ``axis`` of the line)."""
    try:
        return _axes(axis, ndim, fn)
    except CoarsenError as err:
        err.user_name = "axis"
        raise


def _axes(axis, ndim: int, fn: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    given = axis if isinstance(axis, tuple) else (axis,)
    if any(not isinstance(a, int) or isinstance(a, bool) for a in given):
        raise CoarsenError(f"axis= of {fn}", hint="give axis as an int or a tuple of ints",
                           message=f"{fn}'s axis={axis!r} is not an axis")
    out = []
    for a in given:
        if not -ndim <= a < ndim:
            raise CoarsenError(f"axis= of {fn}", hint=f"an array of {ndim} dimension{'s' * (ndim != 1)} has axes "
                               f"0 to {ndim - 1} (or -{ndim} to -1)" if ndim else "reduce an array, not a number",
                               message=f"{fn}'s axis={a} is out of range for an array of {ndim} "
                                       f"dimension{'s' * (ndim != 1)}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise CoarsenError(f"axis= of {fn}", hint="name each axis once",
                           message=f"{fn}'s axis={axis!r} repeats an axis")
    return tuple(sorted(out))


def reduced_type(fn: str):
    """The ``type`` rule of a reduction: a float of the operand's rank less the reduced axes."""
    def rule(args: list, static: dict) -> tuple[str, int]:
        nd = args[0].ndim
        gone = axes(static["axis"], nd, fn)
        return "float", nd if static["keepdims"] else nd - len(gone)
    return rule


def kept(s, x, bar: str, axis, keepdims: bool) -> str:
    """``bar`` (the cotangent of a reduction of ``x`` over ``axis``) shaped to broadcast against ``x``:
    the reduced axes put back as length 1 (nothing to do with ``keepdims``, or for a scalar)."""
    nd = s.ndim(x)
    gone = axes(axis, nd, "a reduction")
    if keepdims or len(gone) == nd:
        return bar
    shape = ", ".join("1" if d in gone else f"{s.code(x)}.shape[{d}]" for d in range(nd))
    return f"xp.reshape({bar}, ({shape},))"


def _static_kw(axis, keepdims) -> str:
    return f", axis={axis!r}" + (", keepdims=True" if keepdims else "")


def _sum_vjp(s, a, bar, axis=None, keepdims=False):
    return [(a[0], kept(s, a[0], bar, axis, keepdims))]


def _sum_jvp(s, a, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return f"xp.sum({s.d(a[0])} + xp.zeros({s.code(a[0])}.shape))"
    return f"xp.sum({s.array_tangent(a[0])}{_static_kw(axis, keepdims)})"


def _mean_vjp(s, a, bar):
    return [(a[0], f"{bar} / {s.code(a[0])}.size")]


def _prod_vjp(s, a, bar):
    return [(a[0], f"{bar} * {s.helper('_prod_except')}({s.code(a[0])})")]


def _prod_jvp(s, a):
    return f"xp.sum({s.array_tangent(a[0])} * {s.helper('_prod_except')}({s.code(a[0])}))"


def _pick(arg: str):
    """The VJP and JVP of ``amax``/``amin``: the first arg-extremum's element."""
    def vjp(s, a, bar):
        x = s.code(a[0])
        return [(a[0], f"xp.reshape(xp.asarray(xp.arange({x}.size) == xp.{arg}({x}), dtype=xp.float64), "
                       f"{x}.shape) * {bar}")]

    def jvp(s, a):
        return f"xp.reshape({s.array_tangent(a[0])}, (-1,))[xp.{arg}({s.code(a[0])})]"

    return {"vjp": vjp, "jvp": jvp}


def _row(name, nargs, numpy=None, **kw) -> Primitive:
    numpy = numpy or name
    return Primitive(name, "reduction", (nargs,), numpy, spelling=Spelling(array=numpy), **kw)


REDUCTIONS: tuple[Primitive, ...] = (
    _row("sum", 1, total=True, vjp=_sum_vjp, jvp=_sum_jvp, static=AXIS, type=reduced_type("np.sum")),
    _row("mean", 1, total=True, vjp=_mean_vjp,
         jvp=lambda s, a: f"xp.mean({s.d(a[0])} + xp.zeros({s.code(a[0])}.shape))"),
    _row("prod", 1, vjp=_prod_vjp, jvp=_prod_jvp),
    _row("amax", 1, "max", **_pick("argmax")),
    _row("amin", 1, "min", **_pick("argmin")),
)

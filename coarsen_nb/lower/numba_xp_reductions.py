"""Reductions over chosen axes in the numba namespace: ``sum``, ``prod``, ``mean``, ``var``, ``std``,
``max``, ``min``, ``argmax``, ``argmin``, ``linalg.norm`` and SciPy's ``logsumexp`` with ``axis=`` (an int
or a tuple, negative allowed) and ``keepdims=``.

Numba's own ``np.sum`` and friends take no ``keepdims``, no tuple of axes, and ``np.var`` no
``ddof``; the generated code spells every reduction with all of them (``xp.var(X, axis=0, ddof=1,
keepdims=False)``).  One schema serves them all: move the reduced axes last, make the array
contiguous, view it as (kept elements) × (reduced elements), reduce each row, reshape to the kept
shape.  The axes and ``keepdims`` decide the result's rank, so they must be constants: they arrive as
literals (``prefer_literal``), and the implementation for them is printed as source at typing time
and compiled (a transposition and a reshape Numba can type only for a known rank).

Values are NumPy's: the dtype (an integer sum of integers and of booleans, float means), NaN
propagating through ``max``/``min``, ``var`` as the mean of squared deviations from the mean divided
by ``n - ddof`` (nan or inf where that is not positive, as NumPy gives with its warning), ``norm``
(``ord=None``) as the square root of the sum of squares.  A float ``sum`` or ``mean`` over the trailing
axes (the whole array included) is NumPy's pairwise summation, the same value to the bit; other sums are
sequential, as NumPy adds rows along a leading axis.

The adjoints' helpers over groups of axes (``first_extremum``, ``add_at_first_extremum``,
``prod_except_axes``) are :mod:`numba_xp_groups`, pasted after this file.

Like :mod:`numba_xp`, this text is pasted into every numba module (after numba_xp's), so it uses
that file's names; imported on its own (the tests) it imports them, in lines the paste leaves out.
"""

import types as _types

import numba
import numba.extending

# imported on its own (the tests), the names numba_xp's text defines before this one's in a generated
# module, which leaves the marked lines out (coarsen_nb/backends.py): one namespace, in several files
# <own-module>
from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001
from coarsen_nb.lower import numba_xp_axes  # noqa: E402, F401 (its argmax, max, min: stubs this file adds to)
from coarsen_nb.lower.numba_xp_along import ALONG  # noqa: E402

_implements, _omitted, _constant_flag, _np, _nt, xp = (_base._implements, _base._omitted, _base._constant_flag,
                                                       _base._np, _base._nt, _base.xp)
INTERNAL = _base.INTERNAL
# </own-module>

# row reducers: statements over a 1-D contiguous ``row`` of ``n`` elements leaving ``r``
_ROW = {
    "sum": "r = ZERO\nfor i in range(n):\n    r += row[i]",
    "prod": "r = ONE\nfor i in range(n):\n    r *= row[i]",
    "mean": "r = 0.0\nfor i in range(n):\n    r += row[i]\nr = r / n if n > 0 else _np.nan",
    "var": ("m = 0.0\nfor i in range(n):\n    m += row[i]\nm = m / n if n > 0 else _np.nan\n"
            "r = 0.0\nfor i in range(n):\n    r += (row[i] - m) * (row[i] - m)\n"
            "r = r / (n - ddof) if n - ddof > 0 else (_np.inf if r > 0 else _np.nan)"),
    "norm": "r = 0.0\nfor i in range(n):\n    r += row[i] * row[i]\nr = _np.sqrt(r)",
    # NumPy's: a NaN anywhere is the result; an empty row has no identity
    "max": ("if n == 0:\n    raise ValueError('zero-size array to reduction operation maximum which has no identity')\n"
            "r = row[0]\nfor i in range(1, n):\n    v = row[i]\n    if v != v or r != r:\n        r = _np.nan\n"
            "        break\n    if v > r:\n        r = v"),
    "min": ("if n == 0:\n    raise ValueError('zero-size array to reduction operation minimum which has no identity')\n"
            "r = row[0]\nfor i in range(1, n):\n    v = row[i]\n    if v != v or r != r:\n        r = _np.nan\n"
            "        break\n    if v < r:\n        r = v"),
}
_ROW["std"] = _ROW["var"] + "\nr = _np.sqrt(r)"
# SciPy's logsumexp: shifted by the maximum (by 0 where that is not finite: all -inf, an inf, a NaN)
_ROW["logsumexp"] = ("m = -_np.inf\nfor i in range(n):\n    if row[i] > m:\n        m = row[i]\n"
                     "if not _np.isfinite(m):\n    m = 0.0\nr = 0.0\nfor i in range(n):\n"
                     "    r += _np.exp(row[i] - m)\nr = _np.log(r) + m")

# a float sum (mean) over the trailing axes: NumPy's own pairwise summation (below), the same value to the
# bit and 2-4x faster than a sequential loop (eight independent accumulators); over other axes NumPy adds
# rows in order, as the sequential loop does
_ROW_PAIRWISE = {"sum": "r = _block_sum(row, 0, n) if n <= 128 else _pairwise_sum(row, 0, n)",
                 "mean": "r = _block_sum(row, 0, n) if n <= 128 else _pairwise_sum(row, 0, n)\n"
                         "r = r / n if n > 0 else _np.nan"}

# a sum (mean) over the leading axes: each kept element's sum in the same order as the row loop above (element
# 0 of the reduced axes first), so the same value to the bit, but read in row-major order over the
# (reduced) x (kept) view, without the transposed copy the row loop needs, the kept elements' adds side by side
_ROW_LEADING = {"sum": "out = xp.zeros(outer, dtype=DT)\nfor i in range(inner):\n    for o in range(outer):\n"
                       "        out[o] += view[i, o]",
                "mean": "out = xp.zeros(outer, dtype=DT)\nfor i in range(inner):\n    for o in range(outer):\n"
                        "        out[o] += view[i, o]\nfor o in range(outer):\n"
                        "    out[o] = out[o] / inner if inner > 0 else _np.nan"}

# a float array's extrema and their first indices: numba_xp_along's kernels over the (kept) x (reduced) view,
# or over the (reduced) x (kept) view of an array reduced over its leading axes, which needs no transposed copy
# (vector loops in row-major order; the same values as the loops above: NaN first, NumPy's errors where the
# reduced axes are empty)
_EXTREMA = ("max", "min", "argmax", "argmin")


@numba.njit(inline="always", **INTERNAL)
def _block_sum(row, a, m):
    """row[a:a + m] (m <= 128) summed as NumPy's ``pairwise_sum`` sums a block: below 8 elements in order,
    else eight interleaved partial sums added pairwise, then the remainder in order.  Inlined, without
    :func:`_pairwise_sum`'s stack (two arrays a call): a sum along short rows (a softmax's over 10 classes)
    calls it once a row, where the stack's allocations were ~4x the row's adds (200000x5: 20 -> 2 ms)."""
    r = 0.0
    i = a
    if m >= 8:
        r0, r1, r2, r3 = row[a], row[a + 1], row[a + 2], row[a + 3]
        r4, r5, r6, r7 = row[a + 4], row[a + 5], row[a + 6], row[a + 7]
        i = a + 8
        end = a + m - m % 8
        while i < end:
            r0 += row[i]
            r1 += row[i + 1]
            r2 += row[i + 2]
            r3 += row[i + 3]
            r4 += row[i + 4]
            r5 += row[i + 5]
            r6 += row[i + 6]
            r7 += row[i + 7]
            i += 8
        r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < a + m:
        r += row[i]
        i += 1
    return r


@numba.njit(cache=True, **INTERNAL)
def _pairwise_sum(row, lo, n):
    """row[lo:lo + n] summed as NumPy sums a contiguous float array (``pairwise_sum`` in its loops): a
    block of up to 128 elements below 8 in order, else in eight interleaved partial sums added pairwise,
    then the remainder in order; a longer range as its two halves (the first a multiple of 8) summed so
    and added.  The recursion is walked with a stack of its own (Numba's recursive functions fail to
    link when two functions of one module call them), in one function (each costs Numba a compile)."""
    nodes = xp.empty((3, 64), dtype=_np.int64)        # per level: start, length, halves done
    sums = xp.empty(64)
    nodes[0, 0], nodes[1, 0], nodes[2, 0] = lo, n, 0
    top, done = 0, 0
    while top >= 0:
        a, m = nodes[0, top], nodes[1, top]
        if m <= 128:
            sums[done] = _block_sum(row, a, m)
            done += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        stage = nodes[2, top]
        if stage < 2:
            nodes[2, top] = stage + 1
            nodes[0, top + 1] = a if stage == 0 else a + half
            nodes[1, top + 1] = half if stage == 0 else m - half
            nodes[2, top + 1] = 0
            top += 1
        else:
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
            top -= 1
    return sums[0]


# NumPy's argmax/argmin: the first index of the extremum, a NaN's where there is one
for _arg, _cmp in (("argmax", ">"), ("argmin", "<")):
    _ROW[_arg] = (f"if n == 0:\n    raise ValueError('attempt to get {_arg} of an empty sequence')\n"
                  "r = 0\nbest = row[0]\nif best == best:\n    for i in range(1, n):\n        v = row[i]\n"
                  "        if v != v:\n            r = i\n            break\n"
                  f"        if v {_cmp} best:\n            best = v\n            r = i")

# the parameters after ``x``, as NumPy's names and defaults (the implementation's must be the same)
_PARAMS = {"var": "axis=None, ddof=0, keepdims=False", "std": "axis=None, ddof=0, keepdims=False",
           "norm": "ord=None, axis=None, keepdims=False",
           "logsumexp": "axis=None, b=None, keepdims=False, return_sign=False"}


def _literal_axes(axis, ndim):
    """The reduced axes as a sorted tuple of non-negative ints (all of them for None), or None: not a
    constant, or out of range."""
    if _omitted(axis):
        return tuple(range(ndim))
    items = list(axis) if isinstance(axis, _nt.BaseTuple) else [axis]
    out = []
    for a in items:
        v = a.literal_value if isinstance(a, _nt.IntegerLiteral) else None
        if v is None or not -ndim <= v < ndim:
            return None
        out.append(v % ndim)
    return tuple(sorted(set(out)))


def _shape(dims) -> str:
    """Source of a shape tuple from ``x.shape`` entries (an int entry is a literal 1)."""
    parts = [d if isinstance(d, str) else "1" for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _rows_source(ndim, axes, x="x"):
    """Statements that view the array ``x`` as ``view`` of shape (kept, reduced): the reduced axes moved last."""
    kept = [d for d in range(ndim) if d not in axes]
    perm = tuple(kept + list(axes))
    lines = []
    if perm != tuple(range(ndim)):
        lines.append(f"c = _np.ascontiguousarray(_np.transpose({x}, {perm}))")
    else:
        lines.append(f"c = _np.ascontiguousarray({x})")
    outer = " * ".join(f"{x}.shape[{d}]" for d in kept) or "1"
    inner = " * ".join(f"{x}.shape[{d}]" for d in axes) or "1"
    lines += [f"outer = {outer}", f"inner = {inner}", "view = c.reshape((outer, inner))"]
    return lines, kept, perm


def _compile(source: str, name: str, env: dict):
    namespace = dict(env)
    exec(source, namespace)             # noqa: S102 (source printed above from constants)
    return namespace[name]


def _sum_of_row(x, axis=None, keepdims=False):
    return _pairwise_sum(x, 0, x.shape[0])


def _mean_of_row(x, axis=None, keepdims=False):
    n = x.shape[0]
    r = _pairwise_sum(x, 0, n)
    return r / n if n > 0 else _np.nan


# the sum (mean) of a contiguous float vector, the glue's commonest reduction: the row's pairwise sum itself
# (cached on disk), without the general implementation's view, output array and loop, which Numba compiled
# anew in every process (~0.7 s of a cold start: an implementation printed as text is not cached)
_WHOLE_ROW = {"sum": _sum_of_row, "mean": _mean_of_row}


def _make_reduction(name):
    row = _ROW[name]
    params = _PARAMS.get(name, "axis=None, keepdims=False")

    def typing(x, *args):
        values = dict(zip(_names(params), args, strict=True))
        axis, keep = values.get("axis"), _constant_flag(values.get("keepdims"))
        if not all(_omitted(values.get(k)) for k in ("ord", "b")) or _constant_flag(values.get("return_sign")):
            return None         # (the generated code passes ord=None, b=None, return_sign=False)
        if isinstance(x, (_nt.Number, _nt.Boolean)) and _omitted(axis):
            return _compile(_scalar_source(name, params), "impl", {"_np": _np, "xp": xp})
        if not isinstance(x, _nt.Array) or keep is None:
            return None
        axes = _literal_axes(axis, x.ndim)
        if axes is None:
            return None
        floats = isinstance(x.dtype, (_nt.Float, _nt.Complex))
        if name in ("argmax", "argmin"):
            if not (_omitted(axis) or isinstance(axis, _nt.Integer)):
                return None                  # (one axis, or the flattened array)
            dtype = _nt.int64
        elif name in ("sum", "prod"):
            dtype = x.dtype if floats else _nt.int64
        elif name in ("max", "min"):
            dtype = x.dtype
        else:
            dtype = _nt.float64
        if name in _ROW_PAIRWISE and x.ndim == 1 and x.layout == "C" and x.dtype == _nt.float64 and not keep:
            return _WHOLE_ROW[name]
        lines, kept, perm = _rows_source(x.ndim, axes)
        trailing = perm == tuple(range(x.ndim))
        kernel = None
        if name in _EXTREMA and x.dtype == _nt.float64:
            leading = axes == tuple(range(len(axes))) and not trailing
            kernel = ALONG[name, 0 if leading else 1]
            if leading:         # (the lengths of _rows_source, the view not transposed)
                lines = [ln for ln in lines if ln.startswith(("outer =", "inner ="))]
                lines.append("view = _np.ascontiguousarray(x).reshape((inner, outer))")
            lines.append("out = KERNEL(view)")
        elif name in _ROW_LEADING and axes == tuple(range(len(axes))) and not trailing and \
                not isinstance(x.dtype, _nt.Complex):
            # (the lengths of _rows_source, the view not transposed: no transposed copy, one pass in memory order)
            lines = [ln for ln in lines if ln.startswith(("outer =", "inner ="))]
            lines.append("view = _np.ascontiguousarray(x).reshape((inner, outer))")
            lines += _ROW_LEADING[name].splitlines()
        else:
            lines += ["out = xp.empty(outer, dtype=DT)", "for o in range(outer):", "    row = view[o]",
                      "    n = inner"]
            code = _ROW_PAIRWISE[name] if name in _ROW_PAIRWISE and x.dtype == _nt.float64 and trailing else row
            lines += ["    " + ln for ln in code.replace("ZERO", "DT(0)").replace("ONE", "DT(1)").splitlines()]
            lines.append("    out[o] = r")
        if keep:
            lines.append("return out.reshape(" + _shape([f"x.shape[{d}]" if d in kept else 1
                                                        for d in range(x.ndim)]) + ")")
        elif kept:
            lines.append("return out.reshape(" + _shape([f"x.shape[{d}]" for d in kept]) + ")")
        else:
            lines.append("return out[0]")
        source = f"def impl(x, {params}):\n" + "\n".join("    " + ln for ln in lines) + "\n"
        return _compile(source, "impl", {"_np": _np, "xp": xp, "DT": _np.dtype(str(dtype)).type,
                                         "_pairwise_sum": _pairwise_sum, "_block_sum": _block_sum,
                                         "KERNEL": kernel})

    typing.__name__ = f"_{name}_typing"
    _register(name, params, typing)


def _scalar_source(name, params):
    """A reduction of a number: NumPy's value for one element."""
    value = {"mean": "float(x)", "var": "0.0 if x == x else x", "std": "0.0 if x == x else x",
             "norm": "abs(x) * 1.0", "logsumexp": "float(x)"}.get(name, "x")
    return f"def impl(x, {params}):\n    return {value}\n"


def _names(params: str) -> list[str]:
    return [p.split("=")[0] for p in params.split(", ")]


def _register(name, params, typing):
    """Register ``typing`` for ``xp.NAME`` (``xp.linalg.norm``) under NumPy's signature ``(x, params)``:
    Numba matches an overload's parameter names, so the typing function is printed with them too.
    Where numba_xp wrote a stub of that name already (``argmax``, ``max``, ``min`` of a matrix along a
    run-time axis), this is one more implementation of it: Numba tries each, and these need the axes
    as constants."""
    source = f"def _typing(x, {params}):\n    return _inner(x, {', '.join(_names(params))})\n"
    wrapped = _compile(source, "_typing", {"_inner": typing})
    holder = xp.linalg if name == "norm" else xp
    existing = getattr(holder, name, None)
    if getattr(existing, "__qualname__", "").startswith("_stub."):
        numba.extending.overload(existing, prefer_literal=True)(wrapped)
    else:
        _implements(name, holder, cache=False, prefer_literal=True)(wrapped)


# ``xp.linalg``: NumPy's linalg (solve, inv, det, slogdet compile in Numba as they are) with ``norm``
# taking ``axis=`` and ``keepdims=``
xp.linalg = _types.ModuleType("xp.linalg")
xp.linalg.__dict__.update({_k: getattr(_np.linalg, _k) for _k in dir(_np.linalg) if not _k.startswith("__")})

for _name in ("sum", "prod", "mean", "var", "std", "max", "min", "norm", "logsumexp", "argmax", "argmin"):
    _make_reduction(_name)

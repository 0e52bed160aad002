"""Shape, dtype and view facts of the cost model: what the abstract values' element counts do not say.

Sizes are what :mod:`coarsen_nb.lower.values` tracks; a statement's size depends on
more than the element count for ``A @ B``, a reduction along an axis, ``_block``,
basic indexing and ``.T``, and whether it allocates depends on whether its result
is a view of what it reads (``reshape`` of a contiguous array, an in-bounds
``_take``/``_block``).  A mixin of :class:`~coarsen_nb.lower.cost._Model`.
"""

from __future__ import annotations

import ast
import math

from coarsen_nb.lower.linalg_shapes import LINALG_CALLS, linalg_shape
from coarsen_nb.lower.values import (
    REDUCTIONS,
    SCALAR,
    as_int,
    call_name,
    is_nonzero_call,
    is_xp_call,
    known_value,
    without_ellipsis,
)
from coarsen_nb.rules.table import callees


class ShapeFacts:
    """Shapes, dtype kinds and views (``shape``, ``dtype``, ``allocates``) for the cost model's ``_Model``."""

    def shape(self, e):
        """The shape of ``e`` where the model can tell (``()`` for a scalar), else None.

        Sizes are what the abstract values carry; shapes matter where a statement's size depends on
        more than the element count: ``A @ B``, a reduction along an axis, ``_block`` and ``.T``.
        """
        if is_nonzero_call(e):
            return (as_int(self._nonzero(e.value.args[0])[1]),)
        if isinstance(e, ast.Name):
            if e.id + "#shape" in self.env:
                return self.env[e.id + "#shape"]
            v = self.env.get(e.id, SCALAR)
            return (v[1],) if v[0] == "arr" else () if v[0] in ("scalar", "int") else None
        if isinstance(e, ast.Constant):
            return ()
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return _matmul_shape(self.shape(e.left), self.shape(e.right))
        parts = _elementwise_parts(e)
        if parts is not None:
            return _broadcast([self.shape(p) for p in parts])
        if isinstance(e, ast.Attribute) and e.attr == "T":
            shp = self.shape(e.value)
            return None if shp is None else shp[::-1]
        if isinstance(e, ast.Subscript):
            return self._subscript_shape(e)
        if not isinstance(e, ast.Call):
            return None
        f, a = call_name(e), e.args
        kw = {k.arg: k.value for k in e.keywords}
        if f in LINALG_CALLS:
            return linalg_shape(f, e, self.shape, self.ints)
        if f == "matmul" and len(a) == 2:
            return _matmul_shape(self.shape(a[0]), self.shape(a[1]))
        if f == "concat" and a and isinstance(a[0], (ast.List, ast.Tuple)) and a[0].elts:
            shapes = [self.shape(x) for x in a[0].elts]
            ax = self.ints(kw["axis"])[0] if "axis" in kw else 0
            if any(s is None or len(s) != len(shapes[0]) for s in shapes) or ax is None or not shapes[0]:
                return None
            ax %= len(shapes[0])
            return shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:]
        if f == "asarray" and a and isinstance(a[0], (ast.List, ast.Tuple)):
            return (len(a[0].elts),)          # a literal of numbers (an array literal of the source)
        if f == "take" and is_xp_call(e) and len(a) == 2:
            idx = self.shape(a[1])
            if "axis" not in kw:
                return idx
            shp, ax = self.shape(a[0]), self.ints(kw["axis"])[0]
            if None in (shp, idx, ax) or not -len(shp) <= ax < len(shp):
                return None
            ax %= len(shp)
            return tuple(shp[:ax]) + tuple(idx) + tuple(shp[ax + 1:])
        if f == "_block" and len(a) == 5:
            n0, n1 = self.ints(a[2], a[4])
            return None if None in (n0, n1) else (max(n0, 0), max(n1, 0))
        if f == "_window" and len(a) == 4:
            n0, n1 = self.ints(a[2], a[3])
            return None if None in (n0, n1) else (max(n0, 0), max(n1, 0))
        if f in ("_window_matvec", "_window_vecmat") and len(a) == 5:
            # _window_matvec(x, lo, n0, n1, h): n0 values; _window_vecmat(g, x, lo, n0, n1): n1 values
            n = self.ints(a[2] if f == "_window_matvec" else a[4])[0]
            return None if n is None else (max(n, 0),)
        if f in ("reshape", "broadcast_to") and is_xp_call(e) and len(a) == 2:
            t = self.ev(a[1])
            dims = t[1] if t[0] == "tuple" else (t[1],) if t[0] == "int" else None
            if dims is None or None in dims:
                return None
            if -1 in dims:
                rest = math.prod(d for d in dims if d != -1)
                dims = tuple(self.size(self.ev(a[0])) / max(rest, 1) if d == -1 else d for d in dims)
            return tuple(dims)
        if f in ("zeros", "ones", "empty", "full") and a:
            t = self.ev(a[0])
            if t[0] == "tuple" and None not in t[1]:
                return tuple(t[1])
            return (t[1],) if t[0] == "int" and t[1] is not None else None
        if f in REDUCTIONS and is_xp_call(e) and a:
            shp = self.shape(a[0])
            keep = isinstance(kw.get("keepdims"), ast.Constant) and kw["keepdims"].value is True
            axis = kw.get("axis")
            if axis is None or (isinstance(axis, ast.Constant) and axis.value is None):
                return () if not keep else None if shp is None else (1,) * len(shp)
            ax = self.ev(axis)
            dims = (ax[1],) if ax[0] == "int" else ax[1] if ax[0] == "tuple" else None     # axis=1, axis=(0, 2)
            if shp is None or dims is None or any(d is None or not -len(shp) <= d < len(shp) for d in dims):
                return None
            gone = {d % len(shp) for d in dims}
            return tuple(1 if d in gone else n for d, n in enumerate(shp) if keep or d not in gone)
        if f in _SAME_SHAPE and a:
            return self.shape(a[0])
        if f in _ARRAY_STEPS and is_xp_call(e) and a:
            return self._array_step_shape(f, a, kw)
        if f in _ELEMENTWISE or (f in _MATH and is_xp_call(e)):
            return _broadcast([self.shape(x) for x in a])
        # anything else: its element count, one axis, when everything it reads has at most one
        v = self.ev(e)
        names = [n for n in ast.walk(e) if isinstance(n, ast.Name) and n.id != "xp"]
        if v[0] == "arr" and all((s := self.shape(n)) is not None and len(s) <= 1 for n in names):
            return (v[1],)
        return None if v[0] == "arr" else ()

    def _array_step_shape(self, f: str, a: list, kw: dict):
        """The shapes of the steps of rules/arrays.py: a new axis of length 1 (``expand_dims``) or of the
        operands' count (``stack``), one gone (``squeeze``), n fewer along an axis (``diff``), a grid."""
        if f == "linspace" and len(a) == 3:
            n = self.ints(a[2])[0]
            return None if n is None else (n,)
        shapes = [self.shape(x) for x in a[0].elts] if f == "stack" and isinstance(a[0], ast.List) else \
            [self.shape(a[0])]
        axis = self.ints(kw["axis"])[0] if "axis" in kw else -1 if f == "diff" else 0
        shp = shapes[0]
        if shp is None or axis is None or any(t != shp for t in shapes):
            return None
        if f == "diff":
            n = self.ints(kw["n"])[0] if "n" in kw else 1
            if n is None or not shp:
                return None
            k = axis % len(shp)
            return shp[:k] + (max(shp[k] - n, 0),) + shp[k + 1:]
        if f == "squeeze":
            return shp[:axis % len(shp)] + shp[axis % len(shp) + 1:] if shp else None
        k = axis % (len(shp) + 1)
        return shp[:k] + (len(shapes) if f == "stack" else 1,) + shp[k:]

    def matmul(self, left, right):
        """``A @ B``: the product's shape where both are known; otherwise a matrix times a vector, whose
        result has (larger size) / (smaller size) elements."""
        a, b = self.ev(left), self.ev(right)
        shp = _matmul_shape(self.shape(left), self.shape(right))
        if shp is not None:
            return ("arr", float(math.prod(shp)), False) if shp else SCALAR
        if a[0] != "arr" or b[0] != "arr":
            return self.join([a, b])
        big, small = max(a[1], b[1]), min(a[1], b[1])
        return ("arr", big / small, False) if small > 0 and big != small else SCALAR

    def _subscript_shape(self, e: ast.Subscript):
        """Basic indexing (slices, ``None``, ints) of a known shape; a gather has the index's size."""
        base = self.shape(e.value)
        parts = without_ellipsis(e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice])
        if base is None:
            return None
        out, axis = [], 0
        for p in parts:
            if isinstance(p, ast.Constant) and p.value is None:
                out.append(1)
                continue
            if axis >= len(base):
                return None
            if isinstance(p, ast.Slice):
                lo, hi, st = (self.ints(x)[0] if x is not None else d
                              for x, d in ((p.lower, 0), (p.upper, base[axis]), (p.step, 1)))
                if None in (lo, hi, st) or not isinstance(base[axis], int):
                    out.append(base[axis])        # an approximation: the whole axis
                else:
                    out.append(len(range(base[axis])[slice(lo, hi, st)]))
            elif self.ev(p)[0] != "int":
                return None                           # a gather (its size is the index's)
            axis += 1
        return tuple(out) + tuple(base[axis:])

    def dtype(self, e):
        """The kind of ``e``'s dtype, ``"b"`` (bool), ``"i"`` (int) or ``"f"`` (float), else None."""
        if isinstance(e, ast.Name):
            if e.id + "#dtype" in self.env:
                return self.env[e.id + "#dtype"]
            v = self.env.get(e.id, SCALAR)
            if v[0] == "arr" and v[2]:
                return "b"
            k = known_value(v) if v[0] == "arr" else None
            return None if k is None else "b" if k.dtype == bool else "i" if k.dtype.kind in "iu" else "f"
        if isinstance(e, ast.Constant):
            return "b" if isinstance(e.value, bool) else "i" if isinstance(e.value, int) else \
                "f" if isinstance(e.value, float) else None
        if isinstance(e, (ast.Compare, ast.BoolOp)):
            return "b"
        if isinstance(e, ast.UnaryOp):
            return self.dtype(e.operand)
        if isinstance(e, ast.Subscript):
            return self.dtype(e.value)
        if isinstance(e, ast.BinOp):
            kinds = [self.dtype(e.left), self.dtype(e.right)]
            if isinstance(e.op, ast.Div):
                return "f"
            if isinstance(e.op, (ast.BitAnd, ast.BitOr)) and kinds == ["b", "b"]:
                return "b"
            return None if None in kinds else "f" if "f" in kinds else "i"
        if isinstance(e, ast.IfExp):
            kinds = {self.dtype(e.body), self.dtype(e.orelse)}
            return kinds.pop() if len(kinds) == 1 else None
        if not isinstance(e, ast.Call):
            return None
        f = call_name(e)
        kw = {k.arg: k.value for k in e.keywords}
        if "dtype" in kw:
            name = ast.unparse(kw["dtype"])
            return "b" if "bool" in name else "i" if "int" in name else "f" if "float" in name else None
        if f in ("arange", "repeat", "searchsorted", "argsort", "argmax", "argmin", "count_nonzero"):
            return "i"
        if f in ("zeros", "ones", "empty", "full", "_segment_sum", "_segment_prod", "_segment_max",
                 "_segment_min", "_scatter_sum", "_erf", "_expit", "_expit_nonpositive", "_prod_except", "_sum_scan",
                 "_prod_scan", "_lin_scan") or f in _MATH:
            return "f"
        if f in _SAME_SHAPE or f in ("tile", "take", "cumulative_sum", "cumulative_prod", "sum", "prod",
                                     "max", "min") and e.args:
            return self.dtype(e.args[0])
        if f in ("where", "maximum", "minimum") and len(e.args) >= 2:
            kinds = [self.dtype(x) for x in e.args[-2:]]
            return None if None in kinds else "f" if "f" in kinds else kinds[0]
        return None

    def allocates(self, e) -> bool:
        """Whether evaluating ``e`` makes a new array, not a view of an array it reads.

        A name, basic indexing (slices, ``None``, ints), ``.T`` and ``transpose``, ``reshape``/``broadcast_to`` of a
        contiguous array, ``asarray`` without a copy or a dtype change, an in-bounds ``_take`` or
        ``_block``, ``_put`` and ``_add_at_first_extremum`` (in place, return their array) are views of their operand.
        """
        if isinstance(e, (ast.Name, ast.Constant)):
            return False
        if isinstance(e, ast.Attribute) and e.attr == "T":
            return self.allocates(e.value)
        if isinstance(e, ast.Subscript):
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            basic = all(isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and p.value in (None, Ellipsis)
                        or self.ev(p)[0] == "int" for p in parts)
            return self.allocates(e.value) if basic else True
        if not isinstance(e, ast.Call):
            return True
        f, a = call_name(e), e.args
        kw = {k.arg: k.value for k in e.keywords}
        if f in ("reshape", "ravel") and isinstance(e.func, ast.Attribute) and not is_xp_call(e):
            return self.allocates(e.func.value)                   # x.reshape(...), x.ravel()
        if not a:
            return True
        if f == "reshape" and isinstance(a[0], ast.Attribute) and a[0].attr == "T":
            shp = self.shape(a[0].value)          # the transpose of a 2-D array is not contiguous
            return shp is None or sum(d != 1 for d in shp) > 1 or self.allocates(a[0])
        if f == "reshape" and isinstance(a[0], ast.Call) and call_name(a[0]) == "_block":
            return self.allocates(a[0]) or not self._block_reshapes_as_view(e)
        # (xp.transpose: a view, like .T; _put and _add_at_first_extremum write their array and return it)
        if f in ("reshape", "broadcast_to", "_put", "transpose", "_add_at_first_extremum"):
            return self.allocates(a[0])
        if f == "asarray":
            copy = kw.get("copy")
            if isinstance(copy, ast.Constant) and copy.value is True:
                return True
            want, have = self.dtype(e) if "dtype" in kw else None, self.dtype(a[0])
            return (want is not None and have is not None and want != have) or self.allocates(a[0])
        if f in ("_take", "_block", "_window"):
            return self._in_bounds(e) is False or self.allocates(a[0])
        if f == "_sum_to" and len(a) == 2:
            # its operand where no axis is summed (the shapes agree, or the operand is only spread over the
            # shape: a broadcast view); a new, smaller array where one is
            t = self.ev(a[1])
            want, have = (tuple(t[1]) if t[0] == "tuple" else None), self.shape(a[0])
            if want is not None and have is not None and None not in want and None not in have:
                want, have = tuple(map(float, want)), tuple(map(float, have))
                lead = len(have) - len(want)
                if lead > 0 or any(w == 1 and h != 1 for w, h in zip(want[::-1], have[::-1], strict=False)):
                    return True
            return self.allocates(a[0])
        return True

    def _block_reshapes_as_view(self, e) -> bool:
        """Whether ``xp.reshape(_block(X, lo0, n0, lo1, n1), shape)`` is a view of X.

        An in-bounds block is the slice ``X[lo0:lo0 + n0, lo1:lo1 + n1]`` of a C-contiguous X: its
        rows are X's row stride apart, so it flattens without a copy only when it is one row (n0 <= 1),
        one column (n1 <= 1: a strided 1-D view) or whole rows (n1 == X.shape[1], so lo1 == 0).  A
        reshape to its own (n0, n1) shape is a view too.  When the ints or X's shape are not known the
        block is taken to be whole rows (a nest over every column, the common dense loop nest), a view.
        """
        blk = e.args[0]
        if len(blk.args) != 5:
            return True
        target, own = self.shape(e), self.shape(blk)
        if target is not None and own is not None and tuple(map(float, target)) == tuple(map(float, own)):
            return True
        n0, n1 = self.ints(blk.args[2], blk.args[4])
        shp = self.shape(blk.args[0])
        cols = as_int(shp[1]) if shp is not None and len(shp) == 2 else None
        if None in (n0, n1, cols):
            return True
        return n0 <= 1 or n1 <= 1 or n1 == cols

    def _in_bounds(self, e):
        """Whether ``_take(x, lo, n, step)`` / ``_block(x, lo0, n0, lo1, n1)`` is in bounds (a view),
        None when the model does not know the ints or the shape (then it is taken to be)."""
        f, a = call_name(e), e.args
        shp = self.shape(a[0])
        if f == "_take" and len(a) == 4:
            lo, n, step = self.ints(*a[1:])
            if None in (lo, n, step) or not shp:
                return None
            return n > 0 and step > 0 and 0 <= lo and lo + step * (n - 1) < shp[0]
        if f == "_window" and len(a) == 4:
            lo, n0, n1 = self.ints(*a[1:])
            if None in (lo, n0, n1) or not shp:
                return None
            return n0 > 0 and n1 > 0 and 0 <= lo and lo + n0 + n1 - 1 <= shp[0]
        if f == "_block" and len(a) == 5:
            lo0, n0, lo1, n1 = self.ints(*a[1:])
            if None in (lo0, n0, lo1, n1) or shp is None or len(shp) != 2:
                return None
            return 0 <= lo0 and lo0 + n0 <= shp[0] and 0 <= lo1 and lo1 + n1 <= shp[1]
        return None


# functions whose result has their first argument's shape, elementwise functions of several arguments,
# and elementwise math
_SAME_SHAPE = {"asarray", "copy", "flip", "cumulative_sum", "cumulative_prod", "cumsum", "_put", "_prod_except",
               "zeros_like", "ones_like", "empty_like", "_prod_except_axes", "_first_extremum",
               "_add_at_first_extremum", "roll", "_cumprod_vjp", "_cumprod_jvp"}
# the steps of rules/arrays.py that change a shape (ShapeFacts._array_step_shape)
_ARRAY_STEPS = {"expand_dims", "squeeze", "stack", "diff", "linspace"}
# (the primitives' printed calls by their registrations' cost class, and the lowering's own calls)
_ELEMENTWISE = callees("elementwise") | {"where", "clip", "copysign"}
_MATH = callees("math") | {"asinh", "acosh", "atanh", "negative", "isnan", "isinf", "isfinite"}


def _elementwise_parts(e):
    """The operands of an elementwise operator expression, or None."""
    if isinstance(e, ast.BinOp):
        return [e.left, e.right]
    if isinstance(e, ast.Compare):
        return [e.left, *e.comparators]
    if isinstance(e, ast.BoolOp):
        return list(e.values)
    if isinstance(e, ast.UnaryOp):
        return [e.operand]
    if isinstance(e, ast.IfExp):
        return [e.body, e.orelse]
    return None


def _broadcast(shapes):
    """NumPy's broadcast of known shapes (None if any is not known or they do not broadcast)."""
    if any(s is None for s in shapes):
        return None
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(nd):
        big = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0} - {1}
        if len(big) > 1:
            return None
        out.append(big.pop() if big else 1)
    return tuple(out)


def _matmul_shape(a, b):
    """The shape of ``A @ B`` for known shapes of at least one axis (else None)."""
    if not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return tuple(a[:-1])
    if len(a) == 1:
        return tuple(b[:-2]) + (b[-1],)
    return tuple(_broadcast([a[:-2], b[:-2]]) or ()) + (a[-2], b[-1])

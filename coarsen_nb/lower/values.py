"""The abstract values of the cost model: what an expression of the generated code evaluates to.

:class:`~coarsen_nb.lower.cost._Model` runs the VJP function with sizes instead of
values; this module says what each expression is worth there — a scalar, an int
(known or not), a tuple of ints, or an array of a known element count, carrying
its values when the lowering derived it from ``arange`` and ints — and models
the helpers of :mod:`coarsen_nb.lower.module` (``_take``, ``_block``,
``_segment_*``, ...) and the array-API calls whose result size is their own.
A mixin of ``_Model``; the shapes it consults are :mod:`coarsen_nb.lower.shapes`.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from coarsen_nb.lower.linalg_shapes import LINALG_CALLS

MASK_FRACTION = 0.5
#: Array-namespace reductions (their work is the size of their input; shared with the shapes).
REDUCTIONS = {"sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "count_nonzero", "mean", "dot",
              "std", "var", "norm"}

# Abstract values: ("scalar",), ("int", value-or-None), ("tuple", (ints...)), ("arr", size, is_mask[, values]).
# Index arrays and masks the lowering derives from ``arange`` and int arguments (the segment counts of a
# triangular loop, ``k == 0`` of a first-iteration branch) carry their values, evaluated with NumPy, so
# the sizes that depend on them (``repeat`` by per-segment counts, a masked gather) are exact; data
# masks (``r < 2.5``) have no values and count as MASK_FRACTION of their elements.
SCALAR = ("scalar",)
KNOWN_LIMIT = 2_000_000        # largest index array whose values the model evaluates


def _arr(values, mask: bool = False):
    """An abstract array of known ``values`` (values dropped above KNOWN_LIMIT, the size kept)."""
    values = np.asarray(values)
    return ("arr", float(values.size), mask, values if values.size <= KNOWN_LIMIT else None)


def known_value(v):
    """The concrete value of an abstract int or array, or None."""
    if v[0] == "int":
        return v[1]
    if v[0] == "arr" and len(v) > 3:
        return v[3]
    return None


_ARRAY_OPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.FloorDiv: np.floor_divide,
              ast.Mod: np.mod, ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or}
_COMPARE_OPS = {ast.Eq: np.equal, ast.NotEq: np.not_equal, ast.Lt: np.less, ast.LtE: np.less_equal,
                ast.Gt: np.greater, ast.GtE: np.greater_equal}


class AbstractValues:
    """The abstract value of an expression (``ev``) for the cost model's ``_Model``."""

    @staticmethod
    def size(v) -> float:
        return v[1] if v[0] == "arr" else 1.0

    def ints(self, *es):
        """The values of int expressions, None for any not known."""
        vals = [self.ev(e) for e in es]
        return [v[1] if v[0] == "int" else None for v in vals]

    def ev(self, e):
        if isinstance(e, ast.Name):
            return self.env.get(e.id, SCALAR)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, int) and not isinstance(e.value, bool):
                return ("int", e.value)
            return ("scalar", e.value) if isinstance(e.value, (float, bool)) else SCALAR
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return self.matmul(e.left, e.right)
        if isinstance(e, ast.BinOp):
            a, b = self.ev(e.left), self.ev(e.right)
            if a[0] == "int" and b[0] == "int" and a[1] is not None and b[1] is not None:
                try:
                    return ("int", _INT_OPS[type(e.op)](a[1], b[1]))
                except (KeyError, ZeroDivisionError):
                    return ("int", None)
            if "scalar" in (a[0], b[0]) and "arr" not in (a[0], b[0]):
                return _scalar(_FLOAT_OPS.get(type(e.op)), number_of(a), number_of(b))
            mask = isinstance(e.op, (ast.BitAnd, ast.BitOr)) and (a[0] == "arr" and a[2] or b[0] == "arr" and b[2])
            ka, kb = known_value(a), known_value(b)
            if "arr" in (a[0], b[0]) and ka is not None and kb is not None and type(e.op) in _ARRAY_OPS:
                with np.errstate(all="ignore"):
                    return _arr(_ARRAY_OPS[type(e.op)](ka, kb), mask)
            if a[0] == b[0] == "arr":               # (n, 1) ** (1, d): the broadcast shape's size
                shp = self.shape(e)
                if shp is not None and math.prod(shp) > max(a[1], b[1]):
                    return ("arr", float(math.prod(shp)), mask)
            return self.join([a, b], mask)
        if isinstance(e, ast.UnaryOp):
            a = self.ev(e.operand)
            if a[0] == "int" and a[1] is not None and isinstance(e.op, ast.USub):
                return ("int", -a[1])
            if a[0] == "scalar":
                return _scalar({ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Not: lambda x: not x}
                               .get(type(e.op)), number_of(a))
            if a[0] == "arr" and known_value(a) is not None and isinstance(e.op, (ast.USub, ast.Invert)):
                return _arr(-known_value(a) if isinstance(e.op, ast.USub) else ~known_value(a), a[2])
            return a[:3] if a[0] == "arr" else SCALAR
        if isinstance(e, ast.Compare):
            vals = [self.ev(e.left)] + [self.ev(c) for c in e.comparators]
            known = [known_value(v) for v in vals]
            if len(vals) == 2 and "arr" in (vals[0][0], vals[1][0]) and all(k is not None for k in known) and \
                    type(e.ops[0]) in _COMPARE_OPS:
                return _arr(_COMPARE_OPS[type(e.ops[0])](*known), True)
            if len(vals) == 2 and "arr" not in (vals[0][0], vals[1][0]) and type(e.ops[0]) in _COMPARE_OPS:
                return _scalar(lambda x, y: bool(_COMPARE_OPS[type(e.ops[0])](x, y)), *map(number_of, vals))
            return self.join(vals, True)
        if isinstance(e, ast.BoolOp):
            vals = []
            for x in e.values:                     # `a and b and c` on known numbers: Python's short circuit
                v = self.ev(x)
                vals.append(v)
                if v[0] == "arr" or number_of(v) is None:
                    break
                if bool(number_of(v)) == isinstance(e.op, ast.Or):
                    return ("scalar", bool(number_of(v)))
            else:
                return ("scalar", bool(number_of(vals[-1])))
            return self.join(vals + [self.ev(x) for x in e.values[len(vals):]], True)
        if isinstance(e, ast.IfExp):
            known = self.truth(e.test)
            if known is not None:
                return self.ev(e.body if known else e.orelse)
            return self.join([self.ev(e.body), self.ev(e.orelse)])
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            if e.attr == "shape":
                shp = self.shape(e.value)
                return ("tuple", tuple(as_int(d) for d in shp) if shp is not None else (None,))
            if e.attr == "T":
                return self.ev(e.value)[:3]
            if e.attr == "size":
                v = self.ev(e.value)
                return ("int", as_int(v[1]) if v[0] == "arr" else 1)
            if isinstance(e.value, ast.Name) and e.value.id == "math" and e.attr in ("inf", "nan", "pi", "e", "tau"):
                return ("scalar", getattr(math, e.attr))
            return SCALAR
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Tuple):
            return ("tuple", tuple(x[1] if x[0] == "int" else None for x in map(self.ev, e.elts)))
        return SCALAR

    def join(self, vals, mask: bool = False):
        arrs = [v for v in vals if v[0] == "arr"]
        if arrs:
            return ("arr", max(v[1] for v in arrs), mask)
        return SCALAR

    def subscript(self, e: ast.Subscript):
        if is_nonzero_call(e):
            return self._nonzero(e.value.args[0])
        base = self.ev(e.value)
        idx = e.slice
        if base[0] == "tuple":
            k = self.ev(idx)
            if k[0] == "int" and k[1] is not None and k[1] < len(base[1]):
                return ("int", base[1][k[1]])
            return ("int", None)
        if base[0] != "arr":
            return SCALAR
        parts = without_ellipsis(idx.elts if isinstance(idx, ast.Tuple) else [idx])
        vals = [self.ev(p) for p in parts]
        arrs = [v for v in vals if v[0] == "arr"]
        if len(parts) == 1 and arrs and known_value(arrs[0]) is not None:
            idx_vals = known_value(arrs[0])
            if known_value(base) is not None:
                return _arr(known_value(base)[idx_vals])
            return ("arr", float(np.count_nonzero(idx_vals)) if arrs[0][2] else float(idx_vals.size), False)
        if arrs:
            size = max(v[1] for v in arrs)
            for p, v in zip(parts, vals, strict=True):
                if v[0] == "arr" and v[2]:
                    frac = self.fraction(p)
                    size = size * (MASK_FRACTION if frac is None else frac)
            return ("arr", size, False)
        if any(isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and p.value is None for p in parts):
            shp = self._subscript_shape(e)
            if shp is not None and all(isinstance(d, int) for d in shp) and math.prod(shp) < base[1]:
                return ("arr", float(math.prod(shp)), base[2])
            return base
        shp = self.env.get(e.value.id + "#shape") if isinstance(e.value, ast.Name) else None
        if shp and len(parts) < len(shp):
            return ("arr", math.prod(shp[len(parts):]), False)
        return SCALAR

    def _nonzero(self, mask):
        """``xp.nonzero(m)[0]``: the positions of m's true elements (values when m is known; otherwise
        as many as its fraction of true elements says, see ``fraction``)."""
        m = self.ev(mask)
        if m[0] != "arr":
            return ("arr", 1.0, False)
        if known_value(m) is not None:
            return _arr(np.nonzero(np.reshape(known_value(m), (-1,)))[0])
        frac = self.fraction(mask)
        return ("arr", float(round(m[1] * (MASK_FRACTION if frac is None else frac))), False)

    def call(self, e: ast.Call):
        f = call_name(e)
        args = [self.ev(a) for a in e.args]
        kw = {k.arg: k.value for k in e.keywords}
        if f in _XP_CALLS:
            return getattr(self, "_" + _XP_CALLS[f])(e, args, kw)
        if f == "matmul" and is_xp_call(e) and len(e.args) == 2:
            return self.matmul(*e.args)
        if f in LINALG_CALLS and (shp := self.shape(e)) is not None:      # xp.linalg.solve(A, b): b's size
            return ("arr", float(math.prod(shp)), False) if shp else SCALAR
        if f == "_sum_to" and len(args) == 2 and args[1][0] == "tuple" and None not in args[1][1]:
            return ("arr", float(math.prod(args[1][1])), False) if args[1][1] else SCALAR   # g summed to a shape
        if isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Name) and e.func.value.id == "math" \
                and len(args) == 1 and args[0][0] in ("int", "scalar"):
            return _scalar(getattr(math, f, None), number_of(args[0]))      # math.exp(m) of a known m
        if f == "len":
            a = e.args[0]
            shp = self.env.get(a.id + "#shape") if isinstance(a, ast.Name) else None
            v = args[0]
            return ("int", shp[0] if shp else (int(v[1]) if v[0] == "arr" else None))
        if f in ("int", "bool", "float") and args and args[0][0] == "int":
            return args[0]
        if f in ("int", "bool", "float") and isinstance(e.func, ast.Name) and args and args[0][0] == "scalar":
            x = number_of(args[0])                    # int(xp.max(k)) of a known k
            if x is None or (f == "int" and not math.isfinite(x)):
                return ("int", None) if f == "int" else SCALAR
            return ("int", int(x)) if f == "int" else ("scalar", bool(x) if f == "bool" else float(x))
        if f in ("max", "min") and isinstance(e.func, ast.Name) and args and all(a[0] == "int" for a in args):
            vals = [a[1] for a in args]      # a trip count: max(0, b - a)
            return ("int", None if None in vals else (max if f == "max" else min)(vals))
        if f == "arange":
            ints = [a[1] if a[0] == "int" else None for a in args]
            if None in ints:
                return ("arr", 1.0, False)
            n = len(range(*ints))
            return _arr(np.arange(*ints)) if n <= KNOWN_LIMIT else ("arr", float(n), False)
        if f == "zeros" and "dtype" in kw and args[0][0] == "int" and args[0][1] is not None:
            return _arr(np.zeros(args[0][1], dtype=int))
        if f in ("zeros", "ones", "empty", "full"):
            return ("arr", self._count(args[0]), False)
        if f in ("maximum", "minimum") and len(args) == 2 and all(known_value(a) is not None for a in args) and \
                "arr" in (args[0][0], args[1][0]):
            return _arr((np.maximum if f == "maximum" else np.minimum)(known_value(args[0]), known_value(args[1])))
        if f in ("cumsum", "cumulative_sum") and args and known_value(args[0]) is not None and args[0][0] == "arr":
            return _arr(np.cumsum(known_value(args[0])))
        if f == "cumulative_prod" and args and known_value(args[0]) is not None and args[0][0] == "arr":
            return _arr(np.cumprod(known_value(args[0])))
        if f == "shape":
            v = args[0]
            shp = self.env.get(e.args[0].id + "#shape") if isinstance(e.args[0], ast.Name) else None
            return ("tuple", shp if shp else ((int(v[1]),) if v[0] == "arr" else ()))
        if f == "repeat" and args[1][0] == "arr" and known_value(args[1]) is not None:
            counts = np.asarray(known_value(args[1])).astype(int)
            size = int(counts.sum())
            if known_value(args[0]) is not None and args[0][0] == "arr" and size <= KNOWN_LIMIT:
                return _arr(np.repeat(known_value(args[0]), counts))
            return ("arr", float(size), False)
        if f == "repeat":
            n = args[0][1] if args[0][0] == "arr" else 1.0
            k = args[1][1] if args[1][0] == "int" and args[1][1] is not None else 1.0
            return ("arr", n * k, False)
        if f == "tile":
            reps = args[1][1] if args[1][0] == "int" else args[1][1][0] if args[1][0] == "tuple" and \
                len(args[1][1]) == 1 else None
            if known_value(args[0]) is not None and args[0][0] == "arr" and reps is not None and \
                    args[0][1] * reps <= KNOWN_LIMIT:
                return _arr(np.tile(known_value(args[0]), reps))
            n = args[0][1] if args[0][0] == "arr" else 1.0
            return ("arr", n * (reps if reps is not None else 1.0), False)
        if f == "bincount":
            m = self.ev(kw["minlength"]) if "minlength" in kw else ("int", None)
            return ("arr", float(m[1]) if m[0] == "int" and m[1] is not None else 1.0, False)
        if f == "reshape" and is_xp_call(e):
            return args[0][:3] if args[0][0] == "arr" else args[0]
        if f == "reshape":
            return ("arr", self.size(self.ev(e.func.value)), False)
        if f in REDUCTIONS and is_xp_call(e) and "axis" in kw and args:
            shp = self.shape(e)
            if shp is not None:
                return ("arr", float(math.prod(shp)), False) if shp else SCALAR
            return args[0][:3] if args[0][0] == "arr" else SCALAR
        if f in ("sum", "prod", "max", "min") and isinstance(e.func, ast.Attribute) and "axis" in kw:
            recv = e.func.value
            if isinstance(recv, ast.Call) and call_name(recv) == "reshape":
                r = self.ev(recv.args[0])
                return ("arr", float(r[1]) if r[0] == "int" and r[1] is not None else 1.0, False)
            return self.ev(recv)
        if f in REDUCTIONS:
            if f == "count_nonzero" and args and args[0][0] == "arr":
                m = known_value(args[0])
                frac = self.fraction(e.args[0]) if m is None else None
                return ("int", int(np.count_nonzero(m)) if m is not None else
                        round(args[0][1] * (MASK_FRACTION if frac is None else frac)))
            if f == "count_nonzero":
                return ("int", None)
            k = known_value(args[0]) if args and args[0][0] == "arr" and is_xp_call(e) and not kw else None
            if f in _KNOWN_REDUCE and k is not None and k.size:
                r = _KNOWN_REDUCE[f](k)                  # xp.max(_pe) of known exponents
                return ("int", int(r)) if k.dtype.kind in "iub" else ("scalar", float(r))
            return SCALAR
        if f in ("asarray", "array") and e.args and isinstance(e.args[0], (ast.List, ast.Tuple)):
            items = [number_of(self.ev(x)) for x in e.args[0].elts]      # a literal of numbers (array_literal)
            return _arr(np.asarray(items)) if None not in items else ("arr", float(len(items)), False)
        if f in ("asarray", "array"):
            v = args[0] if args else SCALAR
            if v[0] != "arr":
                return v
            is_bool = "bool" in ast.unparse(e)
            kv = known_value(v)
            return _arr(kv.astype(bool) if is_bool else kv, is_bool) if kv is not None else ("arr", v[1], is_bool)
        if f == "ravel" and isinstance(e.func, ast.Attribute):
            return self.ev(e.func.value)
        if f == "copy" and isinstance(e.func, ast.Attribute):
            return self.ev(e.func.value)
        if f in ("stack", "diff", "linspace") and is_xp_call(e):    # sized by their shapes (rules/arrays.py)
            shp = self.shape(e)
            if shp is not None:
                return ("arr", float(math.prod(shp)), False)
        return self.join(args + [self.ev(k) for k in kw.values()])

    # the module's helpers (coarsen_nb.lower.module._HELPERS) and array-API functions with their own sizes

    def _take(self, e, args, kw):
        """``_take(x, lo, n, step)``: ``x[lo + step*k]`` for k < n."""
        x, (lo, n, step) = args[0], self.ints(*e.args[1:4])
        if n is None:
            return ("arr", 1.0, False) if x[0] != "arr" else x[:3]
        if known_value(x) is not None and x[0] == "arr" and None not in (lo, step):
            vals = known_value(x)
            return _arr(vals[(lo + step * np.arange(n)) % max(vals.size, 1)] if vals.size else vals, x[2])
        return ("arr", float(max(n, 0)), x[0] == "arr" and x[2])

    def _block(self, e, args, kw):
        """``_block(X, lo0, n0, lo1, n1)``: the (n0, n1) block of X (a view when in bounds)."""
        shp = self.shape(e)
        return ("arr", float(math.prod(shp)), False) if shp is not None else ("arr", 1.0, False)

    def _put(self, e, args, kw):
        """``_put(x, idx, v)``: x, written in place (its known values no longer hold)."""
        return args[0][:3] if args[0][0] == "arr" else args[0]

    def _sized_n(self, e, args, kw):
        """``_segment_*(seg, v, n)``, ``_scatter_sum(idx, v, n)``: n results."""
        n = self.ints(e.args[2])[0] if len(e.args) > 2 else None
        return ("arr", float(n), False) if n is not None else self.join(args[:2])

    def _sized_last(self, e, args, kw):
        """``_sum_scan(b, init, n)``, ``_prod_scan(a, init, n)``, ``_lin_scan(a, b, init, n)``: n results."""
        n = self.ints(e.args[-1])[0] if e.args else None
        return ("arr", float(n), False) if n is not None else self.join(args[:-2])

    def _no_value(self, e, args, kw):
        """``_scatter_add``, ``_block_add``: in place, no result."""
        return SCALAR

    def _broadcast_to(self, e, args, kw):
        shp = self.shape(e)
        x = args[0]
        if shp is None:
            return x
        n = float(math.prod(shp))
        if known_value(x) is not None and x[0] == "arr" and len(shp) == 1 and n <= KNOWN_LIMIT:
            return _arr(np.broadcast_to(known_value(x), (int(n),)), x[2])
        return ("arr", n, x[0] == "arr" and x[2])

    def _concat(self, e, args, kw):
        """``concat([a, b, ...])``: the sum of the sizes (their values, when all known and 1-D)."""
        elts = e.args[0].elts if e.args and isinstance(e.args[0], (ast.List, ast.Tuple)) else []
        vals = [self.ev(x) for x in elts]
        if vals and "axis" not in kw and all(v[0] == "arr" and known_value(v) is not None for v in vals):
            return _arr(np.concatenate([known_value(v) for v in vals]))
        return ("arr", float(sum(self.size(v) for v in vals)), False) if vals else SCALAR

    def _flip(self, e, args, kw):
        x = args[0]
        if x[0] == "arr" and known_value(x) is not None and "axis" not in kw:
            return _arr(np.flip(known_value(x)), x[2])
        return x[:3] if x[0] == "arr" else x

    def _xp_take(self, e, args, kw):
        """``xp.take(x, idx)``: the index's size (values when both are known); ``xp.take(x, idx, axis=k)``:
        x's shape with axis k replaced by the index's shape."""
        x, idx = args[0], args[1]
        if "axis" in kw:
            shp = self.shape(e)
            if shp is not None:
                return ("arr", float(math.prod(shp)), False) if shp else SCALAR
            if idx[0] == "arr" and x[0] == "arr":       # shape not known: a 1-D array, as level values are
                return ("arr", self.size(idx), False)
            return self.join([x, idx])
        if known_value(x) is not None and known_value(idx) is not None and x[0] == idx[0] == "arr":
            return _arr(np.take(known_value(x), known_value(idx)))
        return ("arr", self.size(idx), False)

    def _searchsorted(self, e, args, kw):
        return ("arr", self.size(args[1]), False) if args[1][0] == "arr" else ("int", None)

    def _count(self, v) -> float:
        if v[0] == "int":
            return float(v[1]) if v[1] is not None else 1.0
        if v[0] == "tuple":
            return float(math.prod(x for x in v[1] if x is not None))
        return 1.0


_KNOWN_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "amax": np.max, "amin": np.min}
_XP_CALLS = {"_take": "take", "_block": "block", "_window": "block", "_window_add": "no_value",
             "_window_matvec": "block", "_window_vecmat": "block", "_window_outer_add": "no_value",
             "_put": "put", "_segment_sum": "sized_n", "_segment_prod": "sized_n",
             "_segment_max": "sized_n", "_segment_min": "sized_n", "_scatter_sum": "sized_n",
             "_sum_scan": "sized_last", "_prod_scan": "sized_last", "_lin_scan": "sized_last",
             "_scatter_add": "no_value", "_block_add": "no_value", "broadcast_to": "broadcast_to",
             "concat": "concat", "flip": "flip", "take": "xp_take", "searchsorted": "searchsorted"}


_FLOAT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def number_of(v):
    """The Python number of a known int or scalar abstract value, else None."""
    return v[1] if v[0] in ("int", "scalar") and len(v) > 1 and v[1] is not None else None


def _scalar(fn, *xs):
    """``("scalar", fn(*xs))`` for known numbers (IEEE results: inf, nan), else an unknown scalar."""
    if fn is None or any(x is None for x in xs):
        return SCALAR
    try:
        with np.errstate(all="ignore"):
            r = fn(*(np.float64(x) if isinstance(x, float) else x for x in xs))
    except (ArithmeticError, ValueError, TypeError):
        return SCALAR
    return ("scalar", bool(r) if isinstance(r, (bool, np.bool_)) else float(r))


def is_nonzero_call(e) -> bool:
    """Whether ``e`` is ``xp.nonzero(m)[0]`` (the points of a masked arm)."""
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Call) and call_name(e.value) == "nonzero" \
        and e.value.args and isinstance(e.slice, ast.Constant) and e.slice.value == 0


def is_xp_call(call: ast.Call) -> bool:
    """Whether ``call`` is ``xp.f(...)`` or ``xp.linalg.f(...)``, a function of the array namespace (not a method)."""
    base = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(base, ast.Attribute) and base.attr == "linalg":
        base = base.value
    return isinstance(base, ast.Name) and base.id == "xp"


def as_int(d):
    """A float ``d`` as an int when it is a whole number, else None (shared with the shapes)."""
    return int(d) if d is not None and float(d).is_integer() else None


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def without_ellipsis(parts: list) -> list:
    """An index without its trailing ``...`` (``X[i, ...]``, a row: the same as ``X[i]``)."""
    if parts and isinstance(parts[-1], ast.Constant) and parts[-1].value is Ellipsis:
        return parts[:-1]
    return parts

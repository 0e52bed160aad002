"""The abstract values of calls in the generated code, for the cost model (see :mod:`.values`).

An array-API call's result is sized by its operands and parameters (``arange``, ``repeat``, ``tile``,
``concat``, reductions with ``axis=``, ...), with its values where the lowering derived them from
``arange`` and ints; the generated module's helpers (``_take``, ``_block``, ``_segment_*``, ...) are
modelled one method each.  A mixin of the cost model's ``_Model``, beside
:class:`~coarsen_nb.lower.values.AbstractValues`, whose ``ev`` it calls back.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from coarsen_nb.lower.linalg_shapes import LINALG_CALLS
from coarsen_nb.lower.values import (
    KNOWN_LIMIT,
    MASK_FRACTION,
    REDUCTIONS,
    SCALAR,
    arr_of,
    call_name,
    is_xp_call,
    known_value,
    number_of,
    scalar_result,
)


class CallValues:
    """The abstract value of a call (``call``) for the cost model's ``_Model``."""

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
            return scalar_result(getattr(math, f, None), number_of(args[0]))      # math.exp(m) of a known m
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
            return arr_of(np.arange(*ints)) if n <= KNOWN_LIMIT else ("arr", float(n), False)
        if f == "zeros" and "dtype" in kw and args[0][0] == "int" and args[0][1] is not None:
            return arr_of(np.zeros(args[0][1], dtype=int))
        if f in ("zeros", "ones", "empty", "full"):
            return ("arr", self._count(args[0]), False)
        if f in ("maximum", "minimum") and len(args) == 2 and all(known_value(a) is not None for a in args) and \
                "arr" in (args[0][0], args[1][0]):
            return arr_of((np.maximum if f == "maximum" else np.minimum)(known_value(args[0]), known_value(args[1])))
        if f in ("cumsum", "cumulative_sum") and args and known_value(args[0]) is not None and args[0][0] == "arr":
            return arr_of(np.cumsum(known_value(args[0])))
        if f == "cumulative_prod" and args and known_value(args[0]) is not None and args[0][0] == "arr":
            return arr_of(np.cumprod(known_value(args[0])))
        if f == "shape":
            v = args[0]
            shp = self.env.get(e.args[0].id + "#shape") if isinstance(e.args[0], ast.Name) else None
            return ("tuple", shp if shp else ((int(v[1]),) if v[0] == "arr" else ()))
        if f == "repeat" and args[1][0] == "arr" and known_value(args[1]) is not None:
            counts = np.asarray(known_value(args[1])).astype(int)
            size = int(counts.sum())
            if known_value(args[0]) is not None and args[0][0] == "arr" and size <= KNOWN_LIMIT:
                return arr_of(np.repeat(known_value(args[0]), counts))
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
                return arr_of(np.tile(known_value(args[0]), reps))
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
            return arr_of(np.asarray(items)) if None not in items else ("arr", float(len(items)), False)
        if f in ("asarray", "array"):
            v = args[0] if args else SCALAR
            if v[0] != "arr":
                return v
            is_bool = "bool" in ast.unparse(e)
            kv = known_value(v)
            return arr_of(kv.astype(bool) if is_bool else kv, is_bool) if kv is not None else ("arr", v[1], is_bool)
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
            return arr_of(vals[(lo + step * np.arange(n)) % max(vals.size, 1)] if vals.size else vals, x[2])
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
            return arr_of(np.broadcast_to(known_value(x), (int(n),)), x[2])
        return ("arr", n, x[0] == "arr" and x[2])

    def _concat(self, e, args, kw):
        """``concat([a, b, ...])``: the sum of the sizes (their values, when all known and 1-D)."""
        elts = e.args[0].elts if e.args and isinstance(e.args[0], (ast.List, ast.Tuple)) else []
        vals = [self.ev(x) for x in elts]
        if vals and "axis" not in kw and all(v[0] == "arr" and known_value(v) is not None for v in vals):
            return arr_of(np.concatenate([known_value(v) for v in vals]))
        return ("arr", float(sum(self.size(v) for v in vals)), False) if vals else SCALAR

    def _flip(self, e, args, kw):
        x = args[0]
        if x[0] == "arr" and known_value(x) is not None and "axis" not in kw:
            return arr_of(np.flip(known_value(x)), x[2])
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
            return arr_of(np.take(known_value(x), known_value(idx)))
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

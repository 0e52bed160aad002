"""The abstract values of the cost model: what an expression of the generated code evaluates to.

:class:`~coarsen_nb.lower.cost._Model` runs the VJP function with sizes instead of
values; this module says what each expression is worth there — a scalar, an int
(known or not), a tuple of ints, or an array of a known element count, carrying
its values when the lowering derived it from ``arange`` and ints — and models
the helpers of :mod:`coarsen_nb.lower.module` (``_take``, ``_block``,
``_segment_*``, ...) and the array-API calls whose result size is their own
(those calls: :mod:`coarsen_nb.lower.value_calls`).  A mixin of ``_Model``; the
shapes it consults are :mod:`coarsen_nb.lower.shapes`.
"""

from __future__ import annotations

import ast
import math

import numpy as np

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


def arr_of(values, mask: bool = False):
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
                return scalar_result(_FLOAT_OPS.get(type(e.op)), number_of(a), number_of(b))
            mask = isinstance(e.op, (ast.BitAnd, ast.BitOr)) and (a[0] == "arr" and a[2] or b[0] == "arr" and b[2])
            ka, kb = known_value(a), known_value(b)
            if "arr" in (a[0], b[0]) and ka is not None and kb is not None and type(e.op) in _ARRAY_OPS:
                with np.errstate(all="ignore"):
                    return arr_of(_ARRAY_OPS[type(e.op)](ka, kb), mask)
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
                return scalar_result({ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Not: lambda x: not x}
                               .get(type(e.op)), number_of(a))
            if a[0] == "arr" and known_value(a) is not None and isinstance(e.op, (ast.USub, ast.Invert)):
                return arr_of(-known_value(a) if isinstance(e.op, ast.USub) else ~known_value(a), a[2])
            return a[:3] if a[0] == "arr" else SCALAR
        if isinstance(e, ast.Compare):
            vals = [self.ev(e.left)] + [self.ev(c) for c in e.comparators]
            known = [known_value(v) for v in vals]
            if len(vals) == 2 and "arr" in (vals[0][0], vals[1][0]) and all(k is not None for k in known) and \
                    type(e.ops[0]) in _COMPARE_OPS:
                return arr_of(_COMPARE_OPS[type(e.ops[0])](*known), True)
            if len(vals) == 2 and "arr" not in (vals[0][0], vals[1][0]) and type(e.ops[0]) in _COMPARE_OPS:
                return scalar_result(lambda x, y: bool(_COMPARE_OPS[type(e.ops[0])](x, y)), *map(number_of, vals))
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
                return arr_of(known_value(base)[idx_vals])
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
            return arr_of(np.nonzero(np.reshape(known_value(m), (-1,)))[0])
        frac = self.fraction(mask)
        return ("arr", float(round(m[1] * (MASK_FRACTION if frac is None else frac))), False)


_FLOAT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def number_of(v):
    """The Python number of a known int or scalar abstract value, else None."""
    return v[1] if v[0] in ("int", "scalar") and len(v) > 1 and v[1] is not None else None


def scalar_result(fn, *xs):
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

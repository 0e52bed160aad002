"""The cost model of one SOI selection: what a gradient call will do.

The model counts what the *generated code* does, not what an idealized
kernel would: it lowers the plan with the same :class:`~coarsen_nb.lower.module.ModuleWriter`
the runtime uses, then abstractly executes the VJP function's statements
with sizes instead of values.  Each abstract value is a scalar, a known (or
unknown) int, or an array of a known element count; parameter shapes seed
it, ``x.shape``/``arange``/``repeat``/``tile``/``_take``/``_segment_*`` and the
other helpers of :mod:`coarsen_nb.lower.module` propagate it.  Shapes are
tracked where a size depends on more than the element count: a ``reshape``
or ``broadcast_to`` to a tuple, ``_block(X, lo0, n0, lo1, n1)`` (``(n0, n1)``),
``.T``, basic indexing, a reduction along an ``axis`` and ``A @ B`` (without
known shapes, a matrix times a vector: larger size / smaller size elements).
Per executed statement:

* **ops** — arithmetic nodes (binary/unary operators, comparisons, math and
  array functions) × the statement's *work*, the largest element count among
  its result and the arrays it reads (a reduction costs its input size);
* **allocation** — the right-hand side produces an array that shares no
  memory with what it reads (an array temp, an index array, a mask, a
  ``Piecewise`` buffer, a gather, a scatter, an ``asarray`` copy or dtype
  cast); a name, basic indexing, ``.T``, ``reshape``/``broadcast_to`` of a
  contiguous array, an in-bounds ``_take``/``_block`` and ``_put`` (in place)
  are views, not allocations; ``xp.reshape(_block(...), (-1,))`` is a view only
  when the block flattens without a copy (one row, one column or whole rows;
  with ints not known, whole rows);
* **bytes moved** — 8 bytes × (result + array operands) of array statements.

Statements before ``_value =`` are the forward sweep, the rest the reverse
sweep.  Iterated loops (``while True:`` of an :class:`~coarsen_nb.plan.IterStep`
and its reverse ``for`` over the tape) multiply their body by the trip
count, from the loop's counter and bound when both are known at entry;
otherwise (``while`` conditions, ``break``, an int parameter whose value is
not given) the count is *unknown*: 1 is used and the loop is listed in
``unknown_trips``.  A ``while`` on known ints (the Hillis–Steele scan's
``while sh < n:``) and ``if``/``else`` on known ints are run as they would be
(``and``/``or`` of known conditions, ``int(xp.max(k))`` of a known array: the power
table's ``if d > 0 and int(xp.min(_pe)) >= 0 and _pm <= 2 * d + 16:``).
Index arrays and masks derived from ``arange`` and
ints carry their values (evaluated with NumPy up to ``KNOWN_LIMIT``
elements), so triangular segment sizes (``repeat`` by per-row counts) and
index masks (``k == 0``) are exact; a data mask (``r < 2.5``) is assumed
true on ``MASK_FRACTION`` (half) of its elements unless ``masks`` gives its
fraction (``~m`` then has the complement), and is listed in ``unknown_masks``;
a scalar ``if`` on data counts each arm at weight one half.
"""

from __future__ import annotations

import ast
import math
from dataclasses import asdict, dataclass, field

import numpy as np
import sympy as sp

from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.plan import IterStep, KernelStep, Plan

MASK_FRACTION = 0.5
_NO_OPS = {"arange", "zeros", "ones", "empty", "full", "shape", "array", "asarray", "len", "int", "bool", "float",
           "repeat", "tile", "concatenate", "concat", "flip", "reshape", "ravel", "copy", "append", "any",
           "count_nonzero", "range", "zeros_like", "ones_like", "ndim", "size"}
_REDUCE = {"sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "count_nonzero", "mean", "dot"}


@dataclass
class Cost:
    """What one gradient call does (see the module docstring)."""

    forward_ops: float
    derivative_ops: float
    allocations: float
    bytes_moved: float
    sois: int
    unknown_trips: dict = field(default_factory=dict)   # loop label -> why its trip count is unknown
    unknown_masks: dict = field(default_factory=dict)   # mask name -> the data condition assumed MASK_FRACTION true

    def as_dict(self) -> dict:
        d = asdict(self)
        d["trip_counts"] = "all known" if not self.unknown_trips else \
            "unknown for " + ", ".join(sorted(self.unknown_trips)) + " (counted once)"
        d["mask_fractions"] = "all known" if not self.unknown_masks else \
            f"{MASK_FRACTION:g} assumed for " + ", ".join(sorted(self.unknown_masks))
        return d


def estimate(plan: Plan, wrt: tuple[str, ...], shapes: tuple, ints: dict | None = None,
             trips: dict | None = None, masks: dict | None = None) -> Cost:
    """The cost of one ``f.grad`` / ``f.vjp`` call for arguments of ``shapes``.

    ``ints`` gives the values of int parameters (trip counts often depend on
    them); ``trips`` overrides a loop's trip count by label (e.g. the count a
    forward run recorded for a ``while`` loop); ``masks`` gives the fraction of true elements of a
    data mask, by its name in the generated code (e.g. the fraction a forward run observed; the
    masks the model had to assume are ``Cost.unknown_masks``).

    Example
    -------
    >>> import coarsen_nb as cn, numpy as np
    >>> src = "def f(x):\\n    s = 0.0\\n    for i in range(len(x)):\\n        s += x[i] * x[i]\\n    return s\\n"
    >>> f = cn.coarsen(src)
    >>> _ = f.grad(np.ones(100))
    >>> estimate(f.plan, ("x",), ((100,),)).allocations > 0
    True
    """
    writer = ModuleWriter(plan, tuple(wrt))
    tree = ast.parse(writer.source())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == plan.name + "_vjp")
    model = _Model(plan, writer, shapes, ints or {}, trips or {}, masks or {})
    model.run(fn)
    return Cost(model.ops[0], model.ops[1], model.allocs, model.bytes, len(plan.kernels()), model.unknown,
                model.unknown_masks)


# Abstract values: ("scalar",), ("int", value-or-None), ("tuple", (ints...)), ("arr", size, is_mask[, values]).
# Index arrays and masks the lowering derives from ``arange`` and int arguments (the segment counts of a
# triangular loop, ``k == 0`` of a first-iteration branch) carry their values, evaluated with NumPy, so
# the sizes that depend on them (``repeat`` by per-segment counts, a masked gather) are exact; data
# masks (``r < 2.5``) have no values and count as MASK_FRACTION of their elements.
_S = ("scalar",)
KNOWN_LIMIT = 2_000_000        # largest index array whose values the model evaluates
MAX_PASSES = 64                # most passes of a `while` on known ints the model runs (a scan's log2 n)


def _arr(values, mask: bool = False):
    """An abstract array of known ``values`` (values dropped above KNOWN_LIMIT, the size kept)."""
    values = np.asarray(values)
    return ("arr", float(values.size), mask, values if values.size <= KNOWN_LIMIT else None)


def _known(v):
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


class _Model:
    def __init__(self, plan: Plan, writer: ModuleWriter, shapes, ints, trips, masks):
        self.plan, self.w, self.trips_given, self.masks_given = plan, writer, trips, masks
        self.unknown_masks: dict = {}
        self.env: dict = {}
        for p, shape in zip(plan.params, tuple(shapes) + ((),) * (len(plan.params) - len(shapes)), strict=True):
            py = writer.py(p)
            if shape:
                self.env[py] = ("arr", math.prod(shape), False)
                self.env[py + "#shape"] = tuple(shape)
            else:
                self.env[py] = ("int", int(ints[p])) if p in ints else _S
        self.loops = {writer.tape_name(st): st for st in _iter_steps(plan.steps)}
        self.last_tape = ""
        self.trip_of: dict[str, float] = {}
        self.ops = [0.0, 0.0]
        self.allocs = 0.0
        self.bytes = 0.0
        self.unknown: dict = {}
        self.phase = 0
        # names whose number (int or float) the model's single pass over a loop body does not know:
        # assigned in an iterated loop (carried between passes) or in an arm of an undecided `if`
        self.stale: set[str] = set()

    # -- statements ----------------------------------------------------------------------

    def run(self, fn: ast.FunctionDef) -> None:
        self.block(fn.body, 1.0)

    def block(self, stmts, mult: float) -> None:
        for s in stmts:
            self.stmt(s, mult)

    def stmt(self, s, mult: float) -> None:
        if isinstance(s, ast.Assign):
            t = s.targets[0]
            if isinstance(t, ast.Name) and t.id == "_value":
                self.phase = 1
            if isinstance(t, ast.Name) and t.id.startswith("_tape_"):
                self.last_tape = t.id
            if isinstance(t, ast.Tuple):
                vals = s.value.elts if isinstance(s.value, ast.Tuple) else [None] * len(t.elts)
                evs = [self.ev(vv) if vv is not None else None for vv in vals]     # all read, then bound
                for tt, vv, v in zip(t.elts, vals, evs, strict=True):
                    if vv is not None:
                        self.bind(tt.id, vv, v)
                    else:
                        self._freshness(tt.id, vv)     # from a tape: the sizes stay, the numbers do not
                return
            v = self.ev(s.value)
            if not isinstance(s.value, (ast.Name, ast.Constant)):     # `y = x` binds a name, moves nothing
                self.account(s.value, v, mult)
            if isinstance(t, ast.Name):
                self.bind(t.id, s.value, v)
        elif isinstance(s, ast.AugAssign):
            self.account(s.value, self.ev(s.value), mult, extra_op=1)
            t = s.target
            if isinstance(t, ast.Name) and self.env.get(t.id, _S)[0] in ("int", "scalar"):
                e = ast.BinOp(ast.Name(t.id, ast.Load()), s.op, s.value)
                self.env[t.id] = self.ev(e)                                              # `sh *= 2`
                self._freshness(t.id, e)
        elif isinstance(s, ast.Expr):
            if not (isinstance(s.value, ast.Call) and _fname(s.value) == "append"):   # a tape keeps references
                self.account(s.value, self.ev(s.value), mult, alloc=False)
        elif isinstance(s, ast.If):
            test = s.test
            if isinstance(test, ast.Call) and _fname(test) == "any":
                m = _known(self.ev(test.args[0])) if test.args else None
                frac = self.fraction(test.args[0]) if test.args else None
                if (m is None or np.any(m)) and frac != 0:
                    self.block(s.body, mult)
            elif _is_length(test):                         # `if ix.shape[0]:` an arm's points exist
                if self.size(self.ev(test.value.value)) > 0:
                    self.block(s.body, mult)
            elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                self.block(s.body, mult)                  # `if not cond: break` (no work)
            elif (known := self.truth(test)) is not None:
                self.block(s.body if known else s.orelse, mult)      # `if n > 0:` on known numbers
            else:
                self.block(s.body, mult * 0.5)
                self.block(s.orelse, mult * 0.5)
                self.stale |= _assigned(s.body + s.orelse)          # either arm's value: not known
        elif isinstance(s, ast.While) and not (isinstance(s.test, ast.Constant) and s.test.value is True):
            # A loop on ints the model knows (the Hillis–Steele scan's `while sh < n:`, ⌈log₂ n⌉ passes):
            # run abstractly, pass by pass; a condition it cannot decide counts one pass, as unknown.
            for _ in range(MAX_PASSES):
                known = self.truth(s.test)
                if known is False:
                    break
                self.block(s.body, mult)
                if known is None:
                    self.unknown[f"line {s.lineno}"] = f"while condition `{ast.unparse(s.test)}`"
                    break
        elif isinstance(s, ast.While):
            # Every `while True:` of the VJP function records a tape, created just before it.  The body
            # runs once for all its passes, so the numbers it carries from pass to pass are not known.
            n = self.trip_count(self.loops.get(self.last_tape), self.last_tape)
            self.stale |= _assigned(s.body)
            self.block(s.body, mult * n)
        elif isinstance(s, ast.For):
            label = _tape_label(s)
            n = self.trip_of.get(label, 1.0)
            self.stale |= _assigned(s.body) | _assigned([ast.Assign([s.target], s.iter)])
            self.block(s.body, mult * n)
        # pass, break, return: no work

    def account(self, e, v, mult: float, alloc: bool = True, extra_op: int = 0) -> None:
        # the arrays it reads (each name once) and its result; an empty array result does no work
        reads = [self.env[n] for n in {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
                 if self.env.get(n, _S)[0] == "arr"]
        work = max([self.size(v)] + [r[1] for r in reads])
        nops = _count_ops(e) + extra_op
        self.ops[self.phase] += nops * work * mult
        if alloc and v[0] == "arr" and self.allocates(e):
            self.allocs += mult
        if v[0] == "arr" or work > 1:
            self.bytes += 8 * mult * (self.size(v) + sum(r[1] for r in reads))

    @staticmethod
    def size(v) -> float:
        return v[1] if v[0] == "arr" else 1.0

    def _freshness(self, name: str, e) -> None:
        """A number computed from numbers that are not known in this pass (see ``stale``) is not either."""
        if e is None or _value_reads(e) & self.stale:
            self.stale.add(name)
        else:
            self.stale.discard(name)

    def bind(self, name: str, e, v) -> None:
        """``name = e`` with abstract value ``v``: also its shape and dtype kind where known."""
        self.env[name] = v
        self._freshness(name, e)
        frac = None
        if v[0] == "arr" and v[2] and _known(v) is None:         # a data mask: what fraction is true
            frac = self.masks_given.get(name, self.fraction(e))
            if frac is None:
                self.unknown_masks[name] = ast.unparse(e)
        for key, fact in (("#shape", self.shape(e)), ("#dtype", self.dtype(e)), ("#true", frac)):
            if v[0] == "arr" and fact is not None:
                self.env[name + key] = fact
            else:
                self.env.pop(name + key, None)

    def fraction(self, e):
        """The fraction of true elements of the mask ``e`` where given or derived (``~m``), else None."""
        if isinstance(e, ast.Name):
            return self.env.get(e.id + "#true")
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Invert, ast.Not)):
            f = self.fraction(e.operand)
            return None if f is None else 1.0 - f
        if isinstance(e, ast.Call) and _fname(e) in ("asarray", "reshape") and e.args:
            return self.fraction(e.args[0])
        return None

    def truth(self, e):
        """The value of a condition on known numbers (``n > 0``, ``sh < n``, ``s * exp(m) > 0`` from a
        constant initial state), else None; never from a number a loop carries (``stale``)."""
        if _value_reads(e) & self.stale:
            return None
        v = self.ev(e)
        x = _number(v)
        return None if x is None else bool(x)

    def ints(self, *es):
        """The values of int expressions, None for any not known."""
        vals = [self.ev(e) for e in es]
        return [v[1] if v[0] == "int" else None for v in vals]

    # -- shapes, dtypes, views ------------------------------------------------------------------

    def shape(self, e):
        """The shape of ``e`` where the model can tell (``()`` for a scalar), else None.

        Sizes are what the abstract values carry; shapes matter where a statement's size depends on
        more than the element count: ``A @ B``, a reduction along an axis, ``_block`` and ``.T``.
        """
        if _is_nonzero(e):
            return (_as_int(self._nonzero(e.value.args[0])[1]),)
        if isinstance(e, ast.Name):
            if e.id + "#shape" in self.env:
                return self.env[e.id + "#shape"]
            v = self.env.get(e.id, _S)
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
        f, a = _fname(e), e.args
        kw = {k.arg: k.value for k in e.keywords}
        if f == "matmul" and len(a) == 2:
            return _matmul_shape(self.shape(a[0]), self.shape(a[1]))
        if f == "concat" and a and isinstance(a[0], (ast.List, ast.Tuple)) and a[0].elts:
            shapes = [self.shape(x) for x in a[0].elts]
            ax = self.ints(kw["axis"])[0] if "axis" in kw else 0
            if any(s is None or len(s) != len(shapes[0]) for s in shapes) or ax is None or not shapes[0]:
                return None
            ax %= len(shapes[0])
            return shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:]
        if f == "take" and _is_xp(e) and len(a) == 2:
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
        if f in ("reshape", "broadcast_to") and _is_xp(e) and len(a) == 2:
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
        if f in _REDUCE and _is_xp(e) and a:
            shp = self.shape(a[0])
            if "axis" not in kw:
                return ()
            ax = self.ev(kw["axis"])
            if shp is None or ax[0] != "int" or ax[1] is None or not -len(shp) <= ax[1] < len(shp):
                return None
            k = ax[1] % len(shp)
            keep = isinstance(kw.get("keepdims"), ast.Constant) and kw["keepdims"].value is True
            return shp[:k] + ((1,) if keep else ()) + shp[k + 1:]
        if f in _SAME_SHAPE and a:
            return self.shape(a[0])
        if f in _ELEMENTWISE or (f in _MATH and _is_xp(e)):
            return _broadcast([self.shape(x) for x in a])
        # anything else: its element count, one axis, when everything it reads has at most one
        v = self.ev(e)
        names = [n for n in ast.walk(e) if isinstance(n, ast.Name) and n.id != "xp"]
        if v[0] == "arr" and all((s := self.shape(n)) is not None and len(s) <= 1 for n in names):
            return (v[1],)
        return None if v[0] == "arr" else ()

    def _subscript_shape(self, e: ast.Subscript):
        """Basic indexing (slices, ``None``, ints) of a known shape; a gather has the index's size."""
        base = self.shape(e.value)
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
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
            v = self.env.get(e.id, _S)
            if v[0] == "arr" and v[2]:
                return "b"
            k = _known(v) if v[0] == "arr" else None
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
        f = _fname(e)
        kw = {k.arg: k.value for k in e.keywords}
        if "dtype" in kw:
            name = ast.unparse(kw["dtype"])
            return "b" if "bool" in name else "i" if "int" in name else "f" if "float" in name else None
        if f in ("arange", "repeat", "searchsorted", "argsort", "argmax", "argmin", "count_nonzero"):
            return "i"
        if f in ("zeros", "ones", "empty", "full", "_segment_sum", "_segment_prod", "_segment_max",
                 "_segment_min", "_scatter_sum", "_erf", "_prod_except") or f in _MATH:
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

        A name, basic indexing (slices, ``None``, ints), ``.T``, ``reshape``/``broadcast_to`` of a
        contiguous array, ``asarray`` without a copy or a dtype change, an in-bounds ``_take`` or
        ``_block`` and ``_put`` (in place, returns its array) are views of their operand.
        """
        if isinstance(e, (ast.Name, ast.Constant)):
            return False
        if isinstance(e, ast.Attribute) and e.attr == "T":
            return self.allocates(e.value)
        if isinstance(e, ast.Subscript):
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            basic = all(isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and p.value is None
                        or self.ev(p)[0] == "int" for p in parts)
            return self.allocates(e.value) if basic else True
        if not isinstance(e, ast.Call):
            return True
        f, a = _fname(e), e.args
        kw = {k.arg: k.value for k in e.keywords}
        if f in ("reshape", "ravel") and isinstance(e.func, ast.Attribute) and not _is_xp(e):
            return self.allocates(e.func.value)                   # x.reshape(...), x.ravel()
        if not a:
            return True
        if f == "reshape" and isinstance(a[0], ast.Attribute) and a[0].attr == "T":
            shp = self.shape(a[0].value)          # the transpose of a 2-D array is not contiguous
            return shp is None or sum(d != 1 for d in shp) > 1 or self.allocates(a[0])
        if f == "reshape" and isinstance(a[0], ast.Call) and _fname(a[0]) == "_block":
            return self.allocates(a[0]) or not self._block_reshapes_as_view(e)
        if f in ("reshape", "broadcast_to", "_put"):
            return self.allocates(a[0])
        if f == "asarray":
            copy = kw.get("copy")
            if isinstance(copy, ast.Constant) and copy.value is True:
                return True
            want, have = self.dtype(e) if "dtype" in kw else None, self.dtype(a[0])
            return (want is not None and have is not None and want != have) or self.allocates(a[0])
        if f in ("_take", "_block"):
            return self._in_bounds(e) is False or self.allocates(a[0])
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
        cols = _as_int(shp[1]) if shp is not None and len(shp) == 2 else None
        if None in (n0, n1, cols):
            return True
        return n0 <= 1 or n1 <= 1 or n1 == cols

    def _in_bounds(self, e):
        """Whether ``_take(x, lo, n, step)`` / ``_block(x, lo0, n0, lo1, n1)`` is in bounds (a view),
        None when the model does not know the ints or the shape (then it is taken to be)."""
        f, a = _fname(e), e.args
        shp = self.shape(a[0])
        if f == "_take" and len(a) == 4:
            lo, n, step = self.ints(*a[1:])
            if None in (lo, n, step) or not shp:
                return None
            return n > 0 and step > 0 and 0 <= lo and lo + step * (n - 1) < shp[0]
        if f == "_block" and len(a) == 5:
            lo0, n0, lo1, n1 = self.ints(*a[1:])
            if None in (lo0, n0, lo1, n1) or shp is None or len(shp) != 2:
                return None
            return 0 <= lo0 and lo0 + n0 <= shp[0] and 0 <= lo1 and lo1 + n1 <= shp[1]
        return None

    # -- trip counts ---------------------------------------------------------------------------

    def trip_count(self, step: IterStep | None, tape: str) -> float:
        if step is None:
            return 1.0
        label = step.label
        if label in self.trips_given:
            n = float(self.trips_given[label])
        else:
            n, why = self._bounds(step)
            if n is None:
                self.unknown[label] = why
                n = 1.0
        self.trip_of[tape] = n
        return n

    def _bounds(self, step: IterStep):
        """(trip count, None) from the loop counter and its bound, or (None, why)."""
        cond_expr = None
        for s in step.header:
            if isinstance(s, KernelStep) and step.cond in s.kernel.output_names:
                cond_expr, kern = s.kernel.exprs()[step.cond], s.kernel
        if cond_expr is None:
            return None, "its condition is not a kernel"
        if any("$brk" in n or "$done" in n for n in kern.scalars.values()):
            return None, "break/return: the trip count is data-dependent"
        rels = [r for r in cond_expr.atoms(sp.StrictLessThan)]
        if len(rels) != 1:
            return None, f"while condition `{cond_expr}`"
        lhs, rhs = rels[0].lhs, rels[0].rhs
        names = {**kern.scalars}
        counter = names.get(lhs)
        mu = next((m for m in step.mus if m[0] == counter), None)
        if mu is None:
            return None, f"while condition `{cond_expr}`"
        start = self._int_of_ir(mu[1])
        bound = self._int_of_sym(rhs, names)
        if start is None or bound is None:
            return None, f"bound `{rhs}` not known from the shapes"
        return float(max(0, bound - start)), None

    def _int_of_ir(self, e):
        from coarsen_nb import ir
        if isinstance(e, ir.Const) and isinstance(e.value, int):
            return e.value
        if isinstance(e, ir.Name):
            v = self.env.get(self.w.py(e.id), _S)
            return v[1] if v[0] == "int" else None
        return None

    def _int_of_sym(self, e, names):
        sub = {}
        for s in e.free_symbols:
            name = names.get(s)
            v = self.env.get(self.w.py(name), _S) if name else _S
            if v[0] != "int" or v[1] is None:
                return None
            sub[s] = v[1]
        r = sp.sympify(e).xreplace(sub)
        r = sp.sympify(r)
        return int(r) if r.is_Integer else None

    # -- expressions -------------------------------------------------------------------------

    def ev(self, e):
        if isinstance(e, ast.Name):
            return self.env.get(e.id, _S)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, int) and not isinstance(e.value, bool):
                return ("int", e.value)
            return ("scalar", e.value) if isinstance(e.value, (float, bool)) else _S
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
                return _scalar(_FLOAT_OPS.get(type(e.op)), _number(a), _number(b))
            mask = isinstance(e.op, (ast.BitAnd, ast.BitOr)) and (a[0] == "arr" and a[2] or b[0] == "arr" and b[2])
            ka, kb = _known(a), _known(b)
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
                               .get(type(e.op)), _number(a))
            if a[0] == "arr" and _known(a) is not None and isinstance(e.op, (ast.USub, ast.Invert)):
                return _arr(-_known(a) if isinstance(e.op, ast.USub) else ~_known(a), a[2])
            return a[:3] if a[0] == "arr" else _S
        if isinstance(e, ast.Compare):
            vals = [self.ev(e.left)] + [self.ev(c) for c in e.comparators]
            known = [_known(v) for v in vals]
            if len(vals) == 2 and "arr" in (vals[0][0], vals[1][0]) and all(k is not None for k in known) and \
                    type(e.ops[0]) in _COMPARE_OPS:
                return _arr(_COMPARE_OPS[type(e.ops[0])](*known), True)
            if len(vals) == 2 and "arr" not in (vals[0][0], vals[1][0]) and type(e.ops[0]) in _COMPARE_OPS:
                return _scalar(lambda x, y: bool(_COMPARE_OPS[type(e.ops[0])](x, y)), *map(_number, vals))
            return self.join(vals, True)
        if isinstance(e, ast.BoolOp):
            vals = []
            for x in e.values:                     # `a and b and c` on known numbers: Python's short circuit
                v = self.ev(x)
                vals.append(v)
                if v[0] == "arr" or _number(v) is None:
                    break
                if bool(_number(v)) == isinstance(e.op, ast.Or):
                    return ("scalar", bool(_number(v)))
            else:
                return ("scalar", bool(_number(vals[-1])))
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
                return ("tuple", tuple(_as_int(d) for d in shp) if shp is not None else (None,))
            if e.attr == "T":
                return self.ev(e.value)[:3]
            if e.attr == "size":
                v = self.ev(e.value)
                return ("int", _as_int(v[1]) if v[0] == "arr" else 1)
            if isinstance(e.value, ast.Name) and e.value.id == "math" and e.attr in ("inf", "nan", "pi", "e", "tau"):
                return ("scalar", getattr(math, e.attr))
            return _S
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Tuple):
            return ("tuple", tuple(x[1] if x[0] == "int" else None for x in map(self.ev, e.elts)))
        return _S

    def join(self, vals, mask: bool = False):
        arrs = [v for v in vals if v[0] == "arr"]
        if arrs:
            return ("arr", max(v[1] for v in arrs), mask)
        return _S

    def matmul(self, left, right):
        """``A @ B``: the product's shape where both are known; otherwise a matrix times a vector, whose
        result has (larger size) / (smaller size) elements."""
        a, b = self.ev(left), self.ev(right)
        shp = _matmul_shape(self.shape(left), self.shape(right))
        if shp is not None:
            return ("arr", float(math.prod(shp)), False) if shp else _S
        if a[0] != "arr" or b[0] != "arr":
            return self.join([a, b])
        big, small = max(a[1], b[1]), min(a[1], b[1])
        return ("arr", big / small, False) if small > 0 and big != small else _S

    def subscript(self, e: ast.Subscript):
        if _is_nonzero(e):
            return self._nonzero(e.value.args[0])
        base = self.ev(e.value)
        idx = e.slice
        if base[0] == "tuple":
            k = self.ev(idx)
            if k[0] == "int" and k[1] is not None and k[1] < len(base[1]):
                return ("int", base[1][k[1]])
            return ("int", None)
        if base[0] != "arr":
            return _S
        parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        vals = [self.ev(p) for p in parts]
        arrs = [v for v in vals if v[0] == "arr"]
        if len(parts) == 1 and arrs and _known(arrs[0]) is not None:
            idx_vals = _known(arrs[0])
            if _known(base) is not None:
                return _arr(_known(base)[idx_vals])
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
        return _S

    def _nonzero(self, mask):
        """``xp.nonzero(m)[0]``: the positions of m's true elements (values when m is known; otherwise
        as many as its fraction of true elements says, see ``fraction``)."""
        m = self.ev(mask)
        if m[0] != "arr":
            return ("arr", 1.0, False)
        if _known(m) is not None:
            return _arr(np.nonzero(np.reshape(_known(m), (-1,)))[0])
        frac = self.fraction(mask)
        return ("arr", float(round(m[1] * (MASK_FRACTION if frac is None else frac))), False)

    def call(self, e: ast.Call):
        f = _fname(e)
        args = [self.ev(a) for a in e.args]
        kw = {k.arg: k.value for k in e.keywords}
        if f in _XP_CALLS:
            return getattr(self, "_" + _XP_CALLS[f])(e, args, kw)
        if f == "matmul" and _is_xp(e) and len(e.args) == 2:
            return self.matmul(*e.args)
        if isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Name) and e.func.value.id == "math" \
                and len(args) == 1 and args[0][0] in ("int", "scalar"):
            return _scalar(getattr(math, f, None), _number(args[0]))      # math.exp(m) of a known m
        if f == "len":
            a = e.args[0]
            shp = self.env.get(a.id + "#shape") if isinstance(a, ast.Name) else None
            v = args[0]
            return ("int", shp[0] if shp else (int(v[1]) if v[0] == "arr" else None))
        if f in ("int", "bool", "float") and args and args[0][0] == "int":
            return args[0]
        if f in ("int", "bool", "float") and isinstance(e.func, ast.Name) and args and args[0][0] == "scalar":
            x = _number(args[0])                    # int(xp.max(k)) of a known k
            if x is None or (f == "int" and not math.isfinite(x)):
                return ("int", None) if f == "int" else _S
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
        if f in ("maximum", "minimum") and len(args) == 2 and all(_known(a) is not None for a in args) and \
                "arr" in (args[0][0], args[1][0]):
            return _arr((np.maximum if f == "maximum" else np.minimum)(_known(args[0]), _known(args[1])))
        if f in ("cumsum", "cumulative_sum") and args and _known(args[0]) is not None and args[0][0] == "arr":
            return _arr(np.cumsum(_known(args[0])))
        if f == "cumulative_prod" and args and _known(args[0]) is not None and args[0][0] == "arr":
            return _arr(np.cumprod(_known(args[0])))
        if f == "shape":
            v = args[0]
            shp = self.env.get(e.args[0].id + "#shape") if isinstance(e.args[0], ast.Name) else None
            return ("tuple", shp if shp else ((int(v[1]),) if v[0] == "arr" else ()))
        if f == "repeat" and args[1][0] == "arr" and _known(args[1]) is not None:
            counts = np.asarray(_known(args[1])).astype(int)
            size = int(counts.sum())
            if _known(args[0]) is not None and args[0][0] == "arr" and size <= KNOWN_LIMIT:
                return _arr(np.repeat(_known(args[0]), counts))
            return ("arr", float(size), False)
        if f == "repeat":
            n = args[0][1] if args[0][0] == "arr" else 1.0
            k = args[1][1] if args[1][0] == "int" and args[1][1] is not None else 1.0
            return ("arr", n * k, False)
        if f == "tile":
            reps = args[1][1] if args[1][0] == "int" else args[1][1][0] if args[1][0] == "tuple" and \
                len(args[1][1]) == 1 else None
            if _known(args[0]) is not None and args[0][0] == "arr" and reps is not None and \
                    args[0][1] * reps <= KNOWN_LIMIT:
                return _arr(np.tile(_known(args[0]), reps))
            n = args[0][1] if args[0][0] == "arr" else 1.0
            return ("arr", n * (reps if reps is not None else 1.0), False)
        if f == "bincount":
            m = self.ev(kw["minlength"]) if "minlength" in kw else ("int", None)
            return ("arr", float(m[1]) if m[0] == "int" and m[1] is not None else 1.0, False)
        if f == "reshape" and _is_xp(e):
            return args[0][:3] if args[0][0] == "arr" else args[0]
        if f == "reshape":
            return ("arr", self.size(self.ev(e.func.value)), False)
        if f in _REDUCE and _is_xp(e) and "axis" in kw and args:
            shp = self.shape(e)
            if shp is not None:
                return ("arr", float(math.prod(shp)), False) if shp else _S
            return args[0][:3] if args[0][0] == "arr" else _S
        if f in ("sum", "prod", "max", "min") and isinstance(e.func, ast.Attribute) and "axis" in kw:
            recv = e.func.value
            if isinstance(recv, ast.Call) and _fname(recv) == "reshape":
                r = self.ev(recv.args[0])
                return ("arr", float(r[1]) if r[0] == "int" and r[1] is not None else 1.0, False)
            return self.ev(recv)
        if f in _REDUCE:
            if f == "count_nonzero" and args and args[0][0] == "arr":
                m = _known(args[0])
                frac = self.fraction(e.args[0]) if m is None else None
                return ("int", int(np.count_nonzero(m)) if m is not None else
                        round(args[0][1] * (MASK_FRACTION if frac is None else frac)))
            if f == "count_nonzero":
                return ("int", None)
            k = _known(args[0]) if args and args[0][0] == "arr" and _is_xp(e) and not kw else None
            if f in _KNOWN_REDUCE and k is not None and k.size:
                r = _KNOWN_REDUCE[f](k)                  # xp.max(_pe) of known exponents
                return ("int", int(r)) if k.dtype.kind in "iub" else ("scalar", float(r))
            return _S
        if f in ("asarray", "array"):
            v = args[0] if args else _S
            if v[0] != "arr":
                return v
            is_bool = "bool" in ast.unparse(e)
            return _arr(_known(v).astype(bool) if is_bool else _known(v), is_bool) if _known(v) is not None \
                else ("arr", v[1], is_bool)
        if f == "ravel" and isinstance(e.func, ast.Attribute):
            return self.ev(e.func.value)
        if f == "copy" and isinstance(e.func, ast.Attribute):
            return self.ev(e.func.value)
        return self.join(args + [self.ev(k) for k in kw.values()])

    # the module's helpers (coarsen_nb.lower.module._HELPERS) and array-API functions with their own sizes

    def _take(self, e, args, kw):
        """``_take(x, lo, n, step)``: ``x[lo + step*k]`` for k < n."""
        x, (lo, n, step) = args[0], self.ints(*e.args[1:4])
        if n is None:
            return ("arr", 1.0, False) if x[0] != "arr" else x[:3]
        if _known(x) is not None and x[0] == "arr" and None not in (lo, step):
            vals = _known(x)
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

    def _no_value(self, e, args, kw):
        """``_scatter_add``, ``_block_add``: in place, no result."""
        return _S

    def _broadcast_to(self, e, args, kw):
        shp = self.shape(e)
        x = args[0]
        if shp is None:
            return x
        n = float(math.prod(shp))
        if _known(x) is not None and x[0] == "arr" and len(shp) == 1 and n <= KNOWN_LIMIT:
            return _arr(np.broadcast_to(_known(x), (int(n),)), x[2])
        return ("arr", n, x[0] == "arr" and x[2])

    def _concat(self, e, args, kw):
        """``concat([a, b, ...])``: the sum of the sizes (their values, when all known and 1-D)."""
        elts = e.args[0].elts if e.args and isinstance(e.args[0], (ast.List, ast.Tuple)) else []
        vals = [self.ev(x) for x in elts]
        if vals and "axis" not in kw and all(v[0] == "arr" and _known(v) is not None for v in vals):
            return _arr(np.concatenate([_known(v) for v in vals]))
        return ("arr", float(sum(self.size(v) for v in vals)), False) if vals else _S

    def _flip(self, e, args, kw):
        x = args[0]
        if x[0] == "arr" and _known(x) is not None and "axis" not in kw:
            return _arr(np.flip(_known(x)), x[2])
        return x[:3] if x[0] == "arr" else x

    def _xp_take(self, e, args, kw):
        """``xp.take(x, idx)``: the index's size (values when both are known); ``xp.take(x, idx, axis=k)``:
        x's shape with axis k replaced by the index's shape."""
        x, idx = args[0], args[1]
        if "axis" in kw:
            shp = self.shape(e)
            if shp is not None:
                return ("arr", float(math.prod(shp)), False) if shp else _S
            if idx[0] == "arr" and x[0] == "arr":       # shape not known: a 1-D array, as level values are
                return ("arr", self.size(idx), False)
            return self.join([x, idx])
        if _known(x) is not None and _known(idx) is not None and x[0] == idx[0] == "arr":
            return _arr(np.take(_known(x), _known(idx)))
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
_XP_CALLS = {"_take": "take", "_block": "block", "_put": "put", "_segment_sum": "sized_n", "_segment_prod": "sized_n",
             "_segment_max": "sized_n", "_segment_min": "sized_n", "_scatter_sum": "sized_n",
             "_scatter_add": "no_value", "_block_add": "no_value", "broadcast_to": "broadcast_to",
             "concat": "concat", "flip": "flip", "take": "xp_take", "searchsorted": "searchsorted"}
# functions whose result has their first argument's shape, elementwise functions of several arguments,
# and elementwise math
_SAME_SHAPE = {"asarray", "copy", "flip", "cumulative_sum", "cumulative_prod", "cumsum", "_put", "_prod_except",
               "zeros_like", "ones_like", "empty_like"}
_ELEMENTWISE = {"where", "maximum", "minimum", "clip", "copysign", "pow", "atan2", "hypot", "_erf"}
_MATH = {"exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs", "sign", "floor", "ceil", "square", "negative",
         "logaddexp", "isnan", "isinf", "isfinite"}


_FLOAT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def _number(v):
    """The Python number of a known int or scalar abstract value, else None."""
    return v[1] if v[0] in ("int", "scalar") and len(v) > 1 and v[1] is not None else None


def _scalar(fn, *xs):
    """``("scalar", fn(*xs))`` for known numbers (IEEE results: inf, nan), else an unknown scalar."""
    if fn is None or any(x is None for x in xs):
        return _S
    try:
        with np.errstate(all="ignore"):
            r = fn(*(np.float64(x) if isinstance(x, float) else x for x in xs))
    except (ArithmeticError, ValueError, TypeError):
        return _S
    return ("scalar", bool(r) if isinstance(r, (bool, np.bool_)) else float(r))


def _value_reads(e) -> set[str]:
    """Names whose *number* ``e`` reads (not those it only asks ``.shape``/``.size``/``.ndim`` of)."""
    skip = {id(n.value) for n in ast.walk(e) if isinstance(n, ast.Attribute) and n.attr in ("shape", "size", "ndim")}
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name) and id(n) not in skip}


def _assigned(stmts) -> set[str]:
    """Names a block assigns (targets of =, op= and for, at any depth)."""
    out = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def _is_nonzero(e) -> bool:
    """Whether ``e`` is ``xp.nonzero(m)[0]`` (the points of a masked arm)."""
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Call) and _fname(e.value) == "nonzero" \
        and e.value.args and isinstance(e.slice, ast.Constant) and e.slice.value == 0


def _is_length(e) -> bool:
    """Whether ``e`` is ``name.shape[0]``."""
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape" \
        and isinstance(e.value.value, ast.Name) and isinstance(e.slice, ast.Constant) and e.slice.value == 0


def _is_xp(call: ast.Call) -> bool:
    """Whether ``call`` is ``xp.f(...)``, a function of the array namespace (not a method)."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "xp"


def _as_int(d):
    return int(d) if d is not None and float(d).is_integer() else None


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


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _fname(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _tape_label(s: ast.For) -> str:
    for n in ast.walk(s.iter):
        if isinstance(n, ast.Name) and n.id.startswith("_tape_"):
            return n.id
    return ""


def _count_ops(e) -> int:
    """Arithmetic nodes of one statement's right-hand side (the unit both sides count)."""
    n = 0
    for node in ast.walk(e):
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            n += 1
        elif isinstance(node, ast.Compare):
            n += len(node.ops)
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.Call) and _fname(node) not in _NO_OPS and not isinstance(node.func, ast.Name):
            n += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("abs", "max", "min"):
            n += 1
    return n


def _iter_steps(steps) -> list[IterStep]:
    """Iterated loops in the order their ``while True:`` appears in the forward sweep."""
    from coarsen_nb.plan import CondStep

    out: list[IterStep] = []
    for s in steps:
        if isinstance(s, IterStep):
            out.append(s)
            out += _iter_steps(s.header) + _iter_steps(s.body)
        elif isinstance(s, CondStep):
            out += _iter_steps(s.then) + _iter_steps(s.orelse)
    return out

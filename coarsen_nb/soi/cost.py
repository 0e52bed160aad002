"""The cost model of one SOI selection: what a gradient call will do.

The model counts what the *generated code* does, not what an idealized
kernel would: it lowers the plan with the same :class:`~coarsen_nb.lower.module.ModuleWriter`
the runtime uses, then abstractly executes the VJP function's statements
with sizes instead of values.  Each abstract value is a scalar, a known (or
unknown) int, or an array of a known element count; parameter shapes seed
it, ``len``/``shape``/``arange``/``repeat``/``tile``/``bincount`` propagate
it.  Per executed statement:

* **ops** — arithmetic nodes (binary/unary operators, comparisons, math and
  array functions) × the statement's *work*, the largest element count among
  its result and the arrays it reads (a reduction costs its input size);
* **allocation** — the right-hand side produces a new array (an array temp,
  an index array, a mask, a ``Piecewise`` buffer, a gather, a ``bincount``
  scatter, an ``xp.array`` copy); a bare name or a ``reshape``/``ravel`` of a
  name is a view, not an allocation;
* **bytes moved** — 8 bytes × (result + array operands) of array statements.

Statements before ``_value =`` are the forward sweep, the rest the reverse
sweep.  Iterated loops (``while True:`` of an :class:`~coarsen_nb.plan.IterStep`
and its reverse ``for`` over the tape) multiply their body by the trip
count, from the loop's counter and bound when both are known at entry;
otherwise (``while`` conditions, ``break``, an int parameter whose value is
not given) the count is *unknown*: 1 is used and the loop is listed in
``unknown_trips``.  Index arrays and masks derived from ``arange`` and
ints carry their values (evaluated with NumPy up to ``KNOWN_LIMIT``
elements), so triangular segment sizes (``repeat`` by per-row counts) and
index masks (``k == 0``) are exact; a data mask (``r < 2.5``) is assumed
true on half the elements; a scalar ``if`` counts each arm at weight one half.
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
           "repeat", "tile", "concatenate", "reshape", "ravel", "copy", "append", "any", "count_nonzero", "range",
           "zeros_like", "ones_like", "ndim", "size"}
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

    def as_dict(self) -> dict:
        d = asdict(self)
        d["trip_counts"] = "all known" if not self.unknown_trips else \
            "unknown for " + ", ".join(sorted(self.unknown_trips)) + " (counted once)"
        return d


def estimate(plan: Plan, wrt: tuple[str, ...], shapes: tuple, ints: dict | None = None,
             trips: dict | None = None) -> Cost:
    """The cost of one ``f.grad`` / ``f.vjp`` call for arguments of ``shapes``.

    ``ints`` gives the values of int parameters (trip counts often depend on
    them); ``trips`` overrides a loop's trip count by label (e.g. the count a
    forward run recorded for a ``while`` loop).

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
    model = _Model(plan, writer, shapes, ints or {}, trips or {})
    model.run(fn)
    return Cost(model.ops[0], model.ops[1], model.allocs, model.bytes, len(plan.kernels()), model.unknown)


# Abstract values: ("scalar",), ("int", value-or-None), ("tuple", (ints...)), ("arr", size, is_mask[, values]).
# Index arrays and masks the lowering derives from ``arange`` and int arguments (the segment counts of a
# triangular loop, ``k == 0`` of a first-iteration branch) carry their values, evaluated with NumPy, so
# the sizes that depend on them (``repeat`` by per-segment counts, a masked gather) are exact; data
# masks (``r < 2.5``) have no values and count as MASK_FRACTION of their elements.
_S = ("scalar",)
KNOWN_LIMIT = 2_000_000        # largest index array whose values the model evaluates


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
    def __init__(self, plan: Plan, writer: ModuleWriter, shapes, ints, trips):
        self.plan, self.w, self.trips_given = plan, writer, trips
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
                for tt, vv in zip(t.elts, vals, strict=True):
                    if vv is not None:
                        self.env[tt.id] = self.ev(vv)
                return
            v = self.ev(s.value)
            self.account(s.value, v, mult)
            if isinstance(t, ast.Name):
                self.env[t.id] = v
        elif isinstance(s, ast.AugAssign):
            self.account(s.value, self.ev(s.value), mult, extra_op=1)
        elif isinstance(s, ast.Expr):
            self.account(s.value, self.ev(s.value), mult, alloc=False)
        elif isinstance(s, ast.If):
            test = s.test
            if isinstance(test, ast.Call) and _fname(test) == "any":
                m = _known(self.ev(test.args[0])) if test.args else None
                if m is None or np.any(m):
                    self.block(s.body, mult)
            elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                self.block(s.body, mult)                  # `if not cond: break` (no work)
            else:
                self.block(s.body, mult * 0.5)
                self.block(s.orelse, mult * 0.5)
        elif isinstance(s, ast.While):
            # Every `while True:` of the VJP function records a tape, created just before it.
            n = self.trip_count(self.loops.get(self.last_tape), self.last_tape)
            self.block(s.body, mult * n)
        elif isinstance(s, ast.For):
            label = _tape_label(s)
            n = self.trip_of.get(label, 1.0)
            self.block(s.body, mult * n)
        # pass, break, return: no work

    def account(self, e, v, mult: float, alloc: bool = True, extra_op: int = 0) -> None:
        sizes = [self.size(v)] + [self.size(self.env.get(n.id, _S)) for n in ast.walk(e) if isinstance(n, ast.Name)]
        work = max(sizes)
        nops = _count_ops(e) + extra_op
        self.ops[self.phase] += nops * work * mult
        if alloc and v[0] == "arr" and _allocates(e):
            self.allocs += mult
        if v[0] == "arr" or work > 1:
            self.bytes += 8 * mult * (self.size(v) + sum(self.size(self.env.get(n.id, _S))
                                                          for n in ast.walk(e) if isinstance(n, ast.Name)
                                                          and self.env.get(n.id, _S)[0] == "arr"))

    @staticmethod
    def size(v) -> float:
        return v[1] if v[0] == "arr" else 1.0

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
            return ("int", e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else _S
        if isinstance(e, ast.BinOp):
            a, b = self.ev(e.left), self.ev(e.right)
            if a[0] == "int" and b[0] == "int" and a[1] is not None and b[1] is not None:
                try:
                    return ("int", _INT_OPS[type(e.op)](a[1], b[1]))
                except (KeyError, ZeroDivisionError):
                    return ("int", None)
            mask = isinstance(e.op, (ast.BitAnd, ast.BitOr)) and (a[0] == "arr" and a[2] or b[0] == "arr" and b[2])
            ka, kb = _known(a), _known(b)
            if "arr" in (a[0], b[0]) and ka is not None and kb is not None and type(e.op) in _ARRAY_OPS:
                with np.errstate(all="ignore"):
                    return _arr(_ARRAY_OPS[type(e.op)](ka, kb), mask)
            return self.join([a, b], mask)
        if isinstance(e, ast.UnaryOp):
            a = self.ev(e.operand)
            if a[0] == "int" and a[1] is not None and isinstance(e.op, ast.USub):
                return ("int", -a[1])
            if a[0] == "arr" and _known(a) is not None and isinstance(e.op, (ast.USub, ast.Invert)):
                return _arr(-_known(a) if isinstance(e.op, ast.USub) else ~_known(a), a[2])
            return a[:3] if a[0] == "arr" else _S
        if isinstance(e, ast.Compare):
            vals = [self.ev(e.left)] + [self.ev(c) for c in e.comparators]
            known = [_known(v) for v in vals]
            if len(vals) == 2 and "arr" in (vals[0][0], vals[1][0]) and all(k is not None for k in known) and \
                    type(e.ops[0]) in _COMPARE_OPS:
                return _arr(_COMPARE_OPS[type(e.ops[0])](*known), True)
            return self.join(vals, True)
        if isinstance(e, ast.BoolOp):
            return self.join([self.ev(v) for v in e.values], True)
        if isinstance(e, ast.IfExp):
            return self.join([self.ev(e.body), self.ev(e.orelse)])
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            if e.attr == "shape" and isinstance(e.value, ast.Name):
                shp = self.env.get(e.value.id + "#shape")
                v = self.env.get(e.value.id, _S)
                return ("tuple", shp if shp else ((int(v[1]),) if v[0] == "arr" else ()))
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

    def subscript(self, e: ast.Subscript):
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
            if any(v[2] for v in arrs):
                size = size * MASK_FRACTION
            return ("arr", size, False)
        if any(isinstance(p, ast.Slice) for p in parts):
            return base
        shp = self.env.get(e.value.id + "#shape") if isinstance(e.value, ast.Name) else None
        if shp and len(parts) < len(shp):
            return ("arr", math.prod(shp[len(parts):]), False)
        return _S

    def call(self, e: ast.Call):
        f = _fname(e)
        args = [self.ev(a) for a in e.args]
        kw = {k.arg: k.value for k in e.keywords}
        if f == "len":
            a = e.args[0]
            shp = self.env.get(a.id + "#shape") if isinstance(a, ast.Name) else None
            v = args[0]
            return ("int", shp[0] if shp else (int(v[1]) if v[0] == "arr" else None))
        if f in ("int", "bool", "float") and args and args[0][0] == "int":
            return args[0]
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
        if f == "cumsum" and args and _known(args[0]) is not None and args[0][0] == "arr":
            return _arr(np.cumsum(_known(args[0])))
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
            n = args[0][1] if args[0][0] == "arr" else 1.0
            k = args[1][1] if args[1][0] == "int" and args[1][1] is not None else 1.0
            return ("arr", n * k, False)
        if f == "bincount":
            m = self.ev(kw["minlength"]) if "minlength" in kw else ("int", None)
            return ("arr", float(m[1]) if m[0] == "int" and m[1] is not None else 1.0, False)
        if f == "reshape":
            return ("arr", self.size(self.ev(e.func.value)), False)
        if f in ("sum", "prod", "max", "min") and isinstance(e.func, ast.Attribute) and "axis" in kw:
            recv = e.func.value
            if isinstance(recv, ast.Call) and _fname(recv) == "reshape":
                r = self.ev(recv.args[0])
                return ("arr", float(r[1]) if r[0] == "int" and r[1] is not None else 1.0, False)
            return self.ev(recv)
        if f in _REDUCE:
            return ("int", None) if f == "count_nonzero" else _S
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

    def _count(self, v) -> float:
        if v[0] == "int":
            return float(v[1]) if v[1] is not None else 1.0
        if v[0] == "tuple":
            return float(math.prod(x for x in v[1] if x is not None))
        return 1.0


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


def _allocates(e) -> bool:
    """Whether evaluating ``e`` makes a new array (not a name, not a view of a name)."""
    if isinstance(e, (ast.Name, ast.Constant)):
        return False
    if isinstance(e, ast.Call) and _fname(e) in ("reshape", "ravel") and isinstance(e.func, ast.Attribute):
        return _allocates(e.func.value)
    if isinstance(e, ast.Call) and _fname(e) in ("asarray", "_take") and e.args and isinstance(e.args[0], ast.Name):
        return False     # asarray of an array of that dtype and a strided take are views
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        return not all(isinstance(p, ast.Slice) for p in parts)
    return True


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

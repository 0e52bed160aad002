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
a scalar ``if`` on data counts each arm at weight one half; an ``if`` its printer marked ``exceptional``
(:class:`~coarsen_nb.lower.lir.If`: an infinite factor's terms summed one by one under ``math.isinf(c)`` /
``xp.any(xp.isinf(f))``) counts its ``else`` alone: the model costs a run on finite data.

This module holds the statement interpreter; the abstract values are
:mod:`coarsen_nb.lower.values`, the shapes, dtypes and views
:mod:`coarsen_nb.lower.shapes`, the trip counts :mod:`coarsen_nb.lower.trip_counts`
(mixins of its ``_Model``).  They live in
``lower/`` because they interpret the lowering's output (DESIGN.md, Lowering:
the cost model is a pass of the back half); SOI selection itself needs only
the lifted graph, and ``soi/`` does not import ``lower/``.
"""

from __future__ import annotations

import ast
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from coarsen_nb.lower import lir_ast
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.lower.shapes import ShapeFacts
from coarsen_nb.lower.trip_counts import TripCounts, iter_steps
from coarsen_nb.lower.value_calls import CallValues
from coarsen_nb.lower.values import MASK_FRACTION, SCALAR, AbstractValues, call_name, known_value, number_of
from coarsen_nb.plan import Plan

_NO_OPS = {"arange", "zeros", "ones", "empty", "full", "shape", "array", "asarray", "len", "int", "bool", "float",
           "repeat", "tile", "concatenate", "concat", "flip", "reshape", "ravel", "copy", "append", "any",
           "count_nonzero", "range", "zeros_like", "ones_like", "ndim", "size"}


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
    fn = vjp_function(writer, plan.name + "_vjp")
    model = _Model(plan, writer, shapes, ints or {}, trips or {}, masks or {})
    model.run(fn)
    return Cost(model.ops[0], model.ops[1], model.allocs, model.bytes, len(plan.kernels()), model.unknown,
                model.unknown_masks)


def vjp_function(writer, name: str) -> ast.FunctionDef:
    """The VJP function ``name`` as ``ast`` nodes, built from the writer's records (``writer.printed[name]``,
    a ``lir_lines.PrintedFunction``): nothing is parsed, the records are what the module prints."""
    writer.source()
    printed = writer.printed[name]
    fn = lir_ast.function_def(printed.name, printed.params, printed.defaults, printed.body, printed.def_line)
    return _CheckedDivisionsAsOperators().visit(_LoopExtremaAsReductions().visit(fn))


class _LoopExtremaAsReductions(ast.NodeTransformer):
    """The module's loop extrema as what the model counts of them: ``_loop_max(v, 1)`` as ``xp.max(v, axis=1)``,
    ``_loop_segment_max(seg, v, n)`` as ``_segment_max(seg, v, n)`` (lower/extrema_helpers.py: the search for a
    zero's sign runs only where a result is a zero, which the model cannot know)."""

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        f = node.func.id if isinstance(node.func, ast.Name) else ""
        if f in ("_loop_max", "_loop_min"):
            axis = [ast.keyword("axis", node.args[1])] if len(node.args) > 1 else []
            xp_f = ast.Attribute(ast.Name("xp", ast.Load()), f.removeprefix("_loop_"), ast.Load())
            return ast.copy_location(ast.Call(xp_f, node.args[:1], axis), node)
        if f in ("_loop_segment_max", "_loop_segment_min"):
            return ast.copy_location(ast.Call(ast.Name(f.replace("_loop", ""), ast.Load()), node.args, []), node)
        return node


class _CheckedDivisionsAsOperators(ast.NodeTransformer):
    """The user's checked divisions as the operators they are: ``_div(a, b)`` as ``a / b`` (``_mod``, ``_floordiv``
    as ``%``, ``//``; lower/division_checks.py: a test of the divisor, which the model counts in no other division)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        op = _CHECKED_OPERATORS.get(node.func.id) if isinstance(node.func, ast.Name) else None
        return node if op is None else ast.copy_location(ast.BinOp(node.args[0], op(), node.args[1]), node)


_CHECKED_OPERATORS = {"_div": ast.Div, "_mod": ast.Mod, "_floordiv": ast.FloorDiv}


MAX_PASSES = 64                # most passes of a `while` on known ints the model runs (a scan's log2 n)


class _Model(ShapeFacts, AbstractValues, CallValues, TripCounts):
    """The abstract interpreter of the VJP function: its statements; the values of expressions are
    :class:`~coarsen_nb.lower.values.AbstractValues`, their shapes, dtypes and views
    :class:`~coarsen_nb.lower.shapes.ShapeFacts`, the loops' trip counts
    :class:`~coarsen_nb.lower.trip_counts.TripCounts`."""

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
                self.env[py] = ("int", int(ints[p])) if p in ints else SCALAR
        self.loops = {writer.tape_name(st): st for st in iter_steps(plan.steps)}
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
            if isinstance(t, ast.Name) and self.env.get(t.id, SCALAR)[0] in ("int", "scalar"):
                e = ast.BinOp(ast.Name(t.id, ast.Load()), s.op, s.value)
                self.env[t.id] = self.ev(e)                                              # `sh *= 2`
                self._freshness(t.id, e)
        elif isinstance(s, ast.Expr):
            if not (isinstance(s.value, ast.Call) and call_name(s.value) == "append"):   # a tape keeps references
                self.account(s.value, self.ev(s.value), mult, alloc=False)
        elif isinstance(s, ast.If):
            test = s.test
            if lir_ast.exceptional(s):
                self.block(s.orelse, mult)                # an infinite factor's arm: finite data never runs it
            elif isinstance(test, ast.Call) and call_name(test) == "any":
                m = known_value(self.ev(test.args[0])) if test.args else None
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
            n = self.reverse_trip_count(s)
            self.stale |= _assigned(s.body) | _assigned([ast.Assign([s.target], s.iter)])
            self.block(s.body, mult * n)
        # pass, break, return: no work

    def account(self, e, v, mult: float, alloc: bool = True, extra_op: int = 0) -> None:
        # the arrays it reads (each name once) and its result; an empty array result does no work
        reads = [self.env[n] for n in {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
                 if self.env.get(n, SCALAR)[0] == "arr"]
        work = max([self.size(v)] + [r[1] for r in reads])
        nops = arithmetic_nodes(e) + extra_op
        self.ops[self.phase] += nops * work * mult
        if alloc and v[0] == "arr" and self.allocates(e):
            self.allocs += mult
        if v[0] == "arr" or work > 1:
            self.bytes += 8 * mult * (self.size(v) + sum(r[1] for r in reads))

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
        if v[0] == "arr" and v[2] and known_value(v) is None:         # a data mask: what fraction is true
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
        if isinstance(e, ast.Call) and call_name(e) in ("asarray", "reshape") and e.args:
            return self.fraction(e.args[0])
        return None

    def truth(self, e):
        """The value of a condition on known numbers (``n > 0``, ``sh < n``, ``s * exp(m) > 0`` from a
        constant initial state), else None; never from a number a loop carries (``stale``)."""
        if _value_reads(e) & self.stale:
            return None
        v = self.ev(e)
        x = number_of(v)
        return None if x is None else bool(x)


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


def _is_length(e) -> bool:
    """Whether ``e`` is ``name.shape[0]``."""
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape" \
        and isinstance(e.value.value, ast.Name) and isinstance(e.slice, ast.Constant) and e.slice.value == 0


def arithmetic_nodes(e) -> int:
    """Arithmetic nodes of one statement's right-hand side (the unit both sides count)."""
    n = 0
    for node in ast.walk(e):
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            n += 1
        elif isinstance(node, ast.Compare):
            n += len(node.ops)
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.Call) and call_name(node) not in _NO_OPS and not isinstance(node.func, ast.Name):
            n += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("abs", "max", "min"):
            n += 1
    return n

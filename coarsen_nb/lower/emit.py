"""Printing a kernel's SymPy DAG as vectorized array code (or plain ``math``).

The printer works on *levels*.  The root level is scalar code.  A reduction
node ``RSum(body, k, a, b, s)`` evaluated at level L opens a child level
with one point per (point of L, k in range(a, b, s)): index arrays are built
once (``arange``, or ``repeat`` + offsets for triangular bounds), the body
is evaluated on all points at once, and the result is reduced back to L
(``sum`` at the root, a reshape or ``bincount`` below).  Elementwise array
code is the level ``elem`` under the root.

Every node is computed at its *natural* level — the deepest enclosing level
whose index it depends on — and memoized there, so an invariant factor is
computed once and shared (CSE by structural equality of SymPy nodes), then
broadcast down with the level's segment map.

Branches never leak: a ``Piecewise`` whose predicate varies over the level
evaluates each arm on a *masked* level holding only its points (inside
``if xp.any(mask):``), and a scalar predicate becomes a real ``if``.  Nothing
is hoisted out of an arm, so no NaN, inf or warning can come from the
elements (or the scalar case) that did not take it.  ``and``/``or`` keep
Python's short-circuit order the same way.

The printer is split along its seams: the method that prints each kind of expression (and a
symbol's code) in :mod:`.expression_printing`, operators and functions in :mod:`.operators`,
branches in :mod:`.branches`, dense nested loops in :mod:`.nests`,
per-segment operations in :mod:`.segment_printing`, scans in :mod:`.scan_printing`, the
arrays closed-form loops write in :mod:`.write_printing`, the levels a reduction
opens and the reduction back in :mod:`.level_printing`, the level and small
facts about printed code in :mod:`.printing`.

The printer is moving from text to the records of :mod:`.lir` (notes/lowered-ir.md):
``value`` returns an expression record, ``emit`` appends a statement record to the
printer's ``body`` (the module writer takes the records), and the :class:`Level` fields hold expressions.
"""

from __future__ import annotations

from contextlib import contextmanager

import sympy as sp

from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.branches import BranchPrinting
from coarsen_nb.lower.domain import loop_nesting
from coarsen_nb.lower.expression_printing import ExpressionPrinting
from coarsen_nb.lower.form_printing import FormPrinting
from coarsen_nb.lower.level_printing import LevelPrinting
from coarsen_nb.lower.names import Names
from coarsen_nb.lower.nests import NestPrinting
from coarsen_nb.lower.operators import OperatorPrinting
from coarsen_nb.lower.printing import (
    FLAT,
    Level,
    is_atom_code,
    is_number_code,
    unwrapped,
)
from coarsen_nb.lower.scan_printing import ScanPrinting
from coarsen_nb.lower.segment_printing import SegmentPrinting
from coarsen_nb.lower.soi_levels import LevelWalk
from coarsen_nb.lower.write_printing import WritePrinting
from coarsen_nb.phi import forms
from coarsen_nb.symbolic.levels import ELEM, Deps

#: expression class -> the Printer method that prints it (``Printer._compute``: filled on first use)
_DISPATCH: dict = {}


class Printer(ExpressionPrinting, LevelPrinting, OperatorPrinting, NestPrinting, SegmentPrinting, BranchPrinting,
              ScanPrinting, WritePrinting, FormPrinting):
    """Emit statements computing SymPy expressions of one kernel.

    ``leaf(symbol) -> (code, is_array)`` names the kernel's inputs;
    ``reads`` maps read symbols to (array code, index exprs); ``temps`` maps
    temp symbols to their expressions.
    """

    def __init__(self, xp: str, leaf, reads: dict, temps: dict, indent: int = 1, names: Names | None = None,
                 elem_shape: str | None = None, exprs=(), broadcast: bool = False,
                 elem_shape_calls: frozenset[str] = frozenset()):
        self.xp = xp
        self.leaf = leaf
        self.reads = reads
        self.temps = temps
        self.body: list[lir.Stmt] = []     # its statements, records (the module writer takes them: _absorb)
        self.indent = indent
        self.names = names or Names()      # the module's names: new temporaries, and the word of each name
        self.words: dict = {}          # expression -> the user's variable it is the value of (Kernel.names)
        self.wordless: set[str] = set()     # the temporaries this printer named with no word (fresh)
        self.root = Level(None, "root")
        self.elem: Level | None = None
        self.uses_math = False          # whether this printer's code uses ``math`` (set where it prints it)
        self.helpers: set[str] = set()    # the generated module's helpers this printer's code calls (helper())
        self.lane_rows: dict = {}      # lane-number symbol -> (first, step) code (ModuleWriter._lanes)
        # Derivative code divides and raises to powers as IEEE 754 does (see helpers._ieee_div): the
        # adjoint and tangent writers set this after the primal values, which keep Python's errors.
        self.ieee = False
        # a scalar division in the user's program raises ZeroDivisionError at a divisor of 0 whatever its operands'
        # types: printed through the module's ``_div`` (lower/division_checks.py), where Python's own ``/``
        # would not raise (a NumPy float of a batched sum; a numba loop under NumPy's error model)
        self.checked_division = False
        # the kernel's arrays may have different shapes (NumPy broadcasts them): an elementwise value
        # is broadcast to the level's shape before its points are numbered in the flattened array
        self.broadcast = broadcast
        # the root level is one point of a loop (a fused loop's body, lower/numba_fusion.py): a value that
        # varies over a loop index is a Python number there, not an array
        self.scalar_points = False
        # ``(printer, e, args) -> call or None``: a function of numbers spelled otherwise than its rule's scalar
        # spelling, where it returns a call (a numba loop's vectorizable ``_cos``: lower/numba_trig.py)
        self.scalar_call = None
        # a loop's max/min as the module's ``_loop_max`` (the first of equal zeros, lower/extrema_helpers.py), not
        # ``xp.max``: set by the module writer where its backend asks for it (Backend.extrema_first_zero)
        self.extrema_first_zero = False
        # a reduction's value is a number, not a 0-d array (Backend.numbers_of_reductions: numba's)
        self.numbers_of_reductions = False
        self._masks: dict = {}
        self._tables: dict = {}       # power tables of rectangular nests, by (factor, level)
        self._reduced_memo: dict = {}
        self._blocks: list[list] = []     # the bodies open in ``block()``, innermost last
        self.deps = Deps(temps, reads, self.is_array_leaf, exprs)
        # the pre-pass that decides the levels of each request before it is printed (LevelPrinting._request)
        self.walk = LevelWalk(self)
        self.root.mirror = self.walk.root
        self._printing = False
        if elem_shape is not None:
            self._ensure_elem(elem_shape, elem_shape_calls)

    # -- statements ----------------------------------------------------------------

    def emit(self, stmt: lir.Stmt) -> None:
        """Append statement ``stmt`` to the printer's body, or to the innermost open :meth:`block`.  The
        module writer takes the body as records (``ModuleWriter._absorb``); :attr:`lines` prints it."""
        (self._blocks[-1] if self._blocks else self.body).append(stmt)

    @property
    def lines(self) -> list[str]:
        """The body printed at the printer's indentation (a numba loop function's text is these lines)."""
        return [line for s in self.body for line in lir.print_statement(s, self.indent)]

    @contextmanager
    def block(self):
        """Collect the statements emitted inside ``with`` into a list (the body of an ``If``, a loop) instead
        of printing them: ``with self.block() as body: ...``, then ``self.emit(lir.If(test, tuple(body)))``."""
        body: list = []
        self._blocks.append(body)
        try:
            yield body
        finally:
            self._blocks.pop()

    @property
    def open_blocks(self) -> list[list]:
        """The statement lists open where the next statement is emitted, the body first: what each holds
        so far runs before that statement."""
        return [self.body, *self._blocks]

    def fresh(self, hint: str | None = None) -> str:
        """A new temporary named after ``hint`` (:mod:`.naming`); one minted with no word (``t``, ``t2``)
        joins :attr:`wordless`, so that no later name is derived from it (``t2_sq``)."""
        name = self.names.fresh(hint)
        if not hint or hint == "t":
            self.wordless.add(name)
        return name

    def call(self, fn: str, *args, **kwargs) -> lir.Call:
        """``xp.fn(args, k=v)``, a call of the array namespace (arguments as records, or text → ``Raw``)."""
        return lir.Call(lir.Attr(lir.Name(self.xp), fn), tuple(map(lir.expr, args)),
                        tuple((k, lir.expr(v)) for k, v in kwargs.items()))

    def dtype(self, name: str) -> lir.Attr:
        """``xp.<name>``: a dtype (or constant, ``xp.inf``) of the array namespace."""
        return lir.Attr(lir.Name(self.xp), name)

    def helper(self, name: str) -> str:
        """``name``, a helper of the generated module that this printer's code calls: printed code that
        calls a helper names it through this, so that the module defines what its code calls."""
        self.helpers.add(name)
        return name

    # -- levels ----------------------------------------------------------------------------

    def level_for(self, binders) -> Level:
        """The level varying over ``binders`` (created outer loop first, shared with earlier code)."""
        return self._request(lambda: self.walk.level_for(binders), lambda: self._level_for(binders))

    def _level_for(self, binders) -> Level:
        if ELEM in binders:
            return self.elem
        lv = self.root
        for k in loop_nesting(self.deps, [b for b in binders if b in self.deps.ranges]):
            a, b, s = self.deps.ranges[k]
            lv = self._child(lv, k, a, b, s)
        return lv

    def affine_slice(self, index, lv: Level):
        """(lo, n, step) expressions when ``index`` is k + c for the top-level loop k of ``lv``, else None."""
        if lv.kind != "range" or lv.parent is None or lv.parent.kind != "root" or lv.domain.segmented:
            return None
        k = lv.binder
        off = sp.simplify(sp.sympify(index) - k)
        if self.deps(off) or not off.is_integer and off.is_integer is not None:
            return None
        a, _, s = self.deps.ranges[k]
        if not (sp.sympify(s).is_Integer and sp.sympify(s) > 0):
            return None
        return self.value(a + off, self.root), lv.size, self.value(s, self.root)

    def natural(self, e, ctx: Level) -> Level:
        d = self.deps(e)
        if isinstance(e, (forms.RWrite, forms.Unwritten)):
            d = d - {ELEM}      # a whole array, computed once; its elements are what varies over ELEM
        lv = ctx
        while True:
            if lv.kind in ("range", "elem") and lv.binder not in d:
                lv = lv.parent
            elif lv.kind == "mask" and lv.domain.kind == "point" and not d & (self._varying_binders(lv) | {ELEM}):
                lv = lv.parent      # an arg-extremum's one point is no branch: what does not vary is above
            else:
                return lv

    def bcast(self, code: lir.Expr | str, src: Level, dst: Level) -> lir.Expr:
        """``code``, a value at level ``src``, at the points of its descendant ``dst``: indexed by each
        range's segment map, gathered at each masked level's points."""
        code = lir.expr(code)
        if src is dst or src.kind == "root" or is_number_code(code) or str(code) in ("True", "False"):
            return code
        path = []
        for lv in dst.ancestors():
            if lv is src:
                break
            path.append(lv)
        else:
            raise AssertionError("broadcast from a level that is not an ancestor")
        for lv in reversed(path):
            if lv.kind == "range" and lv.domain.segmented:
                code = lir.Index(code, (lv.seg,))
            elif lv.kind == "mask":
                flat = code
                if lv.domain.outer == "elem":
                    full = self.call("broadcast_to", code, self.elem_shape) if self.broadcast else code
                    flat = self.call("reshape", full, FLAT)
                code = self.call("take", flat, lv.mask, axis=lir.Lit("0"))
        return code

    def is_array_leaf(self, s) -> bool:
        """Whether ``s`` is an array the kernel reads whole (not a temporary, an element read or a loop index)."""
        if s in self.temps or s in self.reads or s in self.deps.ranges:
            return False
        try:
            return self.leaf(s)[1]
        except KeyError:
            return False

    @property
    def elem_shape(self) -> lir.Expr | None:
        """The code of the elementwise shape (None: no elementwise level), read to be printed."""
        return None if self.elem is None else self.elem.size

    def _ensure_elem(self, shape_code: str, calls: frozenset[str] = frozenset()) -> Level:
        """The elementwise level, of shape ``shape_code`` (whose code calls the helpers ``calls``: they
        join this printer's where the shape is printed)."""
        if self.elem is None:
            self.elem = Level(self.root, "elem", binder=ELEM, size=lir.expr(shape_code),
                              size_calls=(calls, self.helpers) if calls else None)
            self.elem.mirror = self.walk.elem_points()
        return self.elem

    # -- values ----------------------------------------------------------------------------

    def value(self, e, ctx: Level | None = None, target: str | None = None) -> lir.Expr:
        """The expression for ``e`` valid at level ``ctx`` (default: root), emitting statements as needed.

        ``target``: the name the caller assigns the result to; a value that needs a statement of its
        own is computed into it (``theta_3 = theta_2 + dt_omega``, not ``_t3 = ...; theta_3 = _t3``)."""
        if self._printing:
            return self._value(e, ctx, target)
        return self._request(lambda: self.walk.value(e, (ctx or self.root).mirror),
                             lambda: self._value(e, ctx, target))

    def _value(self, e, ctx: Level | None, target: str | None) -> lir.Expr:
        ctx = ctx or self.root
        e = sp.sympify(e)
        if target is not None and e in self.temps and not any(e in lv.memo for lv in ctx.ancestors()):
            return self.value(self.temps[e], ctx, target)      # the output names its value
        if ctx is self.root and ELEM in self.deps(e):
            ctx = self.elem
        nat = self.natural(e, ctx)
        d = self.deps(e)
        for lv in nat.ancestors():
            if e in lv.memo:
                # a value that varies over nothing is a scalar: it broadcasts by itself
                if not d:
                    return lir.expr(lv.memo[e])
                code = self.bcast(lv.memo[e], lv, ctx)
                if ctx.kind == "mask" and not is_atom_code(code):
                    # gathered once per masked arm's points (the adjoint's arms share them)
                    name = lir.Name(self.fresh("g"))
                    self.emit(lir.Assign(name, code))
                    ctx.memo[e] = code = name
                return code
            if lv.binder is not None and lv.binder in d:
                break   # above here the same index is bound by an outer loop (shadowed)
        negated = self._negation_known(e, nat)
        if negated is not None:
            return self.bcast(negated, nat, ctx) if d else negated
        code = lir.expr(self._compute(e, nat))
        if not is_atom_code(code):
            name = lir.Name(target if target is not None and nat is ctx else self.fresh(naming.printer_word(self, e)))
            self.emit(lir.Assign(name, unwrapped(code)))
            code = name
        nat.memo[e] = code
        return self.bcast(code, nat, ctx) if d else code

    def _negation_known(self, e, nat: Level) -> lir.Expr | None:
        """``-t`` where ``e`` is a product with a difference among its factors and ``t``, the same product
        with that difference the other way round, was computed already at ``nat`` (the adjoints of the two
        ends of a spring, of ``x[i + 1] - x[i]``: ``k*(b - a)*d/s`` after ``k*(a - b)*d/s``): one value and
        its negation instead of two products.  Both are the product of the same numbers but one sign, so they
        differ by their sign alone, to the rounding of the product's order."""
        if not isinstance(e, sp.Mul):
            return None
        for i, f in enumerate(e.args):
            if isinstance(f, sp.Add) and len(f.args) == 2:
                other = sp.Mul(*e.args[:i], -f, *e.args[i + 1:])
                if other in nat.memo and isinstance(nat.memo[other], lir.Name):    # (computed into a name here)
                    return lir.Unary("-", nat.memo[other])
        return None

    def assign(self, name: str, e) -> None:
        """``name = <e>``, computed into ``name`` where ``e`` needs a statement of its own."""
        code = self.value(e, target=name)
        if str(code) != name:
            self.emit(lir.Assign(lir.Name(name), code))

    def _compute(self, e, lv: Level) -> lir.Expr | str:
        """``e`` at level ``lv``, by the ``_print_<class>`` method of the first class in ``e``'s MRO that has
        one (as SymPy's printers and the CUDA printer dispatch), else as an operator or a function of the
        array namespace (:meth:`_print_default`).  The method of each expression class is looked up once."""
        method = _DISPATCH.get(type(e))
        if method is None:
            method = _DISPATCH[type(e)] = next(
                (getattr(Printer, f"_print_{c.__name__}") for c in type(e).__mro__
                 if hasattr(Printer, f"_print_{c.__name__}")), Printer._print_default)
        return method(self, e, lv)

    # -- facts about levels and values the printing mixins ask -------------------------------------

    def _is_array_level(self, lv: Level) -> bool:
        return any(a.kind in ("range", "elem") for a in lv.ancestors())

    def _may_be_scalar(self, e) -> bool:
        """Whether ``e`` may evaluate to a scalar though it depends on a loop index: a branch
        chosen by a scalar predicate can be an invariant expression."""
        if isinstance(e, sp.Symbol) and e in self.temps:
            e = self.temps[e]
        return any(isinstance(n, sp.Piecewise) for n in sp.preorder_traversal(e)) if isinstance(e, sp.Basic) \
            else False

    def _varying_binders(self, lv: Level) -> set:
        return {a.binder for a in lv.ancestors() if a.binder is not None}

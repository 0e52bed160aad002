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

The printer is split along its seams: branches in :mod:`.branches`, nested
loops (dense nests, per-segment operations) in :mod:`.nests`, the level and
small facts about printed code in :mod:`.printing`.
"""

from __future__ import annotations

import itertools
import math

import sympy as sp

from coarsen_nb.lower.branches import BranchPrinting
from coarsen_nb.lower.nests import NestPrinting
from coarsen_nb.lower.printing import (
    Level,
    _common_coefficient,
    _ident,
    _int_typed,
    _is_atom_code,
    _is_int_literal,
    _is_number,
    _number,
    _trip_count,
)
from coarsen_nb.phi import domain, forms, logsumexp, rounding
from coarsen_nb.phi.symbols import is_boolean
from coarsen_nb.symbolic.levels import ELEM, Deps

_FUNCS = {  # sympy class -> (array namespace attribute, math attribute); array-API (2024.12) spellings
    sp.sin: ("sin", "sin"), sp.cos: ("cos", "cos"), sp.tan: ("tan", "tan"), sp.asin: ("asin", "asin"),
    sp.acos: ("acos", "acos"), sp.atan: ("atan", "atan"), sp.sinh: ("sinh", "sinh"),
    sp.cosh: ("cosh", "cosh"), sp.tanh: ("tanh", "tanh"), sp.exp: ("exp", "exp"), sp.log: ("log", "log"),
    forms.Log1p: ("log1p", "log1p"), forms.Expm1: ("expm1", "expm1"), sp.floor: ("floor", "floor"),
    sp.ceiling: ("ceil", "ceil"), sp.atan2: ("atan2", "atan2"), rounding.Floor: ("floor", "floor"),
    rounding.Ceil: ("ceil", "ceil"),
}


class Printer(NestPrinting, BranchPrinting):
    """Emit statements computing SymPy expressions of one kernel.

    ``leaf(symbol) -> (code, is_array)`` names the kernel's inputs;
    ``reads`` maps read symbols to (array code, index exprs); ``temps`` maps
    temp symbols to their expressions.
    """

    def __init__(self, xp: str, leaf, reads: dict, temps: dict, indent: int = 1, namer=None,
                 elem_shape: str | None = None, exprs=(), broadcast: bool = False):
        self.xp = xp
        self.leaf = leaf
        self.reads = reads
        self.temps = temps
        self.lines: list[str] = []
        self.indent = indent
        self.counter = itertools.count(1)
        self.namer = namer or (lambda hint: f"_t{next(self.counter)}")
        self.root = Level(None, "root")
        self.elem: Level | None = None
        self.elem_shape: str | None = None
        self.uses_math = False
        # Derivative code divides and raises to powers as IEEE 754 does (see helpers._ieee_div): the
        # adjoint and tangent writers set this after the primal values, which keep Python's errors.
        self.ieee = False
        # the kernel's arrays may have different shapes (NumPy broadcasts them): an elementwise value
        # is broadcast to the level's shape before its points are numbered in the flattened array
        self.broadcast = broadcast
        self._masks: dict = {}
        self._tables: dict = {}       # power tables of rectangular nests, by (factor, level)
        self._reduced_memo: dict = {}
        self.deps = Deps(temps, reads, self._array_leaf, exprs)
        if elem_shape is not None:
            self._ensure_elem(elem_shape)

    # -- statements ----------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def fresh(self, hint: str = "t") -> str:
        return self.namer(hint)

    # -- levels ----------------------------------------------------------------------------

    def level_for(self, binders) -> Level:
        """The level varying over ``binders`` (created outer loop first, shared with earlier code)."""
        if ELEM in binders:
            return self.elem
        order = list(self.deps.ranges)
        lv = self.root
        for k in sorted((b for b in binders if b in self.deps.ranges),
                        key=lambda b: (self.deps._nest(b), -order.index(b))):
            a, b, s = self.deps.ranges[k]
            lv = self._child(lv, k, a, b, s)
        return lv

    def affine_slice(self, index, lv: Level):
        """(lo, n, step) code when ``index`` is k + c for the top-level loop k of ``lv``, else None."""
        if lv.kind != "range" or lv.parent is None or lv.parent.kind != "root" or lv.seg:
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
        lv = ctx
        while lv.kind in ("range", "elem") and lv.binder not in d:
            lv = lv.parent
        return lv

    def bcast(self, code: str, src: Level, dst: Level) -> str:
        if src is dst or src.kind == "root" or _is_number(code) or code in ("True", "False"):
            return code
        path = []
        for lv in dst.ancestors():
            if lv is src:
                break
            path.append(lv)
        else:
            raise AssertionError("broadcast from a level that is not an ancestor")
        for lv in reversed(path):
            if lv.kind == "range" and lv.seg:
                code = f"{code}[{lv.seg}]"
            elif lv.kind == "mask":
                flat = code
                if lv.parent.points.kind == "elem":
                    full = f"{self.xp}.broadcast_to({code}, {self.elem_shape})" if self.broadcast else code
                    flat = f"{self.xp}.reshape({full}, (-1,))"
                code = f"{self.xp}.take({flat}, {lv.mask}, axis=0)"
        return code

    def _array_leaf(self, s) -> bool:
        if s in self.temps or s in self.reads or s in self.deps.ranges:
            return False
        try:
            return self.leaf(s)[1]
        except KeyError:
            return False

    def _ensure_elem(self, shape_code: str) -> Level:
        if self.elem is None:
            self.elem = Level(self.root, "elem", binder=ELEM, size=shape_code)
            self.elem_shape = shape_code
        return self.elem

    # -- values ----------------------------------------------------------------------------

    def value(self, e, ctx: Level | None = None) -> str:
        """Code for ``e`` valid at level ``ctx`` (default: root), emitting statements as needed."""
        ctx = ctx or self.root
        e = sp.sympify(e)
        if ctx is self.root and ELEM in self.deps(e):
            ctx = self.elem
        nat = self.natural(e, ctx)
        d = self.deps(e)
        for lv in nat.ancestors():
            if e in lv.memo:
                # a value that varies over nothing is a scalar: it broadcasts by itself
                if not d:
                    return lv.memo[e]
                code = self.bcast(lv.memo[e], lv, ctx)
                if ctx.kind == "mask" and not _is_atom_code(code):
                    # gathered once per masked arm's points (the adjoint's arms share them)
                    name = self.fresh("g")
                    self.emit(f"{name} = {code}")
                    ctx.memo[e] = code = name
                return code
            if lv.binder is not None and lv.binder in d:
                break   # above here the same index is bound by an outer loop (shadowed)
        code = self._compute(e, nat)
        if not _is_atom_code(code):
            name = self.fresh("t")
            self.emit(f"{name} = {code}")
            code = name
        nat.memo[e] = code
        return self.bcast(code, nat, ctx) if d else code

    def _compute(self, e, lv: Level) -> str:
        if isinstance(e, sp.Symbol):
            return self._symbol(e, lv)
        if e.is_Number or e in (sp.pi, sp.E, sp.oo, -sp.oo, sp.zoo, sp.nan):
            return _number(e)
        if e in (sp.true, sp.false):
            return "True" if e == sp.true else "False"
        array = lv.kind != "root" and not (lv.kind == "cond")
        if isinstance(e, forms._Reduction):
            return self._reduce(e, lv)
        if isinstance(e, forms.RWrite):
            return self._write(e, lv)
        if isinstance(e, sp.ITE):
            return self._piecewise(forms.Gamma((e.args[1], e.args[0]), (e.args[2], True)), lv)
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e, lv)
        if isinstance(e, forms.SumTo):
            return f"_sum_to({self.value(e.args[0], lv)}, {self.leaf(e.args[1])[0]}.shape)"
        if isinstance(e, forms.ElemSum):
            return f"{self.xp}.sum({self.value(e.args[0], self.elem)})"
        if isinstance(e, forms.LogSumExp):
            self.value(forms.RMax(*e.args[1:]), lv)     # the shift, once, before any branch on c
            return self.value(logsumexp.lowered(e), lv)
        if isinstance(e, forms.RLin):
            a, b, k, lo, hi, st = e.args
            return self._reduce(forms.RSum(b * forms.ProdAfter(a, k, lo, hi, st), k, lo, hi, st), lv)
        if isinstance(e, (forms.ProdExcept, forms.ArgOneHot, forms.ProdAfter)):
            return self._segment_op(e, lv)
        if isinstance(e, forms.LinState):
            return self._lin_state(e, lv)
        if isinstance(e, forms.Gather):
            whole = self.value(e.args[0], self.root)
            return f"{whole}[{', '.join(self.value(i, lv) for i in e.args[1:])}]"
        if isinstance(e, forms.Unwritten):
            return self._unwritten(e, lv)
        if isinstance(e, (forms.AndThen, forms.OrElse)):
            return self._short_circuit(e, lv)
        if lv.kind == "mask" and not self.deps(e) & (self._varying_binders(lv) | {ELEM}):
            return self._op(e, lv, False)     # one number for all of an arm's points: Python's math
        return self._op(e, lv, array or self._is_array_level(lv))

    def _is_array_level(self, lv: Level) -> bool:
        return any(a.kind in ("range", "elem") for a in lv.ancestors())

    def _symbol(self, s: sp.Symbol, lv: Level) -> str:
        for a in lv.ancestors():
            if s in a.index_code:
                return self.bcast(a.index_code[s], a, lv)
        if s in self.temps:
            return self.value(self.temps[s], lv)
        if s in self.deps.ranges:
            raise AssertionError(f"index {s} used outside its loop level")
        if s in self.reads:
            arr, idx = self.reads[s]
            fast = self.affine_slice(idx[0], lv) if len(idx) == 1 else None
            if fast is not None:
                return f"_take({arr}, {', '.join(fast)})"
            if len(idx) == 2 and self._dense_pair(lv) is not None:
                blk = self._block_read(s, *self._dense_pair(lv))
                if blk is not None:     # A[i + c, j + c'] on a dense nest: a block, flattened row by row
                    return f"{self.xp}.reshape({blk}, (-1,))"
            codes = [self.value(i, lv) for i in idx]
            if self._is_array_level(lv):
                return f"{arr}[{', '.join(codes)}]"
            return f"{arr}[{', '.join(f'int({c})' if not _is_int_literal(c) else c for c in codes)}]"
        code, is_array = self.leaf(s)
        if is_array:
            elem = self._ensure_elem(f"{code}.shape")
            return self.bcast(code, elem, lv) if lv is not elem else code
        return code

    # -- operators -------------------------------------------------------------------------

    def _op(self, e, lv: Level, array: bool) -> str:
        xp = self.xp
        if isinstance(e, sp.Mul):
            return self._mul(e, lv, array)
        if isinstance(e, sp.Pow):
            return self._pow(e.base, e.exp, lv, array)
        # integer or boolean array operands of a float operation are cast (the array API does not promote)
        cast = not (e.is_integer or is_boolean(e)) or isinstance(e, sp.core.relational.Relational)
        if isinstance(e, sp.Add):
            common = _common_coefficient(e)
            if common is not None:
                # SymPy distributes numbers over sums (200*(a - b) -> 200*a - 200*b); printed as
                # 200 * (a - b), the sum is one node that other multiples of it share
                c, prim = common
                code = self.value(prim, lv)
                return f"({_number(c)} * {self._floats([prim], [code], force=True)[0] if cast else code})"
            # a - b, not a + (-b): the negated term is one value (shared with other uses of b)
            terms = sorted(e.args, key=lambda x: x.could_extract_minus_sign())
            negs = [x.could_extract_minus_sign() for x in terms]
            parts = [-x if neg else x for x, neg in zip(terms, negs, strict=True)]
            codes = [self.value(x, lv) for x in parts]
            if cast:
                codes = self._floats(parts, codes)
            out = ""
            for neg, code in zip(negs, codes, strict=True):
                out = (f"-{code}" if neg else code) if not out else f"{out} {'-' if neg else '+'} {code}"
            return f"({out})"
        a = [self.value(x, lv) for x in e.args]
        if cast:
            a = self._floats(e.args, a)
        if isinstance(e, sp.Abs):
            return f"{xp}.abs({a[0]})" if array else f"abs({a[0]})"
        if isinstance(e, sp.sign):
            return f"{xp}.sign({a[0]})" if array else f"(1.0 if {a[0]} > 0 else (-1.0 if {a[0]} < 0 else 0.0))"
        if type(e) in _FUNCS:
            np_name, m_name = _FUNCS[type(e)]
            if array:
                return f"{xp}.{np_name}({', '.join(a)})"
            self.uses_math = True
            return f"math.{m_name}({', '.join(a)})"
        if isinstance(e, domain.OutsideDomain):
            self.uses_math = True   # math raises ValueError here, where Python's own call does
            return f"math.{e.math_name}({', '.join(a)})"
        if isinstance(e, forms.Erf):
            if array:
                return f"_erf({a[0]})"
            self.uses_math = True
            return f"math.erf({a[0]})"
        if isinstance(e, forms.Softplus):
            if array:
                return f"{xp}.logaddexp(0.0, {a[0]})"
            self.uses_math = True
            return f"_softplus({a[0]})"
        if isinstance(e, forms.Sigmoid):
            if array:
                return f"{xp}.exp(-{xp}.logaddexp(0.0, -({a[0]})))"
            self.uses_math = True
            return f"_sigmoid({a[0]})"
        if isinstance(e, forms.PowInt):
            if array:
                # a float base: a power of an int base and an int exponent array wraps around silently
                base = f"{float(e.args[0])!r}" if e.args[0].is_Integer else \
                    (f"(1.0 * {a[0]})" if e.args[0].is_integer else a[0])
                return f"(({base}) ** ({a[1]}))"
            return f"_ipow({a[0]}, {a[1]})"
        if isinstance(e, (sp.Mod, rounding.PyMod)):
            return f"({a[0]} % {a[1]})"
        if isinstance(e, rounding.FloorDiv):
            return f"({a[0]} // {a[1]})"
        if isinstance(e, rounding.Round):
            return f"{xp}.round({a[0]})" if array else f"round({a[0]})"
        if isinstance(e, sp.Heaviside):
            if array:
                return f"{xp}.where({a[0]} > 0, 1.0, {xp}.where({a[0]} < 0, 0.0, 0.5))"
            return f"(1.0 if {a[0]} > 0 else 0.0 if {a[0]} < 0 else 0.5)"
        if isinstance(e, sp.DiracDelta):
            return "0.0"
        if isinstance(e, sp.Max) or isinstance(e, sp.Min):
            fn = ("maximum" if isinstance(e, sp.Max) else "minimum")
            if array:
                out = a[0]
                for c in a[1:]:
                    out = f"{xp}.{fn}({out}, {c})"
                return out
            return f"{'max' if isinstance(e, sp.Max) else 'min'}({', '.join(a)})"
        if isinstance(e, sp.core.relational.Relational):
            return f"({a[0]} {e.rel_op} {a[1]})"
        if isinstance(e, sp.Not):
            # not ~: on a Python bool (a scalar predicate at an array level) ~True is -2
            return f"{xp}.logical_not({a[0]})" if array else f"(not {a[0]})"
        if isinstance(e, sp.And):
            return "(" + (" & " if array else " and ").join(a) + ")"
        if isinstance(e, sp.Or):
            return "(" + (" | " if array else " or ").join(a) + ")"
        raise NotImplementedError(f"no printer for {type(e).__name__}: {e}")

    def _floats(self, args, codes: list[str], force: bool = False) -> list[str]:
        """Integer or boolean array operands of a float operation (or of a comparison that mixes
        kinds) cast to float64: the array API does not promote between kinds (NumPy does)."""
        if not force and all(x.is_integer or is_boolean(x) for x in args) \
                and not any(isinstance(x, sp.Float) for x in args):
            return codes
        return [f"{self.xp}.asarray({c}, dtype={self.xp}.float64)"
                if _int_typed(self._resolved(x)) and not _is_number(c) and (self.deps(x) or self._reduced(x)) else c
                for x, c in zip(args, codes, strict=True)]

    def _resolved(self, x):
        """``x`` with a temp symbol replaced by its expression (a symbol has no integer type)."""
        while isinstance(x, sp.Symbol) and x in self.temps:
            x = self.temps[x]
        return x

    def _reduced(self, x) -> bool:
        """Whether ``x`` involves a reduction: its value is then a 0-d array, not a Python number."""
        if x not in self._reduced_memo:
            self._reduced_memo[x] = False     # cycles cannot occur; this only bounds the recursion
            if isinstance(x, sp.Symbol):
                out = x in self.temps and self._reduced(self.temps[x])
            else:
                out = isinstance(x, (forms._Reduction, forms.ElemSum)) or any(
                    self._reduced(a) for a in x.args if isinstance(a, sp.Basic))
            self._reduced_memo[x] = out
        return self._reduced_memo[x]

    def _mul(self, e, lv: Level, array: bool) -> str:
        if e.args[0] == -1:
            # -(a*b) as the negation of the product a*b: one shared node when a*b is used elsewhere
            return f"-{self.value(-e, lv)}"
        num, den, sign = [], [], ""
        cast = not all(_int_typed(self._resolved(f)) for f in e.args)   # (a·γ(0, 0) "is" an integer)
        args = list(e.args)
        consts = [f for f in args if f.is_number and f.is_real]
        if array and len(consts) > 1:
            # 1/sqrt(2) * 1/sqrt(pi) * ...: one float factor, not one array pass per constant
            c = float(sp.Mul(*consts))
            args = [f for f in args if not (f.is_number and f.is_real)]
            if c < 0:
                sign, c = "-", -c
            if c != 1.0 or not args:
                num.append(repr(c))
        for f in args:
            if f == 1 and len(args) > 1:
                continue        # a Float 1.0 coefficient (0.5 * 2.0) multiplies nothing
            if f == -1:
                sign = "-"
            elif isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                if f.exp == -1:
                    den.append(self._pow(f.base, 1, lv, array, cast=cast))
                else:
                    # sqrt(tau), vol**2, ...: shared subexpressions, computed once like any other node
                    pos = sp.Pow(f.base, -f.exp)
                    code = self.value(pos, lv)
                    den.append(self._floats([pos], [code], force=True)[0] if cast else code)
            else:
                num.append(self._floats([f], [self.value(f, lv)], force=True)[0] if cast else self.value(f, lv))
        text = " * ".join(num) if num else ("1.0" if den else "1")
        if den:
            d = den[0] if len(den) == 1 else "(" + " * ".join(den) + ")"
            text = self._divide(text, d, array)
        if text.startswith("_ieee_div("):
            return f"{sign}{text}"      # a call needs no parentheses of its own
        return f"{sign}({text})" if sign else f"({text})"

    def _pow(self, base, exp, lv: Level, array: bool, cast: bool = False) -> str:
        b = self.value(base, lv)
        if cast or not (exp.is_integer and exp.is_nonnegative):
            b = self._floats([base], [b], force=True)[0]
        if exp == sp.Rational(1, 2) and _is_number(b):
            return repr(math.sqrt(float(b)))
        if exp == sp.Rational(1, 2):
            if not array:
                self.uses_math = True
            return f"{self.xp + '.sqrt' if array else 'math.sqrt'}({b})"
        if exp == sp.Rational(-1, 2):
            if not array:
                self.uses_math = True
            return self._divide('1.0', (self.xp + '.sqrt' if array else 'math.sqrt') + f'({b})', array, wrap=True)
        if exp == -1:
            return self._divide('1.0', b, array, wrap=True)
        if exp == 1:
            return b
        if exp == 2:
            return f"({b} * {b})" if _is_atom_code(b) else f"({b})**2"
        x = self.value(exp, lv)
        if not (base.is_integer and exp.is_integer):
            x = self._floats([exp], [x], force=True)[0]
        if self.ieee and not array and not (exp.is_integer and exp.is_nonnegative):
            return f"_ieee_pow({b}, {x})"   # 0.0 ** -0.5 is inf here, not a ZeroDivisionError
        return f"({b})**({x})"

    def _divide(self, num: str, den: str, array: bool, wrap: bool = False) -> str:
        """``num / den`` (in parentheses with ``wrap``); in scalar derivative code IEEE's ±inf or nan
        where Python would raise ZeroDivisionError (the derivative of sqrt at 0), unless ``den`` is
        a nonzero number."""
        if self.ieee and not array and not (_is_number(den) and float(den) != 0):
            return f"_ieee_div({num}, {den})"
        return f"({num} / {den})" if wrap else f"{num} / {den}"

    # -- structured nodes ----------------------------------------------------------------

    def _child(self, lv: Level, k, a, b, s) -> Level:
        key = (k, a, b, s)
        if key in lv.children:
            return lv.children[key]
        a_c, b_c, s_c = self.value(a, lv), self.value(b, lv), self.value(s, lv)
        kname = _ident(str(k))
        varying = bool((self.deps(a) | self.deps(b)) & self._varying_binders(lv))
        if lv.kind in ("root", "cond") or not self._is_array_level(lv):
            idx = self.fresh(kname)
            self.emit(f"{idx} = {self.xp}.arange({a_c}, {b_c}, {s_c})")
            # the trip count as a number, so that the index array is dropped when only its length is used
            cnt = self.fresh("n")
            self.emit(f"{cnt} = {_trip_count(a, b, s, a_c, b_c, s_c)}")
            child = Level(lv, "range", binder=k, seg=None, size=cnt)
        elif not varying:
            n_parent = self._size(lv)
            cnt = self.fresh("n")
            rng = self.fresh(kname)
            seg = self.fresh("seg")
            idx = self.fresh(kname)
            self.emit(f"{rng} = {self.xp}.arange({a_c}, {b_c}, {s_c})")
            self.emit(f"{cnt} = {rng}.shape[0]")
            self.emit(f"{seg} = {self.xp}.repeat({self.xp}.arange({n_parent}), {cnt})")
            self.emit(f"{idx} = {self.xp}.tile({rng}, ({n_parent},))")
            child = Level(lv, "range", binder=k, seg=seg, size=f"{idx}.shape[0]")
            child.rect = cnt
        else:
            n_parent = self._size(lv)
            cnt, seg, off, pos, idx = (self.fresh(h) for h in ("n", "seg", "off", "pos", kname))
            self.emit(f"{cnt} = {_trip_count(a, b, s, a_c, b_c, s_c, f'{self.xp}.maximum')} + "
                      f"{self.xp}.zeros({n_parent}, dtype={self.xp}.int64)")
            self.emit(f"{seg} = {self.xp}.repeat({self.xp}.arange({n_parent}), {cnt})")
            self.emit(f"{off} = {self.xp}.cumulative_sum({cnt}) - {cnt}")
            self.emit(f"{pos} = {self.xp}.arange({seg}.shape[0]) - {off}[{seg}]")
            a_here = f"({a_c})[{seg}]" if self.deps(a) & self._varying_binders(lv) else a_c
            self.emit(f"{idx} = {a_here} + ({s_c}) * {pos}")
            child = Level(lv, "range", binder=k, seg=seg, size=f"{idx}.shape[0]")
        child.index_code[k] = idx
        lv.children[key] = child
        return child

    def _may_be_scalar(self, e) -> bool:
        """Whether ``e`` may evaluate to a scalar though it depends on a loop index: a branch
        chosen by a scalar predicate can be an invariant expression."""
        if isinstance(e, sp.Symbol) and e in self.temps:
            e = self.temps[e]
        return any(isinstance(n, sp.Piecewise) for n in sp.preorder_traversal(e)) if isinstance(e, sp.Basic) \
            else False

    def _varying_binders(self, lv: Level) -> set:
        return {a.binder for a in lv.ancestors() if a.binder is not None}

    def _size(self, lv: Level) -> str:
        if lv.points.size is not None:
            return lv.points.size
        raise AssertionError("level without a size")

    def _reduce(self, e, lv: Level) -> str:
        body, k, a, b, s = e.args
        child = self._child(lv, k, a, b, s)
        if e.kind == "sum":
            rp = self.rect_product(body, child)
            if rp is not None:
                # Σ_j A[i, j]·h[j]·g[i]: a matrix-vector product on the block of A, no flattened copy
                m, g, h = rp
                mv = f"{self.xp}.sum({m}, axis=1)" if h is None else f"({m} @ {h})"
                return mv if g is None else f"({mv} * {g})"
        vals = self.value(body, child)
        if not self.deps(body) & ({k} | self._varying_binders(child)) or self._may_be_scalar(body):
            # a value that is one number for every point (an invariant body, or a branch whose
            # predicate is a scalar) still counts once per point
            vals = f"{self.xp}.broadcast_to({self.xp}.asarray({vals}), ({child.size},))"
        xp = self.xp
        kind = e.kind
        # max/min of an empty range is -inf/inf (the loop's initial value); the array API has no
        # ``initial=``, so an empty range is tested for
        empty = {"max": "-math.inf", "min": "math.inf"}.get(kind)
        if empty:
            self.uses_math = True
        if not self._is_array_level(lv):
            if kind in ("sum", "prod"):
                # an integer total as a Python int, as the loop computes it: a 0-d integer array would not
                # mix with floats under the array API's promotion rules
                integer = (self.temps.get(body, body) if isinstance(body, sp.Symbol) else body).is_integer
                return f"int({xp}.{kind}({vals}))" if integer else f"{xp}.{kind}({vals})"
            return f"({xp}.{kind}({vals}) if {child.size} > 0 else {empty})"
        n_parent = self._size(lv)
        if child.rect is not None:
            table = f"{xp}.reshape({vals}, ({n_parent}, {child.rect}))"
            if kind in ("sum", "prod"):
                return f"{xp}.{kind}({table}, axis=1)"
            return f"({xp}.{kind}({table}, axis=1) if {child.rect} > 0 else {xp}.full({n_parent}, {empty}))"
        # triangular bounds: a segmented reduction (bincount / ufunc.at where the namespace has them)
        return f"_segment_{kind}({child.seg}, {vals}, {n_parent})"

    def _write(self, e, lv: Level) -> str:
        init, body, k, a, b, s, *idx = e.args
        if self._is_array_level(lv):
            raise NotImplementedError("array writes below the top loop level")
        child = self._child(lv, k, a, b, s)
        vals = self.value(body, child)
        where = ", ".join(self.value(i, child) for i in idx)
        out = self.fresh("w")
        self.emit(f"{out} = {self.xp}.asarray({self.value(init, lv)}, dtype={self.xp}.float64, copy=True)")
        self.emit(f"{out} = _put({out}, ({where},), {vals})")
        return out

    def _unwritten(self, e, lv: Level) -> str:
        body, k, a, b, s, *idx = e.args
        child = self._child(lv, k, a, b, s)
        out = self.fresh("u")
        self.emit(f"{out} = {self.xp}.asarray({self.value(body, self.root)}, dtype={self.xp}.float64, copy=True)")
        self.emit(f"{out} = _put({out}, ({', '.join(self.value(i, child) for i in idx)},), 0.0)")
        return out

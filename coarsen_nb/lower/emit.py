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
"""

from __future__ import annotations

import itertools
import math

import sympy as sp
from sympy.functions.elementary.piecewise import ExprCondPair

from coarsen_nb.phi import forms, logsumexp
from coarsen_nb.phi.symbols import is_boolean
from coarsen_nb.symbolic.levels import ELEM, Deps

_FUNCS = {  # sympy class -> (array namespace attribute, math attribute); array-API (2024.12) spellings
    sp.sin: ("sin", "sin"), sp.cos: ("cos", "cos"), sp.tan: ("tan", "tan"), sp.asin: ("asin", "asin"),
    sp.acos: ("acos", "acos"), sp.atan: ("atan", "atan"), sp.sinh: ("sinh", "sinh"),
    sp.cosh: ("cosh", "cosh"), sp.tanh: ("tanh", "tanh"), sp.exp: ("exp", "exp"), sp.log: ("log", "log"),
    forms.Log1p: ("log1p", "log1p"), forms.Expm1: ("expm1", "expm1"), sp.floor: ("floor", "floor"),
    sp.ceiling: ("ceil", "ceil"), sp.atan2: ("atan2", "atan2"),
}


# Arms of a branch evaluated on all points (``Printer._cheap_and_total``): operations that are
# finite for every finite operand, and at most this many of them over all arms together.
_WHERE_MAX_OPS = 12
_TOTAL_NODES = (sp.Add, sp.Mul, sp.sin, sp.cos, sp.tanh, sp.atan, sp.Abs, sp.sign, sp.Max, sp.Min,
                sp.core.relational.Relational, sp.And, sp.Or, sp.Not, sp.Piecewise, ExprCondPair, forms.Sigmoid,
                forms.Softplus, forms.Erf)


class Level:
    """A set of points at which values are arrays of one length (see the module docstring)."""

    _ids = itertools.count()

    def __init__(self, parent: Level | None, kind: str, binder=None, seg: str | None = None,
                 size: str | None = None, mask: str | None = None):
        self.parent, self.kind, self.binder = parent, kind, binder
        self.seg, self.size, self.mask = seg, size, mask
        self.index_code: dict = {}          # binder symbol -> code of its index array at this level
        self.memo: dict = {}
        self.children: dict = {}
        self.rect: str | None = None        # count per parent point when bounds do not vary
        self.id = next(Level._ids)

    def ancestors(self):
        lv = self
        while lv is not None:
            yield lv
            lv = lv.parent

    @property
    def depth(self) -> int:
        return sum(1 for _ in self.ancestors()) - 1


class Printer:
    """Emit statements computing SymPy expressions of one kernel.

    ``leaf(symbol) -> (code, is_array)`` names the kernel's inputs;
    ``reads`` maps read symbols to (array code, index exprs); ``temps`` maps
    temp symbols to their expressions.
    """

    def __init__(self, xp: str, leaf, reads: dict, temps: dict, indent: int = 1, namer=None,
                 elem_shape: str | None = None, exprs=()):
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
                code = f"{code}[{lv.mask}]"
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
                return self.bcast(lv.memo[e], lv, ctx) if d else lv.memo[e]
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
        if isinstance(e, sp.Mod):
            return f"({a[0]} % {a[1]})"
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
            text = f"{text} / {d}"
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
            return f"(1.0 / {self.xp + '.sqrt' if array else 'math.sqrt'}({b}))"
        if exp == -1:
            return f"(1.0 / {b})"
        if exp == 1:
            return b
        if exp == 2:
            return f"({b} * {b})" if _is_atom_code(b) else f"({b})**2"
        x = self.value(exp, lv)
        if not (base.is_integer and exp.is_integer):
            x = self._floats([exp], [x], force=True)[0]
        return f"({b})**({x})"

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
            self.emit(f"{cnt} = {self.xp}.maximum(0, -((({a_c}) - ({b_c})) // ({s_c}))) + "
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
        if lv.size is not None:
            return lv.size
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

    # -- dense two-level nests -------------------------------------------------------------------

    def _dense_pair(self, child: Level):
        """(i, j) when ``child`` is a rectangular unit-step loop j directly inside a top-level unit-step
        loop i (the points are then the rows i of an (n_i, n_j) block, row by row), else None."""
        lv = child.parent
        if (child.kind != "range" or child.rect is None or lv is None or lv.kind != "range"
                or lv.parent is not self.root or lv.seg):
            return None
        i, j = lv.binder, child.binder
        ri, rj = self.deps.ranges[i], self.deps.ranges[j]
        if ri[2] != 1 or rj[2] != 1 or self.deps(rj[0]) or self.deps(rj[1]):
            return None
        return i, j

    def rect_product(self, e, child: Level, need_matrix: bool = True):
        """``(M, g, h)`` when ``e`` at the rectangular level ``child`` (loop j, unit step, inside a
        top-level loop i, unit step) is a product of factors of both i and j — reads ``A[i + c, j + c']``
        of 2-D arrays are blocks (views), others are computed per point — that multiply to the
        ``(n_i, n_j)`` array ``M``, factors of i alone (their
        product ``g`` at the outer level, or None) and factors of j alone (``h``, a vector over j,
        or None); otherwise None (M is None without factors of both, if not ``need_matrix``).
        Then Σ_j is ``(M @ h) * g`` and the adjoint scattered over j
        is ``(g @ M) * h``: BLAS on views instead of flattened gathers, tiles and bincounts."""
        pair = self._dense_pair(child)
        if pair is None:
            return None
        lv, (i, j) = child.parent, pair
        rj = self.deps.ranges[j]
        blocks, fi, fj, general = [], [], [], []
        for f in self._factors(e):
            d = self.deps(f) - {ELEM}
            if d - {i, j}:
                return None
            if d == {i, j}:
                blk = self._block_read(f, i, j) or self._power_table(f, i, j, lv)
                if blk is None:
                    general.append(f)
                else:
                    blocks.append(blk)
            elif j in d:
                fj.append(f)
            else:
                fi.append(f)
        if general:
            # the other factors of both indices: their product on the flattened points, one row per i
            prod = sp.Mul(*general)
            code = self.value(prod, child)
            if self._may_be_scalar(prod):
                code = f"({code} + {self.xp}.zeros({child.size}))"
            blocks.append(f"{self.xp}.reshape({code}, ({lv.size}, {child.rect}))")
        if not blocks and need_matrix:
            return None
        jl = self._child(self.root, j, *rj)
        m = None if not blocks else blocks[0] if len(blocks) == 1 else "(" + " * ".join(blocks) + ")"
        g = self.value(sp.Mul(*fi), lv) if fi else None
        h = self.value(sp.Mul(*fj), jl) if fj else None
        # a factor that may be one number (invariant, or a branch on a scalar) becomes a vector
        if g is not None and (not self.deps(sp.Mul(*fi)) & {i} or self._may_be_scalar(sp.Mul(*fi))):
            g = f"({g} + {self.xp}.zeros({lv.size}))"
        if h is not None and self._may_be_scalar(sp.Mul(*fj)):
            h = f"({h} + {self.xp}.zeros({jl.size}))"
        return m, g, h

    def _power_table(self, f, i, j, lv: Level):
        """x_i ** e_j (an integer exponent of j) as an (n_i, n_j) table built by a cumulative product
        along the powers — one multiply per entry instead of one ``pow`` — when the exponents are
        small and non-negative at run time (else ``**``).  Horner's closed form is Σ_k c_k x_i^(D-1-k)."""
        if not isinstance(f, (sp.Pow, forms.PowInt)):
            return None
        base, ex = f.args
        if not (ex.is_integer and self.deps(base) <= {i} and self.deps(ex) <= {j}):
            return None
        key = (f, lv.id)
        if key in self._tables:
            return self._tables[key]
        xp = self.xp
        jl = self._child(self.root, j, *self.deps.ranges[j])
        b = self.value(base, lv)
        e = self.value(ex, jl)
        bv, ev, top, tab, out = (self.fresh(h) for h in ("pb", "pe", "pm", "pt", "pw"))
        self.emit(f"{bv} = {xp}.reshape({xp}.asarray({b}, dtype={xp}.float64) + {xp}.zeros({lv.size}), (-1, 1))")
        self.emit(f"{ev} = {xp}.asarray({e}, dtype={xp}.int64) + {xp}.zeros({jl.size}, dtype={xp}.int64)")
        self.emit(f"{top} = int({xp}.max({ev})) if {jl.size} > 0 else 0")
        self.emit(f"if {jl.size} > 0 and int({xp}.min({ev})) >= 0 and {top} <= 2 * {jl.size} + 16:")
        self.emit(f"    {tab} = {xp}.cumulative_prod({xp}.broadcast_to({bv}, ({lv.size}, {top})), axis=1)")
        self.emit(f"    {tab} = {xp}.concat([{xp}.ones(({lv.size}, 1)), {tab}], axis=1)")
        self.emit(f"    {out} = {xp}.take({tab}, {ev}, axis=1)")
        self.emit("else:")
        self.emit(f"    {out} = {bv} ** {xp}.asarray({xp}.reshape({ev}, (1, -1)), dtype={xp}.float64)")
        self._tables[key] = out
        return out

    def _factors(self, e) -> list:
        """The factors of a product, looking through the temps that name its parts."""
        if isinstance(e, sp.Symbol) and e in self.temps:
            return self._factors(self.temps[e])
        if isinstance(e, sp.Mul):
            return [g for a in e.args for g in self._factors(a)]
        return [e]

    def _block_read(self, f, i, j):
        """``_block(A, lo_i, n_i, lo_j, n_j)`` for a read ``A[i + c, j + c']`` (else None)."""
        if not isinstance(f, sp.Symbol) or f not in self.reads:
            return None
        arr, idx = self.reads[f]
        args = self._block_read_index(idx, i, j)
        return None if args is None else f"_block({arr}, {args})"

    def _block_read_index(self, idx, i, j):
        """``lo_i, n_i, lo_j, n_j`` of the block that ``[i + c, j + c']`` covers (else None)."""
        if len(idx) != 2:
            return None
        ci, cj = sp.sympify(idx[0]) - i, sp.sympify(idx[1]) - j
        if self.deps(ci) or self.deps(cj) or i in ci.free_symbols or j in cj.free_symbols:
            return None
        (ai, bi, _), (aj, bj, _) = self.deps.ranges[i], self.deps.ranges[j]
        lo_i, lo_j = self.value(ai + ci), self.value(aj + cj)
        n_i, n_j = self.value(sp.Max(0, bi - ai)), self.value(sp.Max(0, bj - aj))
        return f"{lo_i}, {n_i}, {lo_j}, {n_j}"

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

    def _segments(self, code: str, k, lv: Level):
        """``code`` (values at level ``lv``) as a 2-D array with one row per segment of ``k``.

        Returns (name, rows, cols, flat) with ``flat(x)`` the code that turns a result of that
        shape back into ``lv``'s order.  Usually k is ``lv``'s own index; when ``lv`` is a
        rectangular loop j opened under k's level (an adjoint summed over an outer index j
        inside k's level), the layout is (k, j) and the segments are its columns.
        """
        xp = self.xp
        name = self.fresh("v")
        parent = lv.parent
        if lv.binder == k:
            rows = "1" if parent.kind == "root" else parent.size
            cols = f"{lv.size}" if parent.kind == "root" else lv.rect
            if cols is None:
                raise NotImplementedError("products and extrema over triangular loops")
            self.emit(f"{name} = {xp}.reshape({code} + {xp}.zeros({lv.size}), ({rows}, {cols}))")
            return name, rows, cols, lambda x: f"{xp}.reshape({x}, (-1,))"
        if (parent is not None and parent.binder == k and parent.kind == "range" and parent.seg is None
                and parent.parent is not None and parent.parent.kind == "root" and lv.rect is not None):
            self.emit(f"{name} = {xp}.asarray({xp}.reshape({code} + {xp}.zeros({lv.size}), "
                      f"({parent.size}, {lv.rect})).T, copy=True)")
            return name, lv.rect, parent.size, lambda x: f"{xp}.reshape({x}.T, (-1,))"
        raise NotImplementedError("segment operation away from its level")

    def _segment_op(self, e, lv: Level) -> str:
        """Exclusive products or arg-extremum indicators of ``body`` within each segment of k."""
        body, k, a, b, s = e.args[:5]
        vv, rows, cols, flat = self._segments(self.value(body, lv), k, lv)
        xp = self.xp
        out = self.fresh("x")
        ones = f"{xp}.ones(({rows}, 1))"
        if isinstance(e, forms.ProdAfter):
            # exclusive suffix products: a reversed cumulative product, no division
            suf = f"{xp}.cumulative_prod({xp}.concat([{ones}, {xp}.flip({vv}, axis=1)], axis=1), axis=1)[:, :-1]"
            self.emit(f"{out} = " + flat(f"{xp}.flip({suf}, axis=1)"))
            return out
        if isinstance(e, forms.ProdExcept):
            # exclusive prefix and suffix products: no division, so exact zeros are safe
            pre = f"{xp}.cumulative_prod({xp}.concat([{ones}, {vv}], axis=1), axis=1)[:, :-1]"
            suf = f"{xp}.cumulative_prod({xp}.concat([{ones}, {xp}.flip({vv}, axis=1)], axis=1), axis=1)[:, :-1]"
            self.emit(f"{out} = " + flat(f"({pre} * {xp}.flip({suf}, axis=1))"))
            return out
        pick = "argmax" if e.args[5] > 0 else "argmin"
        self.emit(f"{out} = {xp}.zeros(({rows}, {cols}))")
        self.emit(f"if {cols} > 0:")
        self.emit(f"    {out} = {xp}.asarray({xp}.arange({cols}) == {xp}.{pick}({vv}, axis=1, keepdims=True), "
                  f"dtype={xp}.float64)")
        self.emit(f"{out} = {flat(out)}")
        return out

    def _lin_state(self, e, lv: Level) -> str:
        """State of v ← a·v + b before each step of k, from 0, per segment: a Hillis–Steele scan of the
        affine maps (a, b) ∘ (a', b') = (a·a', a·b' + b), ⌈log₂ N⌉ passes of products and sums."""
        a, b, k = e.args[:3]
        xp = self.xp
        sa, rows, _, flat = self._segments(self.value(a, lv), k, lv)
        sb, _, _, _ = self._segments(self.value(b, lv), k, lv)
        sh, out = self.fresh("sh"), self.fresh("st")
        self.emit(f"{sh} = 1")
        self.emit(f"while {sh} < {sb}.shape[1]:")
        self.emit(f"    {sb}[:, {sh}:] = {sa}[:, {sh}:] * {sb}[:, :-{sh}] + {sb}[:, {sh}:]")
        self.emit(f"    {sa}[:, {sh}:] = {sa}[:, {sh}:] * {sa}[:, :-{sh}]")
        self.emit(f"    {sh} *= 2")
        self.emit(f"{out} = " + flat(f"{xp}.concat([{xp}.zeros(({rows}, 1)), {sb}], axis=1)[:, :-1]"))
        return out

    def _unwritten(self, e, lv: Level) -> str:
        body, k, a, b, s, *idx = e.args
        child = self._child(lv, k, a, b, s)
        out = self.fresh("u")
        self.emit(f"{out} = {self.xp}.asarray({self.value(body, self.root)}, dtype={self.xp}.float64, copy=True)")
        self.emit(f"{out} = _put({out}, ({', '.join(self.value(i, child) for i in idx)},), 0.0)")
        return out

    def _piecewise(self, e: sp.Piecewise, lv: Level) -> str:
        clauses = list(e.args)
        varying = self._varying_binders(lv) | {ELEM}
        if not self._is_array_level(lv) or not any(self.deps(c) & varying for _, c in clauses):
            # the predicate is one value for the whole level: a real `if`
            return self._scalar_piecewise(clauses, lv)
        if not all(_int_typed(self._resolved(x)) for x, _ in clauses) and self._cheap_and_total(clauses):
            return self._where(clauses, lv)     # (integer and truth values keep their masked buffer's dtype)
        out = self.fresh("pw")
        size = self._size(lv) if lv.kind != "elem" else lv.size
        integer = all(getattr(c[0], "is_integer", False) for c in clauses)
        boolean = all(is_boolean(c[0]) for c in clauses)
        dtype = f", dtype={self.xp}.bool" if boolean else f", dtype={self.xp}.int64" if integer else ""
        self.emit(f"{out} = {self.xp}.empty({size}{dtype})")
        remaining = None
        seen: tuple = ()
        for k, (expr, cond) in enumerate(clauses):
            last = k == len(clauses) - 1 or cond == sp.true
            if last and remaining is None:
                self.emit(f"{out}[...] = {self.value(expr, lv)}")
                break
            # A branch with the same predicate as an earlier one (the adjoint's Piecewise mirrors
            # the forward's) reuses its mask and its masked level: compressed operands are shared.
            key = (lv.id, seen, None if last else cond)
            if key in self._masks:
                mname, nxt, sub = self._masks[key]
            else:
                if last:
                    mname, nxt = self.fresh("m"), None
                    self.emit(f"{mname} = ~{remaining}")
                else:
                    c_code = self.value(cond, lv)
                    if c_code in ("True", "False"):
                        c_code = f"{self.xp}.full({size}, {c_code})"
                    mname = self.fresh("m")
                    if remaining:
                        self.emit(f"{mname} = ~{remaining} & ({c_code})")
                        nxt = self.fresh("m")
                        self.emit(f"{nxt} = {remaining} | {mname}")
                    else:
                        self.emit(f"{mname} = {self.xp}.asarray({c_code}, dtype={self.xp}.bool)")
                        nxt = mname
                sub = Level(lv, "mask", mask=mname, size=f"int({self.xp}.count_nonzero({mname}))")
                self._masks[key] = (mname, nxt, sub)
            self._masked_assign(out, mname, expr, sub)
            if last:
                break
            remaining = nxt
            seen = (*seen, cond)
        return out

    def _cheap_and_total(self, clauses) -> bool:
        """Whether every arm may be evaluated on *all* points of the level: the arms are cheap
        (a few operations together) and *total* — no division, root, log, exp or inexact power
        that could raise, warn or give NaN on a point of another branch, and no array read that
        the predicates do not already make (an arm's index could be out of range elsewhere).
        Then one ``where`` over both values costs less than compressing operands per branch."""
        cond_reads = set()
        for _, cond in clauses:
            cond_reads |= {s for s in self._expanded_atoms(cond) if s in self.reads}
        budget = [_WHERE_MAX_OPS]

        def total(e) -> bool:
            if isinstance(e, sp.Symbol):
                if e in self.temps:
                    return total(self.temps[e])
                return e not in self.reads or e in cond_reads
            if e.is_Number or e in (sp.true, sp.false, sp.pi, sp.E):
                return True
            budget[0] -= 1
            if budget[0] < 0:
                return False
            if isinstance(e, sp.Pow):
                if not (e.exp.is_Integer and e.exp >= 0):
                    return False
            elif not isinstance(e, _TOTAL_NODES):
                return False
            return all(total(a) for a in e.args)

        return all(total(expr) for expr, _ in clauses)

    def _expanded_atoms(self, e) -> set:
        out, todo = set(), [e]
        while todo:
            for s in sp.sympify(todo.pop()).free_symbols:
                if s in out:
                    continue
                out.add(s)
                if s in self.temps:
                    todo.append(self.temps[s])
        return out

    def _where(self, clauses, lv: Level) -> str:
        """``where(p1, a1, where(p2, a2, a3))``: every arm on every point (see ``_cheap_and_total``)."""
        xp = self.xp
        last = next((k for k, (_, c) in enumerate(clauses) if c == sp.true), len(clauses) - 1)
        # The array API's where wants an array condition, at most one scalar arm, and one kind of
        # number (NumPy promotes; the standard does not): the (float) result gets float arms.
        conds = [self.value(cond, lv) for _, cond in clauses[:last]]
        conds = [c if self.deps(cond) else f"{xp}.asarray({c})" for c, (_, cond) in zip(conds, clauses, strict=False)]
        exprs = [x for x, _ in clauses[:last + 1]]
        codes = self._floats(exprs, [self.value(x, lv) for x in exprs], force=True)
        code = codes[-1]
        if not self.deps(exprs[-1]):
            code = f"{xp}.asarray({code}, dtype={xp}.float64)"
        for cond, arm in reversed(list(zip(conds, codes[:-1], strict=True))):
            code = f"{xp}.where({cond}, {arm}, {code})"
        return code

    def _masked_assign(self, out: str, mask: str, expr, sub: Level) -> None:
        self.emit(f"if {self.xp}.any({mask}):")
        self.indent += 1
        code = self.value(expr, sub)
        self.emit(f"{out}[{mask}] = {code}")
        self.indent -= 1

    def _scalar_piecewise(self, clauses, lv: Level) -> str:
        """A real ``if``; a later clause's predicate is computed in the ``else`` of the earlier
        ones (nested), so it is only evaluated where Python would evaluate it."""
        out = self.fresh("pw")
        depth = 0
        cond_lv = lv

        floating = not all(_int_typed(self._resolved(x)) for x, _ in clauses)

        def arm(expr) -> str:
            code = self.value(expr, Level(cond_lv, "cond"))
            # at an array level an arm may be a plain number (b in `i if p else b`): an array either way
            if not self._is_array_level(lv):
                return code
            return f"{self.xp}.asarray({code}, dtype={self.xp}.float64)" if floating else f"{self.xp}.asarray({code})"

        for k, (expr, cond) in enumerate(clauses):
            last = cond == sp.true or k == len(clauses) - 1
            if last and k == 0:
                return self.value(expr, lv)
            if last:    # inside the else of the clauses before it
                self.emit(f"{out} = {arm(expr)}")
                break
            c = self.value(cond, cond_lv)
            self.emit(f"if {c}:")
            self.indent += 1
            self.emit(f"{out} = {arm(expr)}")
            self.indent -= 1
            self.emit("else:")
            self.indent += 1
            depth += 1
            cond_lv = Level(cond_lv, "cond")
        self.indent -= depth
        return out

    def _short_circuit(self, e, lv: Level) -> str:
        is_and = isinstance(e, forms.AndThen)
        if not self._is_array_level(lv) or not self.deps(e) & (self._varying_binders(lv) | {ELEM}):
            # one truth value for the whole level (also inside a masked arm): Python's own and/or
            out = self.fresh("b")
            first = self.value(e.args[0], lv)
            self.emit(f"{out} = bool({first})")
            for a in e.args[1:]:
                self.emit(f"if {'' if is_and else 'not '}{out}:")
                self.indent += 1
                sub = Level(lv, "cond")
                self.emit(f"{out} = bool({self.value(a, sub)})")
                self.indent -= 1
            return out
        out = self.fresh("b")
        first = self.value(e.args[0], lv)
        self.emit(f"{out} = {self.xp}.asarray({self.xp}.broadcast_to({self.xp}.asarray({first}, dtype={self.xp}.bool), "
                  f"({self._size(lv)},)), copy=True)")
        for a in e.args[1:]:
            sel = self.fresh("m")
            self.emit(f"{sel} = {self.xp}.asarray({out}, copy=True)" if is_and else f"{sel} = ~{out}")
            sub = Level(lv, "mask", mask=sel, size=f"int({self.xp}.count_nonzero({sel}))")
            self.emit(f"if {self.xp}.any({sel}):")
            self.indent += 1
            self.emit(f"{out}[{sel}] = {self.value(a, sub)}")
            self.indent -= 1
        return out



def _common_coefficient(e: sp.Add):
    """``(c, a - b)`` for ``c*a - c*b`` (every term a multiple of ±c, c ≠ 1), else None."""
    parts = [t.as_coeff_Mul() for t in e.args]
    c = abs(parts[0][0])
    if c == 1 or c == 0 or any(abs(k) != c or not k.is_Number for k, _ in parts):
        return None
    return c, sp.Add(*[rest if k > 0 else -rest for k, rest in parts])


def _trip_count(a, b, s, a_c: str, b_c: str, s_c: str) -> str:
    """``len(range(a, b, s))`` as arithmetic (valid for NumPy and CuPy integers too)."""
    if s == 1:
        return f"max(0, {b_c})" if a == 0 else f"max(0, {b_c} - ({a_c}))"
    return f"max(0, -((({a_c}) - ({b_c})) // ({s_c})))"


def _int_typed(x) -> bool:
    """Whether the printed value of ``x`` has an integer or boolean dtype (sign, floor and ceil of a
    float are integer-valued but stay float)."""
    if isinstance(x, (sp.sign, sp.floor, sp.ceiling)):
        return bool(x.args[0].is_integer)
    return bool(x.is_integer or is_boolean(x))


def _number(e) -> str:
    if e == sp.oo:
        return "math.inf"
    if e == -sp.oo:
        return "-math.inf"
    if e is sp.nan:
        return "math.nan"
    if e == sp.pi:
        return repr(math.pi)
    if e == sp.E:
        return repr(math.e)
    if e.is_Integer:
        return str(int(e))
    v = float(e)
    return repr(v)


def _is_atom_code(code: str) -> bool:
    return code.replace("_", "").replace(".", "").isalnum() or _is_number(code)


def _is_number(code: str) -> bool:
    try:
        float(code)
        return True
    except ValueError:
        return False


def _is_int_literal(code: str) -> bool:
    return code.lstrip("-").isdigit()


def _ident(name: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in name).strip("_")
    return out or "v"

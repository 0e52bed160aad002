"""CuPy lowering: one fused CUDA kernel per SOI instead of one launch per operation.

The NumPy printer (:mod:`coarsen_nb.lower.emit`) turns a kernel into array
statements; with ``xp = cupy`` every statement is its own GPU launch and its
own temporary array.  Here the *scalar body* of an SOI — the same SymPy DAG —
is printed once as CUDA C (a :class:`~sympy.printing.c.C99CodePrinter`
subclass) and wrapped in a single ``cupy.ElementwiseKernel`` or
``cupy.ReductionKernel``: the stitching idea of AStitch, one kernel per
segment.

What fuses (anything else returns ``None`` and the module writer falls back
to the array-namespace code, which with ``xp = cupy`` still runs on the GPU
operation by operation):

``elementwise``  outputs (or adjoint contributions ``b_x += ...``) that vary
                 over the elements of the kernel's array inputs and contain
                 no reduction, read or loop index;
``reduction``    one root-level expression containing exactly one reduction
                 node — ``RSum``/``RProd``/``RMax``/``RMin`` over a loop index
                 whose body reads arrays at affine indices, or ``ElemSum``
                 over the elements — mapped, reduced, then the root code
                 around it as ``post_map_expr``;
``scatter``      adjoint scatters ``b_x[i(k)] += g(k)`` over one loop index,
                 as an ElementwiseKernel over ``k`` with ``atomicAdd`` (two
                 scatters of one SOI may hit the same element from different
                 ``k``, e.g. ``x[k]`` and ``x[k + 1]`` in Rosenbrock).

A loop domain ``range(a, b, s)`` is passed as the non-raw input
``xp.arange(a, b, s)``: CuPy sizes ElementwiseKernel and ReductionKernel
launches from their non-raw arguments, and the index array makes ``k`` an
ordinary per-element value (arrays read at ``x[k + 1]`` are ``raw``).

Semantics kept from the NumPy printer:

* ``Piecewise`` becomes C ternaries, and a temporary needed only inside an arm
  is printed inside that arm (never hoisted), so the untaken branch is not
  evaluated on an element — the masked evaluation of the array printer;
* ``and``/``or`` keep Python's short-circuit order (C's ``&&``/``||``);
* Python's negative indices wrap (``x[k - 1]`` at ``k = 0`` is the last
  element), ``max``/``min`` propagate NaN like ``numpy.maximum``;
* softplus and the sigmoid use the same overflow-free forms as the NumPy
  printer; ``log1p``/``expm1``/``erf`` are CUDA's device functions;
* float64 throughout (integers stay 64-bit where they index).

Scalar arguments are passed by value; a 0-d device array (the result of an
earlier reduction) is read back first (``_cn_scalar``), one synchronisation,
because CuPy would otherwise treat it as a broadcast array that the
reduction's ``post_map_expr`` cannot see.

:func:`translation_unit` wraps a fused kernel in a minimal but faithful copy
of the ``__global__`` skeleton CuPy generates (``CUPY_FOR`` grid-stride loop,
``CArray`` raw arrays, the shared-memory tree of ``ReductionKernel``), so
the CUDA source can be compiled with ``nvcc`` where no GPU exists.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.pycode import PythonCodePrinter

from coarsen_nb.phi import forms
from coarsen_nb.symbolic.levels import ELEM, Deps

# Nodes a fused kernel cannot express in one pass: they need another level of
# the domain (segment products, arg-extrema, writes, gathers).
_UNFUSABLE = (forms.RWrite, forms.ProdExcept, forms.ArgOneHot, forms.Gather, forms.Unwritten, forms.RLin,
              forms.ProdAfter, forms.LinState, forms.LogSumExp)

_MAX_SOURCE = 200_000   # inlined arm-only temps can grow; past this, leave it to the array code

# Device helpers every fused kernel may use; guarded so that many kernels can
# share one translation unit.
PREAMBLE = """\
#ifndef COARSEN_NB_DEVICE_HELPERS
#define COARSEN_NB_DEVICE_HELPERS
// Python's x[i]: a negative index counts from the end.
__device__ __forceinline__ long long _cn_wrap(long long i, long long n) { return i < 0 ? i + n : i; }
__device__ __forceinline__ double _cn_inf() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ double _cn_nan() { return __longlong_as_double(0x7ff8000000000000LL); }
// numpy.maximum / numpy.minimum: a NaN operand wins (fmax/fmin would drop it).
__device__ __forceinline__ double _cn_max(double a, double b) { return (a != a || a >= b) ? a : b; }
__device__ __forceinline__ double _cn_min(double a, double b) { return (a != a || a <= b) ? a : b; }
// log(1 + exp(z)) and 1 / (1 + exp(-z)) without overflow.
__device__ __forceinline__ double _cn_softplus(double z) {
  return z > 0.0 ? z + log1p(exp(-z)) : log1p(exp(z));
}
__device__ __forceinline__ double _cn_sigmoid(double z) {
  if (z >= 0.0) return 1.0 / (1.0 + exp(-z));
  const double ez = exp(z);
  return ez / (1.0 + ez);
}
// Python's float % (the sign of the divisor).
__device__ __forceinline__ double _cn_mod(double a, double b) { return a - floor(a / b) * b; }
#endif
"""

# Python-side helpers the generated module needs (see ``HELPERS``).
HELPERS = {
    "_cupy_kernel": '''_CUPY_KERNELS = {}


def _cupy_kernel(key, make):
    """Build each fused CuPy kernel once per module; CuPy caches the compiled binary."""
    k = _CUPY_KERNELS.get(key)
    if k is None:
        k = _CUPY_KERNELS[key] = make()
    return k


def _cn_scalar(v):
    """A scalar kernel argument by value (a 0-d array is read back: one synchronisation)."""
    return v.item() if getattr(v, "ndim", None) == 0 else v
''',
}

_C_RESERVED = {
    "i", "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "class", "namespace", "template", "typename", "new", "delete", "this", "true", "false", "inline",
    "size", "max", "min", "abs", "exp", "log", "pow", "sqrt", "a", "b", "in", "out",
}


@dataclass
class Target:
    """One value a fused kernel produces.

    ``mode``: ``"new"`` (a fresh output named ``target``), ``"add"``
    (``target += expr``, in place) or ``"scatter"`` (``target[index] += expr``).
    """

    target: str
    expr: sp.Expr
    mode: str = "new"
    index: tuple = ()
    level: object = None       # scatters: the loop indices the contribution varies over (diff's level)
    dtype: str = "float64"


@dataclass
class Param:
    cname: str
    ctype: str        # "float64", "int64", "bool"
    arg: str          # Python code of the argument
    raw: bool = False
    ndim: int = 0
    is_array: bool = False


@dataclass
class FusedKernel:
    """One fused CuPy kernel: its CuPy constructor arguments and how to call it.

    ``kind`` is ``"elementwise"`` or ``"reduction"``; ``in_params`` and
    ``out_params`` are CuPy parameter lists; ``operation`` (elementwise) or
    ``map_expr``/``reduce_expr``/``post_map_expr``/``identity`` (reduction)
    are the CUDA C pieces; ``preamble`` holds the device functions they call.
    """

    kind: str
    name: str
    in_params: str
    out_params: str
    operation: str = ""
    map_expr: str = ""
    reduce_expr: str = ""
    post_map_expr: str = ""
    identity: str = ""
    preamble: str = ""
    comment: str = ""
    params: list = field(default_factory=list)      # inputs (Param), in in_params order
    outs: list = field(default_factory=list)        # outputs (Param), in out_params order
    setup: list = field(default_factory=list)       # Python lines run before the call (domain arrays)
    targets: list = field(default_factory=list)     # Target per output


# --------------------------------------------------------------------------------------------
# The scalar-body printer
# --------------------------------------------------------------------------------------------


class CudaPrinter(C99CodePrinter):
    """SymPy → CUDA C for one kernel body.

    ``codes`` maps leaf symbols (inputs, the loop index, the reduced value)
    and hoisted temporaries to C names; ``temps`` maps temp symbols to
    expressions, inlined when not hoisted; ``reads`` maps read symbols to
    ``(C array name, index exprs, shape ndim)``; ``subst`` maps whole
    subexpressions (a reduction node) to C code.
    """

    def __init__(self, codes: dict, temps: dict, reads: dict, subst: dict | None = None):
        super().__init__({"precision": 17})
        self.codes = codes
        self.temps = temps
        self.reads = reads
        self.subst = subst or {}

    def _print(self, expr, **kwargs):
        if expr in self.subst:
            return self.subst[expr]
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, s):
        if s in self.codes:
            return self.codes[s]
        if s in self.reads:
            arr, idx = self.reads[s]
            return f"{arr}[{self.flat_index(arr, idx)}]"
        if s in self.temps:
            return f"({self._print(self.temps[s])})"
        raise KeyError(f"no C code for symbol {s}")

    _print_Dummy = _print_Symbol

    def flat_index(self, arr: str, idx) -> str:
        """Row-major flat index of ``arr[idx]`` (CuPy's ``CArray::operator[](ptrdiff_t)`` unravels it)."""
        parts = [f"_cn_wrap((long long)({self._print(sp.sympify(i))}), {arr}.shape()[{d}])"
                 for d, i in enumerate(idx)]
        out = parts[0]
        for d, p in enumerate(parts[1:], start=1):
            out = f"({out}) * {arr}.shape()[{d}] + {p}"
        return out

    # numbers and constants (no M_PI / INFINITY: NVRTC has no math.h macros)
    def _print_Pi(self, e):
        return "3.141592653589793"

    def _print_Exp1(self, e):
        return "2.718281828459045"

    def _print_Infinity(self, e):
        return "_cn_inf()"

    def _print_NegativeInfinity(self, e):
        return "(-_cn_inf())"

    def _print_NaN(self, e):
        return "_cn_nan()"

    def _print_ComplexInfinity(self, e):
        return "_cn_nan()"

    def _print_BooleanTrue(self, e):
        return "true"

    def _print_BooleanFalse(self, e):
        return "false"

    def _print_Integer(self, e):
        return f"{int(e)}LL" if abs(int(e)) > 2**31 - 1 else str(int(e))

    # operators
    def _print_Pow(self, e):
        b, x = e.base, e.exp
        bc = self.parenthesize(b, 1000)
        if x == sp.S.Half:
            return f"sqrt({self._print(b)})"
        if x == -sp.S.Half:
            return f"(1.0 / sqrt({self._print(b)}))"
        if x.is_Integer:
            n = int(x)
            if n == 0:
                return "1.0"
            if 1 <= abs(n) <= 3:
                prod = " * ".join([bc] * abs(n))
                return f"({prod})" if n > 0 else f"(1.0 / ({prod}))"
            return f"pow({self._print(b)}, {float(n)!r})"
        if x.is_Number:
            return f"pow({self._print(b)}, {float(x)!r})"
        return f"pow({self._print(b)}, (double)({self._print(x)}))"

    def _minmax(self, e, fn):
        args = [self._print(a) for a in e.args]
        out = f"(double)({args[0]})"
        for a in args[1:]:
            out = f"{fn}({out}, (double)({a}))"
        return out

    def _print_Max(self, e):
        return self._minmax(e, "_cn_max")

    def _print_Min(self, e):
        return self._minmax(e, "_cn_min")

    def _print_Abs(self, e):
        return f"fabs({self._print(e.args[0])})"

    def _print_sign(self, e):
        a = self._print(e.args[0])
        return f"(double)((({a}) > 0) - (({a}) < 0))"

    def _print_Heaviside(self, e):
        a = self._print(e.args[0])
        return f"(({a}) > 0 ? 1.0 : (({a}) < 0 ? 0.0 : 0.5))"

    def _print_DiracDelta(self, e):
        return "0.0"

    def _print_Mod(self, e):
        return f"_cn_mod({self._print(e.args[0])}, {self._print(e.args[1])})"

    def _print_floor(self, e):
        return f"floor((double)({self._print(e.args[0])}))"

    def _print_ceiling(self, e):
        return f"ceil((double)({self._print(e.args[0])}))"

    def _print_Softplus(self, e):
        return f"_cn_softplus({self._print(e.args[0])})"

    def _print_Sigmoid(self, e):
        return f"_cn_sigmoid({self._print(e.args[0])})"

    def _print_Log1p(self, e):
        return f"log1p({self._print(e.args[0])})"

    def _print_Expm1(self, e):
        return f"expm1({self._print(e.args[0])})"

    def _print_Erf(self, e):
        return f"erf({self._print(e.args[0])})"

    def _print_Piecewise(self, e):
        """Nested ternaries: C evaluates only the operand selected, per element."""
        out = None
        for expr, cond in reversed(e.args):
            val = f"(double)({self._print(expr)})" if not _is_bool(expr) else f"({self._print(expr)})"
            if out is None or cond == sp.true:
                out = val
            else:
                out = f"(({self._print(cond)}) ? {val} : {out})"
        return out

    def _print_ITE(self, e):
        return self._print(sp.Piecewise((e.args[1], e.args[0]), (e.args[2], True)))

    def _print_AndThen(self, e):
        return "(" + " && ".join(f"({self._print(a)})" for a in e.args) + ")"

    def _print_OrElse(self, e):
        return "(" + " || ".join(f"({self._print(a)})" for a in e.args) + ")"

    def _print_And(self, e):
        return "(" + " && ".join(f"({self._print(a)})" for a in e.args) + ")"

    def _print_Or(self, e):
        return "(" + " || ".join(f"({self._print(a)})" for a in e.args) + ")"

    def _print_Not(self, e):
        return f"(!({self._print(e.args[0])}))"

    def _print_Relational(self, e):
        return f"({self._print(e.lhs)} {e.rel_op} {self._print(e.rhs)})"

    def _print_not_supported(self, e):
        raise NotImplementedError(f"no CUDA printer for {type(e).__name__}: {e}")


def _is_bool(e) -> bool:
    return isinstance(e, sp.logic.boolalg.Boolean) and not isinstance(e, sp.Expr)


# --------------------------------------------------------------------------------------------
# Analysis: what a set of targets needs
# --------------------------------------------------------------------------------------------


class _Body:
    """The temps, reads and leaves one fused kernel sees."""

    def __init__(self, kernel, names, extra_leaves=None, extra_temps=None):
        self.kernel = kernel
        self.names = names
        self.temps = dict(kernel.body)
        self.temps.update(extra_temps or {})
        self.reads = {r.symbol: (r.array, r.index) for r in kernel.reads}
        # leaf symbol -> (python code, SSA name or None, is_array, T or None)
        self.leaves: dict = {}
        for s, n in kernel.scalars.items():
            self.leaves[s] = (names(n), n, False, kernel.types.get(n))
        for s, n in kernel.arrays.items():
            self.leaves[s] = (names(n), n, True, kernel.types.get(n))
        for s, (code, is_array) in (extra_leaves or {}).items():
            self.leaves[s] = (code, None, is_array, None)
        arrays = {s for s, v in self.leaves.items() if v[2]}
        self.deps = Deps(self.temps, self.reads, lambda s: s in arrays)

    def nodes(self, e):
        """Every node reachable from ``e``, temps expanded (each temp visited once)."""
        seen, out, stack = set(), [], [sp.sympify(e)]
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            out.append(x)
            if isinstance(x, sp.Symbol) and x in self.temps:
                stack.append(self.temps[x])
            elif isinstance(x, sp.Symbol) and x in self.reads:
                stack.extend(sp.sympify(i) for i in self.reads[x][1])
            else:
                stack.extend(x.args)
        return out

    def expand(self, e):
        """``e`` with every temp substituted (for loop bounds printed in Python)."""
        e = sp.sympify(e)
        for _ in range(100):
            f = e.xreplace({s: self.temps[s] for s in e.free_symbols if s in self.temps})
            if f == e:
                return e
            e = f
        raise RecursionError("temps do not terminate")


def _ctype(t) -> tuple[str, str]:
    """(CuPy dtype name, C type) of a leaf of type ``t`` (None: float)."""
    kind = getattr(t, "kind", "float")
    if kind == "int":
        return "int64", "long long"
    if kind == "bool":
        return "bool", "bool"
    return "float64", "double"


def _cname(name: str, taken: set) -> str:
    base = re.sub(r"_+", "_", re.sub(r"\W", "_", name)).strip("_") or "v"
    if base[0].isdigit():
        base = "v" + base
    if base in _C_RESERVED or keyword.iskeyword(base):
        base += "_"
    cand, k = base, 1
    while cand in taken:
        k += 1
        cand = f"{base}_{k}"
    taken.add(cand)
    return cand


class _Emitter:
    """Prints hoisted temporaries and target expressions as C statements."""

    def __init__(self, body: _Body, codes: dict, reads: dict, subst: dict, taken: set):
        self.body = body
        self.codes = dict(codes)
        self.pr = CudaPrinter(self.codes, body.temps, reads, subst)
        self.subst = subst
        self.taken = taken
        self.lines: list[str] = []

    def unconditional(self, exprs) -> list:
        """Temps every element evaluates: reachable without entering a branch arm or a later
        operand of ``and``/``or``, in body order (a temp only an arm needs is inlined there)."""
        need: set = set()
        stack = [sp.sympify(e) for e in exprs]
        seen: set = set()
        while stack:
            x = stack.pop()
            if x in seen or x in self.subst:
                continue
            seen.add(x)
            if isinstance(x, sp.Symbol):
                if x in self.body.temps and x not in self.codes:
                    need.add(x)
                    stack.append(self.body.temps[x])
                elif x in self.body.reads and x not in self.codes:
                    need.add(x)
                    stack.extend(sp.sympify(i) for i in self.body.reads[x][1])
                continue
            if isinstance(x, sp.Piecewise):
                stack.append(x.args[0][1])
                continue
            if isinstance(x, sp.ITE):
                stack.append(x.args[0])
                continue
            if isinstance(x, (forms.AndThen, forms.OrElse)):
                stack.append(x.args[0])
                continue
            stack.extend(x.args)
        order = list(self.body.reads) + list(self.body.temps)
        return sorted(need, key=order.index)

    def hoist(self, exprs, indent: str) -> None:
        for s in self.unconditional(exprs):
            if s in self.body.reads:
                # an element read every point makes: one named load
                name = _cname(s.name, self.taken)
                self.lines.append(f"{indent}const double {name} = {self.pr._print_Symbol(s)};")
                self.codes[s] = name
                continue
            e = self.body.temps[s]
            if e in self.subst:
                self.codes[s] = self.subst[e]
                continue
            code = self.pr.doprint(e)
            name = _cname(s.name, self.taken)
            ctype = "bool" if _is_bool(e) else "double"
            self.lines.append(f"{indent}const {ctype} {name} = {code};")
            self.codes[s] = name

    def value(self, e) -> str:
        return self.pr.doprint(sp.sympify(e))


# --------------------------------------------------------------------------------------------
# Building fused kernels
# --------------------------------------------------------------------------------------------


def _domain(body: _Body, targets: list[Target]):
    """The one domain all targets share: ``ELEM``, a loop ``(k, a, b, s, reduction node)``
    for a single-reduction target, or ``("scatter", k, a, b, s)``; None if none fits."""
    reductions, binders = set(), set()
    for t in targets:
        for n in body.nodes(t.expr):
            if isinstance(n, _UNFUSABLE):
                return None
            if isinstance(n, (forms._Reduction, forms.ElemSum)):
                reductions.add(n)
        binders |= body.deps(t.expr).union(*(body.deps(sp.sympify(i)) for i in t.index))
    if reductions:
        if len(targets) != 1 or len(reductions) != 1 or targets[0].mode == "scatter":
            return None
        (red,) = reductions
        inner = [n for n in body.nodes(red.args[0]) if isinstance(n, (forms._Reduction, forms.ElemSum))]
        if inner:
            return None                     # nested reductions: more than one level
        if isinstance(red, forms.ElemSum):
            if body.deps(red.args[0]) - {ELEM}:
                return None
            return ("elemsum", red)
        k = red.args[1]
        if body.deps(red.args[0]) - {k} or any(body.deps(b) for b in red.args[2:5]):
            return None
        if binders - {k}:
            return None
        return ("reduce", red)
    if any(t.mode == "scatter" for t in targets):
        if not all(t.mode == "scatter" for t in targets) or len(binders) != 1:
            return None
        (k,) = binders
        if any(t.level is not None and set(t.level) != {k} for t in targets):
            return None
        if k not in body.deps.ranges:
            return None
        return ("scatter", k)
    if binders != {ELEM}:
        return None
    return ("elem",)


def fused_source(kernel, names, targets: list[Target] | None = None, *, extra_leaves=None, extra_temps=None,
                 tag: str = "fwd", array_ndim=None) -> FusedKernel | None:
    """CUDA C of one fused CuPy kernel computing ``targets`` of ``kernel`` (default: its outputs).

    ``names`` maps SSA names to the generated module's Python identifiers
    (``ModuleWriter.py``); ``extra_leaves``/``extra_temps`` are the adjoint
    leaves and temps of a VJP (:func:`coarsen_nb.symbolic.diff.vjp`);
    ``array_ndim(python name) -> int`` gives the rank of an array written
    through a scatter.  Returns None when the targets do not form one of the
    fusable shapes (see the module docstring).
    """
    if targets is None:
        targets = [Target(names(o.name), o.symbol) for o in kernel.outputs]
    if not targets:
        return None
    body = _Body(kernel, names, extra_leaves, extra_temps)
    try:
        dom = _domain(body, targets)
    except (KeyError, ValueError):
        return None
    if dom is None:
        return None
    try:
        fk = _build(kernel, body, targets, dom, tag, array_ndim or (lambda name: 1))
    except (NotImplementedError, KeyError):
        return None
    if fk is None or len(fk.operation) + len(fk.preamble) > _MAX_SOURCE:
        return None
    return fk


def _leaf_params(body: _Body, symbols, taken: set, raw_arrays: bool) -> tuple[list[Param], dict]:
    """Input parameters for the leaves and read arrays ``symbols`` uses, and their C codes."""
    params, codes = [], {}
    for s in sorted(symbols, key=str):
        if s not in body.leaves:
            continue
        code, ssa, is_array, t = body.leaves[s]
        dt, _ = _ctype(t)
        cname = _cname(code, taken)
        if is_array:
            if raw_arrays:
                return [], {}               # an elementwise array inside a loop domain: not one pass
            params.append(Param(cname, dt, f"xp.asarray({code}, dtype=xp.{dt})", is_array=True,
                                ndim=getattr(t, "ndim", 1) or 1))
        else:
            params.append(Param(cname, dt, f"_cn_scalar({code})"))
        codes[s] = cname
    return params, codes


def _read_params(body: _Body, read_syms, taken: set) -> tuple[list[Param], dict]:
    params, arrays = [], {}
    for s in sorted(read_syms, key=str):
        arr, idx = body.reads[s]
        if arr not in arrays:
            t = body.kernel.types.get(arr)
            dt, _ = _ctype(t)
            code = body.names(arr)
            cname = _cname(code, taken)
            arrays[arr] = cname
            params.append(Param(cname, dt, f"xp.asarray({code}, dtype=xp.{dt})", raw=True, is_array=True,
                                ndim=getattr(t, "ndim", len(idx)) or len(idx)))
    reads = {s: (arrays[body.reads[s][0]], body.reads[s][1]) for s in read_syms}
    return params, reads


def _bounds_code(body: _Body, bounds) -> list[str]:
    pyp = PythonCodePrinter({"standard": "python3"})
    out = []
    for b in bounds:
        e = body.expand(b)
        ren = {}
        for s in e.free_symbols:
            if s not in body.leaves or body.leaves[s][2]:
                raise KeyError(f"loop bound needs {s}")
            ren[s] = sp.Symbol(body.leaves[s][0])
        out.append(f"int({pyp.doprint(e.xreplace(ren))})")
    return out


def _build(kernel, body: _Body, targets, dom, tag, array_ndim) -> FusedKernel | None:
    name = f"soi{kernel.index}_{tag}"
    where = f"line{'s' if len(kernel.lines) > 1 else ''} {', '.join(map(str, kernel.lines))}" if kernel.lines \
        else "no source line"
    comment = f"// SOI {kernel.index} ({where}), {tag}: one fused kernel"
    taken = set(_C_RESERVED) | {name}
    syms = set()
    read_syms = set()
    for t in targets:
        for n in body.nodes(t.expr) + [m for i in t.index for m in body.nodes(sp.sympify(i))]:
            if isinstance(n, sp.Symbol):
                if n in body.reads:
                    read_syms.add(n)
                elif n in body.leaves:
                    syms.add(n)
    loop = dom[0] in ("reduce", "scatter")
    params, codes = _leaf_params(body, syms, taken, raw_arrays=loop)
    if loop and any(body.leaves[s][2] for s in syms):
        return None
    rparams, reads = _read_params(body, read_syms, taken)
    if read_syms and not loop:
        return None
    params += rparams
    setup = []
    if loop:
        k = dom[1].args[1] if dom[0] == "reduce" else dom[1]
        a, b, s = dom[1].args[2:5] if dom[0] == "reduce" else body.deps.ranges[k]
        kname = _cname(str(k), taken)
        a_c, b_c, s_c = _bounds_code(body, (a, b, s))
        dom_var = f"_dom_{name}"
        setup.append(f"{dom_var} = xp.arange({a_c}, {b_c}, {s_c}, dtype=xp.int64)")
        params.append(Param(kname, "int64", dom_var, is_array=True, ndim=1))
        codes[k] = kname

    if dom[0] in ("reduce", "elemsum"):
        return _build_reduction(kernel, body, targets[0], dom, name, comment, params, codes, reads, taken, setup)

    onames: dict = {}
    for t in targets:
        if t.target not in onames:
            onames[t.target] = _cname(t.target, taken)
    em = _Emitter(body, codes, reads, {}, taken)
    ind = "  "
    em.hoist([t.expr for t in targets] + [i for t in targets for i in t.index], ind)
    outs, stmts = [], []
    for t in targets:
        val = em.value(t.expr)
        oname = onames[t.target]
        if t.mode == "scatter":
            if not any(o.arg == t.target for o in outs):
                outs.append(Param(oname, "float64", t.target, raw=True, is_array=True, ndim=array_ndim(t.target)))
            idx = em.pr.flat_index(oname, t.index)
            stmts.append(f"{ind}atomicAdd(&{oname}[{idx}], (double)({val}));")
        else:
            outs.append(Param(oname, t.dtype, t.target, is_array=True))
            op = "+=" if t.mode == "add" else "="
            stmts.append(f"{ind}{oname} {op} {val};")
    operation = "\n".join([ind + comment.lstrip()] + em.lines + stmts)
    return FusedKernel("elementwise", name, _param_list(params), _param_list(outs), operation=operation,
                       preamble=PREAMBLE, comment=comment, params=params, outs=outs, setup=setup,
                       targets=list(targets))


def _build_reduction(kernel, body, target, dom, name, comment, params, codes, reads, taken, setup):
    red = dom[1]
    kind = "sum" if isinstance(red, forms.ElemSum) else red.kind
    rbody = red.args[0]
    # map: a device function of the per-point inputs
    oname = _cname(target.target, taken)
    map_params = [p for p in params if p.cname in set(codes.values()) | {r[0] for r in reads.values()}]
    em = _Emitter(body, codes, reads, {}, taken)
    em.hoist([rbody], "  ")
    val = em.value(rbody)
    tmpl = [p for p in map_params if p.raw]
    tparams = [f"typename T_{p.cname}" for p in tmpl]
    sig = []
    for p in map_params:
        if p.raw:
            sig.append(f"const T_{p.cname}& {p.cname}")
        else:
            sig.append(f"const {_c_of(p.ctype)} {p.cname}")
    head = (f"template <{', '.join(tparams)}>\n" if tparams else "") + \
        f"__device__ double {name}_map({', '.join(sig)}) {{"
    map_fn = "\n".join([head, f"  {comment.lstrip()}: the mapped value at one point"] + em.lines +
                       [f"  return (double)({val});", "}"])
    # post: the root code around the reduction, over the reduced value and scalar inputs
    acc = _cname("acc", taken)
    post_em = _Emitter(body, {s: c for s, c in codes.items() if s in body.leaves and not body.leaves[s][2]},
                       {}, {red: acc}, taken)
    post_em.hoist([target.expr], "  ")
    post_val = post_em.value(target.expr)
    post_syms = {s for s in body.nodes(target.expr) if isinstance(s, sp.Symbol) and s in body.leaves}
    post_params = [p for p in params if any(codes.get(s) == p.cname for s in post_syms) and not p.is_array]
    psig = [f"const double {acc}"] + [f"const {_c_of(p.ctype)} {p.cname}" for p in post_params]
    post_fn = "\n".join([f"__device__ double {name}_post({', '.join(psig)}) {{",
                         f"  // the root code of SOI {kernel.index} around its {kind}"] + post_em.lines +
                        [f"  return (double)({post_val});", "}"])
    outs = [Param(oname, "float64", target.target, is_array=True)]
    reduce_expr = {"sum": "a + b", "prod": "a * b", "max": "_cn_max(a, b)", "min": "_cn_min(a, b)"}[kind]
    identity = {"sum": "0.0", "prod": "1.0", "max": "(-_cn_inf())", "min": "_cn_inf()"}[kind]
    map_expr = f"{name}_map({', '.join(p.cname for p in map_params)})"
    # always "=": the output is fresh; an adjoint is accumulated on the Python side (target += ...)
    post_map_expr = f"{oname} = {name}_post({', '.join(['a'] + [p.cname for p in post_params])})"
    preamble = PREAMBLE + "\n" + map_fn + "\n\n" + post_fn + "\n"
    return FusedKernel("reduction", name, _param_list(params), _param_list(outs), map_expr=map_expr,
                       reduce_expr=reduce_expr, post_map_expr=post_map_expr, identity=identity,
                       preamble=preamble, comment=comment, params=params, outs=outs, setup=setup,
                       targets=[target])


def _c_of(dtype: str) -> str:
    return {"float64": "double", "int64": "long long", "bool": "bool"}[dtype]


def _param_list(params: list[Param]) -> str:
    return ", ".join(f"{'raw ' if p.raw else ''}{p.ctype} {p.cname}" for p in params)


# --------------------------------------------------------------------------------------------
# Python text that builds and calls the kernel
# --------------------------------------------------------------------------------------------


def _pystr(text: str, indent: str) -> str:
    if '"""' in text or "\\" in text:
        return repr(text)
    return '"""\n' + text + '\n' + indent + '"""'


def emit_call(fk: FusedKernel, indent: str = "    ") -> list[str]:
    """Python lines (at ``indent``) that construct ``fk`` once and call it.

    Outputs in mode ``"new"`` are assigned; ``"add"`` outputs of an
    ElementwiseKernel and scatter targets are passed in and updated in
    place; a reduction's ``"add"`` output is ``target += kernel(...)``.
    """
    i2 = indent + "    "
    lines = [indent + fk.comment.replace("//", "#", 1)]
    lines += [indent + s for s in fk.setup]
    if fk.kind == "elementwise":
        ctor = [f"{indent}    lambda: xp.ElementwiseKernel(",
                f"{i2}    {fk.in_params!r},",
                f"{i2}    {fk.out_params!r},",
                f"{i2}    {_pystr(fk.operation, i2 + '    ')},",
                f"{i2}    {fk.name!r},",
                f"{i2}    preamble={_pystr(fk.preamble, i2 + '    ')}))"]
    else:
        ctor = [f"{indent}    lambda: xp.ReductionKernel(",
                f"{i2}    {fk.in_params!r},",
                f"{i2}    {fk.out_params!r},",
                f"{i2}    {fk.map_expr!r},",
                f"{i2}    {fk.reduce_expr!r},",
                f"{i2}    {fk.post_map_expr!r},",
                f"{i2}    {fk.identity!r},",
                f"{i2}    {fk.name!r},",
                f"{i2}    reduce_type='double',",
                f"{i2}    preamble={_pystr(fk.preamble, i2 + '    ')}))"]
    var = f"_k_{fk.name}"
    lines.append(f"{indent}{var} = _cupy_kernel({fk.name!r},")
    lines += ctor
    args = [p.arg for p in fk.params]
    modes = {t.target: t.mode for t in fk.targets}
    if fk.kind == "reduction":
        (o,) = fk.outs
        op = "+=" if modes[o.arg] == "add" else "="
        lines.append(f"{indent}{o.arg} {op} {var}({', '.join(args)})")
    elif all(modes[o.arg] == "new" for o in fk.outs):
        lhs = ", ".join(o.arg for o in fk.outs)
        lines.append(f"{indent}{lhs} = {var}({', '.join(args)})")
    else:
        lines.append(f"{indent}{var}({', '.join(args + [o.arg for o in fk.outs])})")
    return lines


# --------------------------------------------------------------------------------------------
# Hooks for ModuleWriter
# --------------------------------------------------------------------------------------------


def _register_helpers(writer) -> None:
    from coarsen_nb.lower import module

    for k, text in HELPERS.items():
        module._HELPERS.setdefault(k, text)
        writer.helpers.add(k)


def forward_lines(writer, kernel) -> list[str] | None:
    """The forward of ``kernel`` for ``ModuleWriter.kernel``: fused kernels where the outputs fuse.

    Each output that is a single root reduction gets a ReductionKernel; the
    outputs that vary elementwise share one ElementwiseKernel; the rest (plain
    scalar code) is printed by the array printer.  None: nothing fused.
    """
    fwd = [Target(writer.py(o.name), o.symbol, dtype=_ctype(kernel.types.get(o.name))[0]) for o in kernel.outputs]
    groups = _groups(kernel, writer.py, fwd, None, None)
    if groups is None:
        return None
    fused, rest = groups
    lines = []
    ind = "    " * writer.indent
    for fk in fused:
        lines += emit_call(fk, ind)
    if rest:
        pr = writer.printer(kernel)
        for t in rest:
            pr.emit(f"{t.target} = {pr.value(t.expr)}")
        writer._absorb(pr)
        lines = writer.lines[len(writer.lines) - len(pr.lines):] + lines
        del writer.lines[len(writer.lines) - len(pr.lines):]
    _register_helpers(writer)
    return lines


def reverse_lines(writer, kernel, v, leaves) -> list[str] | None:
    """The adjoint of ``kernel`` for ``ModuleWriter.kernel_reverse`` (``v`` from ``diff.vjp``,
    ``leaves`` the adjoint leaves it passes to its printer); None: nothing fused."""
    targets = [Target(writer.names.bar(n), e, "add") for n, e in v.scalars + v.arrays]
    targets += _scatter_targets(writer, v)
    ndims = {writer.names.bar(sc[0]): (getattr(writer.plan.types.get(sc[0]), "ndim", 1) or 1) for sc in v.scatters}
    groups = _groups(kernel, writer.py, targets, leaves, v.temps, tag="vjp", ndims=ndims)
    if groups is None:
        return None
    fused, rest = groups
    ind = "    " * writer.indent
    lines = []
    if rest:
        pr = writer.printer(kernel, extra_leaves=leaves, extra_temps=v.temps)
        for t in rest:
            if t.mode == "scatter":
                name = next(sc[0] for sc in v.scatters if writer.names.bar(sc[0]) == t.target and sc[2] == t.expr)
                writer._scatter(pr, name, t.index, t.expr, *([t.level] if t.level is not None else []))
            else:
                pr.emit(f"{t.target} += {pr.value(t.expr)}")
        writer._absorb(pr)
        lines = writer.lines[len(writer.lines) - len(pr.lines):]
        del writer.lines[len(writer.lines) - len(pr.lines):]
    for fk in fused:
        lines += emit_call(fk, ind)
    _register_helpers(writer)
    return lines


def _scatter_targets(writer, v) -> list[Target]:
    """Scatter targets of a VJP; ``level`` (when diff records it) is the set of loop indices the
    contribution is summed over, which must be exactly the fused kernel's domain."""
    return [Target(writer.names.bar(sc[0]), sc[2], "scatter", tuple(sc[1]), sc[3] if len(sc) > 3 else None)
            for sc in v.scatters]


def _groups(kernel, names, targets, leaves, temps, tag="fwd", ndims=None):
    """Split targets into fused kernels (elementwise together, scatters together, one per
    reduction) and the rest; None when nothing fuses."""
    body = _Body(kernel, names, leaves, temps)
    elem, scatter, red, rest = [], [], [], []
    for t in targets:
        try:
            dom = _domain(body, [t])
        except (KeyError, ValueError):
            dom = None
        if dom is None:
            rest.append(t)
        elif dom[0] == "elem":
            elem.append(t)
        elif dom[0] == "scatter":
            scatter.append(t)
        else:
            red.append(t)
    fused = []
    for j, group in enumerate([elem, scatter] + [[t] for t in red]):
        if not group:
            continue
        sub = {0: "elem", 1: "scatter"}.get(j, f"red{j - 1}")
        fk = fused_source(kernel, names, group, extra_leaves=leaves, extra_temps=temps, tag=f"{tag}_{sub}",
                          array_ndim=(ndims or {}).get)
        if fk is None:
            rest += group
        else:
            fused.append(fk)
    if not fused:
        return None
    return fused, rest


# --------------------------------------------------------------------------------------------
# A compilable translation unit (no GPU needed)
# --------------------------------------------------------------------------------------------

# A minimal CArray: CuPy's raw-array view (data, size, shape, strides; operator[] on a flat
# C-order index unravels it through the strides), and CuPy's grid-stride loop.
SKELETON_HEADER = """\
#include <cstddef>
#ifndef COARSEN_NB_SKELETON
#define COARSEN_NB_SKELETON
template <typename T, int ndim>
class CArray {
 public:
  T* data_;
  ptrdiff_t size_;
  ptrdiff_t shape_[ndim];
  ptrdiff_t strides_[ndim];
  __device__ ptrdiff_t size() const { return size_; }
  __device__ const ptrdiff_t* shape() const { return shape_; }
  __device__ T& operator[](ptrdiff_t i) { return const_cast<T&>(static_cast<const CArray&>(*this)[i]); }
  __device__ const T& operator[](ptrdiff_t i) const {
    const char* ptr = reinterpret_cast<const char*>(data_);
    for (int dim = ndim; --dim > 0;) {
      ptr += strides_[dim] * (i % shape_[dim]);
      i /= shape_[dim];
    }
    ptr += strides_[0] * i;
    return *reinterpret_cast<const T*>(ptr);
  }
};
#define CUPY_FOR(i, n) \\
  for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \\
       i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)
#endif
"""


def translation_unit(fk: FusedKernel, namespace: str | None = None) -> str:
    """``fk`` inside the ``__global__`` function CuPy would generate for it.

    Elementwise: CuPy's ``CUPY_FOR`` loop over the broadcast size; each
    non-raw input ``x`` is read as ``const T x = _raw_x[i]``, each non-raw
    output bound as ``T &y = _raw_y[i]`` (CuPy goes through a ``CIndexer``;
    here arrays are contiguous and the flat index is used directly), raw
    arguments are ``CArray`` s.  Reduction: the map / REDUCE / POST_MAP
    structure of CuPy's ``ReductionKernel`` template (grid-stride loop over
    the input, shared-memory tree, one output), with one output element.
    ``namespace`` lets many kernels share a file (then not ``extern "C"``).
    """
    decl = []
    for p in fk.params + fk.outs:
        c = _c_of(p.ctype)
        if p.raw:
            decl.append(f"CArray<{c}, {p.ndim}> {p.cname}")
        elif p.is_array:
            decl.append(f"CArray<{c}, 1> _raw_{p.cname}")
        else:
            decl.append(f"{c} {p.cname}")
    nonraw_in = [p for p in fk.params if p.is_array and not p.raw]
    nonraw_out = [p for p in fk.outs if not p.raw]
    linkage = "" if namespace else 'extern "C" '
    if fk.kind == "elementwise":
        size = f"_raw_{nonraw_in[0].cname}.size()" if nonraw_in else "_n"
        if not nonraw_in:
            decl.append("ptrdiff_t _n")
        body = [f"{linkage}__global__ void {fk.name}({', '.join(decl)}) {{",
                f"  CUPY_FOR(i, {size}) {{"]
        body += [f"    const {_c_of(p.ctype)} {p.cname} = _raw_{p.cname}[i];" for p in nonraw_in]
        body += [f"    {_c_of(p.ctype)} &{p.cname} = _raw_{p.cname}[i];" for p in nonraw_out]
        body += ["    " + ln for ln in fk.operation.splitlines()] + ["    ;", "  }", "}"]
    else:
        size = f"_raw_{nonraw_in[0].cname}.size()"
        body = [f"#define REDUCE(a, b) ({fk.reduce_expr})",
                f"#define POST_MAP(a) ({fk.post_map_expr})",
                "typedef double _type_reduce;",
                f"{linkage}__global__ void {fk.name}({', '.join(decl)}) {{",
                "  __shared__ _type_reduce _sdata[512];",
                "  const unsigned int _tid = threadIdx.x;",
                f"  _type_reduce _s = _type_reduce({fk.identity});",
                f"  for (ptrdiff_t _j = _tid; _j < {size}; _j += blockDim.x) {{"]
        body += [f"    const {_c_of(p.ctype)} {p.cname} = _raw_{p.cname}[_j];" for p in nonraw_in]
        body += [f"    _type_reduce _a = static_cast<_type_reduce>({fk.map_expr});",
                 "    _s = REDUCE(_s, _a);",
                 "  }",
                 "  _sdata[_tid] = _s;",
                 "  __syncthreads();",
                 "  for (unsigned int _block = blockDim.x / 2; _block > 0; _block >>= 1) {",
                 "    if (_tid < _block) {",
                 "      _type_reduce a = _sdata[_tid], b = _sdata[_tid + _block];",
                 "      _sdata[_tid] = REDUCE(a, b);",
                 "    }",
                 "    __syncthreads();",
                 "  }",
                 "  if (_tid == 0) {",
                 "    _s = _sdata[0];"]
        body += [f"    {_c_of(p.ctype)} &{p.cname} = _raw_{p.cname}[0];" for p in nonraw_out]
        body += ["    POST_MAP(_s);", "  }", "}", "#undef REDUCE", "#undef POST_MAP"]
    text = "\n".join([fk.preamble, *body])
    if namespace:
        text = f"namespace {namespace} {{\n{text}\n}}  // namespace {namespace}"
    # the shared device helpers go first, outside any namespace (they are include-guarded)
    return SKELETON_HEADER + PREAMBLE + text + "\n"


def fused_kernels(plan, wrt) -> list[FusedKernel]:
    """Every fused kernel the CuPy backend would build for ``plan`` (forward and VJP), without
    writing the module: what the nvcc check compiles."""
    from coarsen_nb.lower.module import ModuleWriter
    from coarsen_nb.symbolic.diff import vjp as kernel_vjp

    w = ModuleWriter(plan, tuple(wrt), "cupy", "")
    out: list[FusedKernel] = []
    for k in plan.kernels():
        fwd = [Target(w.py(o.name), o.symbol, dtype=_ctype(k.types.get(o.name))[0]) for o in k.outputs]
        groups = _groups(k, w.py, fwd, None, None)
        out += groups[0] if groups else []
        bars = {o.name: sp.Symbol("bar:" + o.name, real=True) for o in k.outputs if o.name in w.active}
        if not bars or not (set(k.inputs) & w.active):
            continue
        v = kernel_vjp(k, w.active, bars)
        leaves = {sym: (w.names.bar(name), w.is_array(name)) for name, sym in bars.items()}
        targets = [Target(w.names.bar(n), e, "add") for n, e in v.scalars + v.arrays]
        targets += _scatter_targets(w, v)
        ndims = {w.names.bar(sc[0]): (getattr(plan.types.get(sc[0]), "ndim", 1) or 1) for sc in v.scatters}
        groups = _groups(k, w.py, targets, leaves, v.temps, tag="vjp", ndims=ndims)
        out += groups[0] if groups else []
    return out

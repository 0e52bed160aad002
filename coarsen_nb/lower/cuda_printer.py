"""CUDA C text of a fused kernel's scalar body: SymPy printed as C, and the device helpers it calls.

:class:`CudaPrinter` (a :class:`~sympy.printing.c.C99CodePrinter` subclass) prints the
scalar body of one SOI as CUDA C (a primitive's function as its registration in
:mod:`coarsen_nb.rules` spells it) with the NumPy printer's semantics (ternaries that
never evaluate the untaken arm, short-circuit ``&&``/``||``, Python's negative
indices, ``max``/``min`` that propagate NaN; see :mod:`coarsen_nb.lower.cupy`);
``PREAMBLE`` holds the ``_cn_*`` device functions its output calls, and ``c_identifier`` and
(from :mod:`coarsen_nb.lower.leaf_types`) ``leaf_ctype``/``c_type_of`` name and type C variables.  It knows nothing of
domains, parameters or CuPy: which targets fuse and how a kernel is assembled is
:mod:`coarsen_nb.lower.fusion`.
"""

from __future__ import annotations

import keyword
import math

import sympy as sp
from sympy.printing.c import C99CodePrinter

from coarsen_nb.lower.leaf_types import c_type_of, leaf_ctype  # noqa: F401 (named from here too)
from coarsen_nb.lower.naming import identifier
from coarsen_nb.lower.printing import exact_float, exact_integer_division
from coarsen_nb.rules.record import cuda_spell
from coarsen_nb.rules.table import printed

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

C_RESERVED = {
    "i", "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "class", "namespace", "template", "typename", "new", "delete", "this", "true", "false", "inline",
    "size", "max", "min", "abs", "exp", "log", "pow", "sqrt", "a", "b", "in", "out",
}


class CudaPrinter(C99CodePrinter):
    """SymPy → CUDA C for one kernel body.

    ``codes`` maps leaf symbols (inputs, the loop index, the reduced value)
    and hoisted temporaries to C names; ``temps`` maps temp symbols to
    expressions, inlined when not hoisted; ``reads`` maps read symbols to
    ``(C array name, index exprs, shape ndim)``; ``subst`` maps whole
    subexpressions (a reduction node) to C code.
    """

    def __init__(self, codes: dict, temps: dict, reads: dict, subst: dict | None = None):
        # a sum's terms in SymPy's canonical order ("none"): its default "lex" order of terms such as
        # 2.0*a and -4.0*a**1.0*x depends on the hash seed, and the same program printed two CUDA sources
        super().__init__({"precision": 17, "order": "none"})
        self.codes = codes
        self.temps = temps
        self.reads = reads
        self.subst = subst or {}

    def _print_Float(self, expr):
        v = float(expr)     # the short decimal (9.81, not 9.8100000000000005), as the NumPy printer's
        return exact_float(v) if math.isfinite(v) else super()._print_Float(expr)

    def _print(self, expr, **kwargs):
        if expr in self.subst:
            return self.subst[expr]
        exact = exact_integer_division(expr)
        if exact is not None:       # floor((n + 2) / 3) of integers: one division of exact doubles
            num, den, down = exact
            return f"{'floor' if down else 'ceil'}((double)({self._print(num)}) / {den}.0)"
        p = printed(type(expr))
        # a primitive's form, spelled as its registration says (rules/), unless the form prints itself
        if p is not None and p.spelling.cuda is not None and not hasattr(expr, "_ccode"):
            return cuda_spell(p.spelling.cuda, [self._print(a) for a in expr.args])
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

    def _print_Heaviside(self, e):
        a = self._print(e.args[0])
        return f"(({a}) > 0 ? 1.0 : (({a}) < 0 ? 0.0 : 0.5))"

    def _print_DiracDelta(self, e):
        return "0.0"

    def _print_Mod(self, e):
        return f"_cn_mod({self._print(e.args[0])}, {self._print(e.args[1])})"

    def _print_Softplus(self, e):
        return f"_cn_softplus({self._print(e.args[0])})"

    def _print_Sigmoid(self, e):
        return f"_cn_sigmoid({self._print(e.args[0])})"

    def _print_Piecewise(self, e):
        """Nested ternaries: C evaluates only the operand selected, per element."""
        out = None
        for expr, cond in reversed(e.args):
            val = f"(double)({self._print(expr)})" if not is_bool(expr) else f"({self._print(expr)})"
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


def is_bool(e) -> bool:
    """Whether ``e`` is a SymPy boolean (a C ``bool``), not a number."""
    return isinstance(e, sp.logic.boolalg.Boolean) and not isinstance(e, sp.Expr)


def c_identifier(name: str, taken: set) -> str:
    """A C identifier for ``name``, not in ``taken`` nor reserved (shared with the fusion)."""
    base = identifier(name)
    if base in C_RESERVED or keyword.iskeyword(base):
        base += "_"
    cand, k = base, 1
    while cand in taken:
        k += 1
        cand = f"{base}_{k}"
    taken.add(cand)
    return cand


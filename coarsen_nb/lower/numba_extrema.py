"""A fused loop's maximum (minimum) in vector instructions, with the element loop's exact answer.

The exact step of a loop's max, ``if v > acc or v != v: acc = v`` (:meth:`LoopFunction._accumulate`), is NumPy's
``max``: a NaN anywhere is the result (the last one seen), and of equal elements the first is kept (which
decides the sign of a zero maximum: ``0.0 > -0.0`` is false).  It branches at every element, and LLVM
vectorizes neither it nor its branch-free forms (a select on ``v > acc``, Numba's ``max`` or ``np.maximum``): a
float max/min reduction made of compares and selects is one only under fast-math's no-NaN flags.  LLVM's
``llvm.maximum`` (``llvm.minimum``) is a reduction it knows without them: NaN where either operand is one,
-0.0 below 0.0.  So the loop steps ``acc = _ieee_maximum(acc, v)`` (the intrinsic below, printed into the
module), and where that result is a NaN or a zero -- the two cases where *which* NaN or zero the element
loop keeps could differ from LLVM's -- it runs the exact loop once more from the start.  Other results are the
same value, and equal floats other than zeros and NaNs are the same bits: the answer is the exact loop's,
bit for bit, and a second pass is paid only for a NaN or a zero extremum.

At 10**7 elements (``running_max``'s ``_soi2_vjp_reduce_2``): the exact loop ~29 ms, this ~6-7 ms
(RESULTS.md, stop 40, branch h-maxloop10).
"""

from __future__ import annotations

from coarsen_nb.lower import lir
from coarsen_nb.lower.helpers import Helper

#: the intrinsic's name in the generated module, by the reduction's kind
NAMES = {"max": "_ieee_maximum", "min": "_ieee_minimum"}

DECORATOR = "@numba.extending.intrinsic"

_SOURCE = '''def NAME(typingctx, a, b):
    """LLVM's ``llvm.WHICH`` of two numbers as float64: a NaN where either is one, -0.0 below 0.0.  A fused
    loop's WORD steps with it, which LLVM vectorizes (the exact step branches at every element), and runs
    the exact loop again where it gives a NaN or a zero (lower/numba_extrema.py)."""
    if not all(isinstance(t, (numba.types.Number, numba.types.Boolean)) for t in (a, b)):
        return None

    def codegen(context, builder, signature, args):
        from llvmlite import ir

        double = ir.DoubleType()
        x, y = (context.cast(builder, v, t, numba.float64) for v, t in zip(args, signature.args))
        fn = builder.module.declare_intrinsic("llvm.WHICH", [double], ir.FunctionType(double, [double, double]))
        return builder.call(fn, (x, y))

    return numba.float64(a, b), codegen
'''


def source(kind: str) -> str:
    """The intrinsic's text for a ``max`` or ``min`` reduction."""
    which = "maximum" if kind == "max" else "minimum"
    return _SOURCE.replace("NAME", NAMES[kind]).replace("WHICH", which).replace("WORD", which)


def register(writer, kind: str) -> str:
    """The intrinsic's name, its text among the module's helpers (with its decorator)."""
    name = NAMES[kind]
    if name not in writer.helper_table:
        writer.helper_table[name] = Helper.of_source(source(kind))
        writer.helper_decorators[name] = DECORATOR
    return name


def fast_step(writer, acc: lir.Name, term: lir.Expr, kind: str) -> lir.Stmt:
    """``acc = _ieee_maximum(acc, term)``: the vectorized loop's step."""
    return lir.Assign(acc, lir.Call(lir.Name(register(writer, kind)), (acc, term)))


def exact_again(acc: lir.Name, start: lir.Expr, loop: lir.For) -> lir.If:
    """Where the vectorized loop's extremum is a NaN or a zero: ``acc`` from ``start`` again through ``loop``,
    the exact steps (which NaN, which zero the element loop keeps)."""
    test = lir.BoolOp("or", (lir.Compare("==", acc, lir.Lit("0.0")), lir.Compare("!=", acc, acc)))
    return lir.If(test, (lir.Assign(acc, start), loop))

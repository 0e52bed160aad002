"""A fused loop's maximum (minimum) in vector instructions, with the element loop's exact answer.

The exact step of a loop's max, ``if v > acc or v != v: acc = v`` (:meth:`LoopFunction._accumulate`), is NumPy's
``max``: a NaN anywhere is the result (the last one seen), and of equal elements the first is kept (which
decides the sign of a zero maximum: ``0.0 > -0.0`` is false).  It branches at every element, and LLVM
vectorizes neither it nor its branch-free forms (a select on ``v > acc``, Numba's ``max`` or ``np.maximum``): a
float max/min reduction made of compares and selects is one only under fast-math's no-NaN flags.  LLVM's
``llvm.maximum`` (``llvm.minimum``) is a reduction it knows without them: NaN where either operand is one,
-0.0 below 0.0.  So the loop steps ``acc = _ieee_maximum(acc, v)`` (the intrinsic below, printed into the
module), and where that result is a NaN or a zero -- the two cases where *which* NaN or zero the element
loop keeps could differ from LLVM's -- it settles which: a zero extremum is the first element equal to zero
(a search that stops there), a NaN the last NaN (the exact loop once more from the start).  Other results are
the same value, and equal floats other than zeros and NaNs are the same bits: the answer is the exact loop's,
bit for bit.  The search matters: a log-sum-exp's row shifted by its maximum (the corpus's ``logsumexp``) has
the maximum 0.0 at every call.

Used by the fused loops (numba_loops: one max/min alone), the nests' max/min over a loop that reduces nothing
inside (numba_nests) and a log-sum-exp's row maximum (numba_lse_rows; gmm's, per point, in tiles).

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


def exact_step(acc: lir.Name, term: lir.Expr, kind: str) -> lir.If:
    """``if term > acc or term != term: acc = term`` (``<`` for a min): NumPy's step, a NaN anywhere the result,
    the first of equal values kept."""
    better = lir.Compare(">" if kind == "max" else "<", term, acc)
    return lir.If(lir.BoolOp("or", (better, lir.Compare("!=", term, term))), (lir.Assign(acc, term),))


def fast_step(writer, acc: lir.Name, term: lir.Expr, kind: str) -> lir.Stmt:
    """``acc = _ieee_maximum(acc, term)``: the vectorized loop's step."""
    return lir.Assign(acc, lir.Call(lir.Name(register(writer, kind)), (acc, term)))


def settled(acc: lir.Name, start: lir.Expr, loop: lir.For, kind: str) -> lir.If:
    """Where the vectorized loop's extremum is a zero or a NaN, the exact loop's (``loop``, whose last statement
    is its :func:`exact_step`; ``acc`` set to ``start`` before it).  A zero extremum is the first element equal
    to zero (before it every element was below it, after it none is above): a search that stops there.  A NaN
    is the last NaN: the exact loop again from the start."""
    *values, step = loop.body
    term = step_term(step, acc, kind)
    found = lir.If(lir.Compare("==", term, lir.Lit("0.0")), (lir.Assign(acc, term), lir.Break()))
    first_zero = lir.For(loop.target, loop.iter, (*values, found))
    last_nan = lir.If(lir.Compare("!=", acc, acc), (lir.Assign(acc, start), loop))
    # (one statement, the NaN's in the zero's ``else``: numba_tiles keeps it one group over a tile's points, whose
    # two loops share their variables)
    return lir.If(lir.Compare("==", acc, lir.Lit("0.0")), (first_zero,), (last_nan,))


def vectorized(writer, loop: lir.For, acc: lir.Name, start: lir.Expr, kind: str,
               again: lir.For | None = None) -> list[lir.Stmt]:
    """The exact loop ``loop`` (``acc`` set to ``start`` before it), whose last statement is its
    :func:`exact_step`, as the loop with that step made :func:`fast_step`, then :func:`settled` through
    ``again`` (by default ``loop`` itself; the same loop printed with variables of its own, where a later pass
    must not see one variable in two loops: numba_tiles).  The fast loop is ``loop`` but for its last
    statement: it computes no value the exact one does not."""
    *values, step = loop.body
    fast = lir.For(loop.target, loop.iter, (*values, fast_step(writer, acc, step_term(step, acc, kind), kind)))
    return [fast, settled(acc, start, loop if again is None else again, kind)]


def step_term(step: lir.Stmt, acc: lir.Name, kind: str) -> lir.Expr:
    """The value ``step`` (an :func:`exact_step` into ``acc``) steps with.  Anything else is a bug of the
    printer that asked (a ValueError, which compilation reports as an internal compiler error)."""
    term = step.body[0].value if isinstance(step, lir.If) and step.body and isinstance(step.body[0], lir.Assign) \
        else None
    if term is None or step != exact_step(acc, term, kind):
        raise ValueError(f"a {kind} loop's last statement is not its exact step into {acc.id}: {step}")
    return term

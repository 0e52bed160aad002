"""exp, log and erf written straight as LLVM instructions, for the numba module's ``_exp``/``_log``/``_erf_scalar``.

Those three were plain functions the numba module compiled (``@_jit_helper``): Numba typed and lowered their
bodies in every process whose cache did not hold them, ~0.2 s of black_scholes' cold compile (its loop calls all
three).  Now each is an intrinsic (``numba_elementary``) whose code generation is here: Numba types one call
(float64 -> float64) and this text writes the instructions into the caller, where LLVM sees them in the loop and
vectorizes it, as it did once the functions were inlined (``alwaysinline``).  Like :mod:`numba_xp`, this text is
pasted into every numba module (an exported one needs only NumPy and Numba), after numba_xp_special's.

The instructions are those Numba emitted for the functions' Python text (kept as the tests' reference,
``tests/lower/elementary_reference.py``), one for one, so that the values are the same bits: an ordered ``fcmp``
for ``<``, ``>`` and ``==``, an unordered one for ``!=``, ``-v`` as ``-0.0 - v``, ``k * 1.0`` of an int64 as its
``sitofp`` times 1.0, ``>>`` of an int64 arithmetic, ``a if c else b`` a select, each polynomial step LLVM's ``fma``
where the CPU has one and a multiply then an add where it does not (``ElementaryWriter.fma``).  No division by
zero can happen (each divisor is at least 1.7), so Numba's check of one, under the helpers' Python error model, is
not written.  The algorithms and
their accuracy: ``numba_elementary`` (log, erf) and ``numba_helpers`` (exp).
"""

import math as _math

import numba
from llvmlite import binding as _binding
from llvmlite import ir as _ir

_IR_DOUBLE = _ir.DoubleType()
_IR_INT64 = _ir.IntType(64)


def _ir_f(value):
    return _ir.Constant(_IR_DOUBLE, value)


def _ir_i(value):
    return _ir.Constant(_IR_INT64, value)


_FUSED = []     # whether the CPU has a fused multiply-add, asked once a process (``ElementaryWriter.fma``)


class ElementaryWriter:
    """Writes one helper's instructions with ``builder``, as Numba lowered its Python text."""

    def __init__(self, builder):
        self.b = builder
        if not _FUSED:
            _FUSED.append(bool(_binding.get_host_cpu_features().get("fma", False)))
        # (LLVM's fused multiply-add where the CPU Numba compiles for is this one and has it)
        self.fused = numba.config.CPU_NAME is None and _FUSED[0]

    def fma(self, a, b, c):
        """a * b + c rounded once, one instruction (LLVM's fma, which the vectorizer widens) where the CPU Numba
        compiles for has one; a * b + c as Python rounds it otherwise (LLVM's fma would then call libm's, far
        slower): the helpers' polynomials, half their arithmetic (a helper's own, not the user's)."""
        if self.fused:
            return self.b.fma(a, b, c)
        return self.b.fadd(self.b.fmul(a, b), c)

    def horner(self, x, first, *coefficients):
        """``p = first; p = _fma(p, x, c)`` for each c: the helpers' polynomial steps."""
        p = first
        for c in coefficients:
            p = self.fma(p, x, _ir_f(c))
        return p

    def select(self, op, a, b, then, otherwise):
        """``then if a OP b else otherwise``, OP ordered except ``!=`` (Numba's float comparisons)."""
        test = self.b.fcmp_unordered(op, a, b) if op == "!=" else self.b.fcmp_ordered(op, a, b)
        return self.b.select(test, then, otherwise)

    def neg(self, v):
        return self.b.fsub(_ir_f(-0.0), v)

    def fabs(self, v):
        fn = self.b.module.declare_intrinsic("llvm.fabs", [_IR_DOUBLE])
        return self.b.call(fn, [v])

    def exp(self, x):
        """``_exp`` (numba_helpers): Cody and Waite's reduction, Taylor to r^13, 2^k as two powers of 2."""
        b = self.b
        xc = self.select(">", _ir_f(-745.2), x, _ir_f(-745.2), x)
        xc = self.select("<", _ir_f(709.8), xc, _ir_f(709.8), xc)
        big = _ir_f(6755399441055744.0)
        kf = b.fsub(b.fadd(b.fmul(xc, _ir_f(1.4426950408889634)), big), big)
        r = b.fsub(b.fsub(xc, b.fmul(kf, _ir_f(0.6931471803691238))), b.fmul(kf, _ir_f(1.9082149292705877e-10)))
        p = self.horner(r, _ir_f(1.0 / 6227020800.0), 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                        1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                        1.0 / 6.0, 0.5, 1.0, 1.0)
        k = b.fptosi(kf, _IR_INT64)
        half = b.ashr(k, _ir_i(1))
        two_half = b.bitcast(b.shl(b.add(half, _ir_i(1023)), _ir_i(52)), _IR_DOUBLE)
        two_rest = b.bitcast(b.shl(b.add(b.sub(k, half), _ir_i(1023)), _ir_i(52)), _IR_DOUBLE)
        y = b.fmul(b.fmul(p, two_half), two_rest)
        # (the if/elif chain, its last test first: the first that holds wins)
        y = self.select("<", x, _ir_f(-745.2), _ir_f(0.0), y)
        y = self.select(">", x, _ir_f(709.8), _ir_f(_math.inf), y)
        return self.select("!=", x, x, x, y)

    def log(self, x):
        """``_log`` (numba_elementary): fdlibm's e_log.c from the bits of x."""
        b = self.b
        sub = b.fcmp_ordered("<", x, _ir_f(2.2250738585072014e-308))
        bits = b.bitcast(b.select(sub, b.fmul(x, _ir_f(18014398509481984.0)), x), _IR_INT64)
        mantissa = b.and_(bits, _ir_i(0x000fffffffffffff))
        up = b.and_(b.add(mantissa, _ir_i(0x95f6400000000)), _ir_i(0x10000000000000))
        k = b.sub(b.add(b.sub(b.and_(b.ashr(bits, _ir_i(52)), _ir_i(0x7ff)), _ir_i(1023)), b.ashr(up, _ir_i(52))),
                  b.select(sub, _ir_i(54), _ir_i(0)))
        f = b.fsub(b.bitcast(b.or_(mantissa, b.xor(up, _ir_i(0x3ff0000000000000))), _IR_DOUBLE), _ir_f(1.0))
        s = b.fdiv(f, b.fadd(_ir_f(2.0), f))
        z = b.fmul(s, s)
        w = b.fmul(z, z)
        # (_fma(w, _fma(w, A, B), C): w A + B, times w, plus C, each rounded once: Horner's steps, the product's
        # factors in the other order, which rounds the same)
        t1 = b.fmul(w, self.horner(w, _ir_f(1.531383769920937332e-01), 2.222219843214978396e-01,
                                   3.999999999940941908e-01))
        t2 = b.fmul(z, self.horner(w, _ir_f(1.479819860511658591e-01), 1.818357216161805012e-01,
                                   2.857142874366239149e-01, 6.666666666666735130e-01))
        hfsq = b.fmul(b.fmul(_ir_f(0.5), f), f)
        dk = b.fmul(b.sitofp(k, _IR_DOUBLE), _ir_f(1.0))
        inner = b.fadd(b.fmul(s, b.fadd(hfsq, b.fadd(t2, t1))), b.fmul(dk, _ir_f(1.90821492927058770002e-10)))
        y = b.fsub(b.fmul(dk, _ir_f(6.93147180369123816490e-01)), b.fsub(b.fsub(hfsq, inner), f))
        y = self.select("==", x, _ir_f(_math.inf), x, y)
        y = self.select("==", x, _ir_f(0.0), _ir_f(-_math.inf), y)
        y = self.select("<", x, _ir_f(0.0), _ir_f(_math.nan), y)
        return self.select("!=", x, x, x, y)

    def erf(self, x):
        """``_erf_scalar`` (numba_elementary): Cephes' two rational forms, both computed, one chosen."""
        b = self.b
        s = self.select("<", x, _ir_f(-1.0), _ir_f(-1.0), self.select(">", x, _ir_f(1.0), _ir_f(1.0), x))
        z = b.fmul(s, s)
        t = self.horner(z, _ir_f(9.60497373987051638749), 90.0260197203842689217, 2232.00534594684319226,
                        7003.32514112805075473, 55592.3013010394962768)
        u = self.horner(z, b.fadd(z, _ir_f(33.5617141647503099647)), 521.357949780152679795, 4594.32382970980127987,
                        22629.0000613890934246, 49267.3942608635921086)
        near = b.fdiv(b.fmul(s, t), u)
        a = self.fabs(x)
        c = self.select("<", a, _ir_f(1.0), _ir_f(1.0), self.select(">", a, _ir_f(6.0), _ir_f(6.0), a))
        p = self.horner(c, _ir_f(2.46196981473530512524e-10), 0.564189564831068821977, 7.46321056442269912687,
                        48.6371970985681366614, 196.520832956077098242, 526.445194995477358631,
                        934.528527171957607540, 1027.55188689515710272, 557.535335369399327526)
        q = self.horner(c, b.fadd(c, _ir_f(13.2281951154744992508)), 86.7072140885989742329, 354.937778887819891062,
                        975.708501743205489753, 1823.90916687909736289, 2246.33760818710981792,
                        1656.66309194161350182, 557.535340817727675546)
        far = b.fsub(_ir_f(1.0), b.fmul(self.exp(self.neg(b.fmul(c, c))), b.fdiv(p, q)))
        signed = self.select("<", x, _ir_f(0.0), self.neg(far), far)
        return self.select(">", a, _ir_f(1.0), signed, near)


def elementary_call(which, x):
    """An intrinsic's typing of ``which`` ("exp", "log" or "erf") of the number ``x``: float64 -> float64, and
    the code generation that writes its instructions into the caller; None for another type (Numba then
    says it has no such function)."""
    if not isinstance(x, (numba.types.Float, numba.types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], numba.float64)
        return getattr(ElementaryWriter(builder), which)(value)

    return numba.float64(x), codegen

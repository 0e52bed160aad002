"""The Python text ``_exp``, ``_log`` and ``_erf_scalar`` had before they were written as LLVM instructions
(``lower/numba_xp_elementary.py``, stop 45), compiled as the numba module compiled it then: the reference the
intrinsics must equal bit for bit (``test_numba_elementary``)."""

from __future__ import annotations

import math

import numba
import numpy as np

_TEXTS = {
    "_float_of_bits": '''def _float_of_bits(typingctx, bits):
    """The float64 whose bits are the integer ``bits`` (as int64), as ``view(float64)`` reads them."""
    if not isinstance(bits, numba.types.Integer):
        return None

    def codegen(context, builder, signature, args):
        from llvmlite import ir

        as_int64 = context.cast(builder, args[0], signature.args[0], numba.int64)
        return builder.bitcast(as_int64, ir.DoubleType())

    return numba.float64(bits), codegen
''',
    "_fma": '''def _fma(typingctx, a, b, c):
    """a * b + c, rounded once where the CPU has a fused multiply-add (see numba_elementary)."""
    if not all(isinstance(t, numba.types.Float) for t in (a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        from llvmlite import binding

        x, y, z = (context.cast(builder, v, t, numba.float64) for v, t in zip(args, signature.args))
        if numba.config.CPU_NAME is None and binding.get_host_cpu_features().get("fma", False):
            return builder.fma(x, y, z)
        return builder.fadd(builder.fmul(x, y), z)

    return numba.float64(numba.float64, numba.float64, numba.float64), codegen
''',
    "_bits_of_float": '''def _bits_of_float(typingctx, x):
    """The int64 whose bits are the float ``x``'s (as float64), as ``view(int64)`` reads them."""
    if not isinstance(x, numba.types.Float):
        return None

    def codegen(context, builder, signature, args):
        from llvmlite import ir

        as_float64 = context.cast(builder, args[0], signature.args[0], numba.float64)
        return builder.bitcast(as_float64, ir.IntType(64))

    return numba.int64(x), codegen
''',
    "_inline_always": '''def _inline_always(typingctx):
    """Nothing at run time; its caller is inlined wherever it is called (LLVM's alwaysinline: numba_elementary)."""

    def codegen(context, builder, signature, args):
        builder.function.attributes.add("alwaysinline")
        return context.get_dummy_value()

    return numba.types.none(), codegen
''',
    "_log": '''def _log(x):
    """log(x), as math.log to 1 ulp, in arithmetic a loop can vectorize (see numba_elementary)."""
    _inline_always()
    sub = x < 2.2250738585072014e-308
    bits = _bits_of_float(x * 18014398509481984.0 if sub else x)
    mantissa = bits & 0x000fffffffffffff
    up = (mantissa + 0x95f6400000000) & 0x10000000000000     # (1 + f above sqrt(2): halved, k one more)
    k = ((bits >> 52) & 0x7ff) - 1023 + (up >> 52) - (54 if sub else 0)
    f = _float_of_bits(mantissa | (up ^ 0x3ff0000000000000)) - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * _fma(w, _fma(w, 1.531383769920937332e-01, 2.222219843214978396e-01), 3.999999999940941908e-01)
    t2 = z * _fma(w, _fma(w, _fma(w, 1.479819860511658591e-01, 1.818357216161805012e-01), 2.857142874366239149e-01),
                  6.666666666666735130e-01)
    hfsq = 0.5 * f * f
    dk = k * 1.0
    y = dk * 6.93147180369123816490e-01 - ((hfsq - (s * (hfsq + (t2 + t1)) + dk * 1.90821492927058770002e-10)) - f)
    if x != x:
        y = x
    elif x < 0.0:
        y = math.nan
    elif x == 0.0:
        y = -math.inf
    elif x == math.inf:
        y = x
    return y
''',
    "_erf_scalar": '''def _erf_scalar(x):
    """erf(x) within 3 ulp of math.erf, in arithmetic a loop can vectorize (Cephes': see numba_elementary)."""
    _inline_always()
    s = -1.0 if x < -1.0 else (1.0 if x > 1.0 else x)
    z = s * s
    t = 9.60497373987051638749
    t = _fma(t, z, 90.0260197203842689217)
    t = _fma(t, z, 2232.00534594684319226)
    t = _fma(t, z, 7003.32514112805075473)
    t = _fma(t, z, 55592.3013010394962768)
    u = z + 33.5617141647503099647
    u = _fma(u, z, 521.357949780152679795)
    u = _fma(u, z, 4594.32382970980127987)
    u = _fma(u, z, 22629.0000613890934246)
    u = _fma(u, z, 49267.3942608635921086)
    near = s * t / u
    a = math.fabs(x)
    b = 1.0 if a < 1.0 else (6.0 if a > 6.0 else a)
    p = 2.46196981473530512524e-10
    p = _fma(p, b, 0.564189564831068821977)
    p = _fma(p, b, 7.46321056442269912687)
    p = _fma(p, b, 48.6371970985681366614)
    p = _fma(p, b, 196.520832956077098242)
    p = _fma(p, b, 526.445194995477358631)
    p = _fma(p, b, 934.528527171957607540)
    p = _fma(p, b, 1027.55188689515710272)
    p = _fma(p, b, 557.535335369399327526)
    q = b + 13.2281951154744992508
    q = _fma(q, b, 86.7072140885989742329)
    q = _fma(q, b, 354.937778887819891062)
    q = _fma(q, b, 975.708501743205489753)
    q = _fma(q, b, 1823.90916687909736289)
    q = _fma(q, b, 2246.33760818710981792)
    q = _fma(q, b, 1656.66309194161350182)
    q = _fma(q, b, 557.535340817727675546)
    far = 1.0 - _exp(-(b * b)) * (p / q)
    return (-far if x < 0.0 else far) if a > 1.0 else near
''',
    "_exp": '''def _exp(x):
    """e**x, as math.exp to 1 ulp, in arithmetic a loop can vectorize (see numba_helpers)."""
    xc = -745.2 if -745.2 > x else x    # (max(x, -745.2), min(xc, 709.8) as Numba computes them, without
    xc = 709.8 if 709.8 < xc else xc    # the overloads it compiles per process: lower/numba_builtin_calls.py)
    kf = (xc * 1.4426950408889634 + 6755399441055744.0) - 6755399441055744.0
    r = (xc - kf * 0.6931471803691238) - kf * 1.9082149292705877e-10
    p = 1.0 / 6227020800.0
    p = _fma(p, r, 1.0 / 479001600.0)
    p = _fma(p, r, 1.0 / 39916800.0)
    p = _fma(p, r, 1.0 / 3628800.0)
    p = _fma(p, r, 1.0 / 362880.0)
    p = _fma(p, r, 1.0 / 40320.0)
    p = _fma(p, r, 1.0 / 5040.0)
    p = _fma(p, r, 1.0 / 720.0)
    p = _fma(p, r, 1.0 / 120.0)
    p = _fma(p, r, 1.0 / 24.0)
    p = _fma(p, r, 1.0 / 6.0)
    p = _fma(p, r, 0.5)
    p = _fma(p, r, 1.0)
    p = _fma(p, r, 1.0)
    k = _np.int64(kf)
    half = k >> 1
    y = p * _float_of_bits((half + 1023) << 52) * _float_of_bits((k - half + 1023) << 52)
    if x != x:
        y = x
    elif x > 709.8:
        y = math.inf
    elif x < -745.2:
        y = 0.0
    return y
''',
}

_INTRINSICS = ("_float_of_bits", "_bits_of_float", "_fma", "_inline_always")


def compiled_reference() -> dict:
    """name -> the old helper, compiled by Numba (``_exp``, ``_log``, ``_erf_scalar`` as jit functions)."""
    env = {"math": math, "_np": np, "numba": numba}
    for name in _INTRINSICS:
        exec(_TEXTS[name], env)
        env[name] = numba.extending.intrinsic(env[name])
    for name in ("_exp", "_log", "_erf_scalar"):
        exec(_TEXTS[name], env)
        env[name] = numba.njit(env[name])
    return {name: env[name] for name in ("_exp", "_log", "_erf_scalar")}

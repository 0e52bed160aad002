"""log and erf in arithmetic LLVM vectorizes: the numba module's ``_log`` and ``_erf_scalar``, beside ``_exp``.

Numba calls libm for ``math.log`` and ``math.erf``, which LLVM cannot vectorize (pip's llvmlite has no vector math
library), so a loop that calls either runs one element at a time even where everything else in it is arithmetic:
black_scholes' gradient, a log, two erf and three exp an option, ran at libm's pace (46 ms at 10^6 options, JAX
52).  Written as arithmetic and inlined, the loop that computes them is vectorized
(:mod:`coarsen_nb.lower.numba_trig` prints the sums' terms into buffers so that it can be: 22 ms).  Each is a
plain function (the numba module's ``@_jit_helper``, typed and compiled once, cached) that marks itself
``alwaysinline`` for LLVM (``_inline_always``): LLVM's inliner alone judged an erf too big and left a call, and
Numba's IR inlining (``@_jit_inline``) typed the whole body again at each call site, 0.1 s of black_scholes'
cold compile (two erf and a log).  Both cover the whole range, so no element is recomputed with libm's:

* ``_log``: fdlibm's e_log.c (FreeBSD msun), its one general formula for every reduced argument, below 1 ulp:
  x = 2^k (1 + f) with sqrt(2)/2 <= 1 + f < sqrt(2) read from the bits (``_bits_of_float``; a subnormal x
  scaled by 2^54 first), s = f / (2 + f), log(1 + f) = f - (hfsq - s (hfsq + R(s^2))), k ln2 in two parts.
  NaN for NaN and below 0 (NumPy's error model: Numba's ``math.log`` in a loop function gives the same), -inf
  at +-0, inf at inf.  Measured against libm's on 2·10^6 numbers from 1e-323 to 1e308: within 1 ulp.
* ``_erf_scalar``: Cephes' rational approximations (S. L. Moshier's ndtr.c, those of the NumPy backend's array
  ``_erf``, :mod:`coarsen_nb.lower.special_helpers`): x T(x^2) / U(x^2) for |x| <= 1, 1 - exp(-x^2) P(|x|) /
  Q(|x|) with |x| clipped to 6 above (erf rounds to +-1 there), both computed and one chosen (a select, not a
  branch).  Within 3 ulp of libm's on 2·10^6 numbers in [-7, 7]; NaN for NaN, +-1 at +-inf, -0.0 at -0.0.
"""

from __future__ import annotations

ELEMENTARY_HELPERS = {
    # the integer whose bits are a float64's, one LLVM bitcast (``_float_of_bits``' inverse): _log reads the
    # exponent and the mantissa of its argument with it
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
    # a * b + c rounded once, one instruction (LLVM's fma, which the vectorizer widens) where the CPU Numba compiles
    # for has one; a * b + c as Python rounds it otherwise (LLVM's fma would then call libm's, far slower): the
    # polynomial of _exp, half its arithmetic, and within its ulp (a helper's own arithmetic, not the user's)
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
    # the function that calls it marked for LLVM's inliner to inline it always (LLVM's ``alwaysinline``): _log and
    # _erf_scalar are typed and compiled once, as functions, and still inlined into the loop that vectorizes them
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
}

#: how each is compiled (``numba_helpers.NUMBA_HELPER_DECORATORS``): an intrinsic writes its LLVM code into its
#: caller; ``_log`` and ``_erf_scalar`` are ``@_jit_helper`` functions (not listed) that LLVM inlines into the
#: loop that calls them (``_inline_always``), so that it sees their arithmetic in the loop and vectorizes it
ELEMENTARY_DECORATORS = {"_bits_of_float": "@numba.extending.intrinsic", "_fma": "@numba.extending.intrinsic",
                         "_inline_always": "@numba.extending.intrinsic"}

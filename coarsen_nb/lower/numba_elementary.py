"""log and erf in arithmetic LLVM vectorizes: the numba module's ``_log`` and ``_erf_scalar``, beside ``_exp``.

Numba calls libm for ``math.log`` and ``math.erf``, which LLVM cannot vectorize (pip's llvmlite has no vector math
library), so a loop that calls either runs one element at a time even where everything else in it is arithmetic:
black_scholes' gradient, a log, two erf and three exp an option, ran at libm's pace (46 ms at 10^6 options, JAX
52).  Written as arithmetic and inlined, the loop that computes them is vectorized
(:mod:`coarsen_nb.lower.numba_trig` prints the sums' terms into buffers so that it can be: 22 ms).  Each is an
intrinsic: Numba types one call (float64 -> float64) and :mod:`coarsen_nb.lower.numba_xp_elementary` writes its
instructions into the caller, where LLVM vectorizes them with the loop.  They were plain functions first (inlined
by Numba, then by LLVM's ``alwaysinline``), whose bodies Numba typed and lowered in each process with an empty
cache: ~0.2 s of black_scholes' cold compile; the instructions are the same, one for one, so are the values.
Both cover the whole range, so no element is recomputed with libm's:

* ``_log``: fdlibm's e_log.c (FreeBSD msun), its one general formula for every reduced argument, below 1 ulp:
  x = 2^k (1 + f) with sqrt(2)/2 <= 1 + f < sqrt(2) read from the bits (a bitcast; a subnormal x
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
    # log and erf as intrinsics: Numba types one call, and the instructions are written into the caller
    # (numba_xp_elementary.py, pasted into every numba module, writes them)
    "_log": '''def _log(typingctx, x):
    """log(x), as math.log to 1 ulp, in instructions a loop can vectorize (see numba_elementary)."""
    return elementary_call("log", x)
''',
    "_erf_scalar": '''def _erf_scalar(typingctx, x):
    """erf(x) within 3 ulp of math.erf, in instructions a loop can vectorize (see numba_elementary)."""
    return elementary_call("erf", x)
''',
}

#: how each is compiled (``numba_helpers.NUMBA_HELPER_DECORATORS``): both are intrinsics, whose LLVM code is
#: written into their caller, so that LLVM sees their arithmetic in the loop that calls them and vectorizes it
ELEMENTARY_DECORATORS = {"_log": "@numba.extending.intrinsic", "_erf_scalar": "@numba.extending.intrinsic"}

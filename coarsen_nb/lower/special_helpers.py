"""The generated module's helpers for ``erf`` and ``scipy.special``'s functions.

Each is a plain function written for the module's array namespace ``xp``, run by the tests as it is here;
the module writer copies its text (``inspect.getsource``) into a generated module that calls it
(:mod:`coarsen_nb.lower.helpers`).  Neither NumPy nor the array API has ``erf``: ``_erf`` is Cephes'.
``erfc`` is written in the array namespace itself: ``math.erfc`` is a function of the subset too, so a
module that calls ``_erfc`` may not have SciPy.  ``gammaln``, ``digamma``, ``xlogy`` and ``logsumexp``
are reached only from code that called ``scipy.special``: the module then calls SciPy's own (CuPy's
``cupyx.scipy.special`` on CuPy arrays) rather than a hand-written copy of a special function.
"""

from __future__ import annotations

import numpy as xp


def _erf(x):
    """erf, elementwise, to full double precision (neither NumPy nor the array API has erf).

    Cephes' rational approximations (S. L. Moshier; the ones SciPy's ndtr uses): x T(x^2) / U(x^2)
    for |x| <= 1 (evaluated everywhere on x clipped to [-1, 1]), and 1 - exp(-x^2) P(|x|) / Q(|x|)
    on the elements with |x| > 1 only, |x| clipped to 6, where erf already rounds to +-1.
    """
    x = xp.asarray(x, dtype=xp.float64)
    s = xp.clip(x, -1.0, 1.0)
    z = s * s
    t = (((9.60497373987051638749 * z + 90.0260197203842689217) * z + 2232.00534594684319226) * z
         + 7003.32514112805075473) * z + 55592.3013010394962768
    u = ((((z + 33.5617141647503099647) * z + 521.357949780152679795) * z + 4594.32382970980127987) * z
         + 22629.0000613890934246) * z + 49267.3942608635921086
    out = xp.asarray(s * t / u)     # NumPy gives a scalar for 0-d input; this one is written below
    far = xp.abs(x) > 1.0
    if xp.any(far):
        b = xp.clip(xp.abs(x[far]), 1.0, 6.0)
        out[far] = xp.copysign(1.0 - xp.exp(-(b * b)) * _erfc_ratio(b), x[far])
    return out


def _erfc_ratio(b):
    """Cephes' P(b) / Q(b), with erfc(b) = exp(-b^2) P(b) / Q(b) for 1 <= b < 8 (S. L. Moshier's ndtr)."""
    p = (((((((2.46196981473530512524e-10 * b + 0.564189564831068821977) * b + 7.46321056442269912687) * b
             + 48.6371970985681366614) * b + 196.520832956077098242) * b + 526.445194995477358631) * b
          + 934.528527171957607540) * b + 1027.55188689515710272) * b + 557.535335369399327526
    q = (((((((b + 13.2281951154744992508) * b + 86.7072140885989742329) * b + 354.937778887819891062) * b
           + 975.708501743205489753) * b + 1823.90916687909736289) * b + 2246.33760818710981792) * b
         + 1656.66309194161350182) * b + 557.535340817727675546
    return p / q


def _erfc(x):
    """erfc, elementwise, without the cancellation of 1 - erf(x) for large x.

    1 - erf(x) where that loses nothing (|x| <= 1, erfc >= 0.15); Cephes' exp(-x^2) P(x) / Q(x) for
    1 < x < 8 (_erfc_ratio, which _erf uses too), with exp(-x^2) as Cephes' expx2 computes it (x^2
    rounds, and e^-x^2 with it, by up to 1e-13 relative near the underflow); beyond, the asymptotic
    series exp(-x^2) / (x sqrt(pi)) * sum_k (-1)^k (2k-1)!! / (2x^2)^k, whose 16 terms are below 1e-16
    there; erfc(-x) = 2 - erfc(x).
    """
    x = xp.asarray(x, dtype=xp.float64)
    a = xp.abs(x)
    out = xp.asarray(1.0 - _erf(xp.clip(a, 0.0, 1.0)))
    mid = (a > 1.0) & (a < 8.0)
    if xp.any(mid):
        b = a[mid]
        out[mid] = _exp_minus_square(b) * _erfc_ratio(b)
    far = a >= 8.0
    if xp.any(far):
        b = a[far]
        u = 1.0 / (2.0 * b * b)
        term = xp.ones(b.shape)
        total = xp.ones(b.shape)
        for k in range(1, 17):
            term = -term * (2 * k - 1) * u
            total = total + term
        out[far] = _exp_minus_square(b) / (b * 1.7724538509055160273) * total
    return xp.where(x < 0, 2.0 - out, out)


def _exp_minus_square(b):
    """exp(-b^2) without the rounding of b^2: b = m + f with m a multiple of 1/128, whose square is exact."""
    m = xp.round(b * 128.0) / 128.0
    f = b - m
    return xp.exp(-(m * m)) * xp.exp(-(2.0 * m * f + f * f))


def _expit(x):
    """1 / (1 + exp(-x)) elementwise without overflow (SciPy's name; a softplus's derivative): one exp of
    -|x|, where exp(-logaddexp(0, -x)) costs three transcendental passes (logistic regression's gradient
    was 1.6x slower with it)."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0, e) / (1.0 + e)


def _expit_nonpositive(x):
    """_expit of arguments known to be <= 0 (a softplus's derivative at -|z|, as log1p(exp(-|z|)) gives):
    exp(x) / (1 + exp(x)) directly, three passes where _expit takes seven, and the same rounding."""
    e = xp.exp(x)
    return e / (1.0 + e)


def _special():
    """SciPy's special functions: the functions the compiled code called."""   # (CuPy's: lower/cupy.py)
    import scipy.special as special
    return special


def _gammaln(x):
    """log|Gamma(x)|, elementwise (SciPy's gammaln)."""
    return _special().gammaln(x)


def _digamma(x):
    """The digamma function psi(x) = d/dx log|Gamma(x)|, elementwise (SciPy's)."""
    return _special().digamma(x)


def _xlogy(x, y):
    """x * log(y), and 0 where x == 0 whatever y is (SciPy's xlogy)."""
    return _special().xlogy(x, y)


def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(exp(a))) over axis, shifted by the maximum so that no exp overflows (SciPy's logsumexp)."""
    return _special().logsumexp(a, axis=axis, keepdims=keepdims)


#: the helpers of this module, in the order the registry (:mod:`coarsen_nb.lower.helpers`) lists them
HELPER_FUNCTIONS = (_erf, _erfc_ratio, _erfc, _exp_minus_square, _expit, _expit_nonpositive, _special, _gammaln,
                    _digamma, _xlogy, _logsumexp)

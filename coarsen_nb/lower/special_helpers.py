"""The generated module's helpers for ``scipy.special``'s functions (merged into
:data:`coarsen_nb.lower.helpers.HELPERS`).

``erfc`` is written in the array namespace itself: ``math.erfc`` is a function of the subset too, so a
module that calls ``_erfc`` may not have SciPy.  ``gammaln``, ``digamma``, ``xlogy`` and ``logsumexp``
are reached only from code that called ``scipy.special``: the module then calls SciPy's own (CuPy's
``cupyx.scipy.special`` on CuPy arrays) rather than a hand-written copy of a special function.
"""

from __future__ import annotations

SPECIAL_HELPERS = {
    "_special": '''def _special():
    """SciPy's special functions (CuPy's for CuPy arrays): the functions the compiled code called."""
    if xp.__name__.startswith("cupy"):
        import cupyx.scipy.special as special
    else:
        import scipy.special as special
    return special
''',
    "_erfc": '''def _erfc(x):
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
''',
    "_exp_minus_square": '''def _exp_minus_square(b):
    """exp(-b^2) without the rounding of b^2: b = m + f with m a multiple of 1/128, whose square is exact."""
    m = xp.round(b * 128.0) / 128.0
    f = b - m
    return xp.exp(-(m * m)) * xp.exp(-(2.0 * m * f + f * f))
''',
    "_gammaln": '''def _gammaln(x):
    """log|Gamma(x)|, elementwise (SciPy's gammaln)."""
    return _special().gammaln(x)
''',
    "_digamma": '''def _digamma(x):
    """The digamma function psi(x) = d/dx log|Gamma(x)|, elementwise (SciPy's)."""
    return _special().digamma(x)
''',
    "_xlogy": '''def _xlogy(x, y):
    """x * log(y), and 0 where x == 0 whatever y is (SciPy's xlogy)."""
    return _special().xlogy(x, y)
''',
    "_logsumexp": '''def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(exp(a))) over axis, shifted by the maximum so that no exp overflows (SciPy's logsumexp)."""
    return _special().logsumexp(a, axis=axis, keepdims=keepdims)
''',
}

SPECIAL_DEPENDS = {"_erfc": ("_erf", "_erfc_ratio", "_exp_minus_square"), "_gammaln": ("_special",),
                   "_digamma": ("_special",), "_xlogy": ("_special",), "_logsumexp": ("_special",)}

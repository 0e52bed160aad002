"""SciPy's special functions in the numba namespace: ``gammaln``, ``digamma`` and ``xlogy`` as Numba ufuncs.

The NumPy backend's helpers call ``scipy.special`` (imported inside the helper, outside Numba's
subset).  Here each is a ``numba.vectorize`` ufunc, so one definition serves numbers and arrays of
any shape, broadcasting as SciPy's ufuncs do, and compiled code calls it like NumPy's own.  They are
compiled lazily, for the types the generated code calls them with (a ufunc compiled while its module
is executed cannot use Numba's disk cache: that rebuilds it by importing a module not yet imported),
and are part of the cached code of the functions that call them.

``gammaln``  log|Gamma(x)|: C's ``lgamma`` (SciPy's Cephes ``lgam`` agrees to about 1e-15, but for a
             subnormal x, where SciPy gives inf and ``lgamma`` the finite -log(x)).
``digamma``  psi(x): the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic
             series ln x - 1/(2x) - sum B_2k / (2k x^2k) to x^-14 (error below 1e-16 there);
             psi(1 - x) - pi / tan(pi x) for negative x; nan at the poles 0, -1, -2, ... (SciPy
             gives -inf at 0 and nan at the negative integers; the generated code never reaches them
             with a finite gradient).
``xlogy``    x * log(y), and 0 where x == 0 and y is not NaN (SciPy's rule).

Like :mod:`numba_xp`, this text is pasted into every numba module after numba_xp's.
"""

import math as _math

import numba

# imported on its own (the tests), the names numba_xp's text defines before this one's in a generated
# module, which leaves the marked lines out (coarsen_nb/backends.py): one namespace, in several files
# <own-module>
from coarsen_nb.lower import numba_xp as _base  # noqa: E402, I001

xp, INTERNAL = _base.xp, _base.INTERNAL
# </own-module>

# B_2k / (2k) for k = 1..7: the asymptotic series of digamma
_DIGAMMA_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12)


@numba.vectorize
def _gammaln(x):
    return _math.lgamma(x)


@numba.njit(cache=True, **INTERNAL)
def _digamma_positive(x):
    shift = 0.0
    while x < 6.0:
        shift -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = 0.0
    power = inv2
    for c in _DIGAMMA_SERIES:
        series += c * power
        power *= inv2
    return shift + _math.log(x) - 0.5 / x - series


@numba.vectorize
def _digamma(x):
    if x != x:
        return x
    if x <= 0.0:
        if x == _math.floor(x):
            return _math.nan
        return _digamma_positive(1.0 - x) - _math.pi / _math.tan(_math.pi * x)
    return _digamma_positive(x)


@numba.vectorize
def _xlogy(x, y):
    if x == 0.0 and y == y:
        return 0.0
    return x * _math.log(y) if y > 0.0 else (x * -_math.inf if y == 0.0 else _math.nan)


xp.gammaln = _gammaln
xp.digamma = _digamma
xp.xlogy = _xlogy

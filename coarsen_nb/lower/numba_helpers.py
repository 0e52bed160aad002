"""The numba backend's own versions of helpers whose NumPy-backend text is outside Numba's subset.

The NumPy backend's scalar power helpers catch Python's ``OverflowError`` and ``ZeroDivisionError``
to return IEEE 754's answer; Numba has no ``except`` of a class, and its float power already is
IEEE 754's ``pow`` (``0.0 ** -0.5`` is inf, a negative base to a fractional power is nan,
overflow is inf with the sign of an odd power), so here they are one line.  The module writer
uses an entry of this table in place of the NumPy backend's (``Backend.load_helpers``); ``_sum_to``
calls the numba namespace's ``sum_to`` (:mod:`coarsen_nb.lower.numba_xp`), which needs the argument
types to choose its loop, and ``_diff_vjp`` its ``diff_vjp`` (:mod:`coarsen_nb.lower.numba_xp_arrays`).
"""

from __future__ import annotations

from coarsen_nb.lower.numba_elementary import ELEMENTARY_DECORATORS, ELEMENTARY_HELPERS

#: the largest |x| whose cos and sin the helpers ``_cos`` and ``_sin`` compute (2^19 pi/2, fdlibm's medium range,
#: a little less): the loops that call them recompute the elements beyond with libm's (lower/numba_trig.py)
TRIG_NEAR = 823549.6

NUMBA_HELPERS = {
    # NumPy's bincount, as the NumPy backend's helper runs it: that helper's other branch (for an array
    # library without bincount) is dead here, but Numba compiles both sides of ``hasattr``, and that
    # branch's _segment_sum/_segments were a third of a cold compile (hookean_spring: 7.5 of 22 s).
    "_scatter_sum": '''def _scatter_sum(idx, v, n):
    """Sums of v at each index of range(n) (0 <= idx < n, repeats accumulate): the adjoint of a gather."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), idx.shape)
    return xp.bincount(idx, weights=v, minlength=n)
''',
    # an element loop (the NumPy helper's slice ``+=`` made Numba compile its formatted shape message: 2 s)
    "_add_at": '''def _add_at(b, ix, v):
    """b[ix] += v in place at the distinct positions ix (an int array, or the number Numba's argmax gives for
    keepdims), v one number or one per position, one element at a time."""
    ixs = xp.asarray(ix).ravel()
    vs = xp.asarray(v).ravel()
    one = vs.shape[0] == 1
    for k in range(ixs.shape[0]):
        b[ixs[k]] += vs[0 if one else k]
''',
    "_scatter_add": '''def _scatter_add(b, lo, n, step, v):
    """b[lo + step*k] += v[k] for k < n (the adjoint of _take): xp.scatter_add of the numba namespace."""
    xp.scatter_add(b, lo, n, step, v)
''',
    "_broadcast_shape": '''def _broadcast_shape(*shapes):
    """The shape NumPy's broadcasting gives arrays of these shapes: NumPy's broadcast_shapes, which
    Numba compiles (the NumPy helper's generator is outside its subset)."""
    return xp.broadcast_shapes(*shapes)
''',
    "_flat_as": '''def _flat_as(x, shape):
    """x's elements in NumPy's row-major order over ``shape``, broadcast where x is smaller: one C-ordered
    1-D array (a view when x already has that shape and is contiguous), what a fused loop indexes:
    xp.flat_as of the numba namespace, a loop nest."""
    return xp.flat_as(x, shape)
''',
    # A slice of a slice is typed layout 'A' by Numba (contiguity unknown at compile time), and Numba's
    # ``@`` copies every 'A' operand whole before it calls BLAS (X[0:n, 0:d] @ w copied X on each call:
    # 2-3.5x NumPy's time), and its elementwise loops over 'A' arrays are strided.  ascontiguousarray
    # checks at run time: the view itself when it is contiguous (the whole matrix, a row range, a unit
    # step), a C-ordered copy otherwise; the result is typed 'C' in both branches.  (The generated code
    # never writes through a read.)  In bounds xp.contiguous_rows (numba_xp.py): x's own slice, typed 'C', where
    # x is and the step is the constant 1.  Out of bounds a loop, which Numba compiles faster than its fancy
    # indexing (compiled alone, loaded machine: _block 1.34 -> 1.09 s, _take 0.70 -> 0.50 s; 4.6 -> 1.1 s
    # for _block where nothing else in the module compiles arange and fancy indexing first).
    "_take": '''def _take(x, lo, n, step):
    """x[lo + step*k] for k < n (elements, or rows of a matrix), C-contiguous: the view when the range
    is in bounds and contiguous, a copy otherwise; out of bounds Python's indexing, one loop (a negative
    index counts from the end, one past it is an IndexError)."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < x.shape[0]:
        return xp.contiguous_rows(x, lo, hi + 1, step)
    out = xp.empty((max(n, 0),) + x.shape[1:], dtype=x.dtype)
    for k in range(n):
        r = lo + step * k
        r = r + x.shape[0] if r < 0 else r
        if r < 0 or r >= x.shape[0]:
            raise IndexError("index out of bounds")
        out[k] = x[r]
    return out
''',
    "_block": '''def _block(x, lo0, n0, lo1, n1):
    """x[lo0 + i, lo1 + j] for i < n0, j < n1 as a C-contiguous (n0, n1) array: the view when in bounds
    and contiguous (the whole matrix, a range of rows), a copy otherwise; out of bounds Python's
    indexing, one loop nest."""
    if 0 <= lo0 and lo0 + n0 <= x.shape[0] and 0 <= lo1 and lo1 + n1 <= x.shape[1]:
        return xp.ascontiguousarray(x[lo0:lo0 + n0, lo1:lo1 + n1])
    out = xp.empty((max(n0, 0), max(n1, 0)), dtype=x.dtype)
    for i in range(n0):
        r = lo0 + i
        r = r + x.shape[0] if r < 0 else r
        for j in range(n1):         # (no column, no read: NumPy's empty gather raises nothing)
            c = lo1 + j
            c = c + x.shape[1] if c < 0 else c
            if r < 0 or r >= x.shape[0] or c < 0 or c >= x.shape[1]:
                raise IndexError("index out of bounds")
            out[i, j] = x[r, c]
    return out
''',
    "_put": '''def _put(x, idx, v):
    """x[idx] = v for a tuple of index arrays (Python's negative indices; the last write wins), in place:
    xp.put of the numba namespace, one loop (Numba has no assignment through a tuple of index arrays)."""
    return xp.put(x, idx, v)
''',
    "_steps": '''def _steps(b, n):
    """b (a number or n values) as n floats, a new array (one type for both: Numba's rule)."""
    return xp.zeros(n) + b
''',
    "_lin_scan": '''def _lin_scan(a, b, init, n):
    """The state before each of n steps of s <- a[k]*s + b[k] from init (a, b numbers or n values): the
    recurrence itself, one compiled pass in the program's order (the NumPy backend's doubling scan is how
    array code avoids a Python loop)."""
    a, b = _steps(a, n), _steps(b, n)
    s = xp.empty(n)
    acc = xp.asarray(init, dtype=xp.float64).item()
    for k in range(n):
        s[k] = acc
        acc = a[k] * acc + b[k]
    return s
''',
    "_sum_to": '''def _sum_to(g, shape):
    """g summed to shape over the axes that broadcasting added (the adjoint of an operand NumPy broadcast):
    xp.sum_to of the numba namespace, one pass over g (the NumPy helper's tuple of axes is a generator,
    outside Numba's subset)."""
    return xp.sum_to(g, shape)
''',
    "_diff_vjp": '''def _diff_vjp(g, n, axis):
    """The cotangent of x in y = diff(x, n, axis), from y's cotangent g: diff's transpose, xp.diff_vjp
    of the numba namespace, one loop nest (the NumPy helper builds its zeros' shape with tuple(list),
    outside Numba's subset)."""
    return xp.diff_vjp(g, n, axis)
''',
    "_ieee_pow": '''def _ieee_pow(a, b):
    """a ** b as IEEE 754's pow (inf for 0.0 ** -0.5 and on overflow, nan for a negative base and a
    fractional exponent): Numba's float power."""
    return float(a) ** float(b)
''',
    # exp(x) in arithmetic LLVM vectorizes (the libm call it makes of math.exp it cannot: pip's llvmlite has no
    # SVML): a loop that only stores exponentials (numba_lse_rows' row of a log-sum-exp) runs 4-8 lanes at
    # once.  Cody and Waite's reduction x = k ln2 + r (|r| <= ln2/2, ln2 in two parts, the first exact
    # times k), e^r by its Taylor polynomial to r^13 (truncation below 1e-17 there; Horner's steps fused
    # multiply-adds where the CPU has them: 0.83x the time of a store loop), 2^k as two normal
    # powers of 2 built from their bits (one rounding where the result is subnormal).  Within 1 ulp of
    # libm's exp on normal results (a subnormal result within one subnormal ulp); inf above 709.8, 0
    # below -745.2, NaN for NaN, as exp.  In a loop that sums, it is scalar and slower than libm's: only
    # a store loop calls it.  An intrinsic, like _log and _erf_scalar: Numba types one call and
    # numba_xp_elementary.py writes these steps' instructions into the caller (k by fptosi, each power of 2
    # the bits of an integer), the same ones Numba wrote for their Python text before stop 45.
    "_exp": '''def _exp(typingctx, x):
    """e**x, as math.exp to 1 ulp, in instructions a loop can vectorize (see numba_helpers)."""
    return elementary_call("exp", x)
''',
    # cos and sin in arithmetic LLVM vectorizes (libm's, called by math.cos, it cannot: see _exp), for a fused
    # loop that stores (lower/numba_trig.py: a loop that sums is scalar, and libm's is the faster there).
    # fdlibm's medium reduction (FreeBSD's e_rem_pio2.c) with all three of its rounds, always: n = round(x
    # 2/pi), y0 + y1 = x - n pi/2 with pi/2 in three parts of 33 bits (n pio2_1 exact for |n| < 2^20) and
    # their tails, 151 bits of pi/2; then fdlibm's k_cos.c and k_sin.c polynomials (|y0| <= pi/4, error
    # below 1 ulp), the quadrant n mod 4 choosing which and its sign.  Within 1 ulp of libm's for |x| <=
    # TRIG_NEAR (2^19 pi/2): beyond, and for NaN and +-inf, the result is NaN, and the loop that calls it
    # recomputes those elements with math.cos/math.sin (lower/numba_trig.py).  (x is replaced by 0 there before
    # it is reduced, so that the float-to-integer conversion never sees a number out of its range.)
    "_trig": f'''def _trig(x, quarter):
    """cos(x - quarter*pi/2) within 1 ulp for |x| <= {TRIG_NEAR!r}, NaN beyond (see numba_helpers)."""
    near = abs(x) <= {TRIG_NEAR!r}
    xr = x if near else 0.0
    fn = (xr * 0.6366197723675814 + 6755399441055744.0) - 6755399441055744.0
    t = xr - fn * 1.5707963267341256
    w = fn * 6.077100506303966e-11
    r = t - w
    w = fn * 2.0222662487959506e-21 - ((t - r) - w)
    t = r
    w = fn * 2.0222662487111665e-21
    r = t - w
    w = fn * 8.4784276603689e-32 - ((t - r) - w)
    y0 = r - w
    y1 = (r - y0) - w
    z = y0 * y0
    zz = z * z
    rc = (z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05))
          + zz * zz * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09
                                                          + z * -1.13596475577881948265e-11)))
    hz = 0.5 * z
    wc = 1.0 - hz
    c = wc + (((1.0 - wc) - hz) + (z * rc - y0 * y1))
    rs = (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06)
          + z * zz * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))
    v = z * y0
    s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * -1.66666666666666324348e-01)
    q = (_np.int64(fn) + quarter) & 3
    y = s if q & 1 else c
    y = -y if (q + 1) & 2 else y
    return y if near else math.nan
''',
    "_cos": f'''def _cos(x):
    """cos(x) within 1 ulp of math.cos for |x| <= {TRIG_NEAR!r}, NaN beyond: arithmetic a loop can vectorize."""
    return _trig(x, 0)
''',
    "_sin": f'''def _sin(x):
    """sin(x) = cos(x - pi/2) within 1 ulp of math.sin for |x| <= {TRIG_NEAR!r}, NaN beyond (see _cos)."""
    return _trig(x, 3)
''',
    "_ipow": '''def _ipow(a, m):
    """a**m for an integer m >= 0, inf on overflow like the loop it replaces: Numba's float power."""
    return float(a) ** int(m)
''',
    "_first_extremum": '''def _first_extremum(a, axes, sign):
    """1.0 at the element of a that xp.argmax (sign 1) or xp.argmin (sign -1) picks over axes, 0.0
    elsewhere: xp.first_extremum of the numba namespace, one pass over a (the NumPy helper's tuples are
    generators, outside Numba's subset).  The sign, a literal where the rule calls it, stays one
    (numba.literally): the namespace compiles that extremum's pick alone."""
    return xp.first_extremum(a, axes, numba.literally(sign))
''',
    "_add_at_first_extremum": '''def _add_at_first_extremum(b, a, axes, sign, g):
    """b plus g (one value per group over axes) at the element of each group that xp.argmax (sign 1) or
    xp.argmin (sign -1) picks, added in place at that one element: xp.add_at_first_extremum of the numba
    namespace (no one-hot of a's size; the sign a literal, numba.literally, compiled for that extremum).  g as
    it is: the namespace reads a kept cotangent ``(n, 1)`` by its indices, with no copy of a's size."""
    xp.add_at_first_extremum(b, a, axes, xp.asarray(g, dtype=xp.float64), numba.literally(sign))
    return b
''',
    "_prod_except_axes": '''def _prod_except_axes(a, axes):
    """Products, along axes, of all other elements (the gradient of prod over axes), without division:
    xp.prod_except_axes of the numba namespace."""
    return xp.prod_except_axes(a, axes)
''',
    # scipy.special's (lower/special_helpers.py): the numba namespace's ufuncs (lower/numba_xp_special.py),
    # and its logsumexp over literal axes; inlined (``@_jit_inline``), so that the caller's constant
    # ``axis=`` and ``keepdims=`` reach xp.logsumexp as the constants that fix the result's rank
    "_gammaln": '''def _gammaln(x):
    """log|Gamma(x)|, elementwise: the numba namespace's ufunc (SciPy's is not callable from Numba)."""
    return xp.gammaln(x)
''',
    "_digamma": '''def _digamma(x):
    """The digamma function psi(x) = d/dx log|Gamma(x)|, elementwise: the numba namespace's ufunc."""
    return xp.digamma(x)
''',
    "_xlogy": '''def _xlogy(x, y):
    """x * log(y), and 0 where x == 0 whatever y is but NaN (SciPy's xlogy): the numba namespace's ufunc."""
    return xp.xlogy(x, y)
''',
    "_logsumexp": '''def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(exp(a))) over axis, shifted by the maximum so that no exp overflows (SciPy's logsumexp):
    the numba namespace's, one pass per row."""
    return xp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
''',
    # A window x[lo + i + j] (i < n0, j < n1) contracted with a vector, and its adjoint: one pass over the
    # signal each.  NumPy's helpers call np.correlate / np.convolve, which Numba implements as a plain double
    # loop over the long operand with the short one inside (5 ms for 10**5 x 4 against 0.1 ms here).  Out of
    # bounds the index is the NumPy helpers' own, (lo + i + j) modulo the length; in bounds the element itself.
    # In bounds they run over tiles of _WINDOW_TILE outputs that stay in L1 with the taps j inside each tile
    # and the innermost loop over the tile's elements, unit stride, on views indexed from 0 (so that Numba
    # prints no wraparound test and LLVM vectorizes it): the loops with the taps outside, over all n0 outputs,
    # passed n1 times over out (or b) and x from L2 (conv1d's 10**5 x 7, each helper alone: _window_matvec
    # 123-148 -> 86-96 us, _window_outer_add 148-163 -> 104-121 us, the same sums in the same order).
    # _window_vecmat's sums over i are reductions, which LLVM vectorizes only when it may reorder them: each
    # of n1 (a block of _WINDOW_TAPS at a time) keeps _WINDOW_TILE partial sums, lane k adding the products
    # at i = k modulo the tile, and adds its lanes at the end (BLAS's dot per tap, as before, passed n1 times
    # over g and x: 99-137 -> 95-110 us).  These are compiled without bounds checks (``@_jit_unchecked``):
    # every index is in bounds by the test before the loop, or taken modulo the length, and the lengths of the
    # vectors are checked first.
    # What the vectorized loops cost: Numba's cold compile of the three, 0.55 -> 0.82 s of CPU.  They are not
    # cached on their own (``_jit_unchecked``, backends.py): a cached function is optimized and code-generated
    # alone when it is saved and then again inside its caller; the caller is cached with them inside.
    "_window_matvec": '''def _window_matvec(x, lo, n0, n1, h):
    """_window(x, lo, n0, n1) @ h: sum_j x[lo + i + j] * h[j] for i < n0, tiles of outputs with the taps inside."""
    if h.shape[0] != n1:
        raise ValueError("matmul: a window and a vector of different lengths")
    tile = 256                                  # (_WINDOW_TILE: 2 KB of outputs)
    out = xp.zeros(max(n0, 0))
    m = x.shape[0]
    if 0 <= lo and lo + n0 + n1 - 1 <= m:
        for i0 in range(0, n0, tile):
            k1 = min(tile, n0 - i0)
            o = out[i0:i0 + k1]
            for j in range(n1):
                hj = h[j]
                xs = x[lo + i0 + j:lo + i0 + j + k1]
                for k in range(k1):
                    o[k] += xs[k] * hj
    else:
        for j in range(n1):
            hj = h[j]
            for i in range(n0):
                out[i] += x[(lo + i + j) % m] * hj
    return out
''',
    "_window_vecmat": '''def _window_vecmat(g, x, lo, n0, n1):
    """g @ _window(x, lo, n0, n1): sum_i g[i] * x[lo + i + j] for j < n1, per tap lanes of partial sums."""
    if g.shape[0] != n0:
        raise ValueError("matmul: a vector and a window of different lengths")
    out = xp.zeros(max(n1, 0))
    m = x.shape[0]
    if 0 <= lo and lo + n0 + n1 - 1 <= m:
        tile, taps = 256, 16                    # (_WINDOW_TILE, _WINDOW_TAPS: lanes of 32 KB)
        lanes = xp.empty(taps * tile)
        for j0 in range(0, n1, taps):
            nj = min(taps, n1 - j0)
            lanes[:] = 0.0
            for i0 in range(0, n0, tile):
                k1 = min(tile, n0 - i0)
                gs = g[i0:i0 + k1]
                for jj in range(nj):
                    lane = lanes[jj * tile:jj * tile + k1]
                    xs = x[lo + i0 + j0 + jj:lo + i0 + j0 + jj + k1]
                    for k in range(k1):
                        lane[k] += gs[k] * xs[k]
            for jj in range(nj):
                acc = 0.0
                for k in range(jj * tile, (jj + 1) * tile):
                    acc += lanes[k]
                out[j0 + jj] = acc
    else:
        for j in range(n1):
            acc = 0.0
            for i in range(n0):
                acc += g[i] * x[(lo + i + j) % m]
            out[j] = acc
    return out
''',
    "_window_outer_add": '''def _window_outer_add(b, lo, n0, n1, g, h):
    """b[lo + i + j] += g[i] * h[j] for i < n0, j < n1, in place: tiles of b with the taps inside."""
    if g.shape[0] != n0 or h.shape[0] != n1:
        raise ValueError("an outer product of vectors of other lengths than its window's")
    m = b.shape[0]
    if 0 <= lo and lo + n0 + n1 - 1 <= m:
        tile = 256                              # (_WINDOW_TILE)
        total = n0 + n1 - 1
        for q0 in range(0, total, tile):
            q1 = min(q0 + tile, total)
            # b[lo + q] for q0 <= q < q1 gets g[q - j] * h[j] for the taps with 0 <= q - j < n0, j in order
            for j in range(max(0, q0 - n0 + 1), min(n1, q1)):
                a = max(q0, j)
                hj = h[j]
                bs = b[lo + a:lo + min(q1, n0 + j)]
                gs = g[a - j:]
                for k in range(bs.shape[0]):
                    bs[k] += gs[k] * hj
    else:
        for j in range(n1):
            hj = h[j]
            for i in range(n0):
                b[(lo + i + j) % m] += g[i] * hj
''',
    # log and erf as arithmetic a loop vectorizes, beside _exp (lower/numba_elementary.py)
    **ELEMENTARY_HELPERS,
}

#: how a helper above is compiled: only generated code calls it, so without Numba's wrappers for Python and C
#: (``@_jit_helper``: the prologue's ``@_jit`` less those, ``numba_xp.INTERNAL``)
HELPER_DECORATOR = "@_jit_helper"

#: the helpers above compiled otherwise than ``HELPER_DECORATOR``: an intrinsic (LLVM code written into its
#: caller), inlined into their caller, or without
#: bounds checks where every index is in bounds by construction
NUMBA_HELPER_DECORATORS = {"_exp": "@numba.extending.intrinsic",
                           "_logsumexp": "@_jit_inline", "_cos": "@_jit_inline", "_sin": "@_jit_inline",
                           "_div": "@_jit_inline", "_mod": "@_jit_inline", "_floordiv": "@_jit_inline",
                           "_window_matvec": "@_jit_unchecked",
                           "_window_vecmat": "@_jit_unchecked", "_window_outer_add": "@_jit_unchecked",
                           **ELEMENTARY_DECORATORS}



def decorators() -> dict[str, str]:
    """Each helper a numba module may define (the NumPy backend's table, :mod:`coarsen_nb.lower.helpers`, and
    this one) -> the decorator line it prints before it (the module writer's ``helper_decorators``; a copy
    the writer narrows keeps its original's).  The entry points keep the backend's ``@_jit``."""
    from coarsen_nb.lower.helpers import HELPERS

    return {name: NUMBA_HELPER_DECORATORS.get(name, HELPER_DECORATOR) for name in (*HELPERS, *NUMBA_HELPERS)}


def shared_blocks() -> tuple[str, ...]:
    """Each helper above as a numba module prints it (its decorator line, then its text): the blocks that
    ``numba_loader`` loads once, in the module it shares between generated modules, and leaves out of each
    module's own file, so that Numba compiles each (and caches it on disk) once per machine and argument
    types, not once per generated module.  None calls a helper of the NumPy backend's table (a test checks),
    so the shared module defines every name they call."""
    return tuple(f"{decorators()[name]}\n{text}".strip("\n") for name, text in NUMBA_HELPERS.items())

"""The helper functions a generated module defines when its code calls them.

Each entry is the source text of one small function, written for the module's
``xp`` namespace; the module writer copies in the ones its code uses (and
those they need, ``DEPENDS``).  They stay plain text because the generated
module must not import coarsen_nb: what is here is what the exported file
contains.  Where the array API standard lacks an operation (scatter-add,
segmented reductions), the helper takes NumPy's or CuPy's fast path when the
namespace has it and a standard-only form otherwise.
"""

from __future__ import annotations

from coarsen_nb.lower.special_helpers import SPECIAL_DEPENDS, SPECIAL_HELPERS

HELPERS = {
    "_softplus": '''def _softplus(z):
    """log(1 + exp(z)) without overflow."""
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))
''',
    "_sigmoid": '''def _sigmoid(z):
    """1 / (1 + exp(-z)) without overflow."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez)
''',
    "_erf": '''def _erf(x):
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
''',
    "_erfc_ratio": '''def _erfc_ratio(b):
    """Cephes' P(b) / Q(b), with erfc(b) = exp(-b^2) P(b) / Q(b) for 1 <= b < 8 (S. L. Moshier's ndtr)."""
    p = (((((((2.46196981473530512524e-10 * b + 0.564189564831068821977) * b + 7.46321056442269912687) * b
             + 48.6371970985681366614) * b + 196.520832956077098242) * b + 526.445194995477358631) * b
          + 934.528527171957607540) * b + 1027.55188689515710272) * b + 557.535335369399327526
    q = (((((((b + 13.2281951154744992508) * b + 86.7072140885989742329) * b + 354.937778887819891062) * b
           + 975.708501743205489753) * b + 1823.90916687909736289) * b + 2246.33760818710981792) * b
         + 1656.66309194161350182) * b + 557.535340817727675546
    return p / q
''',
    "_prod_except": '''def _prod_except(a):
    """Products of all other elements, without division (zero-safe)."""
    v = xp.reshape(a, (-1,))
    one = xp.ones(1)
    pre = xp.cumulative_prod(xp.concat([one, v]))[:-1]
    suf = xp.flip(xp.cumulative_prod(xp.concat([one, xp.flip(v)]))[:-1])
    return xp.reshape(pre * suf, a.shape)
''',
}

HELPERS["_sum_to"] = '''def _sum_to(g, shape):
    """g summed to shape over the axes that broadcasting added (leading ones, and where shape has 1):
    the adjoint of an operand NumPy broadcast."""
    g = xp.asarray(g)
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    if lead > 0:
        g = xp.sum(g, axis=tuple(range(lead)))
    ones = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return xp.sum(g, axis=ones, keepdims=True) if ones else g
'''

HELPERS["_broadcast_shape"] = '''def _broadcast_shape(*shapes):
    """The shape NumPy's broadcasting gives arrays of these shapes (the array API has no
    broadcast_shapes): the shape of a kernel's elementwise values."""
    out = []
    for dims in zip(*(((1,) * (max(map(len, shapes)) - len(s)) + tuple(s)) for s in shapes)):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
'''

HELPERS["_ieee_div"] = '''def _ieee_div(a, b):
    """a / b as IEEE 754 divides (+-inf, nan) where Python raises ZeroDivisionError: a derivative at
    the edge of its domain (sqrt at 0) is infinite, as JAX and NumPy give."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)
'''

HELPERS["_ieee_pow"] = '''def _ieee_pow(a, b):
    """a ** b as IEEE 754's pow where Python raises or returns a complex number: inf for 0.0 ** -0.5
    and on overflow (-inf for a negative base and an odd exponent), nan for a negative base and a
    fractional exponent.  Derivative code at the edge of a function's domain, as JAX gives."""
    a, b = float(a), float(b)
    try:
        out = a ** b
    except (ZeroDivisionError, OverflowError):
        odd = b.is_integer() and int(b) % 2 == 1
        return math.copysign(math.inf, a) if odd else math.inf
    return math.nan if isinstance(out, complex) else out
'''

HELPERS["_ipow"] = '''def _ipow(a, m):
    """a**m for an integer m >= 0, inf on overflow like the loop it replaces (not OverflowError)."""
    try:
        return float(a) ** int(m)
    except OverflowError:
        return math.copysign(math.inf, a) if int(m) % 2 else math.inf
'''

HELPERS["_take"] = '''def _take(x, lo, n, step):
    """x[lo + step*k] for k < n (elements, or rows of a matrix): a view when the range is in bounds,
    Python's indexing otherwise."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < x.shape[0]:
        return x[lo:hi + 1:step, ...]
    return x[lo + step * xp.arange(n)]
'''

# The array API has no scatter (no ufunc.at, no bincount, no assignment through integer arrays).
# The helpers below use NumPy's and CuPy's fast paths where the namespace has them, and otherwise a
# standard-only form: sort, then reduce a table of the sorted runs.
HELPERS["_segments"] = '''def _segments(seg, v, n, fill):
    """The runs of the sorted segment ids seg (0 <= seg < n) as rows of a table, padded with fill:
    row j holds the values v[k] with seg[k] == j.  Standard-only; memory n times the longest run."""
    t = xp.arange(n)
    start = xp.searchsorted(seg, t)
    count = xp.searchsorted(seg, t, side="right") - start
    if seg.shape[0] == 0 or n == 0:
        return xp.full((n, 1), fill)
    width = int(xp.max(count))
    col = xp.arange(max(width, 1))
    inside = col < count[:, None]
    pos = xp.where(inside, start[:, None] + col, 0)
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), seg.shape)
    return xp.where(inside, xp.reshape(xp.take(v, xp.reshape(pos, (-1,))), pos.shape), fill)
'''

HELPERS["_segment_sum"] = '''def _segment_sum(seg, v, n):
    """Sums of v over the runs of the sorted segment ids seg (0 <= seg < n)."""
    if hasattr(xp, "bincount"):
        return xp.bincount(seg, weights=v, minlength=n)
    return xp.sum(_segments(seg, v, n, 0.0), axis=1)
'''

for _kind, _ufunc, _fill in (("prod", "multiply", "1.0"), ("max", "maximum", "-math.inf"),
                             ("min", "minimum", "math.inf")):
    HELPERS[f"_segment_{_kind}"] = f'''def _segment_{_kind}(seg, v, n):
    """{_kind.capitalize()} of v over the runs of the sorted segment ids seg ({_fill} for an empty run)."""
    if hasattr(xp.{_ufunc}, "at"):
        out = xp.full(n, {_fill})
        xp.{_ufunc}.at(out, seg, v)
        return out
    return xp.{_kind}(_segments(seg, v, n, {_fill}), axis=1)
'''

HELPERS["_scatter_sum"] = '''def _scatter_sum(idx, v, n):
    """Sums of v at each index of range(n) (0 <= idx < n, repeats accumulate): the adjoint of a gather."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), idx.shape)
    if hasattr(xp, "bincount"):
        return xp.bincount(idx, weights=v, minlength=n)
    order = xp.argsort(idx)
    return _segment_sum(xp.take(idx, order), xp.take(v, order), n)
'''

HELPERS["_put"] = '''def _put(x, idx, v):
    """x[idx] = v for a tuple of index arrays (Python's negative indices; the last write wins).

    In place where the namespace assigns through integer arrays (NumPy, CuPy); otherwise a new array,
    from the last write to each element after a stable sort of the flat indices.
    """
    if hasattr(xp, "bincount"):
        x[idx] = v
        return x
    flat = 0
    for i, size in zip(idx, x.shape):
        flat = flat * size + xp.asarray(i) % size
    flat = xp.reshape(flat, (-1,))
    v = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=x.dtype), flat.shape), (-1,))
    if flat.shape[0] == 0:
        return x
    order = xp.argsort(flat, stable=True)
    s, vs = xp.take(flat, order), xp.take(v, order)
    last = xp.clip(xp.searchsorted(s, xp.arange(x.size), side="right") - 1, 0, None)
    hit = xp.take(s, last) == xp.arange(x.size)
    return xp.reshape(xp.where(hit, xp.take(vs, last), xp.reshape(x, (-1,))), x.shape)
'''

HELPERS["_index_add"] = '''def _index_add(b, idx, v):
    """b with v added at x[idx] for a tuple of ints and int arrays (repeats accumulate, Python's negative
    indices), the axes after them whole: the adjoint of the gather x[idx]."""
    flat = xp.asarray(0)
    for i, size in zip(idx, b.shape):
        flat = flat * size + xp.asarray(i) % size
    inner = 1
    for size in b.shape[len(idx):]:
        inner *= size
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), flat.shape + b.shape[len(idx):])
    flat = xp.reshape(flat, (-1, 1)) * inner + xp.reshape(xp.arange(inner), (1, -1))
    total = _scatter_sum(xp.reshape(flat, (-1,)), xp.reshape(v, (-1,)), b.size)
    return b + xp.reshape(total, b.shape)
'''

DEPENDS = {"_erf": ("_erfc_ratio",), "_index_add": ("_scatter_sum",),
           "_window": ("_window_add",), "_window_add": ("_scatter_sum",),
           "_window_matvec": ("_window",),
           "_window_vecmat": ("_window",), "_window_outer_add": ("_window",),
           "_sum_scan": ("_steps",), "_prod_scan": ("_steps",), "_lin_scan": ("_steps",),
           "_scatter_add": ("_scatter_sum",), "_block": ("_block_add",), "_block_add": ("_scatter_sum",),
           "_mm": ("_mm_right",), "_scatter_sum": ("_segment_sum",),
            "_segment_sum": ("_segments",),
            "_segment_prod": ("_segments",), "_segment_max": ("_segments",), "_segment_min": ("_segments",)}

HELPERS["_scatter_add"] = '''def _scatter_add(b, lo, n, step, v):
    """b[lo + step*k] += v[k] for k < n (the adjoint of _take)."""
    hi = lo + step * (n - 1)
    if n > 0 and step > 0 and 0 <= lo and hi < b.shape[0]:
        b[lo:hi + 1:step] += v
    elif n > 0:
        b += _scatter_sum((lo + step * xp.arange(n)) % b.shape[0], v, b.shape[0])
'''

HELPERS["_window"] = '''def _window(x, lo, n0, n1):
    """x[lo + i + j] for i < n0, j < n1 as an (n0, n1) array (the windows of a correlation): a strided
    view when in bounds and the namespace has one, a gather otherwise."""
    if n0 > 0 and n1 > 0 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] and hasattr(xp, "lib"):
        return xp.lib.stride_tricks.sliding_window_view(x[lo:lo + n0 + n1 - 1], n1)
    return x[(lo + xp.reshape(xp.arange(n0), (-1, 1)) + xp.reshape(xp.arange(n1), (1, -1))) % x.shape[0]]
'''

HELPERS["_window_add"] = '''def _window_add(b, lo, n0, n1, v):
    """b[lo + i + j] += v[i, j] (the adjoint of _window): one slice add per column, or per row when
    the rows are fewer."""
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1))
    if n0 > 0 and n1 > 0 and 0 <= lo and lo + n0 + n1 - 1 <= b.shape[0]:
        if n1 <= n0:
            for j in range(n1):
                b[lo + j:lo + j + n0] += v[:, j]
        else:
            for i in range(n0):
                b[lo + i:lo + i + n1] += v[i, :]
    elif n0 > 0 and n1 > 0:
        flat = xp.reshape((lo + xp.reshape(xp.arange(n0), (-1, 1)) + xp.reshape(xp.arange(n1), (1, -1)))
                          % b.shape[0], (-1,))
        b += _scatter_sum(flat, xp.reshape(v, (-1,)), b.shape[0])
'''

# The contractions of a window with vectors (coarsen_nb.lower.nests): correlations and a convolution, one
# pass over the signal each, instead of the product of the (n0, n1) windows with a vector (not BLAS on a
# sliding view: its rows overlap) or an (n0, n1) outer product scattered column by column.

HELPERS["_window_matvec"] = '''def _window_matvec(x, lo, n0, n1, h):
    """_window(x, lo, n0, n1) @ h: sum_j x[lo + i + j] * h[j] for i < n0, a valid correlation of the
    signal with h where the namespace has one, the product on the windows otherwise."""
    if x.ndim == 1 and h.shape == (n1,) and 0 < n0 and 0 < n1 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] \\
            and hasattr(xp, "correlate"):
        return xp.correlate(x[lo:lo + n0 + n1 - 1], h, mode="valid")
    return _window(x, lo, n0, n1) @ h
'''

HELPERS["_window_vecmat"] = '''def _window_vecmat(g, x, lo, n0, n1):
    """g @ _window(x, lo, n0, n1): sum_i g[i] * x[lo + i + j] for j < n1, a valid correlation of the
    signal with g (the adjoint of _window_matvec for h).  NumPy's correlation is n1 dots of length n0;
    it runs over rows of 4096 at a time because a longer dot is where BLAS starts threads (OpenBLAS
    above 10**4), and on a loaded machine a threaded dot waits for cores (100 ms instead of 0.1 ms)."""
    if x.ndim == 1 and g.shape == (n0,) and 0 < n0 and 0 < n1 and 0 <= lo and lo + n0 + n1 - 1 <= x.shape[0] \\
            and hasattr(xp, "correlate"):
        rows = 4096 if xp.__name__ == "numpy" else n0
        out = xp.correlate(x[lo:lo + min(rows, n0) + n1 - 1], g[:rows], mode="valid")
        for i in range(rows, n0, rows):
            m = min(rows, n0 - i)
            out += xp.correlate(x[lo + i:lo + i + m + n1 - 1], g[i:i + m], mode="valid")
        return out
    return g @ _window(x, lo, n0, n1)
'''

HELPERS["_window_outer_add"] = '''def _window_outer_add(b, lo, n0, n1, g, h):
    """b[lo + i + j] += g[i] * h[j] for i < n0, j < n1 (the adjoint of _window_matvec for x): one full
    convolution of g and h added to a slice, no (n0, n1) outer product."""
    if b.ndim == 1 and g.shape == (n0,) and h.shape == (n1,) and 0 < n0 and 0 < n1 and 0 <= lo \\
            and lo + n0 + n1 - 1 <= b.shape[0] and hasattr(xp, "convolve"):
        b[lo:lo + n0 + n1 - 1] += xp.convolve(g, h)
    elif n0 > 0 and n1 > 0:
        _window_add(b, lo, n0, n1, xp.reshape(g, (-1, 1)) * xp.reshape(h, (1, -1)))
'''

HELPERS["_block"] = '''def _block(x, lo0, n0, lo1, n1):
    """x[lo0 + i, lo1 + j] for i < n0, j < n1 as an (n0, n1) array: a view when in bounds."""
    if 0 <= lo0 and lo0 + n0 <= x.shape[0] and 0 <= lo1 and lo1 + n1 <= x.shape[1]:
        return x[lo0:lo0 + n0, lo1:lo1 + n1]
    return x[(lo0 + xp.arange(n0))[:, None], (lo1 + xp.arange(n1))[None, :]]
'''

HELPERS["_block_add"] = '''def _block_add(b, lo0, n0, lo1, n1, v):
    """b[lo0 + i, lo1 + j] += v[i, j] (the adjoint of _block)."""
    if 0 <= lo0 and lo0 + n0 <= b.shape[0] and 0 <= lo1 and lo1 + n1 <= b.shape[1]:
        b[lo0:lo0 + n0, lo1:lo1 + n1] += v
    elif n0 > 0 and n1 > 0:
        i = (lo0 + xp.arange(n0))[:, None] % b.shape[0]
        j = (lo1 + xp.arange(n1))[None, :] % b.shape[1]
        flat = xp.reshape(i * b.shape[1] + j, (-1,))
        v = xp.reshape(xp.broadcast_to(xp.asarray(v, dtype=xp.float64), (n0, n1)), (-1,))
        b += xp.reshape(_scatter_sum(flat, v, b.shape[0] * b.shape[1]), b.shape)
'''

HELPERS["_mm"] = '''def _mm_left(g, y, x):
    """Adjoint of x in x @ y, for vectors and matrices."""
    if x.ndim == 1 and y.ndim == 1:
        return g * y
    if x.ndim == 1:
        return y @ g
    if y.ndim == 1:
        return g[:, None] * y[None, :]
    return g @ y.T
'''

HELPERS["_mm_right"] = '''def _mm_right(g, x, y):
    """Adjoint of y in x @ y, for vectors and matrices."""
    if x.ndim == 1 and y.ndim == 1:
        return g * x
    if x.ndim == 1:
        return x[:, None] * g[None, :]
    return x.T @ g
'''

# Reductions over some axes (rules/reductions.py): the reduced axes are moved last and merged into one,
# so the whole-array rule applies along it; the result is put back in the operand's shape.
HELPERS["_prod_except_axes"] = '''def _prod_except_axes(a, axes):
    """Products, along axes, of all other elements (the gradient of prod over axes), without division."""
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    perm = rest + tuple(axes)
    t = xp.permute_dims(a, perm)
    v = xp.reshape(t, t.shape[:len(rest)] + (-1,))
    pre = xp.cumulative_prod(v, axis=-1, include_initial=True)[..., :-1]
    suf = xp.flip(xp.cumulative_prod(xp.flip(v, axis=-1), axis=-1, include_initial=True)[..., :-1], axis=-1)
    back = xp.reshape(pre * suf, t.shape)
    return xp.permute_dims(back, tuple(perm.index(d) for d in range(a.ndim)))
'''

HELPERS["_first_extremum"] = '''def _first_extremum(a, axes, arg):
    """1.0 at the element of a that arg (xp.argmax or xp.argmin) picks over axes, 0.0 elsewhere: the
    first extremum in C order over the reduced axes, where the cotangent of max or min goes."""
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    perm = rest + tuple(axes)
    t = xp.permute_dims(a, perm)
    v = xp.reshape(t, t.shape[:len(rest)] + (-1,))
    hit = xp.arange(v.shape[-1]) == arg(v, axis=-1, keepdims=True)
    back = xp.reshape(xp.asarray(hit, dtype=xp.float64), t.shape)
    return xp.permute_dims(back, tuple(perm.index(d) for d in range(a.ndim)))
'''

HELPERS["_div_or_zero"] = '''def _div_or_zero(a, b):
    """a / b, and 0 where b is 0: the derivative of a norm or a standard deviation where it is 0 (the
    least-norm subgradient; the formula's 0/0 would be nan)."""
    b = xp.asarray(b)
    return a / xp.where(b == 0, xp.inf, b)
'''

# the derivatives of the cumulative product and of differences (rules/arrays.py)
HELPERS["_cumprod_vjp"] = '''def _cumprod_vjp(x, g, axis):
    """The cotangent of x in y = cumprod(x) along axis, from y's cotangent g, never dividing by a zero.

    Element i takes sum_{j >= i} g_j prod_{k <= j, k != i} x_k.  With z the zeros of x, x1 = x with its
    zeros set to 1, c the running count of zeros and R the reverse cumulative sum, that is R(g y) / x1
    where x_i != 0, R(g cumprod(x1) [c == 1]) at the first zero, and 0 at every later one.
    """
    z = x == 0
    x1 = xp.where(z, 1.0, x)
    c = xp.cumulative_sum(xp.where(z, 1.0, xp.zeros_like(x)), axis=axis)     # counts, exact in float64

    def rev(v):
        return xp.flip(xp.cumulative_sum(xp.flip(v, axis=axis), axis=axis), axis=axis)

    at_zero = rev(xp.where(c == 1, g * xp.cumulative_prod(x1, axis=axis), 0.0))
    return xp.where(z, at_zero, rev(g * xp.cumulative_prod(x, axis=axis)) / x1)
'''

HELPERS["_cumprod_jvp"] = '''def _cumprod_jvp(x, dx, axis):
    """The tangent of y = cumprod(x) along axis, never dividing by a zero: y_j's is
    sum_{i <= j} dx_i prod_{k <= j, k != i} x_k, which is cumprod(x1)_j times cumsum(dx / x1)_j before
    the first zero of x, times dx at the first zero from there to the second zero, and 0 after it
    (x1: x with its zeros set to 1; c: the running count of zeros)."""
    z = x == 0
    x1 = xp.where(z, 1.0, x)
    c = xp.cumulative_sum(xp.where(z, 1.0, xp.zeros_like(x)), axis=axis)     # counts, exact in float64
    first = xp.cumulative_sum(xp.where(z & (c == 1), dx, 0.0), axis=axis)
    s = xp.where(c == 0, xp.cumulative_sum(dx / x1, axis=axis), xp.where(c == 1, first, 0.0))
    return xp.cumulative_prod(x1, axis=axis) * s
'''

HELPERS["_diff_vjp"] = '''def _diff_vjp(g, n, axis):
    """The cotangent of x in y = diff(x, n, axis), from y's cotangent g: diff's transpose, -diff of g
    with a zero put before and after it along axis, n times."""
    for _ in range(n):
        edge = list(g.shape)
        edge[axis] = 1
        pad = xp.zeros(tuple(edge))
        g = -xp.diff(xp.concat([pad, g, pad], axis=axis), axis=axis)
    return g
'''

# The scans of coarsen_nb.phi.scans: the state before each of n steps of s <- a[k]*s + b[k] from s = init.
# s[k] = a[k-1]*s[k-1] + b[k-1], so the inputs are shifted by one step and the scan is inclusive.

HELPERS["_steps"] = '''def _steps(b, n):
    """b (a number or n values) as n floats (read only)."""
    b = xp.asarray(b, dtype=xp.float64)
    return b if b.shape == (n,) else b + xp.zeros(n)
'''

HELPERS["_sum_scan"] = '''def _sum_scan(b, init, n):
    """The state before each of n steps of s <- s + b[k] from init (b a number or n values): a prefix sum."""
    b = _steps(b, n)
    head = xp.reshape(xp.asarray(init, dtype=xp.float64), (1,))
    return xp.cumulative_sum(xp.concat([head, b[:n - 1]])) if n > 0 else b
'''

HELPERS["_prod_scan"] = '''def _prod_scan(a, init, n):
    """The state before each of n steps of s <- a[k]*s from init: a prefix product (no division)."""
    a = _steps(a, n)
    head = xp.reshape(xp.asarray(init, dtype=xp.float64), (1,))
    return xp.cumulative_prod(xp.concat([head, a[:n - 1]])) if n > 0 else a
'''

HELPERS["_lin_scan"] = '''def _lin_scan(a, b, init, n):
    """The state before each of n steps of s <- a[k]*s + b[k] from init (a, b numbers or n values).

    A Hillis-Steele doubling scan of the affine maps (a, b) o (a', b') = (a*a', a*b' + b): ceil(log2 n)
    passes of array products and sums, no division (stable for |a| < 1 over any n, exact zeros fine).
    With one coefficient a for every step, the composed coefficient of 2**p steps is the number a**(2**p);
    once it is below the normal range it is 0 (a subnormal factor makes a pass ~20x slower, and what it
    would add is below 2**-1022 times the state 2**p steps before) and the scan is done."""
    b = _steps(b, n)
    if n == 0:
        return b
    s = xp.concat([xp.reshape(xp.asarray(init, dtype=xp.float64), (1,)), b[:n - 1]])
    a = xp.asarray(a, dtype=xp.float64)
    sh = 1
    if a.ndim == 0:
        c = a
        while sh < n and c != 0:
            s[sh:] += c * s[:-sh]
            c = c * c
            c = c if abs(c) >= 2.2250738585072014e-308 else 0.0
            sh *= 2
        return s
    c = xp.concat([xp.ones(1), a[:n - 1]])
    while sh < n:
        s[sh:] = c[sh:] * s[:-sh] + s[sh:]
        c[sh:] = c[sh:] * c[:-sh]
        sh *= 2
    return s
'''


# the cotangent of a convolution's mode as the full result's (rules/convolutions.py)
HELPERS["_full_frame"] = '''def _full_frame(g, n, start):
    """g placed at offset start of n zeros: a convolution mode's cotangent as the full result's."""
    out = xp.zeros(n)
    out[start:start + g.shape[0]] = g
    return out
'''

# scipy.special's functions (lower/special_helpers.py)
HELPERS.update(SPECIAL_HELPERS)
DEPENDS.update(SPECIAL_DEPENDS)

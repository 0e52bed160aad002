"""The generated module's helpers for whole arrays: broadcasting, products, scans, and the
derivatives of a few array functions.

Each is a plain function written for the module's array namespace ``xp`` (NumPy here, CuPy in a CuPy
module), run by the tests as it is here; the module writer copies its text (``inspect.getsource``) into a
generated module that calls it (:mod:`coarsen_nb.lower.helpers`), which must not import coarsen_nb: what
is here is what an exported file contains.  The functions it calls are read from its code, so a helper
calls another by its plain name, as the generated module does.
"""

from __future__ import annotations

import numpy as xp


def _sum_to(g, shape):
    """g summed to shape over the axes that broadcasting added (leading ones, and where shape has 1):
    the adjoint of an operand NumPy broadcast: float, as adjoints are (a unit seed times an integer array,
    np.sum(x * np.arange(n))'s, is not, and the array API adds no integer array into a float one)."""
    g = xp.asarray(g, dtype=xp.float64)
    if g.shape == tuple(shape):
        return g
    # (a ValueError where they do not broadcast: the operands of the user's line did not, and this is the
    # first line of a gradient that needs no product of them, np.sum(x * y)'s, to see it)
    full = _broadcast_shape(g.shape, tuple(shape))
    if full != g.shape:
        # one value for points the shape has (a sum's adjoint, the same at every element): spread first
        g = xp.broadcast_to(g, full)
    lead = g.ndim - len(shape)
    if lead > 0:
        g = xp.sum(g, axis=tuple(range(lead)))
    ones = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return xp.sum(g, axis=ones, keepdims=True) if ones else g


def _broadcast_shape(*shapes):
    """The shape NumPy's broadcasting gives arrays of these shapes (the array API has no
    broadcast_shapes): the shape of a kernel's elementwise values."""
    out = []
    for dims in zip(*(((1,) * (max(map(len, shapes)) - len(s)) + tuple(s)) for s in shapes)):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _mm_left(g, y, x):
    """Adjoint of x in x @ y, for vectors and matrices."""
    if x.ndim == 1 and y.ndim == 1:
        return g * y
    if x.ndim == 1:
        return y @ g
    if y.ndim == 1:
        return g[:, None] * y[None, :]
    return g @ y.T


def _mm_right(g, x, y):
    """Adjoint of y in x @ y, for vectors and matrices."""
    if x.ndim == 1 and y.ndim == 1:
        return g * x
    if x.ndim == 1:
        return x[:, None] * g[None, :]
    return x.T @ g


def _rowdot(m, v):
    """np.sum(m * v, axis=1) of a matrix m and a vector v without the product array: m @ v where the
    lengths match, NumPy's broadcasting sum where one of them is 1 (m of one column, v of one element).
    (xp.matmul, not @: Numba's @ takes two arrays of one float dtype, its namespace's matmul ints too.)"""
    if m.shape[1] == v.shape[0]:
        return xp.matmul(m, v)
    return xp.sum(m * v, axis=1)


def _prod_except(a):
    """Products of all other elements, without division (zero-safe)."""
    v = xp.reshape(a, (-1,))
    one = xp.ones(1)
    pre = xp.cumulative_prod(xp.concat([one, v]))[:-1]
    suf = xp.flip(xp.cumulative_prod(xp.concat([one, xp.flip(v)]))[:-1])
    return xp.reshape(pre * suf, a.shape)


# Reductions over some axes (rules/reductions.py): the reduced axes are moved last and merged into one,
# so the whole-array rule applies along it; the result is put back in the operand's shape.
def _prod_except_axes(a, axes):
    """Products, along axes, of all other elements (the gradient of prod over axes), without division."""
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    perm = rest + tuple(axes)
    t = xp.permute_dims(a, perm)
    v = xp.reshape(t, t.shape[:len(rest)] + (-1,))
    pre = xp.cumulative_prod(v, axis=-1, include_initial=True)[..., :-1]
    suf = xp.flip(xp.cumulative_prod(xp.flip(v, axis=-1), axis=-1, include_initial=True)[..., :-1], axis=-1)
    back = xp.reshape(pre * suf, t.shape)
    return xp.permute_dims(back, tuple(perm.index(d) for d in range(a.ndim)))


def _first_extremum(a, axes, sign):
    """1.0 at the element of a that xp.argmax (sign 1) or xp.argmin (sign -1) picks over axes, 0.0 elsewhere:
    the first extremum in C order over the reduced axes, where the cotangent of max or min goes."""
    arg = xp.argmax if sign > 0 else xp.argmin
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    perm = rest + tuple(axes)
    t = xp.permute_dims(a, perm)
    v = xp.reshape(t, t.shape[:len(rest)] + (-1,))
    hit = xp.arange(v.shape[-1]) == arg(v, axis=-1, keepdims=True)
    back = xp.reshape(xp.asarray(hit, dtype=xp.float64), t.shape)
    return xp.permute_dims(back, tuple(perm.index(d) for d in range(a.ndim)))


def _add_at_first_extremum(b, a, axes, sign, g):
    """b plus g (a's shape with the axes of length 1: one value per group) at the element of each group over
    axes that xp.argmax (sign 1) or xp.argmin (sign -1) picks: a max's or min's cotangent over axes, added
    there alone (a NaN or an infinite cotangent stays at its element, as a whole-array max's does).  An array
    of memory of its own (``flags``: NumPy's, CuPy's) takes the assignment through index arrays, in place: one
    element per group, no one-hot of a's size.  Dask's (no n-d fancy assignment; its arrays are rebound, hence
    the return) and the standard's add the one-hot's product."""
    if not hasattr(b, "flags"):
        return b + _first_extremum(a, axes, sign) * g
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    perm = rest + tuple(axes)
    t = xp.permute_dims(a, perm)
    groups = t.shape[:len(rest)]
    if t.size == 0:             # (no groups; a max over no elements raised in the forward sweep)
        return b
    v = xp.reshape(t, groups + (-1,))
    picks = xp.unravel_index((xp.argmax if sign > 0 else xp.argmin)(v, axis=-1), t.shape[len(rest):])
    # (each kept axis as an open grid over the groups, each reduced one as the picks' coordinate)
    at = {d: xp.reshape(xp.arange(a.shape[d]), tuple(-1 if j == i else 1 for j in range(len(rest))))
          for i, d in enumerate(rest)} | dict(zip(axes, picks, strict=True))
    kept = xp.broadcast_to(g, tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    b[tuple(at[d] for d in range(a.ndim))] += xp.reshape(xp.permute_dims(kept, perm), groups)
    return b


def _div_or_zero(a, b):
    """a / b, and 0 where b is 0: the derivative of a norm or a standard deviation where it is 0 (the
    least-norm subgradient; the formula's 0/0 would be nan)."""
    b = xp.asarray(b)
    return a / xp.where(b == 0, xp.inf, b)


# the derivatives of the cumulative product and of differences (rules/arrays.py)
def _cumprod_vjp(x, g, axis):
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


def _cumprod_jvp(x, dx, axis):
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


def _diff_vjp(g, n, axis):
    """The cotangent of x in y = diff(x, n, axis), from y's cotangent g: diff's transpose, n times: element
    i gets g[i - 1] - g[i] along axis (a zero past either end), one array written through two views."""
    axis %= g.ndim          # (the views index the axes before it: a negative axis counts from the end)
    for _ in range(n):
        shape = list(g.shape)
        shape[axis] += 1
        out = xp.zeros(tuple(shape))
        before = (slice(None),) * axis
        out[before + (slice(1, None), ...)] = g
        out[before + (slice(None, -1), ...)] -= g
        g = out
    return g


# the cotangent of a convolution's mode as the full result's (rules/convolutions.py)
def _full_frame(g, n, start):
    """g placed at offset start of n zeros: a convolution mode's cotangent as the full result's."""
    out = xp.zeros(n)
    out[start:start + g.shape[0]] = g
    return out


# The scans of coarsen_nb.phi.scans: the state before each of n steps of s <- a[k]*s + b[k] from s = init.
# s[k] = a[k-1]*s[k-1] + b[k-1], so the inputs are shifted by one step and the scan is inclusive.
def _steps(b, n):
    """b (a number or n values) as n floats (read only)."""
    b = xp.asarray(b, dtype=xp.float64)
    return b if b.shape == (n,) else b + xp.zeros(n)


def _sum_scan(b, init, n):
    """The state before each of n steps of s <- s + b[k] from init (b a number or n values): a prefix sum."""
    b = _steps(b, n)
    head = xp.reshape(xp.asarray(init, dtype=xp.float64), (1,))
    return xp.cumulative_sum(xp.concat([head, b[:n - 1]])) if n > 0 else b


def _prod_scan(a, init, n):
    """The state before each of n steps of s <- a[k]*s from init: a prefix product (no division)."""
    a = _steps(a, n)
    head = xp.reshape(xp.asarray(init, dtype=xp.float64), (1,))
    return xp.cumulative_prod(xp.concat([head, a[:n - 1]])) if n > 0 else a


def _lin_scan(a, b, init, n):
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


#: the helpers of this module, in the order the registry (:mod:`coarsen_nb.lower.helpers`) lists them
HELPER_FUNCTIONS = (_sum_to, _broadcast_shape, _mm_left, _mm_right, _prod_except, _prod_except_axes, _first_extremum,
                    _add_at_first_extremum,
                    _div_or_zero, _cumprod_vjp, _cumprod_jvp, _diff_vjp, _full_frame, _steps, _sum_scan, _prod_scan,
                    _lin_scan, _rowdot)

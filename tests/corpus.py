"""The shared corpus: small notebook-style functions inside the supported subset.

Every pass is tested on every entry (``@pytest.mark.parametrize("entry", CORPUS,
ids=CORPUS_IDS)``): the compiled result is compared with the plain Python
function, derivatives with finite differences.

Each :class:`CorpusEntry` carries

* ``fn``: a module-level function, written as a user would write it in a cell;
* ``make_args(rng)``: valid inputs (arrays of 3–8 elements, trip counts ≤ 20),
  kept away from kinks and branch boundaries so finite differences mean
  something;
* ``wrt``: the float parameters (scalars or float arrays) to differentiate;
* ``differentiable``: whether a gradient w.r.t. ``wrt`` exists (the value is a
  float scalar, piecewise smooth with the inputs off the pieces' boundaries);
* ``tags``: what the function exercises, to select sub-corpora.

Functions whose name starts with ``_`` are helpers that the entries call; the
frontend inlines them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# --------------------------------------------------------------------------
# Helpers (inlined at their call sites)
# --------------------------------------------------------------------------


def _sq(t):
    return t * t


def _sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def _softplus(z):
    if z > 0.0:
        return z + math.log(1.0 + math.exp(-z))
    return math.log(1.0 + math.exp(z))


def _clip(v, lo, hi):
    if v < lo:
        return lo
    elif v > hi:
        return hi
    return v


def _logistic_loss(z, label):
    return _softplus(z) - label * z


def _poly(c, t):
    acc = 0.0
    for k in range(len(c)):
        acc = acc * t + c[k]
    return acc


# --------------------------------------------------------------------------
# Straight-line code
# --------------------------------------------------------------------------


def poly2(x, y):
    return 3.0 * x * x - 2.0 * x * y + y ** 3 - 1.5


def math_mix(x, y):
    a = math.sin(x) * math.exp(y / 3.0)
    b = math.log(1.0 + x * x) + math.sqrt(y * y + 1.0)
    c = math.tanh(a - b) + math.cos(x * y) / (2.0 + math.atan(y))
    return a * b + c - math.pi * x


def np_scalar_mix(x, y):
    u = np.sin(x) + np.cos(y) * np.exp(-x * x)
    v = np.arctan2(y, 1.5 + x * x) + np.hypot(x, y)
    w = np.sqrt(np.log1p(x * x) + 1.0) - np.tanh(u * v)
    return u * v + w ** 2


def aug_assign(x, y):
    s = x
    s += y
    s *= 2.0
    s -= x / 3.0
    s /= 1.0 + y * y
    s **= 2
    return s


def ifexp_abs_min_max(x, y):
    t = x if x > y else y
    return abs(x - 2.0 * y) + min(x, y, 0.5) + max(t, 1.0) + (x * y if y < 0.0 else -x)


def black_scholes_call(s, k, r, sigma, t):
    vol = sigma * math.sqrt(t)
    d1 = (math.log(s / k) + (r + 0.5 * sigma * sigma) * t) / vol
    d2 = d1 - vol
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    return s * n1 - k * math.exp(-r * t) * n2


def unary_ops(x, y):
    a = -x
    b = +y
    c = -(a * b) + -(-x)  # noqa: B002 - a double negation on purpose
    return c - a ** 2


def int_arith(n, m):
    q = n // m
    r = n % m
    return q * m + r - n + 2 * q - r


# --------------------------------------------------------------------------
# Branches
# --------------------------------------------------------------------------


def nested_if(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y
    elif x > -1.0:
        r = x * x
    else:
        r = -y * x
    return r + 1.0


def elif_chain(x):
    if x < -1.0:
        y = -x - 0.5
    elif x < 0.0:
        y = x * x + 0.5
    elif x < 1.0:
        y = 0.5 + math.sin(x)
    else:
        y = math.log(x) + 0.5 + math.sin(1.0)
    return y * 2.0


def bool_predicates(x, y):
    if x > 0.0 and y > 0.0 or not x < -1.0:
        z = x + y
    else:
        z = x - y
    if not (x > 0.5 or y < -0.5) and z < 3.0:
        z = z * 2.0
    return z


def chained_compare(x, lo, hi):
    if lo < x < hi:
        return (x - lo) * (hi - x)
    return 0.0


def one_armed_if(x, y):
    r = x * 2.0
    if y > x:
        r = r + y
    if r < 0.0:
        r = -r
    return r


def early_return_top(x, y):
    if x < 0.0:
        return -x * x + y
    z = math.exp(-x) * y
    if z > 1.0:
        return z - 1.0
    return z * x


def nested_returns(x, y):
    if x > 1.0:
        if y > 1.0:
            return x * y
        return x - y
    else:
        if y < -1.0:
            return x + y
    return x * x - y


# --------------------------------------------------------------------------
# Loops
# --------------------------------------------------------------------------


def sum_range(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
    return s


def range_start_stop_step(x, n):
    s = 1.0
    for i in range(2, n, 3):
        s = s + x / i
    return s


def range_negative_step(x, n):
    s = 0.0
    for i in range(n, 0, -1):
        s = s * x + i
    return s


def for_over_array(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


def piecewise_sum(x):
    s = 0.0
    for v in x:
        if v > 0.0:
            s += v * v
        else:
            s += -0.5 * v
    return s


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def horner(c, t):
    v = 0.0
    for i in range(len(c)):
        v = v * t + c[i]
    return v


def horner_reversed(c, t):
    v = 0.0
    for k in range(len(c) - 1, -1, -1):
        v = v * t + c[k]
    return v


def product_with_zero(x):
    p = 1.0
    for i in range(len(x)):
        p *= x[i]
    return p


def running_max(x):
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    return m


def running_max_if(x):
    m = x[0]
    k = 0
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
            k = i
    return m * (k + 1)


def pendulum_euler(theta0, omega0, g, damping, dt, n):
    theta = theta0
    omega = omega0
    for _ in range(n):
        theta, omega = theta + dt * omega, omega - dt * (g * math.sin(theta) + damping * omega)
    return theta * theta + omega


def loop_tuple_rotate(a0, b0, n):
    a, b = a0, b0
    for _ in range(n):
        a, b = b, a + 0.5 * b
    return a - b


def swap_order(x, y):
    if x > y:
        x, y = y, x
    return x - 2.0 * y


def rotate3(a, b, c, n):
    for _ in range(n):
        a, b, c = b, c, a
    return a + 2.0 * b + 3.0 * c


def linear_rec_const(a, b, v0, n):
    v = v0
    for _ in range(n):
        v = a * v + b
    return v


def linear_rec_array(a, c, v0):
    v = v0
    for i in range(len(c)):
        v = a * v + c[i]
    return v


def power_rec(a, b, v0, n):
    v = v0
    for _ in range(n):
        v = a * v ** b
    return v


def product_range(x, n):
    p = 1.0
    for k in range(1, n + 1):
        p = p * (1.0 + x / k)
    return p


def triangular_sum(x):
    n = len(x)
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += x[i] * x[j] / (1.0 + (i - j) ** 2)
    return s


def nested_three(x, m):
    s = 0.0
    for i in range(len(x)):
        for j in range(m):
            for k in range(2):
                s += x[i] * (j + 1) - k * x[i] * x[i]
    return s


def matrix_weighted(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j] * (i + 1) - 0.5 * a[i, j] ** 2 * j
    return s


def continue_skip(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            continue
        s += x[i] ** 2
    return s


def break_first_negative(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            break
        s += x[i] * (i + 1)
    return s


def early_return_in_loop(x, thresh):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        if s > thresh:
            return s * 2.0 + i
    return -s


def count_positive(x):
    k = 0
    for v in x:
        if v > 0.0:
            k += 1
    return k


def logsumexp(x):
    m = x[0]
    for v in x:
        m = max(m, v)
    s = 0.0
    for v in x:
        s += math.exp(v - m)
    return m + math.log(s)


def hookean_spring(x, k, rest):
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i]
        e += 0.5 * k * (d - rest) ** 2
    return e


def brachistochrone(y, h):
    n = len(y) - 1
    t = 0.0
    for i in range(n):
        dy = y[i + 1] - y[i]
        mid = 0.5 * (y[i] + y[i + 1])
        t += math.sqrt(h * h + dy * dy) / math.sqrt(2.0 * 9.81 * (1.0 - mid))
    return t


def pairwise_energy(pos, cutoff):
    e = 0.0
    n = pos.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r = math.sqrt(dx * dx + dy * dy)
            if r < cutoff:
                e += (cutoff - r) ** 2 / r
    return e


def logistic_nll(w, b, xs, y):
    nll = 0.0
    n = xs.shape[0]
    for i in range(n):
        z = b
        for j in range(xs.shape[1]):
            z += xs[i, j] * w[j]
        nll += math.log(1.0 + math.exp(z)) - y[i] * z
    return nll / n


def hmc_like_potential(theta, xs, y, prior):
    u = 0.5 * prior * np.dot(theta, theta)
    for i in range(xs.shape[0]):
        z = 0.0
        for j in range(len(theta)):
            z += xs[i, j] * theta[j]
        if y[i] > 0.5:
            u += math.log(1.0 + math.exp(-z))
        else:
            u += math.log(1.0 + math.exp(z))
    return u


# --------------------------------------------------------------------------
# while loops
# --------------------------------------------------------------------------


def while_countdown(x, n):
    s = 0.0
    k = n
    while k > 0:
        s += x / k
        k -= 1
    return s


def while_newton_sqrt(a):
    x = a
    k = 0
    while k < 50 and abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
        k += 1
    return x


def while_true_break(a, x0):
    x = x0
    k = 0
    while True:
        step = (x * x * x - a) / (3.0 * x * x)
        x = x - step
        k += 1
        if abs(step) < 1e-13 or k >= 30:
            break
    return x


def while_continue(x, n):
    i = 0
    s = 0.0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        s += x ** i
    return s


def bgd_hyperopt(lr, x, y, iters):
    w = 0.0
    k = 0
    while True:
        g = 0.0
        for i in range(len(x)):
            g += (w * x[i] - y[i]) * x[i]
        w = w - lr * g / len(x)
        k += 1
        if k >= iters:
            break
        if abs(w) > 1e6:
            break
    loss = 0.0
    for i in range(len(x)):
        loss += (w * x[i] - y[i]) ** 2
    return loss


def int_gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def collatz_steps(n):
    k = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        k += 1
    return k


# --------------------------------------------------------------------------
# Array reads and writes
# --------------------------------------------------------------------------


def matvec_write(a, x):
    n = a.shape[0]
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for j in range(len(x)):
            acc += a[i, j] * x[j]
        out[i] = acc
    return np.sum(out * out)


def cumsum_write(x):
    out = np.zeros_like(x)
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        out[i] = s
    return np.dot(out, x)


def copy_then_write(x):
    y = np.copy(x)
    for i in range(len(x)):
        if y[i] < 0.0:
            y[i] = 0.5 * y[i]
    return np.sum(y * y)


def param_private_copy_write(x, a):
    """A parameter rebound to its own copy first (the fix the refusal of writes into parameters shows)."""
    x = x.copy()
    x[0] = a * x[1]
    for i in range(1, len(x)):
        x[i] += a * x[i - 1]
    return np.sum(x * x)


def ones_full_write(x, c):
    w = np.ones(len(x))
    f = np.full(len(x), c)
    for i in range(len(x)):
        w[i] = w[i] + x[i] * f[i]
    return np.prod(w) + np.mean(f)


def empty_write(x):
    e = np.empty(len(x))
    for i in range(len(x)):
        e[i] = math.sin(x[i]) * (i + 1)
    return np.sum(e)


def ones_like_2d_write(a):
    b = np.ones_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j] * b[i, j] + i - j
    return np.sum(b * a)


def reductions(x):
    return np.mean(x) * np.sum(x) + np.prod(x) + np.dot(x, x) + np.sum(np.exp(-x * x))


def named_ufuncs_scalar(x, y):
    """NumPy's named ufuncs for the operators, on scalars: the same as writing the operators."""
    u = np.add(np.multiply(x, y), np.subtract(y, 2.0 * x))
    v = np.divide(u, np.true_divide(3.0, 2.0 + y * y)) - np.power(x, 3) * np.negative(y)
    return np.square(v) + np.reciprocal(1.5 + x * x) + np.positive(x)


def named_ufuncs_array(x, y, a):
    """The named ufuncs on arrays and broadcast scalars: each adjoint sums over the broadcast axes."""
    u = np.add(np.multiply(x, y), np.subtract(a, x))
    v = np.divide(u, np.true_divide(2.0, a)) + np.power(a, 2.0) * np.negative(x)
    return np.sum(np.square(v) + np.reciprocal(1.5 + x * x) + np.power(1.5 + y * y, x))


def atleast_and_asarray(x, a, m):
    """Shape-only calls: atleast_kd reshapes below rank k (a → (1,), x → (1, n) and (1, n, 1), m → (p, n, 1))
    and is the array itself above; np.asarray of an array is the array, np.array a copy of it."""
    u = np.atleast_1d(a)
    v = np.atleast_2d(x)
    w = np.atleast_3d(m)
    z = np.atleast_3d(x)
    q = np.atleast_1d(x) * np.asarray(x) + np.array(x) * np.asarray(a)
    return np.sum(u * u) * a + np.sum(v * v * a) + np.sum(w * w) * np.sum(z) + np.sum(q * np.atleast_2d(m)) \
        + np.sum(np.atleast_3d(a)) * np.array(a)


def array_literal_values(a, b, c):
    """np.array of a list of scalar expressions: one opaque step whose VJP hands entry k back to element k."""
    v = np.array([a, b * c, 2.0])
    u = np.array((c, a - b, a * c))
    return np.sum(v * v) + np.dot(v, u) + v[1] * u[2] + np.prod(np.exp(0.1 * u))


def array_literal_2d(a, b, x):
    """A 2-D literal of rows of one length (lists or tuples): entry (i, j)'s cotangent to its element."""
    m = np.array([[a, b * a], [2.0, np.sin(b)]])
    r = np.array([(a, b, 1.0), (b, a, 0.5)])
    ends = np.array([x[0], x[-1]])
    return np.sum(m @ m) + m[1, 1] * m[0, 1] + np.sum(r * r * a) + np.dot(np.dot(m, np.array([a, b])), ends)


def list_values(a, b, c):
    """A list or tuple used as Python uses one: indexed, iterated, len/sum/max of it."""
    w = [a * a, c]
    t = (b, a + c)
    s = w[0] * w[1] + t[-1] + [a, b][-1] * len(w)
    for e in w:
        s += e * b
    return s + sum(t) + max(w) * min(t)


def list_to_numpy(a, b, c):
    """NumPy functions convert a list or tuple literal to an array: np.sum([...]), np.mean((...))."""
    w = [a * a, b * c, c]
    return np.sum(w) * np.mean((a, b)) + np.max([a, c]) + np.sum(np.exp(np.asarray(w)))


def list_in_loop(x, a):
    """A literal rebuilt on every iteration: the opaque step inside an iterated loop."""
    s = a
    for i in range(len(x)):
        v = [s, a * x[i]]
        s = 0.5 * v[0] + np.sum(np.array(v)) * 0.25
    return s


def tuple_return(x, y):
    s = x + y
    d = x - y
    return s, d


# --------------------------------------------------------------------------
# More recurrences: per-step coefficients (C8), powers (C9)
# --------------------------------------------------------------------------


def ema_varying(alpha, x):
    """Exponential moving average with a per-step rate: v ← (1 − α_i)·v + α_i·x_i (C8)."""
    v = x[0]
    for i in range(1, len(x)):
        v = (1.0 - alpha[i]) * v + alpha[i] * x[i]
    return v


def power_square(a, v0, n):
    """v ← a·v² (C9 with a literal exponent): negative a and v0 keep the closed form's integer powers."""
    v = v0
    for _ in range(n):
        v = a * v * v
    return v


def streaming_logsumexp(x, w):
    """One-pass log-sum-exp (running max and scaled sum, as in GMM): both μs close together."""
    m = -math.inf
    s = 0.0
    for v in x:
        a = w * v
        if a > m:
            s = s * math.exp(m - a) + 1.0
            m = a
        else:
            s += math.exp(a - m)
    return m + math.log(s)


# --------------------------------------------------------------------------
# Helper calls
# --------------------------------------------------------------------------


def helper_call(x, y):
    return _sq(x) + _sigmoid(y) * _sq(y - x)


def helper_in_loop(x):
    s = 0.0
    for v in x:
        s += _softplus(v)
    return s


def helper_with_returns(x, lo, hi):
    return _clip(x, lo, hi) * x + _clip(2.0 * x, lo, hi)


def helper_nested(w, x, y):
    total = 0.0
    for i in range(len(x)):
        total += _logistic_loss(w * x[i], y[i])
    return total


def helper_with_loop(c, t):
    return _poly(c, t) + _poly(c, 2.0 * t)


# ==========================================================================
# Inputs
# ==========================================================================


def _u(rng, lo, hi):
    return float(rng.uniform(lo, hi))


def _pick(rng, *intervals):
    """A float drawn from one of ``intervals`` (chosen at random): off every boundary."""
    lo, hi = intervals[int(rng.integers(len(intervals)))]
    return _u(rng, lo, hi)


def _arr(rng, n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=n)


def _signed_arr(rng, n, margin=0.2, hi=1.5):
    """Entries of random sign, each at least ``margin`` away from zero."""
    mag = rng.uniform(margin, hi, size=n)
    return mag * rng.choice([-1.0, 1.0], size=n)


def _gap_middle(values, lo, hi):
    """A threshold inside the widest gap between sorted ``values`` within (lo, hi)."""
    pts = np.sort(np.concatenate([[lo, hi], [v for v in values if lo < v < hi]]))
    k = int(np.argmax(np.diff(pts)))
    return float(0.5 * (pts[k] + pts[k + 1]))


def _retry(rng, draw, ok):
    """``draw(rng)`` until ``ok(*args)`` holds: keeps inputs off branch boundaries."""
    for _ in range(1000):
        args = draw(rng)
        if ok(*args):
            return args
    raise RuntimeError("no valid inputs found")


def _args_one_armed_if(rng):
    def ok(x, y):
        r = 2.0 * x + (y if y > x else 0.0)
        return abs(y - x) > 0.2 and abs(r) > 0.2
    return _retry(rng, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), ok)


def _args_early_return_top(rng):
    def ok(x, y):
        return abs(x) > 0.2 and abs(math.exp(-x) * y - 1.0) > 0.2
    return _retry(rng, lambda r: (_u(r, -2, 2), _u(r, -3, 3)), ok)


def _args_early_return_in_loop(rng):
    x = _arr(rng, int(rng.integers(3, 8)), -0.5, 1.5)
    return x, _gap_middle(np.cumsum(x), -1.0, 4.0)


def _args_pairwise(rng):
    n = int(rng.integers(3, 7))
    pos = rng.uniform(0.0, 2.0, size=(n, 2))
    d = [math.dist(pos[i], pos[j]) for i in range(n) for j in range(i + 1, n)]
    return pos, _gap_middle(d, 0.3, 2.5)


def _args_logistic(rng):
    n, d = int(rng.integers(3, 8)), int(rng.integers(3, 5))
    return (_arr(rng, d), _u(rng, -0.5, 0.5), rng.normal(size=(n, d)),
            rng.integers(0, 2, size=n).astype(float))


def _args_hmc(rng):
    n, d = int(rng.integers(3, 8)), int(rng.integers(3, 5))
    return (_arr(rng, d), rng.normal(size=(n, d)), rng.integers(0, 2, size=n).astype(float),
            _u(rng, 0.5, 2.0))


def _args_running_max(rng):
    # distinct values, so the arg-max is unique and stays so under a small perturbation
    n = int(rng.integers(3, 8))
    return (rng.permutation(n) * 0.3 + rng.uniform(-0.05, 0.05, size=n),)


def _args_product_with_zero(rng):
    x = _arr(rng, int(rng.integers(3, 8)), 0.5, 1.5) * rng.choice([-1.0, 1.0])
    x[2] = 0.0
    return (x,)


def _args_collatz(rng):
    return (int(rng.choice([1, 2, 3, 5, 6, 7, 8, 10, 12, 13, 16, 17, 20])),)


def _args_bgd(rng):
    n = int(rng.integers(3, 8))
    x = rng.uniform(0.5, 1.5, size=n)
    return _u(rng, 0.05, 0.3), x, 0.7 * x + rng.normal(0, 0.1, size=n), int(rng.integers(1, 15))


# ==========================================================================
# The corpus
# ==========================================================================


@dataclass(frozen=True)
class CorpusEntry:
    name: str
    fn: Callable
    make_args: Callable[[np.random.Generator], tuple]
    wrt: tuple[str, ...]
    differentiable: bool
    tags: frozenset[str]

    def __repr__(self) -> str:
        return f"CorpusEntry({self.name})"


def _entry(fn, make_args, wrt=(), differentiable=True, tags=""):
    """``wrt`` and ``tags`` may be given as space-separated strings."""
    if isinstance(wrt, str):
        wrt = wrt.split()
    return CorpusEntry(fn.__name__, fn, make_args, tuple(wrt), differentiable,
                       frozenset(tags.split()))


def _n(rng, lo=0, hi=12):
    return int(rng.integers(lo, hi + 1))


def _len(rng):
    return int(rng.integers(3, 9))


CORPUS: list[CorpusEntry] = [
    # straight-line
    _entry(poly2, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight"),
    _entry(math_mix, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight math"),
    _entry(np_scalar_mix, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight np"),
    _entry(aug_assign, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight augassign"),
    _entry(ifexp_abs_min_max, lambda r: (_u(r, 1.2, 2.0), _u(r, -2.0, -1.0)), "x y",
           tags="straight ifexp builtin"),
    _entry(black_scholes_call,
           lambda r: (_u(r, 80, 120), _u(r, 90, 110), _u(r, 0.0, 0.05), _u(r, 0.1, 0.4), _u(r, 0.2, 2)),
           ("s", "k", "r", "sigma", "t"), tags="straight math"),
    _entry(unary_ops, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight unary"),
    _entry(int_arith, lambda r: (_n(r, -20, 20), _n(r, 1, 7)), (), False, tags="straight int"),
    # branches
    _entry(nested_if, lambda r: (_pick(r, (0.3, 2), (-0.8, -0.2), (-2.5, -1.3)),
                                 _pick(r, (0.2, 2), (-2, -0.2))), "x y", tags="branch nested"),
    _entry(elif_chain, lambda r: (_pick(r, (-2.5, -1.2), (-0.8, -0.2), (0.2, 0.8), (1.2, 3.0)),), "x",
           tags="branch elif"),
    _entry(bool_predicates, lambda r: (_pick(r, (0.2, 0.4), (0.7, 2), (-0.8, -0.2), (-2, -1.2)),
                                       _pick(r, (0.2, 2), (-0.3, -0.1), (-2, -0.7))), "x y",
           tags="branch boolop"),
    _entry(chained_compare, lambda r: (_pick(r, (-1, -0.2), (0.2, 0.8), (1.2, 2)), _u(r, -0.1, 0.1),
                                       _u(r, 0.9, 1.1)), ("x", "lo", "hi"), tags="branch compare"),
    _entry(one_armed_if, _args_one_armed_if, "x y", tags="branch"),
    _entry(early_return_top, _args_early_return_top, "x y", tags="branch return"),
    _entry(nested_returns, lambda r: (_pick(r, (-2, 0.8), (1.2, 2)), _pick(r, (-2, -1.2), (-0.8, 0.8),
                                                                           (1.2, 2))),
           "x y", tags="branch return nested"),
    # loops
    _entry(sum_range, lambda r: (_u(r, -2, 2), _n(r)), "x", tags="loop range sum"),
    _entry(range_start_stop_step, lambda r: (_u(r, -2, 2), _n(r, 0, 20)), "x", tags="loop range step"),
    _entry(range_negative_step, lambda r: (_u(r, -1, 1), _n(r, 0, 10)), "x",
           tags="loop range step recurrence"),
    _entry(for_over_array, lambda r: (_arr(r, _len(r)),), "x", tags="loop array-iter sum"),
    _entry(piecewise_sum, lambda r: (_signed_arr(r, _len(r)),), "x", tags="loop array-iter branch sum"),
    _entry(rosenbrock, lambda r: (_arr(r, _len(r), -1.5, 1.5),), "x", tags="loop array-read sum"),
    _entry(horner, lambda r: (_arr(r, _len(r)), _u(r, -1.5, 1.5)), ("c", "t"),
           tags="loop array-read recurrence"),
    _entry(horner_reversed, lambda r: (_arr(r, _len(r)), _u(r, -1.5, 1.5)), ("c", "t"),
           tags="loop array-read recurrence step"),
    _entry(product_with_zero, _args_product_with_zero, "x", tags="loop array-read product"),
    _entry(running_max, _args_running_max, "x", tags="loop array-read max"),
    _entry(running_max_if, _args_running_max, "x", tags="loop array-read branch max"),
    _entry(pendulum_euler, lambda r: (_u(r, -1, 1), _u(r, -1, 1), _u(r, 8, 11), _u(r, 0, 0.5),
                                      _u(r, 0.01, 0.1), _n(r, 0, 20)),
           ("theta0", "omega0", "g", "damping", "dt"), tags="loop tuple-assign recurrence"),
    _entry(loop_tuple_rotate, lambda r: (_u(r, -1, 1), _u(r, -1, 1), _n(r)), ("a0", "b0"),
           tags="loop tuple-assign recurrence"),
    _entry(swap_order, lambda r: _retry(r, lambda q: (_u(q, -2, 2), _u(q, -2, 2)),
                                        lambda x, y: abs(x - y) > 0.2), "x y", tags="branch tuple-assign swap"),
    _entry(rotate3, lambda r: (_u(r, -1, 1), _u(r, -1, 1), _u(r, -1, 1), _n(r, 0, 10)), "a b c",
           tags="loop tuple-assign swap"),
    _entry(linear_rec_const, lambda r: (_u(r, -0.9, 0.9), _u(r, -1, 1), _u(r, -1, 1), _n(r, 0, 20)),
           ("a", "b", "v0"), tags="loop recurrence linear"),
    _entry(linear_rec_array, lambda r: (_u(r, -0.9, 0.9), _arr(r, _len(r)), _u(r, -1, 1)),
           ("a", "c", "v0"), tags="loop recurrence linear array-read"),
    _entry(power_rec, lambda r: (_u(r, 0.8, 1.2), _u(r, 0.5, 0.9), _u(r, 0.5, 2.0), _n(r, 0, 10)),
           ("a", "b", "v0"), tags="loop recurrence power"),
    _entry(ema_varying, lambda r: (lambda n: (_arr(r, n, 0.1, 0.9), _arr(r, n)))(_len(r)), ("alpha", "x"),
           tags="loop recurrence linear array-read"),
    _entry(power_square, lambda r: (_u(r, -1.05, -0.95), _u(r, -1.02, -0.98), _n(r, 0, 6)), ("a", "v0"),
           tags="loop recurrence power"),
    _entry(streaming_logsumexp, lambda r: (_arr(r, _len(r), -3.0, 3.0), _u(r, 0.5, 1.5)), ("x", "w"),
           tags="loop array-iter branch max sum"),
    _entry(product_range, lambda r: (_u(r, 0, 2), _n(r, 0, 15)), "x", tags="loop product"),
    _entry(triangular_sum, lambda r: (_arr(r, _len(r)),), "x", tags="loop nested triangular sum"),
    _entry(nested_three, lambda r: (_arr(r, _len(r)), _n(r, 0, 4)), "x", tags="loop nested sum"),
    _entry(matrix_weighted, lambda r: (r.normal(size=(_n(r, 2, 5), _n(r, 2, 5))),), ("a",),
           tags="loop nested array-2d sum"),
    _entry(continue_skip, lambda r: (_signed_arr(r, _len(r)),), "x", tags="loop continue array-read"),
    _entry(break_first_negative, lambda r: (_signed_arr(r, _len(r)),), "x", tags="loop break array-read"),
    _entry(early_return_in_loop, _args_early_return_in_loop, ("x", "thresh"),
           tags="loop return array-read"),
    _entry(count_positive, lambda r: (_signed_arr(r, _len(r)),), (), False,
           tags="loop array-iter branch int"),
    _entry(logsumexp, lambda r: (_args_running_max(r)[0] * 3.0,), "x", tags="loop array-iter max sum"),
    _entry(hookean_spring, lambda r: (np.cumsum(_arr(r, _len(r), 0.5, 1.5)), _u(r, 0.5, 2),
                                      _u(r, 0.8, 1.2)), ("x", "k", "rest"), tags="loop array-read sum"),
    _entry(brachistochrone, lambda r: (np.concatenate([[0.0], _arr(r, _len(r) - 2, -1.0, 0.5), [-1.0]]),
                                       _u(r, 0.1, 0.3)), ("y", "h"), tags="loop array-read sum"),
    _entry(pairwise_energy, _args_pairwise, ("pos", "cutoff"),
           tags="loop nested triangular branch array-2d"),
    _entry(logistic_nll, _args_logistic, ("w", "b"), tags="loop nested array-2d sum"),
    _entry(hmc_like_potential, _args_hmc, ("theta", "prior"), tags="loop nested array-2d branch np"),
    # while
    _entry(while_countdown, lambda r: (_u(r, -2, 2), _n(r, 0, 15)), "x", tags="while"),
    _entry(while_newton_sqrt, lambda r: (_u(r, 0.5, 10),), ("a",), tags="while boolop"),
    _entry(while_true_break, lambda r: (_u(r, 0.5, 8), _u(r, 1.0, 2.0)), ("a", "x0"),
           tags="while break"),
    _entry(while_continue, lambda r: (_u(r, -1.2, 1.2), _n(r, 0, 12)), "x", tags="while continue"),
    _entry(bgd_hyperopt, _args_bgd, ("lr",), tags="while break loop nested array-read"),
    _entry(int_gcd, lambda r: (_n(r, 1, 200), _n(r, 0, 200)), (), False,
           tags="while tuple-assign int"),
    _entry(collatz_steps, _args_collatz, (), False, tags="while branch int"),
    # array writes
    _entry(matvec_write, lambda r: (r.normal(size=(_n(r, 3, 6), 4)), _arr(r, 4)), ("a", "x"),
           tags="array-write loop nested array-2d np"),
    _entry(cumsum_write, lambda r: (_arr(r, _len(r)),), "x", tags="array-write loop np"),
    _entry(copy_then_write, lambda r: (_signed_arr(r, _len(r)),), "x",
           tags="array-write loop branch np"),
    _entry(param_private_copy_write, lambda r: (_arr(r, _len(r)), _u(r, -1, 1)), "x a",
           tags="array-write loop np"),
    _entry(ones_full_write, lambda r: (_arr(r, _len(r), 0.1, 1.0), _u(r, 0.5, 1.5)), ("x", "c"),
           tags="array-write loop np"),
    _entry(empty_write, lambda r: (_arr(r, _len(r)),), "x", tags="array-write loop np"),
    _entry(ones_like_2d_write, lambda r: (r.normal(size=(_n(r, 2, 4), _n(r, 2, 4))),), ("a",),
           tags="array-write loop nested array-2d np"),
    _entry(reductions, lambda r: (_arr(r, _len(r)),), "x", tags="straight np reduction"),
    _entry(named_ufuncs_scalar, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="straight np ufunc"),
    _entry(named_ufuncs_array, lambda r: (lambda n: (_arr(r, n), _arr(r, n), _u(r, 0.5, 1.5)))(_len(r)),
           "x y a", tags="straight np ufunc reduction"),
    _entry(atleast_and_asarray,
           lambda r: (lambda n: (_arr(r, n), _u(r, -1, 1), r.normal(size=(_n(r, 2, 4), n))))(_len(r)), "x a m",
           tags="straight np reshape reduction array-2d"),
    _entry(array_literal_values, lambda r: (_u(r, -1, 1), _u(r, -1, 1), _u(r, -1, 1)), "a b c",
           tags="straight np literal reduction"),
    _entry(array_literal_2d, lambda r: (_u(r, -1, 1), _u(r, -1, 1), _arr(r, _len(r))), "a b x",
           tags="straight np literal reduction array-2d"),
    _entry(list_values, lambda r: _retry(r, lambda q: (_u(q, -1, 1), _u(q, -1, 1), _u(q, -1, 1)),
                                         lambda a, b, c: abs(a * a - c) > 0.1 and abs(b - a - c) > 0.1),
           "a b c", tags="straight literal builtin"),
    _entry(list_to_numpy, lambda r: _retry(r, lambda q: (_u(q, -1, 1), _u(q, -1, 1), _u(q, -1, 1)),
                                           lambda a, b, c: abs(a - c) > 0.1),
           "a b c", tags="straight np literal reduction"),
    _entry(list_in_loop, lambda r: (_arr(r, _len(r)), _u(r, -1, 1)), "x a", tags="loop np literal array-read"),
    _entry(tuple_return, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", False, tags="straight tuple"),
    # helpers
    _entry(helper_call, lambda r: (_u(r, -2, 2), _u(r, -2, 2)), "x y", tags="helper straight"),
    _entry(helper_in_loop, lambda r: (_signed_arr(r, _len(r)),), "x", tags="helper loop branch"),
    _entry(helper_with_returns, lambda r: (_pick(r, (-2, -1.2), (-0.8, -0.6), (-0.4, 0.4), (0.6, 0.8),
                                                (1.2, 2)),
                                          -1.0, 1.0), ("x",), tags="helper branch return"),
    _entry(helper_nested, lambda r: (_u(r, -1, 1), _signed_arr(r, _len(r)),
                                     r.integers(0, 2, size=8).astype(float)), ("w",),
           tags="helper nested loop array-read"),
    _entry(helper_with_loop, lambda r: (_arr(r, _len(r)), _u(r, -1, 1)), ("c", "t"),
           tags="helper loop recurrence"),
]

CORPUS_IDS: list[str] = [e.name for e in CORPUS]

assert len(set(CORPUS_IDS)) == len(CORPUS_IDS), "corpus names must be unique"


def by_tag(*tags: str) -> list[CorpusEntry]:
    """The entries carrying every one of ``tags``."""
    return [e for e in CORPUS if set(tags) <= e.tags]

"""JAX's best form of each kernel: a ``jnp`` vectorized rewrite, differentiated by ``jax.jit(jax.grad(...))``.

Each function takes the kernel's positional arguments and returns the same float64 value as the plain loop.
Loops over data become whole-array expressions; a true recurrence stays a loop, as ``lax.scan`` (fixed trip
count: pendulum, pendulum_batch) or ``lax.while_loop`` (the convergence ``break`` of bgd_hyperopt); a loop over
a handful of static items (Horner's 9 coefficients) is a Python loop unrolled at trace time, as ``jnp.polyval``
does.  Written as a JAX user who knows the library writes them: ``jax.nn.softplus``, ``log_softmax``,
``logsumexp``, ``jax.scipy.special.ndtr``, masks made safe before ``sqrt``/division so the unused branch
cannot put a NaN into the gradient.

:data:`FORWARD_MODE` lists the kernels differentiated with ``jax.jacfwd`` instead of ``jax.grad``: reverse mode
through ``lax.while_loop`` is not defined in JAX (the trip count is data-dependent), and forward mode is what
a JAX user writes for one scalar input (bgd_hyperopt's learning rate).
"""

from __future__ import annotations

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.scipy.special import logsumexp, ndtr  # noqa: E402

FORWARD_MODE = frozenset({"bgd_hyperopt"})


def bgd_hyperopt(lr, x, y, max_steps, tol):
    m = x.shape[0]

    def cond(state):
        w, b, k, done = state
        return (k < max_steps) & ~done

    def body(state):
        w, b, k, _ = state
        r = w * x + b - y
        dw = lr * jnp.sum(r * x) / m
        db = lr * jnp.sum(r) / m
        return w - dw, b - db, k + 1, jnp.abs(dw) + jnp.abs(db) < tol

    zero = jnp.zeros((), dtype=jnp.result_type(lr, x))
    w, b, _, _ = lax.while_loop(cond, body, (zero, zero, 0, jnp.array(False)))
    r = w * x + b - y
    return jnp.sum(r * r) / m


def black_scholes(spot, strike, vol, tau, r):
    sq = vol * jnp.sqrt(tau)
    d1 = (jnp.log(spot / strike) + (r + 0.5 * vol * vol) * tau) / sq
    d2 = d1 - sq
    return jnp.sum(spot * ndtr(d1) - strike * jnp.exp(-r * tau) * ndtr(d2))


def brachistochrone(y, y_end, length, g):
    h = length / (y.shape[0] + 1)
    ys = jnp.concatenate([jnp.zeros(1), y, jnp.full(1, y_end)])
    v = jnp.concatenate([jnp.zeros(1), jnp.sqrt(-2.0 * g * y), jnp.full(1, math.sqrt(-2.0 * g * y_end))])
    dy = jnp.diff(ys)
    return jnp.sum(2.0 * jnp.sqrt(h * h + dy * dy) / (v[:-1] + v[1:]))


def gmm(x, mu, log_sigma, logits):
    log_w = jax.nn.log_softmax(logits) - log_sigma - 0.5 * math.log(2.0 * math.pi)
    z = (x[:, None] - mu[None, :]) * jnp.exp(-log_sigma)[None, :]
    return jnp.sum(logsumexp(log_w[None, :] - 0.5 * z * z, axis=1))


def hmc(q, X, y, prior_var):
    return 0.5 * jnp.dot(q, q) / prior_var + jnp.sum(jax.nn.softplus(-y * (X @ q)))


def _springs(dx, dy, k, rest):
    d = jnp.sqrt(dx * dx + dy * dy) - rest
    return 0.5 * k * jnp.sum(d * d)


def hookean_spring(px, py, k, rest):
    return (_springs(px[:, 1:] - px[:, :-1], py[:, 1:] - py[:, :-1], k, rest)
            + _springs(px[1:, :] - px[:-1, :], py[1:, :] - py[:-1, :], k, rest)
            + _springs(px[1:, 1:] - px[:-1, :-1], py[1:, 1:] - py[:-1, :-1], k, rest * math.sqrt(2.0)))


def horner_fit(c, xs, ys):
    p = jnp.zeros_like(xs)
    for k in range(c.shape[0]):          # 9 static coefficients: unrolled at trace time, like jnp.polyval
        p = p * xs + c[k]
    r = p - ys
    return jnp.mean(r * r)


def logreg_nll(w, b, X, y):
    z = X @ w + b
    return jnp.mean(jax.nn.softplus(z) - y * z)


def pairwise_energy(x, y, z):
    n = x.shape[0]
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    dz = z[:, None] - z[None, :]
    r2 = dx * dx + dy * dy + dz * dz
    upper = jnp.triu(jnp.ones((n, n), dtype=bool), 1)
    inside = upper & (r2 < 2.5 * 2.5)
    inv6 = 1.0 / jnp.where(inside, r2, 1.0) ** 3          # safe where masked: no inf in the cotangent
    inv6_c = 1.0 / 2.5**6
    shift = 4.0 * (inv6_c * inv6_c - inv6_c)
    return jnp.sum(jnp.where(inside, 4.0 * (inv6 * inv6 - inv6) - shift, 0.0))


def _euler(theta0, damping, dt, n_steps):
    def step(state, _):
        theta, omega = state
        alpha = -9.81 * jnp.sin(theta) - damping * omega
        return (theta + dt * omega, omega + dt * alpha), None

    (theta, omega), _ = lax.scan(step, (theta0, jnp.zeros_like(theta0)), None, length=n_steps)
    return 0.5 * omega * omega + 9.81 * (1.0 - jnp.cos(theta))


def pendulum(theta0, damping, dt, n_steps):
    return _euler(theta0, damping, dt, n_steps)


def pendulum_batch(theta0, damping, dt, n_steps):
    return jnp.sum(_euler(theta0, damping, dt, n_steps))


def piecewise_sum(x):
    return jnp.sum(jnp.where(x > 0, x * x, jnp.sin(x)))


def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return jnp.sum(100.0 * a * a + b * b)


# --- the kernels added after the paper's thirteen ------------------------------------------------------------

def _affine_scan(a, b):
    """s_k = a·s_{k−1} + b_k from s_{−1} = 0: the first-order linear recurrence as ``lax.scan``."""
    def step(s, bk):
        s = a * s + bk
        return s, s

    return lax.scan(step, jnp.zeros((), dtype=b.dtype), b)[1]


def iir_filter(x, y, a, g):
    s = _affine_scan(a, g * x)
    return jnp.sum((s - y) ** 2)


def exp_smoothing(x, alpha):
    s = _affine_scan(1.0 - alpha, alpha * x)                   # s_1 .. s_n
    e = x - jnp.concatenate([jnp.zeros(1), s[:-1]])            # x_i − s_i
    return jnp.sum(e * e) / x.shape[0]


def conv1d(x, w, y):
    r = jnp.correlate(x, w, mode="valid") - y
    return jnp.sum(r * r)


def segment_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = jnp.clip(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0, 1.0)
    ex, ey = px - (ax + t * dx), py - (ay + t * dy)
    return jnp.max(ex * ex + ey * ey, initial=0.0)


def barrier_option(z, s0, sigma, level):
    paths = s0 * jnp.exp(jnp.cumsum(sigma * z - 0.5 * sigma * sigma, axis=1))
    alive = ~jnp.any(paths > level, axis=1)
    return jnp.sum(jnp.where(alive, jnp.maximum(paths[:, -1] - s0, 0.0), 0.0)) / z.shape[0]


def asian_option(z, s0, sigma, strike):
    avg = jnp.mean(s0 * jnp.exp(sigma * jnp.cumsum(z, axis=1)), axis=1)
    return jnp.sum(jnp.maximum(avg - strike, 0.0)) / z.shape[0]

"""PyTensor's best form of each kernel: the vectorized graph, differentiated by ``pytensor.grad``.

Each function takes symbolic tensors where the kernel takes arrays or a differentiated scalar, and the plain
Python numbers elsewhere (constants of the graph, as a PyTensor user bakes in ``n_steps``), and returns the
symbolic scalar loss.  The graphs are the JAX rewrites' (:mod:`.jax_forms`) in PyTensor's spelling:
``pt.switch`` for ``where``, ``pt.softplus``, ``log_softmax``, ``pt.logsumexp``, ``pytensor.scan`` for the
recurrences (with ``until`` for bgd_hyperopt's convergence ``break``: PyTensor differentiates through a
``scan`` that stops early, by its recorded trip count).  The normal CDF is written through ``erf``, as the
kernel does (PyTensor has no ``ndtr``).
"""

from __future__ import annotations

import inspect
import math

import pytensor
import pytensor.tensor as pt
from pytensor.scan.utils import until
from pytensor.tensor.special import log_softmax


def _scan(step, outputs_info, n_steps=None, non_sequences=(), sequences=()):
    """The outputs of ``pytensor.scan`` (without the updates dictionary, which none of these steps makes)."""
    kw = dict(outputs_info=outputs_info, non_sequences=list(non_sequences), sequences=list(sequences),
              n_steps=n_steps, strict=True)
    if "return_updates" in inspect.signature(pytensor.scan).parameters:     # PyTensor >= 2.36 or so
        return pytensor.scan(step, return_updates=False, **kw)
    outputs, _ = pytensor.scan(step, **kw)
    return outputs


def bgd_hyperopt(lr, x, y, max_steps, tol):
    m = x.shape[0]

    def step(w, b, lr, x, y):
        r = w * x + b - y
        dw = lr * pt.sum(r * x) / m
        db = lr * pt.sum(r) / m
        return [w - dw, b - db], until(pt.abs(dw) + pt.abs(db) < tol)

    zero = pt.constant(0.0, dtype="float64")
    w, b = _scan(step, [zero, zero], max_steps, (lr, x, y))
    r = w[-1] * x + b[-1] - y
    return pt.sum(r * r) / m


def _ncdf(z):
    return 0.5 * (1.0 + pt.erf(z / math.sqrt(2.0)))


def black_scholes(spot, strike, vol, tau, r):
    sq = vol * pt.sqrt(tau)
    d1 = (pt.log(spot / strike) + (r + 0.5 * vol * vol) * tau) / sq
    d2 = d1 - sq
    return pt.sum(spot * _ncdf(d1) - strike * pt.exp(-r * tau) * _ncdf(d2))


def brachistochrone(y, y_end, length, g):
    h = length / (y.type.shape[0] + 1)
    ys = pt.concatenate([pt.zeros(1), y, pt.as_tensor([y_end])])
    v = pt.concatenate([pt.zeros(1), pt.sqrt(-2.0 * g * y), pt.as_tensor([math.sqrt(-2.0 * g * y_end)])])
    dy = ys[1:] - ys[:-1]
    return pt.sum(2.0 * pt.sqrt(h * h + dy * dy) / (v[:-1] + v[1:]))


def gmm(x, mu, log_sigma, logits):
    log_w = log_softmax(logits) - log_sigma - 0.5 * math.log(2.0 * math.pi)
    z = (x[:, None] - mu[None, :]) * pt.exp(-log_sigma)[None, :]
    return pt.sum(pt.logsumexp(log_w[None, :] - 0.5 * z * z, axis=1))


def hmc(q, X, y, prior_var):
    return 0.5 * pt.dot(q, q) / prior_var + pt.sum(pt.softplus(-y * pt.dot(X, q)))


def _springs(dx, dy, k, rest):
    d = pt.sqrt(dx * dx + dy * dy) - rest
    return 0.5 * k * pt.sum(d * d)


def hookean_spring(px, py, k, rest):
    return (_springs(px[:, 1:] - px[:, :-1], py[:, 1:] - py[:, :-1], k, rest)
            + _springs(px[1:, :] - px[:-1, :], py[1:, :] - py[:-1, :], k, rest)
            + _springs(px[1:, 1:] - px[:-1, :-1], py[1:, 1:] - py[:-1, :-1], k, rest * math.sqrt(2.0)))


def horner_fit(c, xs, ys):
    p = pt.zeros_like(xs)
    for k in range(c.type.shape[0]):     # 9 static coefficients: one fused elementwise graph
        p = p * xs + c[k]
    r = p - ys
    return pt.mean(r * r)


def logreg_nll(w, b, X, y):
    z = pt.dot(X, w) + b
    return pt.mean(pt.softplus(z) - y * z)


def pairwise_energy(x, y, z):
    n = x.type.shape[0]
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    dz = z[:, None] - z[None, :]
    r2 = dx * dx + dy * dy + dz * dz
    idx = pt.arange(n)
    upper = pt.lt(idx[:, None], idx[None, :])
    inside = pt.and_(upper, pt.lt(r2, 2.5 * 2.5))
    inv6 = 1.0 / pt.switch(inside, r2, 1.0) ** 3
    inv6_c = 1.0 / 2.5**6
    shift = 4.0 * (inv6_c * inv6_c - inv6_c)
    return pt.sum(pt.switch(inside, 4.0 * (inv6 * inv6 - inv6) - shift, 0.0))


def _euler(theta0, damping, dt, n_steps):
    def step(theta, omega, damping):
        alpha = -9.81 * pt.sin(theta) - damping * omega
        return [theta + dt * omega, omega + dt * alpha]

    theta, omega = _scan(step, [theta0, pt.zeros_like(theta0)], n_steps, (damping,))
    theta, omega = theta[-1], omega[-1]
    return 0.5 * omega * omega + 9.81 * (1.0 - pt.cos(theta))


def pendulum(theta0, damping, dt, n_steps):
    return _euler(theta0, damping, dt, n_steps)


def pendulum_batch(theta0, damping, dt, n_steps):
    return pt.sum(_euler(theta0, damping, dt, n_steps))


def piecewise_sum(x):
    return pt.sum(pt.switch(pt.gt(x, 0), x * x, pt.sin(x)))


def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return pt.sum(100.0 * a * a + b * b)


# --- the kernels added after the paper's thirteen ------------------------------------------------------------

def _affine_scan(a, b):
    """s_k = a·s_{k−1} + b_k from s_{−1} = 0, as ``pytensor.scan`` over b."""
    def step(bk, s, a):
        return a * s + bk

    return _scan(step, [pt.constant(0.0, dtype="float64")], sequences=(b,), non_sequences=(a,))


def iir_filter(x, y, a, g):
    s = _affine_scan(a, g * x)
    return pt.sum((s - y) ** 2)


def exp_smoothing(x, alpha):
    s = _affine_scan(1.0 - alpha, alpha * x)                   # s_1 .. s_n
    e = x - pt.concatenate([pt.zeros(1), s[:-1]])              # x_i − s_i
    return pt.sum(e * e) / x.type.shape[0]


def conv1d(x, w, y):
    taps, n = w.type.shape[0], y.type.shape[0]
    out = w[0] * x[0:n]
    for k in range(1, taps):             # 7 static taps: one fused elementwise graph of shifted slices
        out = out + w[k] * x[k:k + n]
    r = out - y
    return pt.sum(r * r)


def segment_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = pt.clip(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0, 1.0)
    ex, ey = px - (ax + t * dx), py - (ay + t * dy)
    return pt.maximum(pt.max(ex * ex + ey * ey), 0.0)


def barrier_option(z, s0, sigma, level):
    paths = s0 * pt.exp(pt.cumsum(sigma * z - 0.5 * sigma * sigma, axis=1))
    alive = pt.invert(pt.any(pt.gt(paths, level), axis=1))
    return pt.sum(pt.switch(alive, pt.maximum(paths[:, -1] - s0, 0.0), 0.0)) / z.type.shape[0]


def asian_option(z, s0, sigma, strike):
    avg = pt.mean(s0 * pt.exp(sigma * pt.cumsum(z, axis=1)), axis=1)
    return pt.sum(pt.maximum(avg - strike, 0.0)) / z.type.shape[0]

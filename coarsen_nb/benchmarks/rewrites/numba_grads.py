"""Numba's best form of each kernel: a hand-written ``@njit`` gradient loop.

What an engineer who writes the derivative by hand in Numba writes: one pass over the data that computes the
forward quantities and accumulates the adjoint (or, for one or two scalar inputs and a sequential recurrence,
carries the forward tangents: no tape at all), scalars in registers, no temporary arrays beyond the outputs
(gmm keeps one scratch row of its 8 components).  ``fastmath`` stays off, so the arithmetic is IEEE like the
other methods'.  Each function takes the kernel's positional arguments and returns the gradient w.r.t.
``META["wrt"]`` in that order; the forward a Numba user runs is their own loop under ``@njit``
(:func:`coarsen_nb.benchmarks.rewrites.numba_by_hand`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@njit
def bgd_hyperopt(lr, x, y, max_steps, tol):
    """One scalar input: the tangent d/d lr carried beside the descent (as the hand-written NumPy one)."""
    m = x.shape[0]
    w = b = tw = tb = 0.0
    k = 0
    while k < max_steps:
        gw = gb = tgw = tgb = 0.0
        for i in range(m):
            r = w * x[i] + b - y[i]
            tr = tw * x[i] + tb
            gw += r * x[i]
            gb += r
            tgw += tr * x[i]
            tgb += tr
        dw = lr * gw / m
        db = lr * gb / m
        tw -= (gw + lr * tgw) / m
        tb -= (gb + lr * tgb) / m
        w -= dw
        b -= db
        k += 1
        if abs(dw) + abs(db) < tol:
            break
    g = 0.0
    for i in range(m):
        g += 2.0 * (w * x[i] + b - y[i]) * (tw * x[i] + tb)
    return g / m


@njit
def black_scholes(spot, strike, vol, tau, r):
    n = spot.shape[0]
    delta = np.empty(n)
    vega = np.empty(n)
    rho = 0.0
    for i in range(n):
        st = math.sqrt(tau[i])
        sq = vol[i] * st
        d1 = (math.log(spot[i] / strike[i]) + (r + 0.5 * vol[i] * vol[i]) * tau[i]) / sq
        d2 = d1 - sq
        delta[i] = 0.5 * (1.0 + math.erf(d1 * _SQRT1_2))
        vega[i] = spot[i] * math.exp(-0.5 * d1 * d1) * _INV_SQRT_2PI * st
        rho += strike[i] * tau[i] * math.exp(-r * tau[i]) * 0.5 * (1.0 + math.erf(d2 * _SQRT1_2))
    return delta, vega, rho


@njit
def brachistochrone(y, y_end, length, g):
    """Segment k joins points k and k + 1 (point 0 the fixed start, point n + 1 the end)."""
    n = y.shape[0]
    h = length / (n + 1)
    out = np.zeros(n)
    y_prev = v_prev = dv_prev = 0.0
    for k in range(n + 1):
        yk = y[k] if k < n else y_end
        v = math.sqrt(-2.0 * g * yk)
        dv = -g / v
        dy = yk - y_prev
        s = math.sqrt(h * h + dy * dy)
        vs = v_prev + v
        dt_ds = 2.0 / vs
        dt_dvs = -2.0 * s / (vs * vs)
        if k > 0:
            out[k - 1] += dt_ds * (-dy / s) + dt_dvs * dv_prev
        if k < n:
            out[k] += dt_ds * (dy / s) + dt_dvs * dv
        y_prev, v_prev, dv_prev = yk, v, dv
    return out


@njit
def gmm(x, mu, log_sigma, logits):
    kc = mu.shape[0]
    top = logits.max()
    w = np.exp(logits - top)
    w /= w.sum()
    inv_sigma = np.exp(-log_sigma)
    log_w = np.log(w) - log_sigma - 0.5 * math.log(2.0 * math.pi)
    g_mu = np.zeros(kc)
    g_ls = np.zeros(kc)
    g_lg = np.zeros(kc)
    a = np.empty(kc)
    for i in range(x.shape[0]):
        m = -np.inf
        for k in range(kc):
            z = (x[i] - mu[k]) * inv_sigma[k]
            a[k] = log_w[k] - 0.5 * z * z
            m = max(m, a[k])
        s = 0.0
        for k in range(kc):
            a[k] = math.exp(a[k] - m)
            s += a[k]
        for k in range(kc):
            resp = a[k] / s
            z = (x[i] - mu[k]) * inv_sigma[k]
            g_mu[k] += resp * z * inv_sigma[k]
            g_ls[k] += resp * (z * z - 1.0)
            g_lg[k] += resp
    g_lg -= x.shape[0] * w
    return g_mu, g_ls, g_lg


@njit
def hmc(q, X, y, prior_var):
    d = q.shape[0]
    g = q / prior_var
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(d):
            z += X[i, j] * q[j]
        m = y[i] * z
        e = math.exp(-abs(m))
        sig_neg = e / (1.0 + e) if m > 0 else 1.0 / (1.0 + e)     # σ(−m)
        c = -y[i] * sig_neg
        for j in range(d):
            g[j] += c * X[i, j]
    return g


@njit
def _spring_grad(gx, gy, px, py, i0, j0, i1, j1, k, rest):
    dx = px[i1, j1] - px[i0, j0]
    dy = py[i1, j1] - py[i0, j0]
    length = math.sqrt(dx * dx + dy * dy)
    coef = k * (length - rest) / length
    gx[i1, j1] += coef * dx
    gy[i1, j1] += coef * dy
    gx[i0, j0] -= coef * dx
    gy[i0, j0] -= coef * dy


@njit
def hookean_spring(px, py, k, rest):
    n = px.shape[0]
    diag = rest * math.sqrt(2.0)
    gx = np.zeros_like(px)
    gy = np.zeros_like(py)
    for i in range(n):
        for j in range(n):
            if j + 1 < n:
                _spring_grad(gx, gy, px, py, i, j, i, j + 1, k, rest)
            if i + 1 < n:
                _spring_grad(gx, gy, px, py, i, j, i + 1, j, k, rest)
            if i + 1 < n and j + 1 < n:
                _spring_grad(gx, gy, px, py, i, j, i + 1, j + 1, k, diag)
    return gx, gy


@njit
def horner_fit(c, xs, ys):
    n = xs.shape[0]
    nc = c.shape[0]
    g = np.zeros(nc)
    for i in range(n):
        p = 0.0
        for k in range(nc):
            p = p * xs[i] + c[k]
        r = 2.0 * (p - ys[i]) / n
        pw = r
        for k in range(nc - 1, -1, -1):          # dp/dc_k = x^(D−k)
            g[k] += pw
            pw *= xs[i]
    return g


@njit
def logreg_nll(w, b, X, y):
    n, d = X.shape
    g = np.zeros(d)
    gb = 0.0
    for i in range(n):
        z = b
        for j in range(d):
            z += X[i, j] * w[j]
        e = math.exp(-abs(z))
        sig = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
        r = (sig - y[i]) / n
        for j in range(d):
            g[j] += r * X[i, j]
        gb += r
    return g, gb


@njit
def pairwise_energy(x, y, z):
    n = x.shape[0]
    gx = np.zeros(n)
    gy = np.zeros(n)
    gz = np.zeros(n)
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            dz = z[i] - z[j]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < 2.5 * 2.5:
                inv2 = 1.0 / r2
                inv6 = inv2 * inv2 * inv2
                coef = 4.0 * (-12.0 * inv6 * inv6 + 6.0 * inv6) * inv2      # (dE/dr)/r
                gx[i] += coef * dx
                gx[j] -= coef * dx
                gy[i] += coef * dy
                gy[j] -= coef * dy
                gz[i] += coef * dz
                gz[j] -= coef * dz
    return gx, gy, gz


@njit
def pendulum(theta0, damping, dt, n_steps):
    """Two scalar inputs and a sequential recurrence: forward tangents in the same loop, no tape."""
    theta, omega = theta0, 0.0
    a_th, a_om = 1.0, 0.0          # d/d theta0
    c_th, c_om = 0.0, 0.0          # d/d damping
    for _ in range(n_steps):
        cos = math.cos(theta)
        a_alpha = -9.81 * cos * a_th - damping * a_om
        c_alpha = -9.81 * cos * c_th - damping * c_om - omega
        alpha = -9.81 * math.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
        a_th, a_om = a_th + dt * a_om, a_om + dt * a_alpha
        c_th, c_om = c_th + dt * c_om, c_om + dt * c_alpha
    de_th = 9.81 * math.sin(theta)
    return omega * a_om + de_th * a_th, omega * c_om + de_th * c_th


@njit
def pendulum_batch(theta0, damping, dt, n_steps):
    """Independent pendulums: each one's own tangents (θ0 and damping) carried through its steps."""
    out = np.empty_like(theta0)
    g_damping = 0.0
    for b in range(theta0.shape[0]):
        out[b], g_c = pendulum(theta0[b], damping, dt, n_steps)
        g_damping += g_c
    return out, g_damping


@njit
def piecewise_sum(x):
    g = np.empty_like(x)
    for i in range(x.shape[0]):
        g[i] = 2.0 * x[i] if x[i] > 0 else math.cos(x[i])
    return g


@njit
def rosenbrock(x):
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        g[i] += -400.0 * a * x[i] - 2.0 * b
        g[i + 1] += 200.0 * a
    return g


# --- the kernels added after the paper's thirteen ------------------------------------------------------------

@njit
def iir_filter(x, y, a, g):
    """The forward stores the filter's output in the x-gradient's array; the adjoint λ_k = 2(s_k − y_k) +
    a·λ_{k+1} runs backwards over it."""
    n = x.shape[0]
    gx = np.empty(n)
    s = 0.0
    for k in range(n):
        s = a * s + g * x[k]
        gx[k] = s
    lam = ga = gg = 0.0
    for k in range(n - 1, -1, -1):
        lam = 2.0 * (gx[k] - y[k]) + a * lam
        s_prev = gx[k - 1] if k > 0 else 0.0
        ga += lam * s_prev
        gg += lam * x[k]
        gx[k] = g * lam
    return gx, ga, gg


@njit
def exp_smoothing(x, alpha):
    """The forward stores the errors e_i = x_i − s_i in the x-gradient's array; the adjoint of the level,
    sb = ∂L/∂s_{i+1}, runs backwards over them."""
    n = x.shape[0]
    gx = np.empty(n)
    s = 0.0
    for i in range(n):
        gx[i] = x[i] - s
        s = alpha * x[i] + (1.0 - alpha) * s
    sb = ga = 0.0
    for i in range(n - 1, -1, -1):
        e = gx[i]
        eb = 2.0 * e / n
        gx[i] = eb + alpha * sb
        ga += sb * e
        sb = -eb + (1.0 - alpha) * sb
    return gx, ga


@njit
def conv1d(x, w, y):
    taps = w.shape[0]
    gx = np.zeros(x.shape[0])
    gw = np.zeros(taps)
    for i in range(y.shape[0]):
        acc = 0.0
        for k in range(taps):
            acc += w[k] * x[i + k]
        r = 2.0 * (acc - y[i])
        for k in range(taps):
            gw[k] += r * x[i + k]
            gx[i + k] += r * w[k]
    return gx, gw


@njit
def segment_distance(px, py, ax, ay, bx, by):
    """Only the first arg-maximum point counts; there ∂d/∂a = −2(1 − t)·e and ∂d/∂b = −2t·e."""
    dx = bx - ax
    dy = by - ay
    l2 = dx * dx + dy * dy
    worst = 0.0
    ti = exi = eyi = 0.0
    for i in range(px.shape[0]):
        t = min(max(((px[i] - ax) * dx + (py[i] - ay) * dy) / l2, 0.0), 1.0)
        ex = px[i] - (ax + t * dx)
        ey = py[i] - (ay + t * dy)
        d = ex * ex + ey * ey
        if d > worst:
            worst, ti, exi, eyi = d, t, ex, ey
    return -2.0 * (1.0 - ti) * exi, -2.0 * (1.0 - ti) * eyi, -2.0 * ti * exi, -2.0 * ti * eyi


@njit
def barrier_option(z, s0, sigma, level):
    n_paths, n_steps = z.shape
    g_s0 = g_sigma = 0.0
    for p in range(n_paths):
        s = s0
        alive = True
        dz = 0.0                                   # Σ_t (z_t − σ) = ∂ log S_T / ∂σ
        for t in range(n_steps):
            s = s * math.exp(sigma * z[p, t] - 0.5 * sigma * sigma)
            dz += z[p, t] - sigma
            if s > level:
                alive = False
        if alive and s > s0:
            g_s0 += s / s0 - 1.0
            g_sigma += s * dz
    return g_s0 / n_paths, g_sigma / n_paths


@njit
def asian_option(z, s0, sigma, strike):
    n_paths, n_steps = z.shape
    g_s0 = g_sigma = g_strike = 0.0
    for p in range(n_paths):
        s = s0
        w = running = d_sigma = 0.0
        for t in range(n_steps):
            w += z[p, t]
            s = s * math.exp(sigma * z[p, t])
            running += s
            d_sigma += s * w                       # ∂S_t/∂σ = S_t·Σ_{u≤t} z_u
        avg = running / n_steps
        if avg > strike:
            g_s0 += avg / s0
            g_sigma += d_sigma / n_steps
            g_strike -= 1.0
    return g_s0 / n_paths, g_sigma / n_paths, g_strike / n_paths

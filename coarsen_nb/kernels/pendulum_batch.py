"""A batch of damped pendulums by explicit Euler, whole arrays updated each step.

The same physics as :mod:`coarsen_nb.kernels.pendulum` (θ'' = −(g/ℓ) sin θ − c θ', from
rest, 10 s in ``n_steps`` = 1000 Euler steps), but for a batch of B initial
angles at once: the loop runs over time steps and each update is an
elementwise array expression (θ ← θ + dt·ω, ...), as a NumPy user writes an
ensemble simulation.  Returns the total final energy Σ_b (½ω_b² +
(g/ℓ)(1 − cos θ_b)).  ``wrt`` is ("theta0", "damping"): per-pendulum
sensitivity to its initial angle, and the ensemble's sensitivity to the
shared damping.
"""

import numpy as np

META = dict(
    name="pendulum_batch",
    wrt=("theta0", "damping"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="pendulums in the batch (1000 Euler steps)",
    loop_kind="array-recurrence",
    paper=False,
    description="batch of explicit-Euler damped pendulums as array updates; total final energy w.r.t. "
                "initial angles and damping",
)

G_OVER_L = 9.81            # g/ℓ; written as a literal in the function, as a user would
STEPS = 1000


def pendulum_batch(theta0, damping, dt, n_steps):
    theta = theta0.copy()
    omega = np.zeros_like(theta0)
    for _ in range(n_steps):
        alpha = -9.81 * np.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
    return np.sum(0.5 * omega * omega + 9.81 * (1.0 - np.cos(theta)))


def grad(theta0, damping, dt, n_steps):
    """Elementwise tangents: each pendulum's d/dθ0 is diagonal; d/dc is one more tangent array."""
    theta, omega = theta0.copy(), np.zeros_like(theta0)
    a_th, a_om = np.ones_like(theta0), np.zeros_like(theta0)    # d/d theta0 (own pendulum)
    c_th, c_om = np.zeros_like(theta0), np.zeros_like(theta0)   # d/d damping
    for _ in range(n_steps):
        cos = np.cos(theta)
        a_alpha = -G_OVER_L * cos * a_th - damping * a_om
        c_alpha = -G_OVER_L * cos * c_th - damping * c_om - omega
        alpha = -G_OVER_L * np.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
        a_th, a_om = a_th + dt * a_om, a_om + dt * a_alpha
        c_th, c_om = c_th + dt * c_om, c_om + dt * c_alpha
    de_th = G_OVER_L * np.sin(theta)
    return omega * a_om + de_th * a_th, float(np.sum(omega * c_om + de_th * c_th))


def make_inputs(size, seed=0, n_steps=STEPS):
    rng = np.random.default_rng(seed)
    theta0 = rng.uniform(0.5, 2.5, size)
    damping = float(rng.uniform(0.05, 0.3))
    return (theta0, damping, 10.0 / n_steps, n_steps)

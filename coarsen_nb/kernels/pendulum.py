"""Damped pendulum integrated by explicit Euler: final energy w.r.t. initial angle and damping.

θ'' = −(g/ℓ) sin θ − c θ', released at rest from θ0, integrated for a fixed
10 s of simulated time in ``n_steps`` explicit-Euler steps (dt = 10/n_steps),
returning the final mechanical energy per unit mass ½ω² + (g/ℓ)(1 − cos θ).
The state (θ, ω) is scalar and the update is nonlinear, so the loop is a
recurrence with no closed form (the paper's C5): derivatives need one coarse
step per iteration.  ``wrt`` is ("theta0", "damping"): the sensitivities a
parameter fit of the simulation needs.  The hand-written gradient is the
forward tangent recurrence in two directions (a scalar loop: there is nothing
to vectorize in a sequential scalar recurrence).
"""

import math

import numpy as np

META = dict(
    name="pendulum",
    wrt=("theta0", "damping"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=200,
    size_name="Euler steps (10 s simulated)",
    loop_kind="recurrence",
    paper=False,
    description="explicit-Euler damped pendulum, scalar state; final energy w.r.t. initial angle "
                "and damping",
)

G_OVER_L = 9.81            # g/ℓ; written as a literal in the function, as a user would


def pendulum(theta0, damping, dt, n_steps):
    theta = theta0
    omega = 0.0
    for _ in range(n_steps):
        alpha = -9.81 * math.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
    return 0.5 * omega * omega + 9.81 * (1.0 - math.cos(theta))


def grad(theta0, damping, dt, n_steps):
    """Tangents (dθ, dω) for seed directions θ0 and c, propagated through each Euler step."""
    theta, omega = theta0, 0.0
    t_th = np.array([1.0, 0.0])          # d theta / d (theta0, damping)
    t_om = np.array([0.0, 0.0])          # d omega / d (theta0, damping)
    dparam = np.array([0.0, 1.0])        # d damping / d (theta0, damping)
    for _ in range(n_steps):
        c = math.cos(theta)
        t_alpha = -G_OVER_L * c * t_th - damping * t_om - omega * dparam
        alpha = -G_OVER_L * math.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
        t_th, t_om = t_th + dt * t_om, t_om + dt * t_alpha
    g = omega * t_om + G_OVER_L * math.sin(theta) * t_th
    return float(g[0]), float(g[1])


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    theta0 = float(rng.uniform(0.5, 2.5))
    damping = float(rng.uniform(0.05, 0.3))
    return (theta0, damping, 10.0 / size, size)

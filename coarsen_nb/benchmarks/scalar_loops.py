"""Iterated scalar loops: the gradient against the plain Python forward and against the compiled forward (issue 14).

A loop whose body has no closed form (a nonlinear recurrence, an ODE integrator, Newton's method)
stays iterated: one coarse step per iteration, its state on a tape.  Under ``backend="numpy"``
that loop is interpreted Python, so its gradient costs many plain forwards; under
``backend="numba"`` the loop, the tape and the reverse sweep are compiled.

``PROGRAMS`` holds ``(name, function, wrt, make_args(n))``, each written as a user writes it.  Run as
``python -m coarsen_nb.benchmarks.scalar_loops [--size N] [--repeats R]``.  For each program every
gradient is checked first (numba against numpy to 1e-10, numpy against central differences),
then the methods are timed interleaved, and the medians are printed with the ratios the issue
names: gradient ÷ plain Python forward, and gradient ÷ compiled forward (the user's function under
``numba.njit``, as a user who compiled the forward by hand would run it).  Compile time is the
first call in this process (Numba's disk cache is warm after the first run; ``COARSEN_NB_CACHE``
points it elsewhere).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np


def damped_sin(a, s0, n):
    s = s0
    for i in range(n):  # noqa: B007 (written as a user writes it)
        s = math.sin(s) * 0.999 + a * 0.001
    return s


def lorenz_rk4(sigma, rho, beta, n):
    x, y, z = 1.0, 1.0, 1.0
    h = 2.0 / n       # two time units: the gradient of a chaotic system over a horizon it is meaningful on
    for i in range(n):  # noqa: B007 (written as a user writes it)
        k1x = sigma * (y - x)
        k1y = x * (rho - z) - y
        k1z = x * y - beta * z
        x2, y2, z2 = x + 0.5 * h * k1x, y + 0.5 * h * k1y, z + 0.5 * h * k1z
        k2x = sigma * (y2 - x2)
        k2y = x2 * (rho - z2) - y2
        k2z = x2 * y2 - beta * z2
        x3, y3, z3 = x + 0.5 * h * k2x, y + 0.5 * h * k2y, z + 0.5 * h * k2z
        k3x = sigma * (y3 - x3)
        k3y = x3 * (rho - z3) - y3
        k3z = x3 * y3 - beta * z3
        x4, y4, z4 = x + h * k3x, y + h * k3y, z + h * k3z
        k4x = sigma * (y4 - x4)
        k4y = x4 * (rho - z4) - y4
        k4z = x4 * y4 - beta * z4
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        y = y + h / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y)
        z = z + h / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z)
    return x + y + z


def pendulum_rk4(theta0, damping, n):
    theta, omega = theta0, 0.0
    dt = 10.0 / n
    for i in range(n):  # noqa: B007 (written as a user writes it)
        a1 = -9.81 * math.sin(theta) - damping * omega
        t2, w2 = theta + 0.5 * dt * omega, omega + 0.5 * dt * a1
        a2 = -9.81 * math.sin(t2) - damping * w2
        t3, w3 = theta + 0.5 * dt * w2, omega + 0.5 * dt * a2
        a3 = -9.81 * math.sin(t3) - damping * w3
        t4, w4 = theta + dt * w3, omega + dt * a3
        a4 = -9.81 * math.sin(t4) - damping * w4
        theta = theta + dt / 6.0 * (omega + 2.0 * w2 + 2.0 * w3 + w4)
        omega = omega + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return 0.5 * omega * omega + 9.81 * (1.0 - math.cos(theta))


def newton_cbrt(a, n):
    x = 1.0 + a / 3.0
    for i in range(n):  # noqa: B007 (written as a user writes it)
        x = x - (x * x * x - a) / (3.0 * x * x)
    return x


def logistic_map(r, x0, n):
    x = x0
    acc = 0.0
    for i in range(n):  # noqa: B007 (written as a user writes it)
        x = r * x * (1.0 - x)
        acc += math.log(abs(r * (1.0 - 2.0 * x)) + 1e-12)
    return acc / n


def iir_biquad(b0, b1, a1, a2, x):
    """A second-order IIR filter (direct form I) over a signal, the loss its output's energy."""
    y1, y2, x1 = 0.0, 0.0, 0.0
    energy = 0.0
    for i in range(x.shape[0]):
        y = b0 * x[i] + b1 * x1 - a1 * y1 - a2 * y2
        x1 = x[i]
        y2 = y1
        y1 = y
        energy += y * y
    return energy / x.shape[0]


def _signal(n):
    return np.sin(np.linspace(0.0, 40.0 * np.pi, n)) + 0.3 * np.cos(np.linspace(0.0, 7.0, n))


PROGRAMS = (
    ("damped_sin", damped_sin, ("a", "s0"), lambda n: (0.3, 0.2, n)),
    ("lorenz_rk4", lorenz_rk4, ("sigma", "rho", "beta"), lambda n: (10.0, 28.0, 8.0 / 3.0, n)),
    ("pendulum_rk4", pendulum_rk4, ("theta0", "damping"), lambda n: (1.0, 0.1, n)),
    ("newton_cbrt", newton_cbrt, ("a",), lambda n: (5.0, n)),
    ("logistic_map", logistic_map, ("r", "x0"), lambda n: (2.8, 0.3, n)),
    ("iir_biquad", iir_biquad, ("b0", "b1", "a1", "a2"), lambda n: (0.2, 0.1, -1.2, 0.5, _signal(n))),
)


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


def _central(fn, args, i, eps=1e-6):
    h = eps * max(1.0, abs(args[i]))
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (fn(*up) - fn(*down)) / (2 * h)


def check(name, fn, wrt, args, fd_rtol=1e-4):
    """Both backends' gradients, checked (numba = numpy to 1e-10, numpy = central differences); returns the
    compiled functions and the first-call (compile) seconds of each."""
    import coarsen_nb as cn

    compiled, first = {}, {}
    for backend in ("numpy", "numba"):
        f = cn.coarsen(fn, wrt=wrt, backend=backend)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # a NumbaFallbackWarning is a failure here
            f.grad(*args)
        first[backend] = time.perf_counter() - t
        compiled[backend] = f
    g_np = np.asarray(_flat(compiled["numpy"].grad(*args)))
    g_nb = np.asarray(_flat(compiled["numba"].grad(*args)))
    if not np.allclose(g_nb, g_np, rtol=1e-10, atol=1e-12):
        raise AssertionError(f"{name}: numba gradient {g_nb} != numpy gradient {g_np}")
    params = list(compiled["numpy"].params)
    fd = np.array([_central(fn, args, params.index(w)) for w in wrt])
    if not np.allclose(g_np, fd, rtol=fd_rtol, atol=1e-6):
        raise AssertionError(f"{name}: gradient {g_np} != central differences {fd}")
    return compiled, first


def _median_times(calls: dict, repeats: int, cpu: bool = False, each_warm: bool = False) -> dict:
    """The median wall time of each call; with ``cpu``, the least CPU time of this thread instead (every
    method here runs on this one thread: on a shared machine, the time others take is not counted).

    ``each_warm``: each timed call right after an untimed call of the same method, so that each is timed
    with its own data in the cache, as an optimizer's repeated calls find it.  Interleaved alone, a method
    is timed in the state the one before it left: the compiled forward after the plain Python forward,
    which has just read the input, the numba gradient after the NumPy backend's, whose megabytes of
    temporaries have pushed the input out of the core's cache (iir_biquad, 10^5 samples: its gradient 0.5
    ms so, 0.65-0.7 ms after the NumPy gradient; benchmarks/RESULTS.md, stop 43)."""
    clock = time.thread_time if cpu else time.perf_counter
    times = {k: [] for k in calls}
    for _ in range(repeats):
        for k, call in calls.items():          # interleaved: one of each, then again
            if each_warm:
                call()
            t = clock()
            call()
            times[k].append(clock() - t)
    return {k: float(np.min(v) if cpu else np.median(v)) for k, v in times.items()}


def run(size: int, repeats: int, cpu: bool = False, each_warm: bool = False) -> list[dict]:
    import numba

    rows = []
    for name, fn, wrt, make_args in PROGRAMS:
        args = make_args(size)
        compiled, first = check(name, fn, wrt, args)
        forward_jit = numba.njit(fn)
        forward_jit(*args)
        med = _median_times({
            "python forward": lambda fn=fn, args=args: fn(*args),
            "compiled forward": lambda f=forward_jit, args=args: f(*args),
            "numpy grad": lambda f=compiled["numpy"], args=args: f.grad(*args),
            "numba grad": lambda f=compiled["numba"], args=args: f.grad(*args),
        }, repeats, cpu, each_warm)
        rows.append({"program": name, "n": size, **med, "numba first call": first["numba"]})
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10**5, help="loop iterations")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-time", action="store_true",
                   help="the least thread CPU time of the repeats, not the median wall time (a busy machine)")
    p.add_argument("--each-warm", action="store_true",
                   help="time each call right after an untimed call of the same method (each with its own data "
                        "in the cache), not in the state the method before it left")
    a = p.parse_args(argv)
    rows = run(a.size, a.repeats, a.cpu_time, a.each_warm)
    what = ("least thread CPU time" if a.cpu_time else "median wall time") + (", each call warm" if a.each_warm else "")
    print(f"n = {a.size}, {what} of {a.repeats}, interleaved; ratios are gradient time / forward time\n")
    print("| program | python fwd | compiled fwd | numpy grad | numba grad | numba grad ÷ python fwd "
          "| numba grad ÷ compiled fwd | numpy grad ÷ python fwd | numba first call |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['program']} | {r['python forward'] * 1e3:.2f} ms | {r['compiled forward'] * 1e3:.3f} ms "
              f"| {r['numpy grad'] * 1e3:.1f} ms | {r['numba grad'] * 1e3:.3f} ms "
              f"| {r['numba grad'] / r['python forward']:.3f} | {r['numba grad'] / r['compiled forward']:.2f} "
              f"| {r['numpy grad'] / r['python forward']:.1f} | {r['numba first call']:.2f} s |")


if __name__ == "__main__":
    main()

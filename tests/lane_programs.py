"""Loop nests over independent paths, shared by the tests of their schedules: phi/batching.py's lanes
(tests/phi/test_batching.py) and numba's nest (tests/lower/test_numba_lanes.py)."""

from __future__ import annotations

import math


def damped_particles(x0, k, dt):
    energy = 0.0
    for p in range(len(x0)):
        x = x0[p]
        v = 0.0
        for _ in range(6):
            a = -k * math.sin(x) - 0.1 * v
            v = v + dt * a
            x = x + dt * v
        energy += 0.5 * v * v + k * (1.0 - math.cos(x))
    return energy

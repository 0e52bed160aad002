"""The doubling scan the hand-written gradients and vectorized forwards of the recurrence kernels share
(``iir_filter``, ``exp_smoothing``): not a kernel itself (``kernels.NAMES`` does not list it)."""

import numpy as np


def scan(a, b):
    """v_k = a·v_{k−1} + b_k from v_{−1} = 0, for every k: a doubling scan (no division, stable for |a| < 1)."""
    v = np.array(b, dtype=np.float64)
    c, sh = a, 1
    while sh < v.size and c != 0:
        v[sh:] += c * v[:-sh]
        c *= c
        sh *= 2
    return v

"""A 1-D convolution layer fitted to a target, written as two loops: Σ_i (Σ_k w_k x_{i+k} − y_i)².

The "valid" correlation of a signal with a short filter, as a user writes it
before reaching for ``np.correlate``: an outer loop over output positions, an
inner loop over the filter taps, the output written element by element, then
the squared error.  coarsen_nb lifts the nest to a closed form and reads the
windows ``x[i + k]`` as a correlation (the forward ``np.correlate`` of the signal with the
filter, the adjoints a chunked correlation and one convolution) instead of a flattened gather.
``wrt`` is the signal ``x`` and the filter ``w``.
"""

import numpy as np

META = dict(
    name="conv1d",
    wrt=("x", "w"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=12,
    size_name="samples (7 taps)",
    loop_kind="nested",
    paper=False,
    description="squared error of a valid 1-D correlation written as two loops with element writes",
)


def conv1d(x, w, y):
    n = len(x) - len(w) + 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(len(w)):
            acc += w[k] * x[i + k]
        out[i] = acc
    loss = 0.0
    for i in range(n):
        loss += (out[i] - y[i]) ** 2
    return loss


def vectorized(x, w, y):
    """The same loss with array operations: the valid correlation is ``np.correlate``."""
    return float(np.sum((np.correlate(x, w, mode="valid") - y) ** 2))


def grad(x, w, y):
    """With r = 2(x ⋆ w − y): ∂/∂w_k = Σ_i r_i x_{i+k} = (x ⋆ r)_k, ∂/∂x_j = Σ_i r_i w_{j−i} = (r ∗ w)_j."""
    r = 2.0 * (np.correlate(x, w, mode="valid") - y)
    return np.convolve(r, w, mode="full"), np.correlate(x, r, mode="valid")


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size)
    w = rng.standard_normal(7) / 7.0
    y = rng.standard_normal(size - 6) * 0.1
    return (x, w, y)

"""BGDHyperOpt (Shen et al., OOPSLA 2021): sensitivity of gradient descent to its learning rate.

Batch gradient descent fits a 1-D linear regression y ≈ w·x + b to M records,
starting from w = b = 0.  Each step accumulates the full-batch gradient in a
``for`` loop over the records; the outer ``while`` loop stops after at most
``max_steps`` steps, or earlier with a ``break`` once the step size
|Δw| + |Δb| falls below ``tol``.  The function returns the final mean squared
error; ``wrt`` is the learning rate ``lr`` — the hyper-gradient that a
learning-rate tuner follows.

The trip count N of the ``while`` loop depends on ``lr`` through the break
test, so the result is only piecewise smooth in ``lr``.  As in the paper (and
as coarsen_nb's η does), the derivative treats N as fixed: it is the
derivative of the N-step descent, N the count the forward run took.  The
hand-written :func:`grad` is the forward-mode tangent recurrence
(d w_k/d lr, d b_k/d lr) run alongside the descent for the same N steps.
"""

import numpy as np

META = dict(
    name="bgd_hyperopt",
    wrt=("lr",),
    sizes=(200, 1000, 2000),
    quick_sizes=(200,),
    test_size=8,
    size_name="records M (at most 200 descent steps)",
    loop_kind="while-break",
    paper=True,
    description="final MSE of batch gradient descent (while + convergence break around a loop "
                "over records) w.r.t. the learning rate",
)

MAX_STEPS = 200


def bgd_hyperopt(lr, x, y, max_steps, tol):
    m = len(x)
    w = 0.0
    b = 0.0
    k = 0
    while k < max_steps:
        gw = 0.0
        gb = 0.0
        for i in range(m):
            r = w * x[i] + b - y[i]
            gw += r * x[i]
            gb += r
        dw = lr * gw / m
        db = lr * gb / m
        w = w - dw
        b = b - db
        k += 1
        if abs(dw) + abs(db) < tol:
            break
    err = 0.0
    for i in range(m):
        r = w * x[i] + b - y[i]
        err += r * r
    return err / m


def _descend(lr, x, y, max_steps, tol):
    """The descent vectorized over records, with its tangent; returns (w, b, tw, tb, steps)."""
    m = len(x)
    w = b = tw = tb = 0.0
    k = 0
    while k < max_steps:
        r = w * x + b - y
        tr = tw * x + tb
        gw, gb = np.sum(r * x), np.sum(r)
        tgw, tgb = np.sum(tr * x), np.sum(tr)
        dw, db = lr * gw / m, lr * gb / m
        tdw, tdb = (gw + lr * tgw) / m, (gb + lr * tgb) / m   # product rule on lr·g(lr)
        w, b, tw, tb = w - dw, b - db, tw - tdw, tb - tdb
        k += 1
        if abs(dw) + abs(db) < tol:
            break
    return w, b, tw, tb, k


def steps_taken(lr, x, y, max_steps, tol):
    """The while loop's trip count N for these arguments (what the derivative holds fixed)."""
    return _descend(lr, x, y, max_steps, tol)[4]


def grad(lr, x, y, max_steps, tol):
    """d(final MSE)/d lr for the fixed trip count N: tangent recurrence, then chain rule."""
    w, b, tw, tb, _ = _descend(lr, x, y, max_steps, tol)
    r = w * x + b - y
    return float(np.mean(2.0 * r * (tw * x + tb)))


def make_inputs(size, seed=0):
    """Standardized-ish feature, a noisy line; lr and tol chosen so the break fires before 200 steps."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size)
    y = 2.0 * x - 1.0 + 0.1 * rng.standard_normal(size)
    lr = 0.05 + 0.02 * rng.random()
    return (lr, x, y, MAX_STEPS, 1e-4)

"""Each kernel's hand-written gradient against independent references.

The hand-written gradients are what the benchmarks call "the practical limit",
and they are the reference other tests may compare coarsen_nb against, so they
must be right on their own: here each one is checked against central finite
differences of the plain-loop function in float64, and — where JAX is
installed and can run the very same plain-loop function eagerly — against
``jax.grad`` of that function.  No expected number is written down anywhere:
every reference is computed from the kernel's own function.
"""

import inspect
import math
import types

import numpy as np
import pytest

from coarsen_nb.kernels import KERNELS, NAMES, function

SEEDS = (0, 1, 2)

# Central differences: error ≈ h²·|f'''|/6 (truncation) + ε·|f|/h (rounding).
# h = 1e-6·max(1, |v|) balances the two near ε^(1/3); the agreement observed is
# ~1e-9 relative, so rtol 1e-5 leaves ample margin, and the absolute floor
# (1e-8 of the function's and gradient's scale) covers entries near zero,
# where FD rounding is absolute, not relative.
FD_STEP = 1e-6
FD_RTOL = 1e-5
FD_ATOL_SCALE = 1e-8

# bgd_hyperopt's while loop ends on a data-dependent break, so its value is
# only piecewise smooth in lr: a step that moves the break to another trip
# count would measure a jump, not the derivative.  A smaller step keeps the
# trip count (asserted below) while rounding stays far below the tolerance.
FD_STEP_OVERRIDE = {"bgd_hyperopt": 1e-8}


def _params(mod):
    return list(inspect.signature(function(mod)).parameters)


def _as_tuple(mod, g):
    return tuple(g) if len(mod.META["wrt"]) > 1 else (g,)


def _with(args, pos, value):
    a = list(args)
    a[pos] = value
    return a


def _central_difference(f, args, pos, step):
    """∂f/∂args[pos] by central differences, elementwise for arrays."""
    v = args[pos]
    if np.ndim(v) == 0:
        h = step * max(1.0, abs(v))
        return (f(*_with(args, pos, v + h)) - f(*_with(args, pos, v - h))) / (2.0 * h)
    out = np.zeros(v.shape)
    for idx in np.ndindex(v.shape):
        h = step * max(1.0, abs(v[idx]))
        vp, vm = v.copy(), v.copy()
        vp[idx] += h
        vm[idx] -= h
        out[idx] = (f(*_with(args, pos, vp)) - f(*_with(args, pos, vm))) / (2.0 * h)
    return out


def _inputs(mod, seed):
    return mod.make_inputs(mod.META["test_size"], seed)


def test_registry_lists_every_kernel_module():
    assert list(KERNELS) == list(NAMES)
    assert len(KERNELS) >= 13
    for name, mod in KERNELS.items():
        assert mod.META["name"] == name
        assert callable(function(mod)) and function(mod).__name__ == name


@pytest.mark.parametrize("name", NAMES)
def test_meta_is_complete_and_consistent(name):
    mod = KERNELS[name]
    meta = mod.META
    for key in ("name", "wrt", "sizes", "quick_sizes", "test_size", "loop_kind", "paper", "description"):
        assert key in meta, key
    params = _params(mod)
    assert meta["wrt"] and all(w in params for w in meta["wrt"])
    assert list(meta["sizes"]) == sorted(meta["sizes"])
    assert set(meta["quick_sizes"]) <= set(meta["sizes"])
    assert meta["test_size"] <= min(meta["sizes"])
    assert mod.__doc__ and len(mod.__doc__) > 200, "the module docstring says what, where from, what wrt means"


@pytest.mark.parametrize("name", NAMES)
def test_make_inputs_is_deterministic_per_seed(name):
    mod = KERNELS[name]
    size = mod.META["test_size"]
    a, b, c = mod.make_inputs(size, 0), mod.make_inputs(size, 0), mod.make_inputs(size, 1)
    assert len(a) == len(_params(mod))
    for x, y in zip(a, b, strict=True):
        assert type(x) is type(y)
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(a, c, strict=True)), "another seed gives other inputs"
    for x in a:
        if isinstance(x, np.ndarray):
            assert x.dtype == np.float64 and x.ndim in (1, 2)
        else:
            assert isinstance(x, (int, float))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", NAMES)
def test_value_is_a_finite_float(name, seed):
    mod = KERNELS[name]
    v = function(mod)(*_inputs(mod, seed))
    assert isinstance(v, float) and math.isfinite(v)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_central_differences(name, seed):
    mod = KERNELS[name]
    f = function(mod)
    args = _inputs(mod, seed)
    params = _params(mod)
    step = FD_STEP_OVERRIDE.get(name, FD_STEP)
    hand = _as_tuple(mod, mod.grad(*args))
    assert len(hand) == len(mod.META["wrt"])
    scale = abs(f(*args))
    fds = []
    for w, g in zip(mod.META["wrt"], hand, strict=True):
        pos = params.index(w)
        assert np.shape(g) == np.shape(args[pos]), f"gradient w.r.t. {w} has the shape of {w}"
        fds.append(_central_difference(f, args, pos, step))
        scale = max(scale, float(np.max(np.abs(fds[-1]))))
    atol = FD_ATOL_SCALE * max(1.0, scale)
    for w, g, fd in zip(mod.META["wrt"], hand, fds, strict=True):
        np.testing.assert_allclose(g, fd, rtol=FD_RTOL, atol=atol, err_msg=f"{name}: d/d{w}, seed {seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_bgd_fd_steps_keep_the_trip_count(seed):
    """The FD comparison above is only meaningful if lr ± h breaks at the same step as lr."""
    mod = KERNELS["bgd_hyperopt"]
    lr, *rest = _inputs(mod, seed)
    h = FD_STEP_OVERRIDE["bgd_hyperopt"] * max(1.0, abs(lr))
    n = mod.steps_taken(lr, *rest)
    assert mod.steps_taken(lr + h, *rest) == n == mod.steps_taken(lr - h, *rest)


def test_bgd_inputs_exercise_both_loop_exits():
    """Over the test seeds, the break fires for some inputs, and the step cap ends others."""
    mod = KERNELS["bgd_hyperopt"]
    counts = [mod.steps_taken(*_inputs(mod, s)) for s in range(5)]
    cap = _inputs(mod, 0)[3]
    assert any(n < cap for n in counts) and all(n <= cap for n in counts)
    counts = [mod.steps_taken(*mod.make_inputs(size, 0)) for size in mod.META["sizes"]]
    assert all(n < cap for n in counts), "at benchmark sizes the convergence break decides the trip count"


# ---------------------------------------------------------------- JAX, where installed

def _jax_math(jnp, jsp):
    """The ``math`` names the kernels use, as JAX functions, so tracers flow through them."""
    return types.SimpleNamespace(
        sin=jnp.sin, cos=jnp.cos, tan=jnp.tan, exp=jnp.exp, log=jnp.log, log1p=jnp.log1p,
        expm1=jnp.expm1, sqrt=jnp.sqrt, tanh=jnp.tanh, atan=jnp.arctan, fabs=jnp.abs,
        erf=jsp.erf, pi=math.pi, e=math.e, inf=math.inf, tau=math.tau,
    )


def _rebind(mod, jnp, jmath):
    """The module's main function with ``np`` → ``jax.numpy`` and ``math`` → JAX functions.

    The very same code object runs (``FunctionType(fn.__code__, new_globals)``);
    helpers defined in the module are rebound the same way, so the inlined
    helpers see JAX too.  No vectorized re-implementation is involved.
    """
    g = dict(vars(mod))
    g["np"] = jnp
    g["math"] = jmath
    for key, value in vars(mod).items():
        if isinstance(value, types.FunctionType) and value.__module__ == mod.__name__:
            g[key] = types.FunctionType(value.__code__, g, value.__name__, value.__defaults__,
                                        value.__closure__)
    return g[mod.META["name"]]


# Kernels JAX cannot run as written, and why (the FD check above still stands).
JAX_SKIP = {
    "gmm": "writes log_w[k] = ... into an array it created; JAX arrays are immutable, so the "
           "plain-loop function cannot run under jax.numpy without rewriting it (x.at[k].set)",
    "exp_smoothing": "writes s[i + 1] = ... into an array it created (JAX arrays are immutable, as for gmm)",
    "conv1d": "writes out[i] = ... into an array it created (JAX arrays are immutable, as for gmm)",
}


def _jax_seeds(name, mod):
    """Seed 0; for bgd_hyperopt also the first seed whose descent ends on the break."""
    if name != "bgd_hyperopt":
        return [0]
    cap = _inputs(mod, 0)[3]
    breaking = next(s for s in range(1, 20) if mod.steps_taken(*_inputs(mod, s)) < cap)
    return [0, breaking]


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_eager_jax_on_the_same_loops(name):
    jax = pytest.importorskip("jax")
    if name in JAX_SKIP:
        pytest.skip(JAX_SKIP[name])
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as jsp

    mod = KERNELS[name]
    fj = _rebind(mod, jnp, _jax_math(jnp, jsp))
    argnums = tuple(_params(mod).index(w) for w in mod.META["wrt"])
    for seed in _jax_seeds(name, mod):
        args = _inputs(mod, seed)
        jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        np.testing.assert_allclose(float(fj(*jargs)), function(mod)(*args), rtol=1e-12)
        ref = jax.grad(fj, argnums=argnums)(*jargs)
        hand = _as_tuple(mod, mod.grad(*args))
        # Both are exact derivatives; they differ only by rounding accumulated over the loops.
        for w, g, r in zip(mod.META["wrt"], hand, ref, strict=True):
            r = np.asarray(r)
            np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12 * max(1.0, float(np.max(np.abs(r)))),
                                       err_msg=f"{name}: d/d{w}, seed {seed}")


@pytest.mark.parametrize("name", sorted(JAX_SKIP))
def test_jax_skips_are_still_needed(name):
    """A skip reason must stay true: JAX still cannot run that kernel's plain loops."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as jsp

    mod = KERNELS[name]
    fj = _rebind(mod, jnp, _jax_math(jnp, jsp))
    argnums = tuple(_params(mod).index(w) for w in mod.META["wrt"])
    jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in _inputs(mod, 0))
    with pytest.raises(TypeError, match="immutable"):
        jax.grad(fj, argnums=argnums)(*jargs)

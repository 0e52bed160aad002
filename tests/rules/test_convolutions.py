"""``np.convolve`` and ``np.correlate`` (rules/convolutions.py): every mode, every pair of lengths up to 7
(either operand the longer), values against NumPy, gradients against central differences, the JVP against
the gradient, and JAX's gradient; refusals at the user's line."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

LENGTHS = [(n, m) for n in (1, 2, 3, 4, 7) for m in (1, 2, 3, 5, 6)]


def _program(fn: str, mode: str):
    src = (f"import numpy as np\n\n\ndef f(a, v):\n    y = np.{fn}(a, v, mode={mode!r})\n"
           "    return np.sum(y * np.sin(y + 0.3))\n")
    namespace: dict = {}
    exec(compile(src, f"<{fn}-{mode}>", "exec"), namespace)
    return cn.coarsen(src, name="f"), namespace["f"]


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_every_length_and_mode(fn, mode):
    f, plain = _program(fn, mode)
    rng = np.random.default_rng(7)
    for n, m in LENGTHS:
        a, v = rng.normal(size=n), rng.normal(size=m)
        what = f"np.{fn} mode={mode} lengths {n}, {m}"
        assert_close(f(a, v), plain(a, v), rtol=1e-12, atol=1e-12, what=what)
        ga, gv = f.grad(a, v)
        assert_close(ga, finite_difference(plain, (a, v), 0), rtol=1e-6, atol=1e-7, what=what + " d/da")
        assert_close(gv, finite_difference(plain, (a, v), 1), rtol=1e-6, atol=1e-7, what=what + " d/dv")
        da, dv = rng.normal(size=n), rng.normal(size=m)
        _, tangent = f.jvp((a, v), (da, dv))
        assert_close(tangent, float(ga @ da + gv @ dv), rtol=1e-10, atol=1e-12, what=what + " jvp")


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_gradient_matches_jax(fn, mode):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    f, _ = _program(fn, mode)
    jf = getattr(jnp, fn)
    rng = np.random.default_rng(3)
    for n, m in [(7, 3), (3, 6), (4, 4)]:
        a, v = rng.normal(size=n), rng.normal(size=m)
        want = jax.grad(lambda a, v: jnp.sum(jf(a, v, mode=mode) * jnp.sin(jf(a, v, mode=mode) + 0.3)),
                        argnums=(0, 1))(a, v)
        for got, w in zip(f.grad(a, v), want, strict=True):
            assert_close(got, np.asarray(w), rtol=1e-10, atol=1e-12, what=f"{fn} {mode} {n},{m} vs JAX")


@pytest.mark.parametrize("src, words, where", [
    ("def f(a, v):\n    return np.sum(np.convolve(a, v, mode='circular'))\n", "'circular' is not a mode", "mode"),
    ("def f(A, v):\n    return np.sum(np.correlate(A, v))\n", "np.correlate of a 2-D array", "correlate"),
    ("def f(a, k):\n    return np.sum(np.convolve(a, a, mode=k))\n", "mode must be a constant", "k"),
])
def test_refusals_at_the_line(src, words, where):
    args = (np.ones((2, 3)), np.ones(2)) if "A, v" in src else (np.ones(3), 2) if "a, k" in src else \
        (np.ones(3), np.ones(2))
    with pytest.raises(cn.CoarsenError) as info:        # (a mode that is not a constant: at compile time)
        cn.coarsen("import numpy as np\n\n\n" + src, name="f")(*args)
    err = info.value
    line = src.splitlines()[1]
    assert words in str(err) and err.line == 5 and err.col == line.index(where), str(err)

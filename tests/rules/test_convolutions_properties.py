"""``np.convolve`` and ``np.correlate`` (rules/convolutions.py) as properties over lengths, modes and SOI
selections: Hypothesis draws the operands' lengths (either one the longer, equal, length 1), the mode and
the selection (default, ``max_soi=1``, ``per_block=True``); the value must equal the plain function's, the
gradient central differences and ``jax.grad``.  The "valid" and "full" rules read the result's cotangent
as it is (no zero-padded copy of it); "same" needs the zeros around it, so it keeps the frame."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coarsen_nb as cn

FNS = ("convolve", "correlate")
MODES = ("full", "same", "valid")
SELECTIONS = {"default": {}, "max_soi=1": {"max_soi": 1}, "per_block": {"per_block": True}}

_compiled: dict = {}


def _source(fn: str, mode: str) -> str:
    return (f"import numpy as np\n\n\ndef f(a, v):\n    y = np.{fn}(a, v, mode={mode!r})\n"
            "    return np.sum(y * np.sin(y + 0.3)) + np.sum(y ** 2)\n")


def _program(fn: str, mode: str, selection: str):
    """The compiled program (one per fn, mode and selection: the lengths do not change its signature)
    and the plain function it was compiled from."""
    key = (fn, mode, selection)
    if key not in _compiled:
        namespace: dict = {}
        exec(compile(_source(fn, mode), f"<{fn}-{mode}>", "exec"), namespace)
        _compiled[key] = cn.coarsen(_source(fn, mode), name="f", **SELECTIONS[selection]), namespace["f"]
    return _compiled[key]


def _jax_gradient(fn: str, mode: str, a, v):
    """``jax.grad`` of the programs' loss (``_source``) written with ``jax.numpy``, in both operands."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    jf = getattr(jnp, fn)

    def loss(a, v):
        y = jf(a, v, mode=mode)
        return jnp.sum(y * jnp.sin(y + 0.3)) + jnp.sum(y ** 2)

    return jax.grad(loss, argnums=(0, 1))(a, v)


def _operands(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=m)


cases = dict(fn=st.sampled_from(FNS), mode=st.sampled_from(MODES), n=st.integers(1, 12),
             m=st.integers(1, 12), selection=st.sampled_from(sorted(SELECTIONS)), seed=st.integers(0, 2**16))


@settings(max_examples=150, deadline=None)
@given(**cases)
@example(fn="correlate", mode="valid", n=3, m=8, selection="default", seed=1)     # the second operand longer
@example(fn="convolve", mode="valid", n=2, m=9, selection="per_block", seed=2)
@example(fn="correlate", mode="same", n=4, m=9, selection="max_soi=1", seed=3)    # NumPy swaps "same" too
@example(fn="correlate", mode="valid", n=5, m=5, selection="default", seed=4)     # equal lengths
@example(fn="convolve", mode="valid", n=6, m=6, selection="max_soi=1", seed=5)
@example(fn="correlate", mode="valid", n=1, m=1, selection="per_block", seed=6)   # length 1
@example(fn="convolve", mode="full", n=1, m=7, selection="default", seed=7)
@example(fn="correlate", mode="full", n=7, m=1, selection="default", seed=8)
def test_value_and_gradient_against_the_plain_function(fn, mode, n, m, selection, seed):
    f, plain = _program(fn, mode, selection)
    a, v = _operands(n, m, seed)
    what = f"np.{fn}(mode={mode!r}) lengths {n}, {m}, {selection}"
    assert_close(f(a, v), plain(a, v), rtol=1e-12, atol=1e-12, what=what)
    ga, gv = f.grad(a, v)
    assert ga.shape == a.shape and gv.shape == v.shape, what
    assert_close(ga, finite_difference(plain, (a, v), 0), rtol=1e-6, atol=1e-6, what=what + " d/da")
    assert_close(gv, finite_difference(plain, (a, v), 1), rtol=1e-6, atol=1e-6, what=what + " d/dv")


@settings(max_examples=40, deadline=None)
@given(**cases)
@example(fn="correlate", mode="valid", n=3, m=8, selection="default", seed=1)
@example(fn="convolve", mode="valid", n=8, m=3, selection="per_block", seed=2)
@example(fn="correlate", mode="same", n=4, m=9, selection="max_soi=1", seed=3)
@example(fn="convolve", mode="same", n=9, m=4, selection="default", seed=3)
@example(fn="correlate", mode="full", n=5, m=5, selection="default", seed=4)
def test_gradient_against_jax(fn, mode, n, m, selection, seed):
    f, _ = _program(fn, mode, selection)
    a, v = _operands(n, m, seed)
    for got, want in zip(f.grad(a, v), _jax_gradient(fn, mode, a, v), strict=True):
        assert_close(got, np.asarray(want), rtol=1e-10, atol=1e-12,
                     what=f"np.{fn}(mode={mode!r}) lengths {n}, {m}, {selection} vs jax.grad")


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("mode", MODES)
def test_only_same_pads_the_cotangent(fn, mode):
    """"valid" and "full" read the result's cotangent as it is; only "same" builds the zero-padded frame
    (its edge outputs read zeros around the longer operand)."""
    f, _ = _program(fn, mode, "default")
    a, v = _operands(6, 3, 0)
    f.grad(a, v)
    assert ("_full_frame(" in f.source) == (mode == "same"), f.source


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n, m", [(5000, 7), (7, 5000), (4100, 4100)])
def test_long_operands_against_jax(fn, mode, n, m):
    """Lengths past ``_window_vecmat``'s chunk of 4096 rows, either operand the longer."""
    f, plain = _program(fn, mode, "default")
    a, v = _operands(n, m, 11)
    what = f"np.{fn}(mode={mode!r}) lengths {n}, {m}"
    assert_close(f(a, v), plain(a, v), rtol=1e-12, atol=1e-9, what=what)
    for got, want in zip(f.grad(a, v), _jax_gradient(fn, mode, a, v), strict=True):
        assert_close(got, np.asarray(want), rtol=1e-9, atol=1e-9, what=what + " vs jax.grad")

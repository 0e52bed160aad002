"""Forward mode: for every corpus function and kernel, the JVP along random
tangents equals the directional finite difference (and ⟨grad, tangent⟩)."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

DIFF = [e for e in CORPUS if e.differentiable and e.wrt]


def _directional_fd(fn, args, idx, tangents, eps=1e-6):
    def shifted(sign):
        out = list(args)
        for i, t in zip(idx, tangents, strict=True):
            out[i] = args[i] + sign * eps * t
        return fn(*out)
    return (shifted(1) - shifted(-1)) / (2 * eps)


def _tangents(args, idx, rng):
    return tuple(rng.normal(size=np.shape(args[i])) if isinstance(args[i], np.ndarray) else float(rng.normal())
                 for i in idx)


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}])
@pytest.mark.parametrize("entry", DIFF, ids=[e.name for e in DIFF])
def test_jvp_equals_directional_difference(entry, selection):
    rng = np.random.default_rng(5)
    args = entry.make_args(np.random.default_rng(0))
    f = cn.coarsen(entry.fn, wrt=entry.wrt, **selection)
    idx = [f.params.index(w) for w in entry.wrt]
    t = _tangents(args, idx, rng)
    value, tangent = f.jvp(args, t)
    assert_close(value, entry.fn(*args), rtol=1e-9, atol=1e-12, what="value")
    assert_close(tangent, _directional_fd(entry.fn, args, idx, t), rtol=1e-5, atol=1e-6, what="jvp vs FD")
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    inner = sum(float(np.sum(np.asarray(g) * np.asarray(ti))) for g, ti in zip(grads, t, strict=True))
    assert_close(tangent, inner, rtol=1e-9, atol=1e-10, what="jvp vs <grad, t>")


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_jvp_matches_vjp(name):
    mod = KERNELS[name]
    fn = function(mod)
    args = mod.make_inputs(mod.META["test_size"], 0)
    f = cn.coarsen(fn, wrt=mod.META["wrt"])
    idx = [f.params.index(w) for w in mod.META["wrt"]]
    t = _tangents(args, idx, np.random.default_rng(2))
    _, tangent = f.jvp(args, t)
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    inner = sum(float(np.sum(np.asarray(g) * np.asarray(ti))) for g, ti in zip(grads, t, strict=True))
    assert_close(tangent, inner, rtol=1e-9, atol=1e-10, what=f"{name}: jvp vs <grad, t>")

"""Every corpus function, compiled under every SOI selection: the forward value
equals the plain Python function and the gradient equals central finite
differences.  The selection may change speed, never values."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = {
    "default": {},
    "per-block": {"per_block": True},
    "L=1": {"max_soi": 1},
    "L=R=inf": {"max_soi": float("inf"), "reuse": float("inf")},
}


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_forward_and_gradient(entry, selection):
    f = cn.coarsen(entry.fn, wrt=entry.wrt or None, **SELECTIONS[selection])
    for seed in (0, 1):
        args = entry.make_args(np.random.default_rng(seed))
        want = entry.fn(*args)
        got = f(*args)
        for g, w in zip(_flat(got), _flat(want), strict=True):
            assert_close(g, w, rtol=1e-9, atol=1e-12, what=f"{entry.name} forward")
        if entry.differentiable and entry.wrt:
            grads = _flat(f.grad(*args))
            for name, g in zip(entry.wrt, grads, strict=True):
                fd = finite_difference(entry.fn, args, f.params.index(name))
                assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"{entry.name} d/d{name}")


@pytest.mark.parametrize("entry", [e for e in CORPUS if e.differentiable and e.wrt],
                         ids=[e.name for e in CORPUS if e.differentiable and e.wrt])
def test_selection_changes_speed_never_values(entry):
    """Gradients agree to 1e-12 (relative) across all selections."""
    args = entry.make_args(np.random.default_rng(3))
    results = {k: _flat(cn.coarsen(entry.fn, wrt=entry.wrt, **kw).grad(*args)) for k, kw in SELECTIONS.items()}
    ref = results["L=1"]
    for k, grads in results.items():
        for g, r in zip(grads, ref, strict=True):
            assert_close(g, r, rtol=1e-12, atol=1e-12, what=f"{entry.name}: {k} vs L=1")

"""The corpus itself: entries run as plain Python and their inputs suit finite differences.

Every later stage trusts ``make_args`` to keep inputs off kinks and branch
boundaries; this checks it the only way that does not need the compiler:
central differences at two step sizes agree.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS, by_tag

SEEDS = range(4)


def test_corpus_size_and_coverage():
    assert len(CORPUS) >= 45
    for tag in ["straight", "branch", "nested", "loop", "triangular", "while", "break", "continue",
                "return", "tuple-assign", "array-read", "array-write", "helper", "recurrence", "sum",
                "product", "max", "int", "array-2d"]:
        assert by_tag(tag), f"no corpus entry tagged {tag!r}"


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_entry_is_consistent(entry):
    params = tuple(inspect.signature(entry.fn).parameters)
    assert set(entry.wrt) <= set(params), entry.wrt
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert len(args) == len(params)
        for name, a in zip(params, args, strict=True):
            if isinstance(a, np.ndarray):
                assert a.dtype == np.float64 and a.ndim in (1, 2), name
                assert 3 <= a.size <= 8 if a.ndim == 1 else all(2 <= d <= 8 for d in a.shape), a.shape
            if name in entry.wrt:
                assert isinstance(a, (float, np.ndarray)) and not isinstance(a, bool), name
        # The function leaves its inputs alone (writes go to fresh arrays only).
        before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        value = entry.fn(*args)
        for a, b in zip(args, before, strict=True):
            np.testing.assert_array_equal(a, b)
        if entry.differentiable:
            assert isinstance(value, float) and np.isfinite(value), value


def _partials(fn, args, wrt_index, h):
    """Central differences of fn w.r.t. every element of argument ``wrt_index``."""
    base = args[wrt_index]
    flat = np.atleast_1d(np.array(base, dtype=float)).ravel()
    out = []
    for k in range(flat.size):
        vals = []
        for sign in (1.0, -1.0):
            moved = flat.copy()
            moved[k] += sign * h
            arg = moved.reshape(np.shape(base)) if isinstance(base, np.ndarray) else float(moved[0])
            vals.append(fn(*args[:wrt_index], arg, *args[wrt_index + 1:]))
        out.append((vals[0] - vals[1]) / (2 * h))
    return np.array(out)


@pytest.mark.parametrize("entry", [e for e in CORPUS if e.differentiable],
                         ids=[e.name for e in CORPUS if e.differentiable])
def test_inputs_are_off_kinks(entry):
    params = tuple(inspect.signature(entry.fn).parameters)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        for name in entry.wrt:
            i = params.index(name)
            coarse = _partials(entry.fn, args, i, 1e-4)
            fine = _partials(entry.fn, args, i, 1e-5)
            np.testing.assert_allclose(fine, coarse, rtol=1e-4, atol=1e-6,
                                       err_msg=f"{entry.name}: d/d{name}, seed {seed}")

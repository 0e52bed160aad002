"""The scalar-loop benchmark's programs compile under both backends with equal gradients (its own check, which
the benchmark runs before timing: numba = numpy to 1e-10, numpy = central differences), and none falls back."""

from __future__ import annotations

import pytest

from coarsen_nb.benchmarks.scalar_loops import PROGRAMS, check


@pytest.mark.parametrize("name, fn, wrt, make_args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_gradients_agree(name, fn, wrt, make_args, tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    compiled, first = check(name, fn, wrt, make_args(300))
    assert set(compiled) == {"numpy", "numba"}
    c = compiled["numba"]._compiled()
    assert c.grad.fallback is None

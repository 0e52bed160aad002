"""``python -m coarsen_nb.benchmarks.compile_times``: two fresh processes per kernel, each phase reported, the
second one served by the disk caches (no Numba compile, no pipeline)."""

from __future__ import annotations

import pytest

from coarsen_nb.benchmarks import compile_times


def test_a_kernel_cold_then_warm():
    (name, r), = compile_times.measure(["rosenbrock"], progress=None).items()
    cold, warm = r["cold"], r["warm"]
    assert "error" not in cold and "error" not in warm, r
    for figures in (cold, warm):
        assert set(compile_times.PHASES) <= figures.keys()
        assert figures["total"] == sum(figures[p] for p in compile_times.PHASES)
    # what a warm cache is for: Numba loads the machine code instead of compiling it (counted, not timed:
    # speed lives in the benchmarks, and a loaded machine's timings cross)
    assert cold["compilations"] > 0 and warm["compilations"] < cold["compilations"], (cold, warm)


def test_an_unknown_kernel_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        compile_times.main(["--kernels", "no_such_kernel"])
    assert exit_.value.code == 2
    assert "unknown kernels: no_such_kernel" in capsys.readouterr().err

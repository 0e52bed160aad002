"""``python -m coarsen_nb.benchmarks.call_overhead``: every method timed gives the kernel's gradient (checked
against the hand-written one before anything is timed), and a method that does not is refused, not timed."""

from __future__ import annotations

import numpy as np
import pytest

from coarsen_nb.benchmarks import call_overhead
from coarsen_nb.kernels import KERNELS


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_each_method_gives_the_hand_written_gradient(backend):
    found, args = call_overhead.methods("brachistochrone", backend)
    assert set(found) == {"f.grad", "module"} | ({"dispatcher"} if backend == "numba" else set())
    expected = KERNELS["brachistochrone"].grad(*args)
    for fn in found.values():
        np.testing.assert_allclose(fn(*args), expected, rtol=1e-6, atol=1e-9)


def test_a_wrong_gradient_is_refused_before_timing(monkeypatch):
    mod = KERNELS["brachistochrone"]
    real = mod.grad
    monkeypatch.setattr(mod, "grad", lambda *args: real(*args) * 1.01)
    with pytest.raises(AssertionError, match="differs from the hand-written one"):
        call_overhead.methods("brachistochrone", "numpy")


def test_a_run_reports_every_kernel_and_backend(capsys):
    assert call_overhead.main(["--kernels", "hookean_spring", "--backends", "numpy", "--calls", "3",
                               "--rounds", "1"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| hookean_spring")]
    assert len(rows) == 1 and rows[0].startswith("| hookean_spring | numpy |")


def test_an_unknown_kernel_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        call_overhead.main(["--kernels", "no_such_kernel"])
    assert exit_.value.code == 2
    assert "unknown kernels or backends: no_such_kernel" in capsys.readouterr().err

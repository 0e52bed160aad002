"""A numba call prints, caches and loads only the entry function it runs (coarsen_nb/entry_modules.py): a
``grad`` call the gradient's module, a later ``vjp`` call on the same function the VJP's then, a second process
finds each entry's module in the pipeline cache and its machine code in Numba's, and the exported module still
holds every entry.  Gradients against central differences of the plain Python function."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from numba_child import central, energy, run_child

import coarsen_nb as cn
from coarsen_nb import specialize

SOURCE = '''
def energy(x, w):
    s = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i]
        s += w * d * d + 0.5 * x[i]
    return s
'''
X = np.linspace(-1.0, 2.0, 7) ** 2
W = 1.5


@pytest.fixture
def printed(monkeypatch, tmp_path):
    """The entry kinds each run of the pipeline printed (None: every entry), in order."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    kinds = []
    real = specialize._generate

    def counted(*args, **kwargs):
        kinds.append(args[7] if len(args) > 7 else kwargs.get("kinds"))
        return real(*args, **kwargs)

    monkeypatch.setattr(specialize, "_generate", counted)
    return kinds


def test_grad_then_vjp_then_value_and_grad_print_each_entry_when_first_needed(printed):
    f = cn.coarsen(SOURCE, backend="numba")
    rx, rw = central(energy(), X, W)
    gx, gw = f.grad(X, W)
    assert printed == [("grad",)] and sorted(f._last.entries) == ["grad"]
    np.testing.assert_allclose(gx, rx, rtol=1e-6, atol=1e-6)
    assert gw == pytest.approx(rw, rel=1e-6)

    value, pullback = f.vjp(X, W)
    assert printed == [("grad",), ("vjp",)] and sorted(f._last.entries) == ["grad", "vjp"]
    assert value == pytest.approx(energy()(X, W), rel=1e-12)
    px, pw = pullback(2.0)
    np.testing.assert_allclose(px, 2 * rx, rtol=1e-6, atol=1e-6)
    assert pw == pytest.approx(2 * rw, rel=1e-6)

    value, (vx, vw) = f.value_and_grad(X, W)       # the VJP's module again: nothing printed
    assert printed == [("grad",), ("vjp",)]
    assert value == pytest.approx(energy()(X, W), rel=1e-12)
    np.testing.assert_allclose(vx, rx, rtol=1e-6, atol=1e-6)
    assert vw == pytest.approx(rw, rel=1e-6)
    np.testing.assert_array_equal(vx, gx)           # the two modules compute the gradient alike

    assert f(X, W) == pytest.approx(energy()(X, W), rel=1e-12)
    _, tangent = f.jvp((X, W), (np.ones_like(X), 0.0))
    assert tangent == pytest.approx(float(np.sum(rx)), rel=1e-6)
    assert printed == [("grad",), ("vjp",), ("value",), ("jvp",)]


def test_the_exported_module_holds_every_entry(printed, tmp_path):
    f = cn.coarsen(SOURCE, backend="numba")
    f.grad(X, W)
    path = f.export(tmp_path / "energy_module.py")
    assert printed == [("grad",), None]            # the whole module, printed for the export
    spec = importlib.util.spec_from_file_location("energy_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rx, rw = central(energy(), X, W)
    for name in ("energy", "energy_vjp", "energy_grad", "energy_jvp"):
        assert callable(getattr(module, name))
    assert module.energy(X, W) == pytest.approx(energy()(X, W), rel=1e-12)
    gx, gw = module.energy_grad(X, W)
    np.testing.assert_allclose(gx, rx, rtol=1e-6, atol=1e-6)
    value, (vx, vw) = module.energy_vjp(X, W)
    np.testing.assert_allclose(vx, rx, rtol=1e-6, atol=1e-6)
    assert vw == pytest.approx(rw, rel=1e-6)
    # the same text as a specialization that prints every entry at once
    g = cn.coarsen(SOURCE, backend="numba")
    assert g._specialize((X, W)).source == f.source


_PROCESS = '''
from coarsen_nb import specialize
ran = []
real = specialize._generate
specialize._generate = lambda *a, **k: ran.append(1) or real(*a, **k)
f = cn.coarsen(SOURCE, backend="numba")
x = np.linspace(-1.0, 2.0, 7) ** 2
with event.install_listener("numba:compile", Count()):
    gx, gw = f.grad(x, 1.5)
    value, (vx, vw) = f.value_and_grad(x, 1.5)
print(json.dumps(dict(ran=len(ran), compiled=compiled, gx=list(gx), gw=gw, vx=list(vx), vw=vw, value=value)))
'''


def test_a_second_process_finds_each_entry_in_both_caches(tmp_path):
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="1")
    first, second = (run_child(_PROCESS, env=env) for _ in range(2))
    assert first["ran"] == 2 and {"energy_grad", "energy_vjp"} <= set(first["compiled"])
    assert "energy" not in first["compiled"]          # (the value's entry: never printed, never compiled)
    assert second["ran"] == 0 and second["compiled"] == []   # each entry's module and machine code from disk
    rx, rw = central(energy(), X, W)
    for out in (first, second):
        for gx, gw in ((out["gx"], out["gw"]), (out["vx"], out["vw"])):
            np.testing.assert_allclose(gx, rx, rtol=1e-6, atol=1e-6)
            assert gw == pytest.approx(rw, rel=1e-6)
        assert out["value"] == pytest.approx(energy()(X, W), rel=1e-12)
    assert second["gx"] == first["gx"] and second["vx"] == first["vx"]


@pytest.mark.allows_fallback("an injected segment-away limit met only by the value's printing")
def test_a_limit_only_a_later_entry_meets_falls_back_for_that_entry_alone(printed, monkeypatch):
    """The value's printing meets a limit at the default selection (injected: ``NoSegmentForm`` where the writer
    prints the value's entry there) after the gradient printed fine: the value's module falls back to a finer
    selection with a warning, and both are right."""
    from coarsen_nb.errors import FallbackWarning, NoSegmentForm
    from coarsen_nb.lower.module import ModuleWriter

    real = ModuleWriter.source

    def limited(self, entries=None):
        if "mode=phi" in self.header and (entries is None or "value" in entries):
            raise NoSegmentForm("segment-away", "injected")
        return real(self, entries)

    monkeypatch.setattr(ModuleWriter, "source", limited)
    f = cn.coarsen(SOURCE, backend="numba")
    rx, rw = central(energy(), X, W)
    gx, gw = f.grad(X, W)
    np.testing.assert_allclose(gx, rx, rtol=1e-6, atol=1e-6)
    with pytest.warns(FallbackWarning, match="injected"):
        value = f(X, W)
    assert value == pytest.approx(energy()(X, W), rel=1e-12)
    assert printed == [("grad",), ("value",), ("value",)]      # at phi (the limit), then per-block
    with pytest.warns(FallbackWarning, match="injected"):
        source = f.source                                       # (the whole module: per-block too)
    assert "mode=block" in source and "def energy(" in source and "def energy_grad(" in source

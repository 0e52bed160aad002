"""The whole-pipeline cache (coarsen_nb/pipeline_cache.py): a second compilation of the same function, options
and signature loads the generated module from disk without lifting or printing; anything that changes the
module is a miss; a damaged entry is a miss with a named warning, never a crash or a wrong gradient.

Gradients are checked against central differences of the plain Python function; "the pipeline ran" is
counted at :func:`coarsen_nb.specialize._generate`, the one call that lifts, selects and prints.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
from numba_child import central, energy, run_child

import coarsen_nb as cn
from coarsen_nb import pipeline_cache, specialize
from coarsen_nb.pipeline_cache import PipelineCacheWarning

SOURCE = '''
def energy(x, w):
    s = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i]
        s += w * d * d + SCALE * x[i]
    return s
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    monkeypatch.setenv("COARSEN_NB_PIPELINE_CACHE", "1")
    return tmp_path


@pytest.fixture
def runs(monkeypatch):
    """How many times the pipeline ran (lift, select, print) since the test began."""
    count = [0]
    real = specialize._generate

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(specialize, "_generate", counted)
    return count


def _compiled(source=SOURCE, scale=0.5, **options):
    namespace = {"SCALE": scale}
    exec(source, namespace)
    return cn.coarsen(source, namespace=namespace, **options), namespace["energy"]


X = np.linspace(-1.0, 2.0, 7) ** 2


def _check(f, plain, x=X, w=1.5):
    gx, gw = f.grad(x, w)
    rx, rw = central(plain, x, w)
    np.testing.assert_allclose(gx, rx, rtol=1e-6, atol=1e-6)
    assert gw == pytest.approx(rw, rel=1e-6, abs=1e-6)
    assert f(x, w) == pytest.approx(plain(x, w), rel=1e-12)


def test_a_second_compilation_loads_the_module_without_the_pipeline(cache, runs):
    f, plain = _compiled()
    _check(f, plain)
    assert runs[0] == 1
    assert len(list((cache / "pipeline").glob("*.json"))) == 1
    again, _ = _compiled()
    _check(again, plain)
    assert runs[0] == 1                     # a hit: nothing lifted or printed
    assert again.source == f.source
    assert again._last._plan is None        # (the plan is not there until asked for)


def test_a_hit_computes_the_plan_when_a_report_asks_for_it(cache, runs):
    f, plain = _compiled()
    f.grad(X, 1.5)
    again, _ = _compiled()
    again.grad(X, 1.5)
    assert runs[0] == 1
    assert [r.outputs for r in again.sois] == [r.outputs for r in f.sois]
    assert again.cost == f.cost
    assert runs[0] == 2                     # the pipeline ran once more, for the reports
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineCacheWarning)    # it printed the same text: no warning
        assert again.plan is not None


@pytest.mark.parametrize("change", [
    dict(source=SOURCE.replace("w * d * d", "w * d * d * d")),     # the function's text
    dict(scale=0.25),                                              # a global constant it reads
    dict(reuse=3),                                                 # an option
    dict(max_soi=2),
    dict(wrt=("x",)),
    dict(backend="numba"),
])
def test_anything_that_changes_the_module_is_a_miss(cache, runs, change):
    f, _ = _compiled()
    f.grad(X, 1.5)
    changed, plain = _compiled(**change)
    result = changed.grad(X, 1.5)
    assert runs[0] == 2
    rx, rw = central(plain, X, 1.5)
    np.testing.assert_allclose(result[0] if isinstance(result, tuple) else result, rx, rtol=1e-6, atol=1e-6)


def test_another_signature_is_a_miss(cache, runs):
    f, plain = _compiled()
    f.grad(X, 1.5)
    _compiled()[0].grad(X[:4].copy(), 0.5)          # another length, the same signature: a hit
    assert runs[0] == 1
    ints = np.arange(7)
    gw = _compiled()[0].grad(ints, 1.5)              # an int array: another signature (wrt is w alone)
    assert runs[0] == 2
    assert gw == pytest.approx(central(plain, ints.astype(float), 1.5)[1], rel=1e-6)


def test_a_changed_int_parameter_type_is_a_miss(cache, runs):
    source = "def energy(x, w):\n    return SCALE * w * sum_sq(x)\n" \
             "def sum_sq(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i] * x[i]\n    return s\n"
    namespace = {"SCALE": 2.0}
    exec(source, namespace)
    f = cn.coarsen(source, name="energy", namespace=namespace, wrt=("x",))
    f.grad(X, 1.5)
    f2 = cn.coarsen(source, name="energy", namespace=namespace, wrt=("x",))
    f2.grad(X, 3)
    assert runs[0] == 2
    np.testing.assert_allclose(f2.grad(X, 3), 2.0 * 3 * 2 * X, rtol=1e-12)


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],                                     # cut short
    lambda text: "\x00\xff not json",
    lambda text: json.dumps(dict(json.loads(text), key="0" * 32)),          # another key's entry
    lambda text: json.dumps(dict(json.loads(text), scalar_result="yes")),   # a field of the wrong type
    lambda text: json.dumps([1, 2, 3]),
])
def test_a_damaged_entry_is_a_named_miss(cache, runs, damage):
    f, plain = _compiled()
    f.grad(X, 1.5)
    (entry,) = (cache / "pipeline").glob("*.json")
    entry.write_text(damage(entry.read_text()))
    again, _ = _compiled()
    with pytest.warns(PipelineCacheWarning, match="compile-cache entry .* compiling anew"):
        _check(again, plain)
    assert runs[0] == 2
    json.loads(entry.read_text())           # written anew, whole
    third, _ = _compiled()
    _check(third, plain)
    assert runs[0] == 2


def test_an_unreadable_cache_directory_only_costs_the_pipeline(cache, runs):
    (cache / "pipeline").write_text("a file where the directory should be")
    f, plain = _compiled()
    with pytest.warns(PipelineCacheWarning, match="cannot be read"):
        _check(f, plain)
    again, _ = _compiled()
    with pytest.warns(PipelineCacheWarning, match="cannot be read"):
        _check(again, plain)
    assert runs[0] == 2


def test_turned_off_it_writes_and_reads_nothing(cache, runs, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_PIPELINE_CACHE", "0")
    _compiled()[0].grad(X, 1.5)
    _compiled()[0].grad(X, 1.5)
    assert runs[0] == 2
    assert not (cache / "pipeline").exists()


def test_the_key_covers_the_compiler_itself(monkeypatch):
    """A changed coarsen_nb source file is a new key (no module of an older compiler is served)."""
    parts = dict(front="f", signature="s", options={})
    before = pipeline_cache.key(**parts)
    assert pipeline_cache.key(**parts) == before
    monkeypatch.setattr(pipeline_cache, "compiler_digest", lambda: "another compiler")
    assert pipeline_cache.key(**parts) != before


_PROCESS = '''
    from coarsen_nb import specialize
    ran = []
    real = specialize._generate
    specialize._generate = lambda *a, **k: ran.append(1) or real(*a, **k)
    f = cn.coarsen(SOURCE, backend="numba")
    gx, gw = f.grad(np.linspace(-1.0, 2.0, 7) ** 2, 1.5)
    heavy = [m for m in ("sympy", "ipywidgets", "graphviz") if m in sys.modules]
    print(json.dumps(dict(ran=len(ran), gx=list(gx), gw=gw, heavy=heavy)))
'''


def test_a_second_process_runs_no_pipeline_and_imports_no_sympy_under_numba(tmp_path):
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="1")
    out = [run_child(_PROCESS, env=env) for _ in range(2)]
    assert [o["ran"] for o in out] == [1, 0]
    assert out[1]["heavy"] == []                # a hit imports none of what only compiling or the views need
    assert out[0]["gx"] == out[1]["gx"] and out[0]["gw"] == out[1]["gw"]

    rx, rw = central(energy(), X, 1.5)
    np.testing.assert_allclose(out[1]["gx"], rx, rtol=1e-6, atol=1e-6)
    assert out[1]["gw"] == pytest.approx(rw, rel=1e-6)

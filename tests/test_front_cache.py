"""The front end's result keyed by its inputs (coarsen_nb/front_cache.py): a warm hit parses nothing and imports
no SymPy, and every input of the front end -- the function's text, a global constant it folds, a helper it
inlines from another module, that helper's own globals, the options -- is a miss when it changes, in a new
process as in this one, with the gradient of the changed function.

References: central differences of the plain Python function (computed in the process that compiled it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb import specialize
from coarsen_nb.frontend import parse as parse_module
from coarsen_nb.frontend import reads

HELPERS = "STEP = 0.5\n\n\ndef bump(v):\n    return v * v + STEP * v\n"
USER = textwrap.dedent('''
    import numpy as np

    from helpers_mod import bump

    SCALE = 2.0


    def energy(x, w):
        s = 0.0
        for i in range(len(x)):
            s += SCALE * w * bump(x[i])
        return s
''')

_CHILD = textwrap.dedent('''
    import json, sys, warnings
    warnings.simplefilter("error", UserWarning)       # a fallback or a cache warning fails the test
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import coarsen_nb as cn
    from coarsen_nb import specialize
    ran = []
    real = specialize._generate
    specialize._generate = lambda *a, **k: ran.append(1) or real(*a, **k)
    import user_mod
    f = cn.coarsen(user_mod.energy, reuse=int(sys.argv[2]))
    x, w, h = np.linspace(-1.0, 2.0, 5), 1.5, 1e-6
    gx, gw = f.grad(x, w)
    sympy = "sympy" in sys.modules
    rx = [(user_mod.energy(x + h * e, w) - user_mod.energy(x - h * e, w)) / (2 * h) for e in np.eye(len(x))]
    rw = (user_mod.energy(x, w + h) - user_mod.energy(x, w - h)) / (2 * h)
    print(json.dumps(dict(ran=len(ran), sympy=sympy, gx=list(gx), gw=gw, rx=rx, rw=rw)))
''')


def _process(tmp_path, reuse: int = 1) -> dict:
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path / "cache"), COARSEN_NB_PIPELINE_CACHE="1",
               PYTHONDONTWRITEBYTECODE="1")     # (the modules are rewritten between processes)
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), str(reuse)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(out["gx"], out["rx"], rtol=1e-6, atol=1e-6)
    assert out["gw"] == pytest.approx(out["rw"], rel=1e-6, abs=1e-6)
    return out


def _write(tmp_path, user=USER, helpers=HELPERS) -> None:
    (tmp_path / "user_mod.py").write_text(user)
    (tmp_path / "helpers_mod.py").write_text(helpers)


@pytest.mark.parametrize("change", [
    dict(),                                                            # nothing: a hit
    dict(user=USER.replace("SCALE * w *", "SCALE * w * w *")),         # the function's text
    dict(user=USER.replace("SCALE = 2.0", "SCALE = 3.0")),             # a global constant it folds in
    dict(helpers=HELPERS.replace("v * v +", "v * v * v +")),           # a helper's text, in another module
    dict(helpers=HELPERS.replace("STEP = 0.5", "STEP = 0.75")),        # a global the helper reads
    dict(reuse=3),                                                     # an option
], ids=["unchanged", "source", "global", "helper", "helper-global", "option"])
def test_each_input_of_the_front_end_is_a_miss_in_a_new_process(tmp_path, change):
    _write(tmp_path)
    first = _process(tmp_path)
    assert first["ran"] == 1
    reuse = change.pop("reuse", 1)
    _write(tmp_path, **change)
    second = _process(tmp_path, reuse)
    if not change and reuse == 1:
        assert second["ran"] == 0                   # a hit: nothing parsed, lifted or printed ...
        assert not second["sympy"]                  # ... and SymPy never imported
        assert second["gx"] == first["gx"] and second["gw"] == first["gw"]
    else:
        assert second["ran"] == 1                   # recompiled (_process checked the changed function's gradient)


SOURCE = ("def energy(x, w):\n    s = 0.0\n    for i in range(len(x)):\n        s += SCALE * w * abs(x[i])\n"
          "    return s\n")
X = np.array([-1.0, 0.5, 2.0])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    monkeypatch.setenv("COARSEN_NB_PIPELINE_CACHE", "1")
    return tmp_path


@pytest.fixture
def parses(monkeypatch):
    """How many times the front end parsed a function since the test began."""
    count = [0]
    real = parse_module.parse

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(parse_module, "parse", counted)
    return count


def test_a_cached_front_end_runs_when_something_asks_for_it(cache, parses):
    eager = cn.coarsen(SOURCE, namespace={"SCALE": 2.0})
    expected = eager.grad(X, 1.5)
    assert parses[0] == 1
    lazy = cn.coarsen(SOURCE, namespace={"SCALE": 2.0})
    assert (lazy.name, lazy.params, str(lazy.__signature__)) == (eager.name, eager.params, str(eager.__signature__))
    got = lazy.grad(X, 1.5)
    assert parses[0] == 1                           # built and called without parsing
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1] == pytest.approx(2.0 * np.abs(X).sum())
    assert lazy.ssa == eager.ssa and lazy.gated == eager.gated
    assert parses[0] == 2                           # parsed when .ssa asked for it
    assert [r.outputs for r in lazy.sois] == [r.outputs for r in eager.sois]


def test_a_cached_front_end_reports_its_namespace_reads(cache):
    """The %%coarsen magic's own cache relies on the reads the front end reports: a hit reports the same."""
    namespace = {"SCALE": 2.0}
    with reads.recording() as eager:
        cn.coarsen(SOURCE, namespace=namespace).grad(X, 1.5)
    with reads.recording() as lazy:
        cn.coarsen(SOURCE, namespace=namespace)
    assert lazy.names == eager.names and "SCALE" in lazy.names
    namespace["SCALE"] = 3.0
    assert not lazy.unchanged()


def test_a_global_changed_before_the_first_call_is_read_by_a_miss(cache):
    """A hit serves the module of the values the object was built with (as a parsed one would have folded
    them in); a signature compiled after the change reads the new value, and is keyed by it."""
    cn.coarsen(SOURCE, namespace={"SCALE": 2.0}).grad(X, 1.5)
    namespace = {"SCALE": 2.0}
    f = cn.coarsen(SOURCE, namespace=namespace)      # its front end skipped: SCALE not read yet
    namespace["SCALE"] = 3.0
    ints = np.array([-1, 0, 2])                      # another signature (wrt: w alone): a miss, parsed now
    assert f.grad(ints, 1.5) == pytest.approx(3.0 * 3)
    again = cn.coarsen(SOURCE, namespace={"SCALE": 2.0})
    assert again.grad(ints, 1.5) == pytest.approx(2.0 * 3)    # not the module of SCALE = 3.0
    assert again.grad(X, 1.5)[1] == pytest.approx(2.0 * np.abs(X).sum())


def test_a_namespace_that_shadows_a_builtin_is_a_miss(cache, parses):
    """Text compiled without a namespace, then with one that gives ``abs`` another meaning: not the same."""
    source = "def f(x):\n    return abs(x) * x\n"
    assert cn.coarsen(source).grad(2.0) == pytest.approx(4.0)
    assert cn.coarsen(source, namespace={}).grad(2.0) == pytest.approx(4.0)
    assert parses[0] == 1                           # (an empty namespace is no namespace)
    assert cn.coarsen(source, namespace={"abs": np.exp}).grad(2.0) == pytest.approx(3.0 * np.exp(2.0))
    assert parses[0] == 2


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],                                         # cut short
    lambda text: json.dumps(dict(json.loads(text), params=[1, 2])),              # fields of the wrong type
    lambda text: json.dumps(dict(json.loads(text), defaults={"w": ["str", "x"]})),
    lambda text: json.dumps(dict(json.loads(text), origin="0" * 32)),            # another origin's record
    lambda text: json.dumps(dict(json.loads(text), lookups=[["root", "SCALE", ["number", "float", "9.0"]]])),
], ids=["cut-short", "params", "defaults", "origin", "lookup"])
def test_a_damaged_front_record_costs_a_parse_and_nothing_else(cache, parses, damage):
    cn.coarsen(SOURCE, namespace={"SCALE": 2.0}).grad(X, 1.5)
    (record,) = (cache / "front").glob("*.json")
    record.write_text(damage(record.read_text()))
    gx, gw = cn.coarsen(SOURCE, namespace={"SCALE": 2.0}).grad(X, 1.5)
    np.testing.assert_allclose(gx, 2.0 * 1.5 * np.sign(X))
    assert gw == pytest.approx(2.0 * np.abs(X).sum())
    assert parses[0] == 2
    json.loads(record.read_text())                   # written anew, whole
    cn.coarsen(SOURCE, namespace={"SCALE": 2.0}).grad(X, 1.5)
    assert parses[0] == 2


def test_the_default_reuse_of_a_cache_hit_is_selections():
    from coarsen_nb.soi.select import DEFAULT_REUSE

    assert specialize.DEFAULT_REUSE == DEFAULT_REUSE

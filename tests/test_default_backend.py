"""The default backend, ``backend="auto"``: numba where Numba imports, else numpy, or the user's own choice
in ``$COARSEN_NB_BACKEND`` (:func:`coarsen_nb.backends.resolve`).

The suite runs with ``COARSEN_NB_BACKEND=numpy`` (tests/conftest.py says why), so the default itself is
tested here in child processes whose environment does not set it: a fresh interpreter is what a user
gets, and one with ``sys.modules["numba"] = None`` is one where Numba does not import.  The oracle is the
plain Python function, by central finite differences; an exported numba module is imported where
coarsen_nb cannot be, and checked against the same oracle.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from gradcheck import finite_difference

import coarsen_nb as cn
from coarsen_nb import backends
from coarsen_nb.cli import main
from coarsen_nb.errors import CoarsenError

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A loop with a branch on the data and a scalar parameter: what the numba backend compiles as loops.
SOURCE = '''\
def energy(x, a):
    e = 0.0
    for i in range(len(x)):
        if x[i] > 0.0:
            e += a * x[i] * x[i]
        else:
            e += math.sin(a * x[i])
    return e
'''
X = [0.3, -1.2, 0.8, -0.1, 2.0]
A = 0.7

_namespace: dict = {"math": math}
exec(SOURCE, _namespace)
energy = _namespace["energy"]


def _expected():
    x = np.array(X)
    return energy(x, A), finite_difference(energy, (x, A), 0), finite_difference(energy, (x, A), 1)


def _child(script: str, tmp_path, *, backend_var: str | None = None) -> dict:
    """Run ``script`` in a fresh interpreter whose environment has no ``COARSEN_NB_BACKEND`` (or the given
    value); its last line of output is JSON."""
    env = {k: v for k, v in os.environ.items() if k != backends.ENV_VAR}
    if backend_var is not None:
        env[backends.ENV_VAR] = backend_var
    env["COARSEN_NB_CACHE"] = str(tmp_path / "cache")     # (Numba compiles into this test's own cache)
    env["PYTHONPATH"] = os.pathsep.join([_ROOT, env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


_COMPILE = '''
import json, sys
import numpy as np
import coarsen_nb as cn
SOURCE = {source!r}
{before}
f = cn.coarsen(SOURCE)
x = np.array({x!r})
value, (gx, ga) = f.value_and_grad(x, {a!r})
nx, na = cn.coarsen(SOURCE, backend="numpy").grad(x, {a!r})
f.export("exported.py")
print(json.dumps(dict(backend=f.backend, repr=repr(f), value=value, gx=gx.tolist(), ga=ga, nx=nx.tolist(), na=na,
                      numba_imported=sys.modules.get("numba") is not None)))
'''


def test_with_the_variable_unset_the_default_is_numba_and_its_export_needs_only_numpy_and_numba(tmp_path):
    got = _child(_COMPILE.format(source=SOURCE, before="", x=X, a=A), tmp_path)
    value, dx, da = _expected()
    assert got["backend"] == "numba" and "backend=numba" in got["repr"]
    assert got["value"] == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(got["gx"], dx, rtol=1e-6, atol=1e-8)
    assert got["ga"] == pytest.approx(da, rel=1e-6)
    np.testing.assert_allclose(got["gx"], got["nx"], rtol=1e-12, atol=1e-14)     # = the NumPy backend's
    assert got["ga"] == pytest.approx(got["na"], rel=1e-12)

    exported = (tmp_path / "exported.py").read_text()
    assert "Standalone: needs only NumPy and Numba." in exported
    assert not re.search(r"^\s*(import|from)\s+coarsen_nb", exported, re.MULTILINE)
    # Imported where coarsen_nb cannot be: everything it needs is in the file, NumPy and Numba.
    standalone = _child(f'''
        import sys
        sys.modules["coarsen_nb"] = None
        import importlib.util, json
        import numpy as np
        spec = importlib.util.spec_from_file_location("exported", "exported.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        gx, ga = module.energy_grad(np.array({X!r}), {A!r})
        print(json.dumps(dict(gx=gx.tolist(), ga=ga, compiled=type(module.energy_grad).__module__)))
    ''', tmp_path)
    assert standalone["compiled"].startswith("numba")          # a Numba dispatcher, not a Python function
    np.testing.assert_allclose(standalone["gx"], dx, rtol=1e-6, atol=1e-8)
    assert standalone["ga"] == pytest.approx(da, rel=1e-6)


def test_where_numba_does_not_import_the_default_is_numpy(tmp_path):
    block = 'sys.modules["numba"] = None      # import numba raises ImportError, as where it is absent'
    got = _child(_COMPILE.format(source=SOURCE, before=block, x=X, a=A), tmp_path)
    value, dx, da = _expected()
    assert got["backend"] == "numpy" and not got["numba_imported"]
    assert got["value"] == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(got["gx"], dx, rtol=1e-6, atol=1e-8)
    assert got["ga"] == pytest.approx(da, rel=1e-6)
    exported = (tmp_path / "exported.py").read_text()
    assert "Standalone: needs only NumPy." in exported and "numba" not in exported


def test_the_variable_chooses_the_default_and_an_explicit_backend_wins(monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "numpy")
    assert cn.coarsen(SOURCE).backend == "numpy"
    assert cn.coarsen(SOURCE, backend="numba").backend == "numba"
    monkeypatch.setenv(backends.ENV_VAR, "auto")
    assert cn.coarsen(SOURCE).backend == "numba"            # (Numba imports in the test environment)
    monkeypatch.delenv(backends.ENV_VAR)
    f = cn.coarsen(SOURCE)
    assert f.backend == "numba" and f.retune(max_soi=1).backend == "numba"


@pytest.mark.parametrize("value", ["nunba", "NumPy", "1"])
def test_a_bad_value_of_the_variable_is_an_error_naming_it(monkeypatch, value):
    monkeypatch.setenv(backends.ENV_VAR, value)
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(SOURCE)
    text = str(err.value)
    assert f"COARSEN_NB_BACKEND={value!r}" in text
    assert all(name in text for name in ("auto", "numpy", "numba", "cupy"))
    assert cn.coarsen(SOURCE, backend="numpy").backend == "numpy"    # an explicit backend does not read it


def test_a_bad_backend_option_lists_auto(monkeypatch):
    with pytest.raises(CoarsenError) as err:
        cn.coarsen(SOURCE, backend="fast")
    assert 'backend="auto"' in str(err.value) and 'backend="numba"' in str(err.value)


def test_the_command_line_compiles_with_the_default_and_says_which(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(backends.ENV_VAR)
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "prog.py"
    path.write_text("import math\n\n\n" + SOURCE)
    out = tmp_path / "out.py"
    rc = main([f"{path}:energy", "--args", f"np.array({X!r}), {A!r}", "--export", str(out)])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert "backend numba" in printed.out.splitlines()[0]
    assert "needs only NumPy and Numba" in out.read_text()
    monkeypatch.setenv(backends.ENV_VAR, "bogus")
    assert main([f"{path}:energy", "--args", f"np.array({X!r}), {A!r}"]) == 1
    assert "COARSEN_NB_BACKEND='bogus'" in capsys.readouterr().err
    assert main(["demo", "--out", str(tmp_path / "demo")]) == 1
    assert "COARSEN_NB_BACKEND='bogus'" in capsys.readouterr().err

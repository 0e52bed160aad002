"""``f.export(path)``: a standalone module that, imported in a fresh
interpreter with only NumPy, gives bit-for-bit the results of ``f`` and
``f.grad``; it refuses to overwrite and writes atomically."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from corpus import CORPUS

import coarsen_nb as cn
import coarsen_nb.runtime as runtime
from coarsen_nb import CoarsenError

DIFF = [e for e in CORPUS if e.differentiable and e.wrt]

_RUNNER = r"""
import importlib.util, json, sys
import numpy as np
spec = json.load(open(sys.argv[1]))
out = {}
for item in spec:
    m_spec = importlib.util.spec_from_file_location(item["module"], item["path"])
    mod = importlib.util.module_from_spec(m_spec)
    m_spec.loader.exec_module(mod)
    data = np.load(item["args"], allow_pickle=False)
    args = []
    for i, kind in enumerate(item["kinds"]):
        a = data[f"a{i}"]
        args.append(a if kind == "array" else (int(a) if kind == "int" else float(a)))
    value, _ = getattr(mod, item["name"] + "_vjp")(*args)
    grads = getattr(mod, item["name"] + "_grad")(*args)      # what f.grad runs
    fwd = getattr(mod, item["name"])(*args)
    out[item["name"]] = {
        "fwd": float(fwd).hex(), "value": float(value).hex(),
        "grads": [np.asarray(g, dtype=float).tobytes().hex() for g in grads],
    }
assert not any(k.startswith("coarsen_nb") for k in sys.modules), "the exported module imported coarsen_nb"
json.dump(out, open(sys.argv[2], "w"))
"""


def _kind(a):
    if isinstance(a, np.ndarray):
        return "array"
    return "int" if isinstance(a, (int, np.integer)) and not isinstance(a, bool) else "float"


def test_exported_modules_bit_for_bit(tmp_path):
    spec, want = [], {}
    for e in DIFF:
        f = cn.coarsen(e.fn, wrt=e.wrt)
        args = e.make_args(np.random.default_rng(7))
        grads = f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        want[e.name] = {"fwd": float(f(*args)).hex(), "value": float(f.value_and_grad(*args)[0]).hex(),
                        "grads": [np.asarray(g, dtype=float).tobytes().hex() for g in grads]}
        path = f.export(tmp_path / f"{e.name}_exported.py")
        np.savez(tmp_path / f"{e.name}_args.npz", **{f"a{i}": np.asarray(a) for i, a in enumerate(args)})
        spec.append({"module": f"{e.name}_exported", "path": str(path), "name": e.name,
                     "args": str(tmp_path / f"{e.name}_args.npz"), "kinds": [_kind(a) for a in args]})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", _RUNNER, str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads((tmp_path / "out.json").read_text())
    bad = [name for name in want if got[name] != want[name]]
    assert not bad, {name: (got[name], want[name]) for name in bad}


def _called():
    f = cn.coarsen("def g(x):\n    return x * x + 1.0\n")
    f.grad(2.0)
    return f


def test_export_refuses_to_overwrite(tmp_path):
    f = _called()
    path = tmp_path / "m.py"
    path.write_text("# precious\n")
    with pytest.raises(FileExistsError):
        f.export(path)
    assert path.read_text() == "# precious\n"
    f.export(path, overwrite=True)
    assert path.read_text() == f.source


def test_export_is_atomic_on_error(tmp_path, monkeypatch):
    f = _called()
    path = tmp_path / "m.py"

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(runtime.os, "replace", boom)
    with pytest.raises(OSError):
        f.export(path)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == [], "a temporary file was left behind"
    path.write_text("# old\n")
    with pytest.raises(OSError):
        f.export(path, overwrite=True)
    assert path.read_text() == "# old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_export_before_a_call(tmp_path):
    f = cn.coarsen("def g(x):\n    return x * x\n")
    with pytest.raises(CoarsenError):
        f.export(tmp_path / "m.py")
    assert list(tmp_path.iterdir()) == []

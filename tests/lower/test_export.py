"""``f.export(path)``: a standalone module that, imported in a fresh
interpreter with only NumPy, gives bit-for-bit the results of ``f`` and
``f.grad``; it refuses to overwrite and writes atomically."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest
from corpus import CORPUS

import coarsen_nb as cn
import coarsen_nb.export as export_module
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

    monkeypatch.setattr(export_module.os, "replace", boom)
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


def test_export_atomic_when_the_link_fails(tmp_path, monkeypatch):
    """The exclusive path (``overwrite=False``) links the temporary file: a failure there too leaves nothing."""
    f = _called()

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(export_module.os, "link", boom)
    with pytest.raises(OSError, match="disk full"):
        f.export(tmp_path / "m.py")
    assert list(tmp_path.iterdir()) == [], "a temporary file was left behind"


def test_export_racing_threads_to_one_new_path_exactly_one_wins(tmp_path):
    f = _called()
    threads, trials = 6, 20
    for trial in range(trials):
        path = tmp_path / f"race{trial}.py"
        barrier = threading.Barrier(threads)
        outcomes: list = []

        def export(path=path, barrier=barrier, outcomes=outcomes):
            barrier.wait()
            try:
                f.export(path)
                outcomes.append("won")
            except FileExistsError as exc:
                outcomes.append(exc)

        pool = [threading.Thread(target=export) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert outcomes.count("won") == 1, f"trial {trial}: {outcomes.count('won')} exports won"
        assert all(isinstance(o, CoarsenError) and str(path) in str(o) for o in outcomes if o != "won")
        assert path.read_text() == f.source
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"race{k}.py" for k in range(trials))


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_export_mode_is_a_new_files_mode_under_the_umask(tmp_path, umask, mode):
    f = _called()
    old = os.umask(umask)
    try:
        new = f.export(tmp_path / "new.py")
        (tmp_path / "old.py").write_text("# old\n")
        replaced = f.export(tmp_path / "old.py", overwrite=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(new).st_mode) == mode
    assert stat.S_IMODE(os.stat(replaced).st_mode) == mode


def test_export_to_a_missing_directory_names_the_target(tmp_path):
    f = _called()
    target = tmp_path / "no_such_dir" / "m.py"
    with pytest.raises(FileNotFoundError) as err:
        f.export(target)
    assert isinstance(err.value, CoarsenError)
    message = str(err.value)
    assert str(target) in message and str(target.parent) in message and "does not exist" in message
    assert ".coarsen_nb_" not in message, "the message names the temporary file"
    assert list(tmp_path.iterdir()) == []


def test_export_without_hard_links_is_still_exclusive(tmp_path, monkeypatch):
    """On a file system without hard links (EPERM from link) the target is created with O_EXCL."""
    f = _called()

    def no_links(*_a, **_k):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(export_module.os, "link", no_links)
    path = f.export(tmp_path / "m.py")
    assert open(path).read() == f.source
    with pytest.raises(FileExistsError):
        f.export(tmp_path / "m.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_export_on_a_file_system_that_refuses_is_a_coarsen_error_naming_the_target(tmp_path, monkeypatch):
    """A link refused for another reason than missing hard links (EACCES, EROFS) was a raw OSError."""
    f = _called()

    def refused(*_a, **_k):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(export_module.os, "link", refused)
    with pytest.raises(CoarsenError, match="cannot export to .*m.py: Permission denied") as info:
        f.export(tmp_path / "m.py")
    assert isinstance(info.value, PermissionError)          # still the OS error it stands for
    assert list(tmp_path.iterdir()) == []

"""The bytecode of a loaded numba module, kept beside its file (coarsen_nb/numba_loader.py, ``_bytecode``): a
second process loads it instead of compiling the text, and a damaged or foreign one is compiled anew, never
loaded.  Reference: central differences of the plain Python function."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from numba_child import central, energy, run_child

_CHILD = '''
    f = cn.coarsen(SOURCE, backend="numba")
    gx, gw = f.grad(np.linspace(-1.0, 2.0, 7) ** 2, 1.5)
    print(json.dumps(dict(gx=list(gx), gw=gw)))
'''


def _process(cache) -> dict:
    env = dict(os.environ, COARSEN_NB_CACHE=str(cache), COARSEN_NB_PIPELINE_CACHE="1")
    out = run_child(_CHILD, env=env)
    rx, rw = central(energy(), np.linspace(-1.0, 2.0, 7) ** 2, 1.5)
    np.testing.assert_allclose(out["gx"], rx, rtol=1e-6, atol=1e-6)
    assert out["gw"] == pytest.approx(rw, rel=1e-6)
    return out


@pytest.mark.parametrize("damage", [
    lambda data: b"garbage",                                            # not bytecode at all
    lambda data: data[: len(data) // 2],                                # cut short
    lambda data: b"\x00\x00\r\n" + data[4:],                            # another Python's magic number
], ids=["garbage", "cut-short", "other-python"])
def test_damaged_bytecode_is_compiled_anew(tmp_path, damage):
    first = _process(tmp_path)
    kept = sorted((tmp_path / "numba").glob("*.code"))
    assert {p.name.split(".")[0] for p in kept} == {p.stem for p in (tmp_path / "numba").glob("*.py")}
    for path in kept:
        path.write_bytes(damage(path.read_bytes()))
    second = _process(tmp_path)
    assert second == first
    for path in kept:                                   # rewritten, whole
        assert path.read_bytes().startswith(importlib.util.MAGIC_NUMBER)

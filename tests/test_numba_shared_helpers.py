"""The numba backend's own helpers are loaded once, from the module shared by every generated module.

``numba_loader`` leaves each helper of ``lower/numba_helpers.py`` out of the file it loads for a generated
module and defines it in the shared ``xp`` module instead, so that Numba compiles it (and caches it on disk)
once per machine and argument types rather than once per generated module (issue 14's cold compile).  What
must hold: the shared module defines every name those helpers call, the loaded file carries none of their
text (``f.source``, the exported module, still does), and the gradient is the NumPy backend's.
"""

from __future__ import annotations

import numpy as np

import coarsen_nb as cn
from coarsen_nb import module_parts, numba_loader
from coarsen_nb.lower.helpers import HELPERS, Helper
from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS, shared_blocks

_WINDOW_AND_SLICE = '''
def window_and_slice(x, w):
    s = 0.0
    for k in range(3):
        s = s + w[k] * x[k]
    t = x[1:] * 2.0
    return s + np.sum(t * t)
'''


def test_the_shared_helpers_call_only_names_the_shared_module_defines():
    for name, text in NUMBA_HELPERS.items():
        names = Helper.of_source(text).names
        assert not (names & HELPERS.keys()) - NUMBA_HELPERS.keys(), name     # (a NumPy helper it lacks)
        assert not names & {"scipy", "np"}, name        # (modules the shared module does not import: it has xp,
                                                        # _np from the prologue, and math)


def test_a_loaded_module_takes_its_helpers_from_the_shared_module(tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    monkeypatch.setenv("COARSEN_NB_PIPELINE_CACHE", "0")
    args = (np.arange(5.0), np.array([0.5, -1.0, 2.0]))
    received = []          # the parts of each module the loader is given (f.grad's: the gradient's module alone)
    real = numba_loader.load
    monkeypatch.setattr(numba_loader, "load", lambda parts, *a, **k: received.append(parts) or real(parts, *a, **k))
    f = cn.coarsen(_WINDOW_AND_SLICE, wrt=("x", "w"), backend="numba")
    got = f.grad(*args)
    (parts,) = received
    source = module_parts.joined(parts)
    used = [p.text for p in parts if p.role == module_parts.SHARED_HELPER]
    assert used and set(used) <= set(shared_blocks())               # (the writer marks only the table's blocks)
    assert any("def _take(" in block for block in used)            # (what this function is here to use)
    assert {block for block in shared_blocks() if block in source} == set(used)    # (and every one it printed)
    loaded = [p.read_text() for p in numba_loader.cache_dir().glob("coarsen_nb_generated_window_and_slice_*.py")]
    shared = [p.read_text() for p in numba_loader.cache_dir().glob("coarsen_nb_xp_*.py")]
    assert len(loaded) == 1 and len(shared) == 1
    for block in used:
        assert block not in loaded[0] and block in shared[0]
    assert loaded[0].count("\n") == source.count("\n")              # (the same line numbers as its module)
    assert set(used) <= {p.text for p in f.module_parts if p.role == module_parts.SHARED_HELPER}   # (f.source too)
    want = cn.coarsen(_WINDOW_AND_SLICE, wrt=("x", "w"), backend="numpy").grad(*args)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=0)

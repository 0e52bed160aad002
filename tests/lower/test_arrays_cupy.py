"""The array corpus (tests/corpus_arrays.py) under the CuPy backend, without a GPU: the generated module
is valid Python that imports only CuPy, and every fused kernel (``np.where``'s and ``np.clip``'s γ as a
ternary that evaluates only the taken arm) compiles with ``nvcc``.  With a GPU, test_cupy.py's forward and
gradient comparison is the check of the values."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from corpus_arrays import ARRAYS
from lower.test_cupy import HookedWriter, _nvcc

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower.module import ModuleWriter


def _compiled(entry):
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f(*entry.make_args(np.random.default_rng(0)))
    return f


@pytest.mark.parametrize("entry", ARRAYS, ids=[e.name for e in ARRAYS])
def test_generated_cupy_module_is_valid_python(entry):
    f = _compiled(entry)
    src = HookedWriter(f.plan, f._last.wrt, "cupy", "").source()
    compile(src, f"<cupy {entry.name}>", "exec")
    assert "import cupy as xp" in src and "import numpy" not in src


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_every_fused_kernel_of_the_array_corpus_compiles_with_nvcc(tmp_path):
    fused = []
    for entry in ARRAYS:
        f = _compiled(entry)
        fused += [(entry.name, fk) for fk in cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))]
    assert len(fused) > 20
    where = [fk for name, fk in fused if name == "hinge_loss"]
    assert where and any("?" in cl.translation_unit(fk) for fk in where)     # the γ of np.where, a ternary
    src = "".join(cl.translation_unit(fk, namespace=f"k{i}") for i, (_, fk) in enumerate(fused))
    res = _nvcc(src, tmp_path, "arrays")
    assert res.returncode == 0, res.stderr[-4000:]

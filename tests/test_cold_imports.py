"""What a cold numba build does not import: the CUDA printer (SymPy's C printer and ``sympy.codegen``), for
the one dtype helper the numba fuser reads (``lower/leaf_types.py``), and the Dask chunking report, which
only a call on Dask arrays writes (``dask_arrays``).  A fresh process, as a user's first ``coarsen()`` is;
its gradient checked against central differences of the plain function (benchmarks/RESULTS.md, stop 44)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from numba_child import central, energy, run_child

_PROCESS = '''
    f = cn.coarsen(SOURCE, backend="numba")
    gx, gw = f.grad(np.linspace(-1.0, 2.0, 7) ** 2, 1.5)
    unneeded = ("sympy.printing.c", "sympy.codegen.ast", "coarsen_nb.lower.cuda_printer", "coarsen_nb.dask_chunking",
                "coarsen_nb.dask_whole_blocks")
    print(json.dumps(dict(gx=list(gx), gw=gw, imported=[m for m in unneeded if m in sys.modules],
                          fuser="coarsen_nb.lower.numba_fusion" in sys.modules)))
'''


def test_a_cold_numba_gradient_imports_neither_the_cuda_printer_nor_the_dask_report(tmp_path):
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="0")
    out = run_child(_PROCESS, env=env)
    assert out["fuser"]                         # (the numba fuser ran: it is what imported the CUDA printer)
    assert out["imported"] == []
    x = np.linspace(-1.0, 2.0, 7) ** 2
    rx, rw = central(energy(), x, 1.5)
    np.testing.assert_allclose(out["gx"], rx, rtol=1e-6, atol=1e-6)
    assert out["gw"] == pytest.approx(rw, rel=1e-6)

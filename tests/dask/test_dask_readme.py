"""The README's lines that put a gradient on a cluster run as written (issue 18: "the README shows the three
lines that put a gradient on a cluster").

The README's own text is executed: its ``piecewise_sum`` cell (written to a file, so that its source can be
read) and its line ``f = cn.coarsen(piecewise_sum, wrt="x")``, then the Dask block, with two stand-ins a test
needs and nothing else: the scheduler's address is the test LocalCluster's, and ``da.from_zarr("x.zarr")``
gives a chunked array of known values (Zarr is not part of the extra).  Reference: the NumPy backend on the
same values.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import dask
import dask.distributed
import numpy as np
from dask_chunks import da

import coarsen_nb as cn

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _block_with(text: str) -> str:
    (block,) = [b for b in _blocks() if text in b]
    return block


def _readme_cell(tmp_path):
    """The README's ``piecewise_sum`` cell, as a module in a file (so that its source can be read)."""
    cell = _block_with("def piecewise_sum(x):").replace("%%coarsen --wrt x\n", "")
    path = tmp_path / "readme_cell.py"
    path.write_text("import math\n\n" + cell)
    spec = importlib.util.spec_from_file_location("readme_cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.piecewise_sum


def test_the_readmes_cluster_lines_run_as_written(client, monkeypatch, tmp_path):
    (compile_line,) = [ln for ln in _block_with("import coarsen_nb as cn").splitlines()
                       if ln.startswith("f = cn.coarsen(piecewise_sum")]
    lines = _block_with("Client(")
    assert len(lines.strip().splitlines()) == 3, lines
    namespace: dict = {"piecewise_sum": _readme_cell(tmp_path), "cn": cn}
    exec(compile_line, namespace)

    x = np.random.default_rng(0).standard_normal(1000)
    xd = da.from_array(x, chunks=(300, 300, 300, 100))
    real_client = dask.distributed.Client
    opened = []

    def to_the_test_cluster(address, **kwargs):
        assert address == "tcp://scheduler:8786"           # (the README's placeholder)
        opened.append(real_client(client.scheduler.address, **kwargs))
        return opened[-1]

    monkeypatch.setattr(dask.distributed, "Client", to_the_test_cluster)
    monkeypatch.setattr(da, "from_zarr", lambda path: xd if path == "x.zarr" else None)
    try:
        exec(lines, namespace)
        g = namespace["g"]
        assert isinstance(g, da.Array) and g.chunks == xd.chunks          # "a Dask array with x's chunks, lazy"
        assert namespace["f"].chunking.chunkwise
        with dask.distributed.get_task_stream(opened[0]) as stream:
            got = g.compute()
        assert stream.data                                                 # (it ran on the cluster's workers)
    finally:
        for c in opened:
            c.close()
    want = cn.coarsen(namespace["piecewise_sum"], wrt="x", backend="numpy").grad(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

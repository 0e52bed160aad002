"""Every demo notebook runs top to bottom, as a reader would run it.

Each runs with nbclient in a fresh kernel, in a temporary directory (the
notebooks export files).  Cells tagged ``raises-exception`` show an error on
purpose; any other error fails the test.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "demo_notebooks").glob("*.ipynb"))


def test_the_four_demo_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "loops_and_branches", "tuning", "gpu"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_demo_notebook_executes(path, tmp_path, monkeypatch):
    shutil.copy(path, tmp_path / path.name)
    # The kernel inherits this environment: make the checkout importable even
    # where it is not installed, and keep IPython's profile out of the home dir.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # The backend: quickstart, a new user's first notebook, runs with the default a user gets (auto: numba
    # here), export and Code view included; the others with NumPy, as the rest of the suite (tests/conftest.py),
    # which keeps the suite's time (each numba compile takes seconds).
    if path.stem == "quickstart":
        monkeypatch.delenv("COARSEN_NB_BACKEND", raising=False)
        monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path / "cache"))
    else:
        monkeypatch.setenv("COARSEN_NB_BACKEND", "numpy")
    nb = nbformat.read(tmp_path / path.name, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [
        out for cell in nb.cells if cell.cell_type == "code"
        and "raises-exception" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", []) if out.output_type == "error"
    ]
    assert not errors
    # No cell may have fallen back to a finer selection or hit a compiler bug (tests/conftest.py guards the
    # in-process tests the same way; the notebook runs in a kernel of its own, so its output is read here).
    texts = [out.get("text", "") + "".join(out.get("traceback", [])) + str(out.get("data", {}).get("text/plain", ""))
             for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert not [t for t in texts if "FallbackWarning" in t or "internal compiler error" in t]

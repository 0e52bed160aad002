"""``%%coarsen`` with its default backend, as a notebook user meets it: auto -> numba.

The suite pins ``COARSEN_NB_BACKEND=numpy`` (tests/conftest.py), and a kernel inherits the test's environment,
so this test starts its kernel with the variable removed: the magic then compiles with Numba, the cell that
makes the first call shows the "compiling …" line (notebook/status.py) and, in its place, how long it took,
and the gradient equals the analytical one.  The Code view of a numba function shows the user's functions,
not the ~1200 lines of ``xp`` namespace every numba module carries (the export keeps them).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from nbclient import NotebookClient

import coarsen_nb as cn
from coarsen_nb import backends, numba_loader
from coarsen_nb.notebook import magic
from coarsen_nb.notebook.bound import Bound
from coarsen_nb.notebook.magic import CoarsenCellError, register
from coarsen_nb.notebook.tuning import SWEEP
from coarsen_nb.notebook.widgets import CoarsenView

REPO = Path(__file__).resolve().parents[2]

CELLS = [
    "%load_ext coarsen_nb\nimport numpy as np",
    "%%coarsen --wrt x --no-widgets\ndef energy(x):\n    e = 0.0\n    for i in range(len(x)):\n"
    "        e += x[i] * x[i] * x[i]\n    return e",
    "xs = np.linspace(0.0, 1.0, 50)\ng = energy.grad(xs)\n"
    "print('max error', float(np.abs(g - 3 * xs ** 2).max()), 'backend', energy.backend)",
]


class _Recording(NotebookClient):
    """A client that keeps every message's type and plain text, per cell: what the frontend was shown,
    including displays later updated in place."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shown: dict[int, list[tuple[str, str]]] = {}

    def process_message(self, msg, cell, cell_index):
        content = msg.get("content", {})
        text = content.get("text") or content.get("data", {}).get("text/plain", "")
        self.shown.setdefault(cell_index, []).append((msg["header"]["msg_type"], str(text)))
        return super().process_message(msg, cell, cell_index)


def test_the_magic_compiles_with_numba_by_default_and_says_it_is_compiling(tmp_path, monkeypatch):
    monkeypatch.delenv(backends.ENV_VAR, raising=False)                  # the kernel gets no pin
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path / "cache"))      # Numba compiles: nothing on disk
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = _Recording(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors

    summary = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert "backend numba" in summary, summary                 # the magic says what auto became
    shown = client.shown[2]
    starts = r"coarsen_nb: compiling energy\w* with Numba …"
    ends = r"coarsen_nb: energy\w* compiled by Numba in \d+\.\d s"
    compiling = [k for k, (kind, text) in enumerate(shown) if kind == "display_data" and re.fullmatch(starts, text)]
    done = [k for k, (kind, text) in enumerate(shown) if kind == "update_display_data" and re.match(ends, text)]
    assert compiling and done and compiling[0] < done[0], shown
    final = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in nb.cells[2].outputs)
    assert "compiling" not in final and "compiled by Numba" in final, final       # updated in place
    error, backend = re.search(r"max error (\S+) backend (\w+)", final).groups()
    assert float(error) < 1e-12 and backend == "numba", final


SPRING = """\
def spring(x, k):
    e = 0.0
    for i in range(len(x) - 1):
        e += k * (x[i + 1] - x[i]) ** 2
    return e
"""


def test_the_views_of_a_numba_function_show_its_functions_and_cost_every_l_without_compiling(
        tmp_path, monkeypatch):
    """The Code view shows the user's functions, with the xp namespace folded (the export keeps it whole);
    the tuning sweep fills in every L's cost in the background but compiles none (each would take seconds
    of the kernel's time unasked): their times wait for "measure"."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path / "cache"))
    f = cn.coarsen(SPRING, backend="numba")
    x = np.linspace(0.0, 1.0, 6) ** 2
    bound = Bound(f)
    assert bound(x, 2.0) == sum(2.0 * (x[i + 1] - x[i]) ** 2 for i in range(5))
    compiled: list = []
    stop_listening = numba_loader.on_compile(compiled.append)

    async def shown_with_a_running_loop():             # (as in a kernel: the sweep runs on its event loop)
        view = CoarsenView(bound)
        for _ in range(600):
            await asyncio.sleep(0.05)
            if len(re.findall("<tr", view.sweep_table.value)) > len(SWEEP):     # a header and a row per L
                break
        return view

    try:
        view = asyncio.run(shown_with_a_running_loop())
    finally:
        stop_listening()
    shown = re.sub(r"<[^>]+>", "", view.source.value)              # the highlighted HTML's text
    carried = backends.NUMBA.prologue
    assert carried in f.source                                      # the module carries the xp namespace ...
    assert f"{len(carried.strip().splitlines())} lines not shown" in shown       # ... the view says so
    assert "numba_xp" not in shown and "def spring_vjp" in shown and "_jit_loop = numba.njit" in shown
    assert "backend numba" in re.sub(r"<[^>]+>", "", view.header.value)
    path = f.export(tmp_path / "spring_grad.py")
    assert Path(path).read_text() == f.source                       # the export is the whole module

    table = view.sweep_table.value
    assert len(re.findall("<tr", table)) == len(SWEEP) + 1, table
    assert compiled == [], compiled                                   # no L was compiled to be timed
    assert "press <b>measure</b> to time every L" in table


def test_the_magic_resolves_the_default_per_cell_and_names_a_bad_variable(monkeypatch, capsys):
    """The magic's compile cache is keyed by the backend the default resolved to, so that changing
    ``COARSEN_NB_BACKEND`` (``%env``) between runs of a cell compiles it again for the new backend; a value
    that names no backend fails the cell with the variable's name and no traceback."""
    start_ipython()                                   # (once per process; later calls return None)
    ip = get_ipython()
    magics = register(ip)
    try:
        monkeypatch.delenv(backends.ENV_VAR, raising=False)
        ip.run_cell_magic("coarsen", "--no-widgets", SPRING)
        assert ip.user_ns["spring"].compiled.backend == "numba" and magics.compilations == 1
        monkeypatch.setenv(backends.ENV_VAR, "numpy")
        ip.run_cell_magic("coarsen", "--no-widgets", SPRING)
        assert ip.user_ns["spring"].compiled.backend == "numpy" and magics.compilations == 2
        assert "backend numpy" in capsys.readouterr().out                  # the summary says which
        x = np.linspace(0.0, 1.0, 6) ** 2
        assert ip.user_ns["spring"](x, 2.0) == pytest.approx(sum(2.0 * (x[i + 1] - x[i]) ** 2 for i in range(5)))

        monkeypatch.setenv(backends.ENV_VAR, "gpu")
        result = ip.run_cell("%%coarsen --no-widgets\n" + SPRING)
        assert isinstance(result.error_in_exec, CoarsenCellError)
        shown = capsys.readouterr()
        assert "COARSEN_NB_BACKEND='gpu'" in shown.out + shown.err and "Traceback" not in shown.out + shown.err
    finally:
        if magic._remove_status is not None:          # (register() installed a status line: not for later tests)
            magic._remove_status()
            magic._remove_status = None

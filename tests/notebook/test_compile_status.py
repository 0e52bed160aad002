"""The "compiling …" status line (coarsen_nb/notebook/status.py): shown before Numba compiles, replaced by how
long it took once it is done; in a terminal shell on stderr, in a Jupyter frontend one updated display."""

from __future__ import annotations

import numpy as np
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

import coarsen_nb as cn
from coarsen_nb import numba_loader
from coarsen_nb.notebook import magic
from coarsen_nb.notebook.magic import register
from coarsen_nb.notebook.status import CompileStatus

CELL = """\
def spring(x, k):
    e = 0.0
    for i in range(len(x) - 1):
        e += k * (x[i + 1] - x[i]) ** 2
    return e
"""


def _plain(x, k):
    return sum(k * (x[i + 1] - x[i]) ** 2 for i in range(len(x) - 1))


@pytest.fixture
def cold(tmp_path, monkeypatch):
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))      # Numba compiles: nothing on disk
    yield
    if magic._remove_status is not None:      # (register() installed a status line: not for later tests)
        magic._remove_status()
        magic._remove_status = None


def test_the_status_line_comes_before_the_compile_and_says_when_it_is_done(cold):
    f = cn.coarsen(CELL, backend="numba")
    x = np.linspace(0.0, 1.0, 6) ** 2
    compiled = f._specialize((x, 2.0))
    seen = []
    remove = numba_loader.on_compile(lambda e: seen.append((e, len(compiled.grad.dispatcher.signatures))))
    try:
        gx, gk = f.grad(x, 2.0)
    finally:
        remove()
    (start, before), (end, after) = seen
    assert (start.name, start.seconds, before) == ("spring_grad", None, 0)    # told before Numba compiled
    assert end.name == "spring_grad" and end.seconds > 0 and not end.from_disk and after == 1
    h = 1e-6
    assert gk == pytest.approx((_plain(x, 2.0 + h) - _plain(x, 2.0 - h)) / (2 * h), rel=1e-6)


def test_a_terminal_shell_prints_compiling_then_the_time(cold, capsys):
    start_ipython()
    ip = get_ipython()
    ip.run_cell("import numpy as np")
    register(ip)
    ip.run_cell_magic("coarsen", "--backend numba --no-widgets", CELL)
    capsys.readouterr()
    ip.run_cell("g = spring.grad(np.linspace(0.0, 1.0, 6) ** 2, 2.0)")
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("coarsen_nb:")]
    assert lines[0] == "coarsen_nb: compiling spring_grad with Numba …"
    assert lines[1].startswith("coarsen_nb: spring_grad compiled by Numba in ")
    ip.run_cell("g = spring.grad(np.linspace(0.0, 1.0, 9) ** 2, 3.0)")     # the same types: nothing compiled
    assert "coarsen_nb:" not in capsys.readouterr().err


class _Handle:
    def __init__(self, shown, text):
        self.shown, self.text = shown, text

    def update(self, text):
        self.shown.append(("update", text))


def test_a_jupyter_frontend_gets_one_display_updated_in_place():
    shown = []
    status = CompileStatus(display=lambda text: shown.append(("display", text)) or _Handle(shown, text))
    status(numba_loader.CompileEvent("f_grad"))
    status(numba_loader.CompileEvent("f_grad", 0.25, from_disk=True))
    assert shown == [("display", "coarsen_nb: compiling f_grad with Numba …"),
                     ("update", "coarsen_nb: f_grad loaded from Numba's disk cache in 0.2 s")]


def test_registering_again_keeps_one_status_line(cold, capsys):
    start_ipython()
    ip = get_ipython()
    register(ip)
    register(ip)
    f = cn.coarsen(CELL, backend="numba")
    f.grad(np.linspace(0.0, 1.0, 6) ** 2, 2.0)
    err = capsys.readouterr().err
    assert err.count("compiling spring_grad") == 1

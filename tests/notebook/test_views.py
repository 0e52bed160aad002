"""The views, driven from Python on a real compilation (the browser test sees them drawn).

No frontend is needed to build ipywidgets or to set a slider's value, so the
tuning, export and text paths are checked here quickly and exactly.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from coarsen_nb.notebook.bound import Bound
from coarsen_nb.notebook.text import summary
from coarsen_nb.notebook.widgets import KNOB_MAX, TAB_TITLES, CoarsenView
from coarsen_nb.runtime import coarsen

SOURCE = """\
def hinge(x, t):
    total = 0.0
    for i in range(len(x)):
        if x[i] > t:
            total += (x[i] - t) * np.exp(-t)
    return total
"""


X, T = np.array([0.5, -0.3, 1.7, 0.9]), 0.2


@pytest.fixture(scope="module")
def compiled():
    """Compiled and called once: SOIs are chosen for the first call's argument types."""
    f = coarsen(SOURCE, wrt=("t",), namespace={"np": np})
    f.grad(X, T)
    return f


def test_view_drawn_before_the_first_call_fills_in_after_it():
    bound = Bound(coarsen(SOURCE, wrt=("t",), namespace={"np": np}))
    view = CoarsenView(bound)
    assert "first call" in view.derivatives.value and "SSA" in view.ir.value
    assert view.export_box.export() is None and "called" in view.export_box.status.value
    bound.grad(X, T)
    assert "$$" in view.derivatives.value and "first call" not in view.header.value


def _tab_titles(view):
    return tuple(view.tabs.get_title(i) for i in range(len(view.tabs.children)))


def test_view_has_the_five_tabs_with_math_graph_code_and_ir(compiled):
    view = CoarsenView(Bound(compiled))
    assert _tab_titles(view) == TAB_TITLES
    assert "$$" in view.derivatives.value and "\\overline{t} \\mathrel{+}=" in view.derivatives.value
    assert "digraph" in compiled.soi_graph().source
    assert "def " in view.source.value or "def</span>" in view.source.value
    assert "SSA" in view.ir.value


def test_ssa_names_never_put_a_dollar_inside_math(compiled):
    """SSA temporaries are named ``$ret.2``; a ``$`` in TeX ends MathJax's math early.

    Names shown as text sit in ``<code>``, which MathJax does not scan.
    """
    value = re.sub(r"<code>.*?</code>", "", CoarsenView(Bound(compiled)).derivatives.value)
    blocks = re.findall(r"\$\$(.*?)\$\$", value, re.S)
    assert blocks and value.count("$") == 4 * len(blocks)


def test_parametric_discontinuity_is_flagged(compiled):
    assert compiled.discontinuities, "x[i] > t depends on t, the differentiated input"
    view = CoarsenView(Bound(compiled))
    assert "parametric discontinuit" in view.derivatives.value
    assert "parametric discontinuity" in summary(compiled) or "ignores the jump" in summary(compiled)


def test_moving_L_retunes_rebinds_and_redraws(compiled):
    bound = Bound(compiled)
    view = CoarsenView(bound)
    header = view.header.value
    view.max_soi.value = 1  # no running event loop here, so the debounce calls at once
    assert bound.compiled.max_soi == 1
    assert "L=1" in view.header.value and view.header.value != header
    np.testing.assert_allclose(bound.grad(X, T), compiled.grad(X, T), rtol=1e-10)
    view.max_soi.value = KNOB_MAX  # back to "no cap": the first selection, from the view's memo
    assert bound.compiled is compiled


def test_measure_times_the_last_arguments_against_L1(compiled):
    bound = Bound(compiled)
    view = CoarsenView(bound)
    assert view.measure() is None and "first" in view.measured.value
    bound.grad(np.linspace(-1, 1, 50), 0.1)
    times = view.measure()
    assert set(times) == {"this selection", "L = 1"} and all(t > 0 for t in times.values())
    assert "L = 1" in view.cost.value


def test_export_refuses_to_overwrite_until_confirmed(compiled, tmp_path):
    view = CoarsenView(Bound(compiled))
    box = view.export_box
    box.filename.value = str(tmp_path / "hinge_grad.py")
    assert box.export() == tmp_path / "hinge_grad.py"
    first = (tmp_path / "hinge_grad.py").read_text()
    assert box.export() is None and "exists" in box.status.value
    box.confirm.value = True
    assert box.export() == tmp_path / "hinge_grad.py"
    assert box.confirm.value is False  # confirmation covers one write only
    assert (tmp_path / "hinge_grad.py").read_text() == first


def test_text_summary_lists_sois_and_cost(compiled):
    text = summary(compiled, cached=True, exported=None)
    assert text.startswith("hinge(x, t):") and "[cached]" in text
    assert sum(line.startswith("  SOI ") for line in text.splitlines()) == len(compiled.sois)

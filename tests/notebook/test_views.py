"""The views, driven from Python on a real compilation (the browser test sees them drawn).

No frontend is needed to build ipywidgets or to set a slider's value, so the
tuning, export and text paths are checked here quickly and exactly.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from corpus import CORPUS, CORPUS_IDS

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


def test_parametric_branch_derivative_is_a_cases_brace_not_the_gamma_function(compiled):
    """γ is a Piecewise subclass; SymPy's generic path printed it as Γ((a, p), (b, True))."""
    value = CoarsenView(Bound(compiled)).derivatives.value
    assert "\\begin{cases}" in value and "\\Gamma" not in value


def test_loop_counter_is_the_users_loop_variable_and_len_has_a_legend(compiled):
    value = CoarsenView(Bound(compiled)).derivatives.value
    assert "\\sum_{i=0}^{n_{x} - 1}" in value          # for i in range(len(x))
    assert "x_{i}" in value and "n_{x} = \\operatorname{len}" in value
    assert "loop on line 3" in value


BLACK_SCHOLES = """\
def price(s, k, sigma, t, r):
    sq = sigma * math.sqrt(t)
    d1 = (math.log(s / k) + (r + 0.5 * sigma * sigma) * t) / sq
    d2 = d1 - sq
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    return s * n1 - k * math.exp(-r * t) * n2
"""


def test_constants_are_exact_and_shared_subexpressions_are_the_ones_used():
    import math

    f = coarsen(BLACK_SCHOLES, wrt=("sigma", "r"), namespace={"math": math})
    f.grad(100.0, 95.0, 0.25, 0.5, 0.03)
    value = CoarsenView(Bound(f)).derivatives.value
    assert "0.707" not in value and "1.0 " not in value and "\\sqrt{2}" in value
    formulas, _, where = value.partition("shared subexpressions")
    defined = set(re.findall(r"\$\$(\\xi_\{\d+\}) =", where))
    assert defined, "a Black–Scholes derivative is long enough to share subexpressions"
    right_sides = formulas + "".join(re.findall(r"\$\$\\xi_\{\d+\} =(.*?)\$\$", where, re.S))
    assert defined <= set(re.findall(r"\\xi_\{\d+\}", right_sides)), "every ξ listed is used"
    # Every equation scrolls in its own box instead of widening the tab.
    assert value.count("$$") == 2 * value.count("overflow-x:auto")


def test_user_names_do_not_clash_with_temporaries():
    """A parameter ``x0`` and two versions of ``x`` in one SOI: x_0, x and x′, never x_0 for a temp."""
    src = "def f(x0, lr):\n    x = x0\n    for k in range(3):\n        x = x - lr * x\n    return x * x\n"
    f = coarsen(src, wrt=("lr",), max_soi=2)
    f.grad(1.5, 0.1)
    value = CoarsenView(Bound(f)).derivatives.value
    assert "x_{0}" in value
    assert not re.search(r"x_\{[1-9]\}", value), "SSA versions must not print as x_1, x_2"
    assert "x' = x \\left(1 - \\mathit{lr}\\right)^{3}" in value  # x′: the later x; a power keeps its parentheses


def test_a_shared_subexpression_never_takes_a_summation_index_out_of_its_sum():
    """x[i] is one symbol holding the counter: tanh(b + w x_i) may not be a ξ outside Σ_i."""
    src = ("def loss(w, b, x, y):\n    total = 0.0\n    for i in range(len(x)):\n"
           "        r = np.tanh(w * x[i] + b) - y[i]\n        total += r * r\n    return total / len(x)\n")
    f = coarsen(src, wrt=("w", "b"), namespace={"np": np})
    f.grad(0.3, 0.1, np.linspace(-1, 1, 9), np.linspace(0, 1, 9))
    value = CoarsenView(Bound(f)).derivatives.value
    where = value.split("shared subexpressions")[1:]
    assert not any("_{i}" in w.split("SOI")[0] for w in where), where


def test_a_condition_is_never_a_shared_subexpression():
    """``ξ₁ = max(0, n) = 0`` reads as a chain of equalities; a condition stays in its case."""
    from coarsen_nb.notebook.derivatives import shared_subexpressions

    n, b = sp.Symbol("n", integer=True), sp.Symbol("b")
    cond = sp.Eq(sp.Max(0, n), 0)
    long = b ** sp.Max(0, n) * sp.exp(b) * sp.sin(b) * sp.cos(b) * sp.tan(b) * sp.log(b) * sp.sqrt(b + 1)
    exprs = [sp.Piecewise((b, cond), (long, True)), sp.Piecewise((1, cond), (long * b, True))]
    shared, _ = shared_subexpressions(exprs)
    assert shared and not any(isinstance(e, sp.logic.boolalg.Boolean) for _, e in shared)


def test_two_temporaries_with_one_definition_share_one_name():
    """``len(x)`` taken twice is one value: n_x, not n_x and n_x′."""
    from coarsen_nb import ir
    from coarsen_nb.notebook.names import DisplayNames, NameContext

    length = ir.Call("len", (ir.Name("x"),))
    names = DisplayNames(["$p2.1", "$p7.1", "w.1", "w.2"],
                         NameContext(definitions={"$p2.1": length, "$p7.1": length}))
    assert names.tex("$p2.1") == names.tex("$p7.1") == "n_{x}"
    assert (names.tex("w.1"), names.tex("w.2")) == ("w", "w'")


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
    # measure fills the sweep: a row per L, the speed-up against L = 1 exactly 1.00× at L = 1
    assert view.sweep_table.value.count("<tr") == 1 + len(view._sweep(compiled).points) >= 6
    assert re.search(r">1</td>(<td[^>]*>[^<]*</td>){4}<td[^>]*>1\.00×", view.sweep_table.value)
    assert "<polyline" in view.plot.value and "gradient time" in view.plot.value


def test_measure_at_L1_is_one_times_itself(compiled):
    bound = Bound(compiled)
    view = CoarsenView(bound)
    bound.grad(X, T)
    view.max_soi.value = 1
    view.measure()
    assert "1.00×" in view.measured.value and "this is L = 1" in view.measured.value


def test_cost_table_is_in_human_units_and_explained(compiled):
    cost = CoarsenView(Bound(compiled)).cost.value
    assert " ops" in cost and " arrays" in cost and "bytes" in cost
    assert "unknown_trips" not in cost and "{}" not in cost and "derivative_ops" not in cost


def test_moving_L_moves_the_plot_marker_and_says_it_is_compiling(compiled, monkeypatch):
    bound = Bound(compiled)
    view = CoarsenView(bound)
    bound.grad(X, T)
    view.measure()
    before = view.plot.value
    seen = []
    retune = type(compiled).retune

    def spy(self, **knobs):
        seen.append(view.status.value)
        return retune(self, **knobs)

    monkeypatch.setattr(type(compiled), "retune", spy)
    view.max_soi.value = 3     # not in the sweep: selected now, while the status says so
    assert seen and "compiling the selection for L=3" in seen[0]
    assert view.plot.value != before and "coarsen-plot-current" in view.plot.value


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
    assert " derivative ops" in text and "{}" not in text and "$" not in text


#: What an internal name looks like once tags are stripped: a ``$`` (MathJax's
#: delimiter, and the compiler's temporaries), an SSA suffix ``total.2``, a
#: read marker ``#1``, or the old nested-subscript form ``{k_{1}}_{2}``.
INTERNAL = re.compile(r"\$(?!\$)|[A-Za-z_]\.\d|#\d|\{[a-z]+_\{\d+\}\}_\{|\\text\{\d")


def visible_text(html_text: str) -> str:
    """The text a reader sees (tags dropped, entities decoded, display-math delimiters removed)."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", " ", html_text)).replace("$$", " ")


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_no_internal_name_in_the_derivatives_of_any_corpus_entry(entry):
    from coarsen_nb.notebook.derivatives import derivatives_html
    from coarsen_nb.notebook.names import context_of

    f = coarsen(entry.fn, wrt=entry.wrt or None)
    f(*entry.make_args(np.random.default_rng(0)))
    sois = f.sois
    text = visible_text(derivatives_html(sois, f.discontinuities, context_of(f, sois)))
    leak = INTERNAL.search(text)
    assert leak is None, text[max(0, leak.start() - 80):leak.end() + 40]


def test_graph_tab_shows_statements_by_default_and_ssa_values_on_request(compiled):
    view = CoarsenView(Bound(compiled))
    statements = view.graph_view.dot_source
    assert "if x[i] > t:" in statements and "μ" not in statements
    view.graph_view.level.value = "ssa"
    assert "μ" in view.graph_view.dot_source and view.graph_view.dot_source != statements
    view.max_soi.value = 1   # a new selection redraws at the level chosen
    assert "μ" in view.graph_view.dot_source


def test_an_iterated_loop_shows_its_state_as_a_recurrence_in_the_papers_notation():
    """v_{k+1} = f(v_k): the state read by the loop body is v_k and the one it makes v_{k+1} (not v and v′)."""
    from coarsen_nb.notebook.derivatives import derivatives_html
    from coarsen_nb.notebook.names import context_of

    src = ("def pendulum(th0, om0, g, dt, n):\n    th = th0\n    om = om0\n    for k in range(n):\n"
           "        a = -g * np.sin(th)\n        th = th + dt * om\n        om = om + dt * a\n    return th\n")
    f = coarsen(src)
    f.grad(0.3, 0.1, 9.8, 0.01, 10)
    tex = derivatives_html(f.sois, f.discontinuities, context_of(f, f.sois))
    body = next(s for s in tex.split("SOI ") if "sin" in s)
    assert r"{\mathit{th}}_{i + 1} = \mathit{dt} {\mathit{om}}_{i} + {\mathit{th}}_{i}" in body
    assert r"\overline{{\mathit{th}}_{i}} \mathrel{+}=" in body
    assert "'" not in re.sub(r"<[^>]+>", "", body).replace("&#x27;", "'").split("values")[1]   # no primes

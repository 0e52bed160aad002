"""The SOI graph renders to valid DOT for every corpus function; one golden text."""

import pathlib
import re

import numpy as np
import pydot
import pytest
from corpus import CORPUS, CORPUS_IDS

import coarsen_nb as cn

GOLDEN = pathlib.Path(__file__).parent / "golden" / "small_graph.dot"
SMALL = '''def small(x, n):
    t = x * x
    if x > 0.5:
        y = t + x
    else:
        y = t - x
    s = 0.0
    for i in range(n):
        s = s + y * i
    return s + min(t, y)
'''


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_graph_is_valid_dot(entry):
    f = cn.coarsen(entry.fn, wrt=entry.wrt or None)
    f(*entry.make_args(np.random.default_rng(0)))
    graph = f.soi_graph()
    for text in (graph.source, graph.ssa.source):
        [g] = pydot.graph_from_dot_data(text)
        clusters = [s.get_name() for s in _subgraphs(g)]
        assert sum(c.startswith("cluster_soi") or "_soi" in c for c in clusters) == len(f.plan.kernels())
    assert graph.source == f.soi_graph().source          # deterministic
    labels = " ".join(re.findall(r'label="([^"]*)"', graph.source))
    assert "$" not in labels and not re.search(r"[A-Za-z_]\.\d", labels), labels


def _subgraphs(g):
    for s in g.get_subgraphs():
        yield s
        yield from _subgraphs(s)


def test_golden_small_graph():
    f = cn.coarsen(SMALL, wrt=("x",))
    f.grad(0.7, 4)
    text = f.soi_graph().ssa.source
    assert text == GOLDEN.read_text()
    assert 'color=red' in text and 'shape=diamond' in text and 'shape=invhouse' in text


def test_statement_view_has_one_node_per_statement_and_regions():
    """The default view: the user's lines, not SSA copies, constants, μ or η."""
    f = cn.coarsen(SMALL, wrt=("x",))
    f.grad(0.7, 4)
    text = f.soi_graph().source
    nodes = re.findall(r'^\s*s\d+ \[label=(?:"([^"\n]*)|(\w+))', text, re.M)
    statements = [quoted or bare for quoted, bare in nodes]
    assert statements.count("if x > 0.5:") == 1 and "s = s + y * i" in statements
    assert "x" in statements and "n" in statements               # the parameters
    assert not any(op in text for op in ("μ", "η", "copy", "const "))
    assert len(nodes) < len(re.findall(r"^\s*v\d+ \[", f.soi_graph().ssa.source, re.M))
    assert "for loop (line 8)" in text and "color=red" in text


def test_every_soi_has_a_statement_node_at_L1():
    """At L = 1 SOIs compute pieces of a statement that are not SSA values; each still shows."""
    src = "def f(x, y):\n    z = (x * y + x) * (y - x)\n    return z * z\n"
    f = cn.coarsen(src, wrt=("x",), max_soi=1)
    f.grad(1.5, 0.5)
    for text in (f.soi_graph().source, f.soi_graph().ssa.source):
        [g] = pydot.graph_from_dot_data(text)
        sois = [s for s in _subgraphs(g) if s.get_name().startswith("cluster_soi")]
        assert len(sois) == len(f.plan.kernels()) > 2
        assert all(s.get_nodes() for s in sois), [s.get_name() for s in sois if not s.get_nodes()]

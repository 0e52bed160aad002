"""The SOI graph renders to valid DOT for every corpus function; one golden text."""

import pathlib

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
    text = f.soi_graph().source
    [g] = pydot.graph_from_dot_data(text)
    clusters = [s.get_name() for s in _subgraphs(g)]
    assert sum(c.startswith("cluster_soi") or "_soi" in c for c in clusters) == len(f.plan.kernels())
    assert text == f.soi_graph().source          # deterministic


def _subgraphs(g):
    for s in g.get_subgraphs():
        yield s
        yield from _subgraphs(s)


def test_golden_small_graph():
    f = cn.coarsen(SMALL, wrt=("x",))
    f.grad(0.7, 4)
    text = f.soi_graph().source
    assert text == GOLDEN.read_text()
    assert 'color=red' in text and 'shape=diamond' in text and 'shape=invhouse' in text

"""Python → structured CFG: the CFG means what the function means, and has the promised shape.

Oracle: the plain Python function, run on the same inputs as the IR
interpreter.  Shape: the contract of :mod:`coarsen_nb.ir` (one exit, if
diamonds, loops with one header of two predecessors, a latch and one exit).
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import corpus
import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS
from ssa_interp import assert_same, run_ir

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.parse import parse

SEEDS = range(5)
CORPUS_TEXT = Path(corpus.__file__).read_text()


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_cfg_runs_like_python(entry):
    cfg = parse(entry.fn)
    assert not cfg.ssa
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_same(run_ir(cfg, args), entry.fn(*args), f"{entry.name}, seed {seed}")


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_cfg_is_structured(entry):
    fn = parse(entry.fn)
    assert fn.name == entry.name
    assert fn.params == tuple(inspect.signature(entry.fn).parameters)
    labels = [b.label for b in fn.blocks]
    assert len(set(labels)) == len(labels)
    assert fn.blocks[0].label == fn.entry
    bmap, preds = fn.block_map, fn.predecessors()
    for b in fn.blocks:
        assert all(s in bmap for s in b.successors()), b.label
    returns = [b for b in fn.blocks if isinstance(b.term, ir.Return)]
    assert len(returns) == 1, "several returns must become one exit"
    headers = {b.label: b.loop for b in fn.blocks if b.loop is not None}
    for b in fn.blocks:
        if b.label in headers:
            loop = headers[b.label]
            assert len(preds[b.label]) == 2 and loop.latch in preds[b.label], b.label
            assert bmap[loop.latch].term == ir.Jump(b.label)
            assert isinstance(b.term, ir.Branch)
            assert (b.term.if_true, b.term.if_false) == (loop.body, loop.exit)
            assert preds[loop.exit] == [b.label], "the loop's only way out is its header"
            if loop.kind == "range":
                assert loop.counter and loop.start is not None and loop.stop is not None
        else:
            assert len(preds[b.label]) <= 2, f"{b.label}: a join of more than one if diamond"
            # The only back edges are latch → header.
            for s in b.successors():
                if s in headers:
                    assert b.label == headers[s].latch or labels.index(b.label) < labels.index(s)


def test_corpus_loops_are_all_seen():
    # Each corpus function with a `for`/`while` in its text has as many loop headers.
    for e in CORPUS:
        src = inspect.getsource(e.fn)
        n_loops = sum(line.lstrip().startswith(("for ", "while ")) for line in src.splitlines())
        helpers = [f for f in vars(corpus).values()
                   if inspect.isfunction(f) and f.__name__.startswith("_") and f.__name__ + "(" in src]
        for h in helpers:
            n_calls = src.count(h.__name__ + "(")
            n_loops += n_calls * sum(line.lstrip().startswith(("for ", "while "))
                                     for line in inspect.getsource(h).splitlines())
        assert sum(b.loop is not None for b in parse(e.fn).blocks) == n_loops, e.name


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_function_object_and_source_text_agree(entry):
    # The same def, given as an object or inside the text of its file, gives the same IR:
    # line numbers included, since both count from the top of the file.
    from_object, from_text = parse(entry.fn), parse(CORPUS_TEXT, name=entry.name)
    assert str(from_object) == str(from_text)
    assert _positions(from_object) == _positions(from_text)


def _positions(fn):
    return [(str(s), s.line, s.col) for b in fn.blocks for s in b.stmts]


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_statement_lines_point_into_the_function(entry):
    lines, first = inspect.getsourcelines(entry.fn)
    helper_spans = [inspect.getsourcelines(f) for f in vars(corpus).values()
                    if inspect.isfunction(f) and f.__name__.startswith("_")]
    spans = [(first, first + len(lines) - 1)] + [(s, s + len(ls) - 1) for ls, s in helper_spans]
    fn = parse(entry.fn)
    stmts = [s for b in fn.blocks for s in b.stmts if s.line]
    assert stmts, "user statements carry their line"
    for s in stmts:
        assert any(lo <= s.line <= hi for lo, hi in spans), f"{s} at line {s.line}"


# ---------------------------------------------------------------- source text


TWO_DEFS = textwrap.dedent("""\
    def scale(t, k):
        if t > 0.0:
            return k * t
        return -t


    def main(x, n):
        s = 0.0
        for i in range(n):
            s += scale(x - i, 2.0)
        return s


    def other(x, n):
        return x * n
    """)


def _run_text(text, name, args):
    ns = {}
    exec(text, ns)
    return ns[name](*args)


def test_source_text_default_is_the_last_def():
    fn = parse(TWO_DEFS)
    assert fn.name == "other"
    assert run_ir(fn, (1.5, 3)) == 4.5


@pytest.mark.parametrize("x,n", [(0.5, 0), (0.5, 3), (2.25, 4), (-1.0, 2)])
def test_source_text_name_selects_and_helpers_inline(x, n):
    fn = parse(TWO_DEFS, name="main")
    assert fn.name == "main" and fn.params == ("x", "n")
    calls = [c for b in fn.blocks for s in b.stmts for c in _calls(s.value)]
    assert "scale" not in calls, "helper calls are inlined, not kept as calls"
    assert_same(run_ir(fn, (x, n)), _run_text(TWO_DEFS, "main", (x, n)))


def _calls(e):
    if isinstance(e, ir.Call):
        yield e.func
    for c in ir.children(e):
        yield from _calls(c)


def test_source_text_unknown_name_is_a_coarsen_error():
    with pytest.raises(CoarsenError):
        parse(TWO_DEFS, name="nope")


def test_source_text_without_def_is_a_coarsen_error():
    with pytest.raises(CoarsenError):
        parse("x = 1.0\n")


def test_source_text_lines_count_from_the_top_of_the_text():
    fn = parse(TWO_DEFS, name="main")
    loop = next(b.loop for b in fn.blocks if b.loop)
    assert loop.line == 9
    assert {s.line for b in fn.blocks for s in b.stmts if s.target == "s"} >= {8, 10}

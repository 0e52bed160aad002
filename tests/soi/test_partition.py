"""The size cap L as a pure pass (coarsen_nb.soi.partition): its post-conditions on random runs, and the
cut at the most-used value on runs written out."""

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from coarsen_nb.soi.partition import RunNode, partition


@st.composite
def runs(draw):
    """A run of 1-12 nodes: each defines one name and reads names defined before it (or outside)."""
    n = draw(st.integers(1, 12))
    nodes = []
    for k in range(n):
        earlier = [f"v{j}" for j in range(k)] + ["x", "y"]
        reads = draw(st.lists(st.sampled_from(earlier), max_size=6))
        nodes.append(RunNode(draw(st.integers(0, 12)), (f"v{k}",), tuple(reads)))
    return nodes


def _size(run, piece):
    return sum(node.ops for node in run[piece[0]:piece[1]])


@settings(max_examples=300, deadline=None)
@given(runs(), st.one_of(st.integers(1, 40), st.just(math.inf)))
def test_pieces_cover_the_run_and_respect_the_cap(run, cap):
    pieces = partition(run, cap)
    assert [a for a, _ in pieces] == [0] + [b for _, b in pieces[:-1]] and pieces[-1][1] == len(run)
    assert all(b > a for a, b in pieces)
    # a piece of several nodes fits under the cap; only a node larger than L alone exceeds it
    assert all(_size(run, p) <= cap for p in pieces if p[1] - p[0] > 1)
    # merging went as far as it could: no two neighbours fit in one SOI
    assert all(_size(run, (p[0], q[1])) > cap for p, q in itertools.pairwise(pieces))
    if cap == math.inf:
        assert pieces == [(0, len(run))]


@settings(max_examples=100, deadline=None)
@given(runs())
def test_operator_level_keeps_every_node_its_own_soi(run):
    assert partition(run, 1, operator=True) == [(k, k + 1) for k in range(len(run))]


def test_an_overflowing_run_is_cut_after_its_most_used_value():
    # With L = 5 the run overflows at d; inside it a is read three times, b once, c never: the cut goes
    # after a (materialized once), not before d, where the count first passed L.
    run = [RunNode(1, ("a",), ("x",)), RunNode(1, ("b",), ("a",)), RunNode(1, ("c",), ("a",)),
           RunNode(3, ("d",), ("a", "b"))]
    assert partition(run, 5) == [(0, 1), (1, 4)]


def test_ties_cut_after_the_later_value_and_a_full_piece_closes():
    run = [RunNode(1, ("a",), ()), RunNode(1, ("b",), ()), RunNode(5, ("c",), ("a", "b"))]
    # a and b are read once each: the later one wins, so the first SOI keeps both
    assert partition(run, 5) == [(0, 2), (2, 3)]
    # a piece that reaches L exactly closes there, and its neighbour does not fit beside it
    assert partition([RunNode(3, ("a",), ()), RunNode(3, ("b",), ("a",))], 3) == [(0, 1), (1, 2)]


def test_small_neighbours_are_merged():
    # The cut goes after a (read three times), then b is cut off alone before the large c: a and b fit in
    # one SOI again.
    run = [RunNode(1, ("a",), ()), RunNode(1, ("b",), ("a", "a")), RunNode(10, ("c",), ("a",))]
    assert partition(run, 4) == [(0, 2), (2, 3)]

"""Cutting one run of joinable values into SOIs of at most L operations: the size cap as a pure pass.

A *run* is what the lifter (:mod:`coarsen_nb.phi.lift`) found can share one SOI: a maximal sequence of
values, pure ``if`` s and closed-form loops between two boundaries (an opaque step, a real branch, an
iterated loop).  The lifter lifts the run once, as one SOI, and describes each of its nodes by a
:class:`RunNode`: the operations it added to that SOI, the names it defines, the names it reads.
:func:`partition` then decides — from those numbers alone, without lifting anything again — where the
run is cut:

1. **Grow, then cut at the most-used value** (the paper's split).  Nodes join the open piece in program
   order.  When one takes the piece past L, the piece is cut after the node whose value is read most
   often inside it (ties: the later node, so the first piece stays as large as it can; always before the
   node that overflowed), and growing restarts after the cut.  Materializing the most-used value once
   removes the most inlined copies of it.  A piece that reaches L exactly closes there.
2. **Merge small neighbours** while the merged piece has at most L operations: a cut at an early
   most-used value can leave two small pieces side by side.

The size of a piece is the sum of its nodes' operations as the run's lifting counted them: a value
inlined into its users counts in each user, also when a cut puts the two in different pieces (where
the user reads it as an input instead, or, a literal number, as that number:
:func:`coarsen_nb.phi.literal_numbers.literal_numbers`).  So L bounds a piece from above, and a cut never needs the
lifting that would tell how much smaller the piece became.

Operator-level AD (L = 1, ``operator=True``) keeps every node its own piece, zero-operation copies and
constants included.

After the pass: the pieces are contiguous, in order, non-empty, and together cover the run exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RunNode:
    """One node of a run, as the selection sees it."""

    ops: int                    # operations it added to the run's SOI when lifted
    defines: tuple[str, ...]    # SSA names later nodes can read (a value, a branch's γs, a loop's ηs)
    reads: tuple[str, ...]      # SSA names it reads, once per read


def partition(run: Sequence[RunNode], cap: float, operator: bool = False) -> list[tuple[int, int]]:
    """The pieces ``[(a, b), ...]`` (node ranges ``run[a:b]``) one run is cut into under the cap ``cap``.

    >>> a = RunNode(3, ("a",), ("x",))
    >>> b = RunNode(3, ("b",), ("a", "a"))
    >>> c = RunNode(3, ("c",), ("a", "b"))
    >>> partition([a, b, c], cap=5)      # cut after a, read three times; b and c overflow alone
    [(0, 1), (1, 2), (2, 3)]
    >>> partition([a, b, c], cap=6)      # a and b fill one SOI of 6 operations
    [(0, 2), (2, 3)]
    """
    if not run:
        return []
    if operator:
        return [(k, k + 1) for k in range(len(run))]
    pieces = _grow_and_cut(run, cap)
    pieces = _merge(run, pieces, cap)
    _check(pieces, len(run))
    return pieces


def _grow_and_cut(run: Sequence[RunNode], cap: float) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    start, size, k = 0, 0, 0
    while k < len(run):
        size += run[k].ops
        if size > cap and k > start:
            cut = _most_used(run, start, k)
            pieces.append((start, cut + 1))
            start, size, k = cut + 1, 0, cut + 1
            continue
        if size >= cap:
            pieces.append((start, k + 1))
            start, size = k + 1, 0
        k += 1
    if start < len(run):
        pieces.append((start, len(run)))
    return pieces


def _most_used(run: Sequence[RunNode], a: int, k: int) -> int:
    """The node of ``run[a:k]`` after which to cut ``run[a:k + 1]``: the one whose value is read most often
    inside it; ties go to the later node."""
    inside = Counter(name for node in run[a:k + 1] for name in node.reads)

    def score(i: int) -> tuple[int, int]:
        return max((inside[name] for name in run[i].defines), default=0), i

    return max(range(a, k), key=score)


def _merge(run: Sequence[RunNode], pieces: list[tuple[int, int]], cap: float) -> list[tuple[int, int]]:
    def size(a: int, b: int) -> int:
        return sum(node.ops for node in run[a:b])

    out = [pieces[0]]
    for a, b in pieces[1:]:
        first = out[-1][0]
        if size(first, b) <= cap:
            out[-1] = (first, b)
        else:
            out.append((a, b))
    return out


def _check(pieces: list[tuple[int, int]], n: int) -> None:
    """The post-condition: contiguous, in order, non-empty pieces covering ``range(n)``."""
    edge = 0
    for a, b in pieces:
        if a != edge or b <= a:
            raise AssertionError(f"SOI partition {pieces} does not cover a run of {n} nodes in order")
        edge = b
    if edge != n:
        raise AssertionError(f"SOI partition {pieces} does not cover a run of {n} nodes")

"""The typed IR shared by every stage: small frozen dataclasses that print.

Notation
--------
A :class:`Function` is a control-flow graph of :class:`Block` s.  Each block
holds φ nodes (after SSA conversion), straight-line :class:`Assign` s of pure
expressions, and one terminator (:class:`Jump`, :class:`Branch` or
:class:`Return`).  Array writes ``out[i] = v`` are pure too: they assign a new
version of ``out`` (``out.2 = update(out.1, i, v)``), which is what makes the
whole IR single-assignment and side-effect free.

The frontend keeps control flow *structured*: every join that is not a loop
header has exactly two predecessors coming from one ``if`` diamond, and every
loop has one header with two predecessors (pre-header, latch) and one exit
edge.  ``break``, ``continue`` and ``return`` inside loops are expressed by
boolean flags (see :mod:`coarsen_nb.frontend.parse`).  That is what lets
:mod:`coarsen_nb.phi.gate` give every φ an exact predicate.

Names
-----
User variables keep their names; SSA versions are ``x.1``, ``x.2`` (a dot
cannot occur in a Python name, so versions never collide with user names).
Compiler temporaries start with ``$`` (``$c3``, ``$k1``, ``$ret``).

Every node has ``__str__`` giving one line, so printed IR is deterministic text
that golden tests can compare.

Layout
------
The expressions live in :mod:`coarsen_nb.ir.exprs`, the statements, blocks
and functions in :mod:`coarsen_nb.ir.cfg`; both are read as ``ir.Name``,
``ir.Function``, ... through this package.
"""

from __future__ import annotations

from coarsen_nb.ir.cfg import (  # noqa: F401 (the IR's names, as ir.Name)
    Assign,
    Block,
    Branch,
    Function,
    Jump,
    LoopInfo,
    Phi,
    Return,
    Source,
    Terminator,
)
from coarsen_nb.ir.exprs import (  # noqa: F401 (the IR's names, as ir.Name)
    BINOPS,
    BOOLOPS,
    CMPOPS,
    UNARYOPS,
    Attr,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Const,
    Eta,
    Expr,
    Gamma,
    IfExp,
    Index,
    Mu,
    Name,
    Tuple,
    UnaryOp,
    Undef,
    Update,
    children,
    map_children,
    names_used,
    rename,
)

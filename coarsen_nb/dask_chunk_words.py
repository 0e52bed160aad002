"""An index as the user wrote it, and a plan name in the user's words, for a chunk-sum refusal (issue 18).

:mod:`coarsen_nb.dask_chunk_sums` decides from the plan, whose reads hold their index as a SymPy expression:
``x[len(x) - 1 - i]`` is read at ``-i + n_x - 1`` there.  A refusal that names the read should say what the
user wrote, so this finds, among the subscripts of that array in the function's source text, the one whose
index is that expression (``len(x)`` and ``x.shape[0]`` being the length the plan calls ``n_x``, the other
names the user's own), and gives its text.  Where none is (an index computed into a variable first, a
source that does not parse), there is no spelling and the refusal prints the expression itself: wording
only, the decision is the plan's either way.
"""

from __future__ import annotations

import ast
import functools
import operator
import textwrap
from dataclasses import dataclass

import sympy as sp

from coarsen_nb.lower import naming

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: lambda a, b: sp.floor(a / b)}      # (``x[i // 2]``: how the plan reads it)


class Spellings:
    """The subscripts of a function's source text, each with its index as an expression of the user's names."""

    def __init__(self, text: str | None):
        self.text = textwrap.dedent(text or "")

    @functools.cached_property
    def _subscripts(self) -> list[tuple[str, tuple, str]]:
        """(array name, index expressions, index text) of each ``a[...]`` of the source whose every index
        converts (integers, names, + - *, ``len(a)``, ``a.shape[0]``)."""
        try:
            tree = ast.parse(self.text)
        except SyntaxError:
            return []
        found = []
        # (in the source's order: of two spellings of one index, the first the user wrote)
        for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
            if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
                continue
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            index = tuple(_expression(p) for p in parts)
            text = ast.get_source_segment(self.text, node.slice)
            if text is not None and all(i is not None for i in index):
                found.append((node.value.id, index, text))
        return found

    def index(self, array: str, index: tuple) -> str | None:
        """The source's text of ``array[...]``'s index where it is ``index`` (SymPy expressions of the user's
        names, the lengths ``n_x``), else None."""
        for name, written, text in self._subscripts:
            if name == array and len(written) == len(index) and all(
                    sp.expand(w - sp.sympify(i)) == 0 for w, i in zip(written, index, strict=True)):
                return text
        return None


def _expression(node: ast.AST) -> sp.Expr | None:
    """``node`` as a SymPy expression of plain symbols (the user's names; ``len(x)`` is ``n_x``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sp.Integer(node.value)
    if isinstance(node, ast.Name):
        return sp.Symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _expression(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _expression(node.left), _expression(node.right)
        return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and not node.keywords:
        return sp.Symbol(f"n_{node.args[0].id}")
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and isinstance(node.value.value, ast.Name) and isinstance(node.slice, ast.Constant) \
            and node.slice.value == 0:
        return sp.Symbol(f"n_{node.value.value.id}")
    return None


@dataclass(frozen=True)
class Said:
    """A plan name as a refusal says it: the user's variable (``x.2`` -> ``x``, the loop counter ``$k1.2`` ->
    ``i``, ``len(x)``'s ``$p2.1`` -> ``n_x``: the frontend's words), never a compiler name.  Not the generated
    module's names (:class:`~coarsen_nb.lower.names.Names`): a sentence needs no unique identifiers."""

    words: dict
    spellings: Spellings = Spellings("")      # (the function's source: an index as the user wrote it)

    def __call__(self, name: str) -> str:
        return self.words.get(name.split(".")[0]) or naming.user_word(name) or naming.kind_word(name) or "a value"

    def index(self, read) -> str:
        """The index of ``read`` as the source writes it (``len(x) - 1 - i``), else in the user's names
        (``-i + n_x - 1``)."""
        array = self(read.array)
        return self.spellings.index(array, tuple(in_words(i, self) for i in read.index)) \
            or ", ".join(spoken(i, self) for i in read.index)


def spoken(e, say: Said) -> str:
    """The expression ``e`` (a SymPy index, or a plan name) as the user's names print it."""
    if isinstance(e, str):
        return say(e)
    return str(in_words(e, say))


def in_words(e, say: Said) -> sp.Expr:
    """The SymPy expression ``e`` over symbols named as the user's names (plain symbols: ``i``, ``n_x``)."""
    e = sp.sympify(e)
    return e.xreplace({s: sp.Symbol(say(s.name)) for s in e.free_symbols})

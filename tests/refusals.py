"""The shape of a refusal: a CoarsenError at the construct's line and column, naming it, with a hint and
a caret, in the user's words.  Shared by the refused-construct tables of the frontend tests."""

from __future__ import annotations

import ast
import re

import pytest

from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.parse import parse

#: Compiler-internal spellings that must never reach a message: ``$t1``, SSA versions ``x.2``, ``k1:g``.
INTERNAL_NAMES = re.compile(r"\$\w+|\b[A-Za-z_]\w*\.\d+\b|\b[A-Za-z_]\w*\d+:[A-Za-z_$]")


def column_of(src: str, line: int, node_type: str, needle: str) -> int:
    """The column of the ``node_type`` node at ``line`` whose source starts with ``needle`` (from ast)."""
    for n in ast.walk(ast.parse(src)):
        if type(n).__name__ == node_type and getattr(n, "lineno", None) == line \
                and ast.get_source_segment(src, n).startswith(needle):
            return n.col_offset
    raise AssertionError(f"no {node_type} {needle!r} at line {line}")


def assert_refused(case: tuple, namespace: dict | None = None) -> None:
    """``case`` = (id, source, line, node type at the error, its text, words the message must hold)."""
    _, src, line, node_type, needle, words = case
    with pytest.raises(CoarsenError) as info:
        parse(src, namespace=namespace)
    err = info.value
    assert (err.line, err.col) == (line, column_of(src, line, node_type, needle)), str(err)
    text = str(err)
    for w in words:
        assert w in text, f"{w!r} not in:\n{text}"
    assert err.hint.strip() and "^" in text
    assert not INTERNAL_NAMES.search(text), text

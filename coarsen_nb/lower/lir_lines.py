"""Printing a body of lowered-IR records with its line table: which statement each generated line prints.

An error raised inside a generated module names a line of it; :mod:`coarsen_nb.call_errors` needs the
statement printed there (the names it reads, the name it assigns) and the user's lines it computes (the
``lines`` of the nearest :class:`~coarsen_nb.lower.lir.Comment` at or above it, the one that opens its
segment).  It read all three back from the text with regexes; :func:`print_body_with_lines` prints a body
exactly as :func:`~coarsen_nb.lower.lir.print_body` does and keeps, for each line, the record printed
there, so they are read from the records.

A module's table (:func:`line_table`) joins the tables of its functions (:class:`PrintedFunction`: a
function's body of records and the line of its ``def`` in the module); a line of the module outside every
function body (a ``def``, a helper, a blank line) is not in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from coarsen_nb.lower import lir

#: the line ``print_body`` adds to a block of no statement but comments
PADDING = lir.Pass()


@dataclass(frozen=True)
class PrintedFunction:
    """One function of a generated module as records: ``def name(params):`` at line ``def_line`` of the
    module (1-based), then ``body``; the last ``len(defaults)`` parameters have those defaults."""

    name: str
    params: tuple[str, ...]
    defaults: tuple[lir.Expr, ...]
    body: tuple[lir.Stmt, ...]
    def_line: int

    def structured(self) -> bool:
        """Whether every statement and expression is a record (no ``Text``/``Raw`` left)."""
        try:
            lir.verify(self.body, structured=True)
            lir.verify(tuple(lir.ExprStmt(d) for d in self.defaults), structured=True)
        except AssertionError:
            return False
        return True


def print_body_with_lines(body, depth: int = 1, first_line: int = 1) -> tuple[list[str], dict[int, lir.Stmt]]:
    """The lines of ``body`` (as ``lir.print_body(body, depth)``) and, by line number (the first line is
    ``first_line``), the statement printed there: a compound statement at its header and at its
    ``else:``, a simple one at its line, :data:`PADDING` at the ``pass`` of a block of comments only."""
    lines: list[str] = []
    table: dict[int, lir.Stmt] = {}
    _print(tuple(body), depth, first_line, lines, table)
    return lines, table


def _print(body, depth: int, first: int, lines: list[str], table: dict) -> None:
    def put(text: str, s: lir.Stmt) -> None:
        table[first + len(lines)] = s
        lines.append(pad + text)

    pad = lir.INDENT * depth
    if all(isinstance(s, lir.Comment) for s in body):
        put("pass", PADDING)
    for s in body:
        if isinstance(s, lir.If):
            put(f"if {s.test}:", s)
            _print(s.body, depth + 1, first, lines, table)
            if s.orelse:
                put("else:", s)
                _print(s.orelse, depth + 1, first, lines, table)
        elif isinstance(s, lir.For):
            put(f"for {s.target} in {s.iter}:", s)
            _print(s.body, depth + 1, first, lines, table)
        elif isinstance(s, lir.While):
            put(f"while {s.test}:", s)
            _print(s.body, depth + 1, first, lines, table)
        else:                           # (one statement may print on several lines: lir_wrap)
            for text in lir.print_statement(s, depth):
                put(text[len(pad):], s)


def line_table(functions) -> dict[int, lir.Stmt]:
    """The module's line table: each line of each function's body (``PrintedFunction``) → its statement."""
    table: dict[int, lir.Stmt] = {}
    for f in functions:
        table.update(print_body_with_lines(f.body, 1, f.def_line + 1)[1])
    return table


def user_lines(table: dict[int, lir.Stmt], line: int) -> list[int]:
    """The user's lines of the segment generated line ``line`` belongs to: those of the nearest comment at
    or above it in its function; none before the function's first comment."""
    while line in table:
        s = table[line]
        if isinstance(s, lir.Comment):
            return list(s.lines)
        line -= 1
    return []


def assigned_name(s: lir.Stmt | None) -> str | None:
    """The name ``s`` assigns where it is ``name = value`` (not a store into an array, not ``a, b = ...``);
    for a ``raise`` standing for a dropped step (:attr:`~coarsen_nb.lower.lir.Raise.step`), that step's name."""
    if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name):
        return s.target.id
    if isinstance(s, lir.Raise):
        return s.step
    return None

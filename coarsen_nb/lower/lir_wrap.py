"""Long statements printed over several lines, inside brackets, as a person would break them.

A generated statement whose one line would pass :data:`WIDTH` characters (a loop function's call with a dozen
arrays, a tuple of results, a long sum of products) is broken inside the brackets its expression already has —
a call's arguments, a tuple's elements, a ``def``'s parameters — or inside parentheses added around its top
operator chain (``(a * b\\n + c * d)``) or an ``if``'s ``or`` of tests, with the pieces packed greedily onto
continuation lines one indent in (a ``def``'s and an ``if``'s two, so that they stand apart from its body).
An assignment whose targets alone are long has them parenthesized and broken the same way.  Nothing else
changes: the pieces print exactly as they do on one line, so the statement means what it meant (the parentheses
added group what Python already grouped), and a piece that cannot be broken stays long.

Why here and not in a formatter run over the text afterwards: generated code is never read back (issue 13),
and the records know where their brackets are; :mod:`coarsen_nb.lower.lir_lines` and
:mod:`coarsen_nb.lower.lir_ast` count a statement's lines from this same print, so line tables and the cost
model's line numbers stay those of the text.
"""

from __future__ import annotations

from coarsen_nb.lower.lir_exprs import BinOp, BoolOp, Call, Expr, List, Paren, Tuple

#: One level of indentation in generated code.
INDENT = "    "

#: The widest line generated code has (the project's own line length, ``pyproject.toml``).
WIDTH = 120


def statement_lines(pad: str, head: str, value: Expr, tail: str = "", whole: bool = True) -> list[str]:
    """``pad + head + value + tail`` as one line, or broken inside ``value``'s brackets where it is too long
    (``whole``: ``value`` is a statement's whole expression, so parentheses may be added around it)."""
    one = f"{pad}{head}{value}{tail}"
    if len(one) <= WIDTH:
        return [one]
    split = _split(value, whole)
    if split is None:
        return [one]
    opener, items, closer = split
    return _packed(f"{pad}{head}{opener}", items, closer + tail, pad + INDENT)


def assignment_lines(pad: str, target: Expr, op: str, value: Expr) -> list[str]:
    """``target op value``: the value broken as :func:`statement_lines` does; where the first line is still
    too long, the targets are a parenthesized tuple broken first, the value going on from its last line."""
    lines = statement_lines(pad, f"{target} {op} ", value)
    if len(lines[0]) <= WIDTH or not isinstance(target, Tuple) or len(target.elts) < 2:
        return lines
    first = _packed(f"{pad}(", _separated([("", x) for x in target.elts]), f") {op} ", pad + INDENT)
    return first[:-1] + statement_lines(pad, first[-1][len(pad):], value)


def if_lines(pad: str, test: Expr) -> list[str]:
    """``if test:``, broken as :func:`statement_lines` does, its continuation lines two indents in."""
    one = f"{pad}if {test}:"
    split = None if len(one) <= WIDTH else _split(test, True)
    if split is None:
        return [one]
    opener, items, closer = split
    return _packed(f"{pad}if {opener}", items, f"{closer}:", pad + 2 * INDENT)


def def_lines(pad: str, name: str, params) -> list[str]:
    """``def name(params):``, its parameters on continuation lines two indents in when it is too long."""
    one = f"{pad}def {name}({', '.join(params)}):"
    if len(one) <= WIDTH or not params:
        return [one]
    items = [("", p, ",") for p in params[:-1]] + [("", params[-1], "")]
    return _packed(f"{pad}def {name}(", items, "):", pad + 2 * INDENT)


def _split(e: Expr, whole: bool):
    """``(opener, items, closer)`` of the brackets ``e`` may break inside, or None; an item is
    ``(prefix, expression, separator)``.  Parentheses are added only around a ``whole`` expression: around
    a piece of one they could group differently from the text (records without a :class:`Paren` print
    ``a + b + c`` for ``a + (b + c)``; the text, which is what runs, means ``(a + b) + c``)."""
    if isinstance(e, Call):
        pieces = [("", a) for a in e.args] + [(f"{k}=", v) for k, v in e.kwargs]
        return (f"{e.func}(", _separated(pieces), ")") if pieces else None
    if isinstance(e, (Tuple, List)) and e.elts:
        items = _separated([("", x) for x in e.elts])
        if isinstance(e, Tuple) and (len(e.elts) == 1 or e.trailing):
            items[-1] = (items[-1][0], items[-1][1], ",")
        return ("[" if isinstance(e, List) else "(", items, "]" if isinstance(e, List) else ")")
    if isinstance(e, Paren) and isinstance(e.inner, BinOp) and e.inner.spaced:
        return "(", _chain(e.inner), ")"
    if whole and isinstance(e, BinOp) and e.spaced:
        return "(", _chain(e), ")"         # parentheses around the whole chain group what Python grouped
    if whole and isinstance(e, BoolOp):
        # (an ``if``'s tests joined by one operator: numba_bounds.bounds_guard's, each operand after it)
        return "(", [("" if k == 0 else f"{e.op} ", v, "") for k, v in enumerate(e.values)], ")"
    return None


def _separated(pieces):
    return [(prefix, x, "," if k < len(pieces) - 1 else "") for k, (prefix, x) in enumerate(pieces)]


def _chain(e: BinOp):
    """The operands of the operator chain ``e`` prints, each after its operator: ``a + b * c - d`` →
    ``a``, ``+ b``, ``* c``, ``- d``.  Breaking between them changes only where the lines end: the tokens,
    so Python's grouping of them, stay those of the one line."""
    items = []

    def walk(x, op):
        if isinstance(x, BinOp) and x.spaced:
            walk(x.left, op)
            walk(x.right, f"{x.op} ")
        else:
            items.append((op, x, ""))

    walk(e, "")
    return items


def _packed(first: str, items, closer: str, inner: str) -> list[str]:
    """``first``, then ``items`` packed greedily onto lines at indent ``inner``, ``closer`` after the last.
    An item too long for a line of its own is broken in turn: an operator chain into its operands, in place
    (inside brackets a line may end between any two tokens), anything else inside its own brackets."""
    out = [first]
    line = None
    items = [(prefix, e, sep) for prefix, e, sep in items]
    items[-1] = (items[-1][0], items[-1][1], items[-1][2] + closer)
    k = 0
    while k < len(items):
        prefix, e, end = items[k]
        k += 1
        text = f"{prefix}{e}{end}"
        if line is not None and len(line) + 1 + len(text) <= WIDTH:
            line = f"{line} {text}"
            continue
        if len(inner) + len(text) > WIDTH and isinstance(e, BinOp) and e.spaced:
            chain = _chain(e)
            chain[0] = (prefix + chain[0][0], chain[0][1], "")
            chain[-1] = (chain[-1][0], chain[-1][1], end)
            items[k - 1:k] = chain
            k -= 1
            continue
        if line is not None:
            out.append(line)
        if len(inner) + len(text) <= WIDTH:
            line = inner + text
        else:
            *done, line = statement_lines(inner, prefix, e, end, whole=False)
            out += done
    out.append(line)
    return out

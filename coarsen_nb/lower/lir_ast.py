"""Lowered-IR records as the ``ast`` nodes Python would parse their print into.

The cost model (:mod:`coarsen_nb.lower.cost`, with :mod:`~coarsen_nb.lower.values` and
:mod:`~coarsen_nb.lower.shapes`) interprets ``ast`` nodes.  It read them with ``ast.parse`` of the printed
module; :func:`to_ast` builds the same nodes from the records (:mod:`coarsen_nb.lower.lir`), so the
interpreter is handed what it always was and nothing parses generated text.

*The same nodes* is exact: ``ast.dump(to_ast(body)) == ast.dump(ast.parse(print of body))``
(``tests/lower/test_lir_ast.py``).  A record prints the characters its fields say and adds no parentheses
(a :class:`~coarsen_nb.lower.lir.Paren` says where), so the tree Python parses from the text need not be
the record tree: ``BinOp("*", a, BinOp("*", b, c))`` prints ``a * b * c``, which Python groups as
``(a * b) * c``.  So an expression is first flattened into the operands and operators of its print, with
a ``Paren`` (and a call's argument, a subscript's item, a display's element: whatever sits between
brackets) one operand, built on its own; then those are grouped by Python's precedence and
associativity (:func:`_group`, precedence climbing).  A literal (:class:`~coarsen_nb.lower.lir.Lit`) is
decoded from its code by the few forms printers write: a number (a sign is a unary operator, as Python
reads ``-1``), ``True``/``False``/``None``/``...``, a string's ``repr``, a dotted name (``math.inf``).

:class:`~coarsen_nb.lower.lir.Raw` and :class:`~coarsen_nb.lower.lir.Text` (code still written as text)
raise :class:`NotStructured`: their nodes could only come from parsing them.  A ``Comment`` is no node.
Statements get the line numbers their print has (``first_line``: the line of the body's first line), as
``ast.parse`` gives them (the cost model names an undecided ``while`` by its line).  An ``if`` marked
``exceptional`` (:class:`~coarsen_nb.lower.lir.If`: its test holds only on data that is not finite) is an
``ast.If`` that says so to :func:`exceptional`, beside what Python would parse (``ast.dump`` shows no more).
"""

from __future__ import annotations

import ast

from coarsen_nb.lower import lir

_BIN = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
        "**": ast.Pow, "@": ast.MatMult, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
        "<<": ast.LShift, ">>": ast.RShift}
_CMP = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq,
        "is": ast.Is, "is not": ast.IsNot, "in": ast.In, "not in": ast.NotIn}
_UNARY = {"-": ast.USub, "+": ast.UAdd, "~": ast.Invert, "not": ast.Not}
# Python's binding strength (higher binds tighter): `if`-`else` 1, or 2, and 3, not 4, comparisons 5,
# | 6, ^ 7, & 8, shifts 9, + - 10, * / // % @ 11, unary + - ~ 12, ** 13 (right-associative)
_PREC = {"|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "//": 11, "%": 11,
         "@": 11, "**": 13}
_CONSTANTS = {"True": True, "False": False, "None": None, "...": ...}


class NotStructured(ValueError):
    """A record that is text (``Raw``, ``Text``): it has no nodes but those parsing it would give."""


def to_ast(node, first_line: int = 1):
    """``node`` as ``ast``: an expression as an ``ast.expr``, a statement as a list of ``ast.stmt`` (none
    for a comment), a body (a sequence of statements) as the ``ast.Module`` its print parses to."""
    if isinstance(node, lir.Expr):
        return expression(node)
    if isinstance(node, lir.Stmt):
        return statements((node,), first_line, padded=False)[0]
    return ast.Module(body=statements(tuple(node), first_line)[0], type_ignores=[])


def function_def(name: str, params, defaults, body, def_line: int) -> ast.FunctionDef:
    """``def name(params): body`` as ``ast.parse`` gives it, the ``def`` at line ``def_line`` (the last
    ``len(defaults)`` parameters have those default expressions)."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[expression(d) for d in defaults])
    stmts, _ = statements(tuple(body), def_line + 1)
    fn = ast.FunctionDef(name=name, args=args, body=stmts, decorator_list=[], returns=None, type_comment=None,
                         lineno=def_line, col_offset=0)
    return ast.fix_missing_locations(fn)


# -- statements --------------------------------------------------------------------------------------


def statements(body, line: int, depth: int = 1, padded: bool = True) -> tuple[list[ast.stmt], int]:
    """The nodes of ``body`` printed from line ``line`` on, and the line after it.  ``padded``: a block
    whose statements are all comments prints a ``pass`` first (``lir.print_body``)."""
    out: list[ast.stmt] = []
    if padded and all(isinstance(s, lir.Comment) for s in body):
        out.append(_at(ast.Pass(), line, depth))
        line += 1
    for s in body:
        node, after = _statement(s, line, depth)
        if node is not None:
            out.append(_at(node, line, depth))
        line = after
    return out, line


def _at(node: ast.stmt, line: int, depth: int) -> ast.stmt:
    node.lineno, node.col_offset = line, len(lir.INDENT) * depth
    return node


def exceptional(node: ast.If) -> bool:
    """Whether ``node`` was built from an ``if`` record marked ``exceptional`` (its test holds only on data that
    is not finite)."""
    return getattr(node, "coarsen_exceptional", False)


def _statement(s: lir.Stmt, line: int, depth: int):
    """``s`` 's node (None for a comment) and the line after its print."""
    if isinstance(s, (lir.If, lir.For, lir.While)):
        body, after = statements(s.body, line + 1, depth + 1)
        if isinstance(s, lir.If):
            orelse = []
            if s.orelse:
                orelse, after = statements(s.orelse, after + 1, depth + 1)
            node = ast.If(test=expression(s.test), body=body, orelse=orelse)
            if s.exceptional:
                node.coarsen_exceptional = True
        elif isinstance(s, lir.For):
            node = ast.For(target=_target(s.target), iter=expression(s.iter), body=body, orelse=[],
                           type_comment=None)
        else:
            node = ast.While(test=expression(s.test), body=body, orelse=[])
        return node, after
    return _simple(s), line + len(lir.print_statement(s, depth))      # (a long one breaks: lir_wrap)


def _simple(s: lir.Stmt):
    if isinstance(s, lir.Assign):
        return ast.Assign(targets=[_target(s.target)], value=expression(s.value), type_comment=None)
    if isinstance(s, lir.AugAssign):
        return ast.AugAssign(target=_target(s.target), op=_BIN[s.op](), value=expression(s.value))
    if isinstance(s, lir.ExprStmt):
        return ast.Expr(value=expression(s.value))
    if isinstance(s, lir.Return):
        return ast.Return(value=expression(s.value))
    if isinstance(s, lir.Raise):
        return ast.Raise(exc=expression(s.value), cause=None)
    if isinstance(s, lir.Free):
        return ast.Delete(targets=[ast.Name(id=n, ctx=ast.Del()) for n in s.names])
    if isinstance(s, lir.Break):
        return ast.Break()
    if isinstance(s, lir.Pass):
        return ast.Pass()
    if isinstance(s, lir.Comment):
        return None
    if isinstance(s, lir.Text):
        raise NotStructured(f"a statement still written as text: {s.line!r}")
    raise TypeError(f"not a statement of the lowered IR: {s!r}")


def _target(e: lir.Expr) -> ast.expr:
    """An assignment's (or a ``for`` 's) target: the expression's node in the store context."""
    return _store(expression(e))


def _store(node: ast.expr) -> ast.expr:
    if isinstance(node, (ast.Tuple, ast.List)):
        for elt in node.elts:
            _store(elt)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Starred)):
        node.ctx = ast.Store()
    return node


# -- expressions -------------------------------------------------------------------------------------


def expression(e: lir.Expr) -> ast.expr:
    """The node Python parses ``str(e)`` into."""
    if isinstance(e, lir.Tuple) and e.bare:      # `a, b` (a target or a value): only whole, never an operand
        return ast.Tuple(elts=[expression(x) for x in e.elts], ctx=ast.Load())
    tokens: list = []
    _flatten(e, tokens)
    node, end = _group(tokens, 0, 0)
    if end != len(tokens):
        raise ValueError(f"{e} does not print as one expression")
    return node


def _flatten(e: lir.Expr, out: list) -> None:
    """Append the operands (``("x", node)``; ``("x", node, "int")`` for an int literal) and operators of
    ``e`` 's print to ``out``: an infix operator ``("b", op)``, a comparison ``("c", op)``, ``("and",)``,
    ``("or",)``, a prefix operator ``("u", op)``, ``("if",)`` and ``("else",)``.  A call, subscript or
    attribute applies to the last operand printed before it (``a * b.shape`` is ``a * (b.shape)``)."""
    if isinstance(e, lir.Name):
        out.append(("x", ast.Name(id=e.id, ctx=ast.Load())))
    elif isinstance(e, lir.Lit):
        _literal(e.code, out)
    elif isinstance(e, lir.Paren):
        out.append(("x", expression(e.inner)))
    elif isinstance(e, lir.Attr):
        _flatten(e.value, out)
        if len(out[-1]) == 3:
            raise ValueError(f"an int literal's attribute does not print as Python: {e}")
        out[-1] = ("x", ast.Attribute(value=out[-1][1], attr=e.attr, ctx=ast.Load()))
    elif isinstance(e, lir.Index):
        _flatten(e.value, out)
        if not e.items:
            raise ValueError(f"a subscript without an index: {e}")
        items = [_item(i) for i in e.items]
        index = items[0] if len(items) == 1 else ast.Tuple(elts=items, ctx=ast.Load())
        out[-1] = ("x", ast.Subscript(value=out[-1][1], slice=index, ctx=ast.Load()))
    elif isinstance(e, lir.Call):
        _flatten(e.func, out)
        out[-1] = ("x", ast.Call(func=out[-1][1], args=[_element(a) for a in e.args],
                                 keywords=[ast.keyword(arg=k, value=expression(v)) for k, v in e.kwargs]))
    elif isinstance(e, lir.BinOp):
        _flatten(e.left, out)
        out.append(("b", e.op))
        _flatten(e.right, out)
    elif isinstance(e, lir.Unary):
        out.append(("u", e.op))
        _flatten(e.operand, out)
    elif isinstance(e, lir.Compare):
        _flatten(e.left, out)
        out.append(("c", e.op))
        _flatten(e.right, out)
    elif isinstance(e, lir.BoolOp):
        for k, v in enumerate(e.values):
            if k:
                out.append((e.op,))
            _flatten(v, out)
    elif isinstance(e, lir.IfExp):
        _flatten(e.body, out)
        out.append(("if",))
        _flatten(e.test, out)
        out.append(("else",))
        _flatten(e.orelse, out)
    elif isinstance(e, lir.Tuple) and not e.bare:
        out.append(("x", ast.Tuple(elts=[_element(x) for x in e.elts], ctx=ast.Load())))
    elif isinstance(e, lir.List):
        out.append(("x", ast.List(elts=[_element(x) for x in e.elts], ctx=ast.Load())))
    elif isinstance(e, lir.Raw):
        raise NotStructured(f"an expression still written as text: {e.code!r}")
    else:
        raise ValueError(f"{e!r} cannot stand here (a bare tuple or a slice inside an expression)")


def _element(e: lir.Expr) -> ast.expr:
    """An argument or a display's element: one expression between commas."""
    if isinstance(e, lir.Tuple) and e.bare:
        raise ValueError(f"a bare tuple as an element prints as several: {e}")
    return expression(e)


def _item(e: lir.Expr) -> ast.expr:
    """A subscript's item: a slice, or an expression."""
    if isinstance(e, lir.Slice):
        part = lambda b: None if b is None else expression(b)      # noqa: E731
        return ast.Slice(lower=part(e.lo), upper=part(e.hi), step=part(e.step))
    return _element(e)


def _literal(code: str, out: list) -> None:
    """A literal's code as Python reads it: its signs prefix operators, then a constant or a dotted name."""
    while code[:1] in ("-", "+"):
        out.append(("u", code[0]))
        code = code[1:]
    if code in _CONSTANTS:
        out.append(("x", ast.Constant(value=_CONSTANTS[code])))
    elif code[:1] in ("'", '"') and len(code) >= 2 and code[-1] == code[0] and code[:3] not in ("'''", '"""'):
        inner = code[1:-1]
        if "\\" in inner:
            inner = inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
        out.append(("x", ast.Constant(value=inner)))
    elif code[:1].isdigit() or code[:1] == "." and code[1:2].isdigit():
        value = _number(code)
        # (an int literal is marked: `2.shape` is not Python, `(2).shape` and `2.0.shape` are)
        out.append(("x", ast.Constant(value=value)) + (("int",) if isinstance(value, int) else ()))
    elif code and all(part.isidentifier() for part in code.split(".")):
        parts = code.split(".")
        node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
        for attr in parts[1:]:
            node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
        out.append(("x", node))
    else:
        raise ValueError(f"a literal this adapter does not know: {code!r}")


def _number(code: str):
    if code[-1] in "jJ":
        return complex(code)
    if code[:2].lower() in ("0x", "0o", "0b"):
        return int(code, 0)
    if any(c in code for c in ".eE") or code.lower() in ("inf", "nan"):
        return float(code)
    return int(code, 10)


def _group(tokens: list, i: int, lowest: int) -> tuple[ast.expr, int]:
    """The expression starting at ``tokens[i]`` of operators binding at least as tight as ``lowest``
    (see ``_PREC``), and where it ends: precedence climbing, as Python's grammar groups."""
    kind = tokens[i][0]
    if kind == "u":
        op = tokens[i][1]
        if op == "not" and lowest > 4:
            raise ValueError("`not` after an operator that binds tighter: not Python")
        operand, i = _group(tokens, i + 1, 4 if op == "not" else 12)
        left: ast.expr = ast.UnaryOp(op=_UNARY[op](), operand=operand)
    elif kind == "x":
        left, i = tokens[i][1], i + 1
    else:
        raise ValueError(f"an operand expected, not {tokens[i]}")
    while i < len(tokens):
        kind = tokens[i][0]
        if kind == "b":
            op = tokens[i][1]
            if _PREC[op] < lowest:
                break
            right, i = _group(tokens, i + 1, 12 if op == "**" else _PREC[op] + 1)
            left = ast.BinOp(left=left, op=_BIN[op](), right=right)
        elif kind == "c":
            if lowest > 5:
                break
            ops, comparators = [], []
            while i < len(tokens) and tokens[i][0] == "c":
                ops.append(_CMP[tokens[i][1]]())
                right, i = _group(tokens, i + 1, 6)
                comparators.append(right)
            left = ast.Compare(left=left, ops=ops, comparators=comparators)
        elif kind in ("and", "or"):
            strength = 3 if kind == "and" else 2
            if lowest > strength:
                break
            values = [left]
            while i < len(tokens) and tokens[i][0] == kind:
                right, i = _group(tokens, i + 1, strength + 1)
                values.append(right)
            left = ast.BoolOp(op=ast.And() if kind == "and" else ast.Or(), values=values)
        elif kind == "if":
            if lowest > 1:
                break
            test, i = _group(tokens, i + 1, 2)
            if i >= len(tokens) or tokens[i][0] != "else":
                raise ValueError("a conditional expression without its else")
            orelse, i = _group(tokens, i + 1, 1)
            left = ast.IfExp(test=test, body=left, orelse=orelse)
        else:                                   # `else` ends the test of the conditional around it
            break
    return left, i

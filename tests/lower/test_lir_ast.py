"""lower/lir_ast.py (records as the ast nodes their print parses to) and lower/lir_lines.py (printing a body
with its line table).

Oracle: Python's own parser of the printed records (``ast.parse``; parsing is fine in a test: it is the
independent reference the cost model used to call), on one record of every type, on the random bodies and
expressions of test_lir.py, on random expressions printed without any parentheses (where Python's grouping
is not the records'), and on the structured statements the compiler emits for a few corpus functions.
"""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lower.test_lir import _printed, bodies, exprs

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import (
    Assign,
    Attr,
    AugAssign,
    BinOp,
    BoolOp,
    Break,
    Call,
    Comment,
    Compare,
    ExprStmt,
    For,
    Free,
    If,
    IfExp,
    Index,
    List,
    Lit,
    Name,
    Paren,
    Pass,
    Raise,
    Return,
    Slice,
    Tuple,
    Unary,
    While,
)
from coarsen_nb.lower.lir_ast import NotStructured, expression, function_def, to_ast
from coarsen_nb.lower.lir_lines import PADDING, PrintedFunction, line_table, print_body_with_lines, user_lines


def _same_as_parsed(body, depth=0):
    text = "\n".join(lir.print_body(body, depth)) + "\n"
    if depth:
        text = "if True:\n" + text
    parsed = ast.parse(text)
    if depth:
        parsed = ast.Module(body=parsed.body[0].body, type_ignores=[])
    assert ast.dump(to_ast(body, first_line=2 if depth else 1)) == ast.dump(parsed), text
    # and each statement at the line Python gives it
    ours = [(type(n).__name__, n.lineno) for n in ast.walk(to_ast(body, 2 if depth else 1)) if isinstance(n, ast.stmt)]
    theirs = [(type(n).__name__, n.lineno) for n in ast.walk(parsed) if isinstance(n, ast.stmt)]
    assert ours == theirs, text


x, y, i = Name("x"), Name("y"), Name("i")
EVERY_RECORD = (
    Comment("SOI 1 (line 3)", lines=(3,)),
    Assign(Name("t"), BinOp("*", x, Lit("0.5"))),
    Assign(Index(Name("b_x"), (Slice(Lit("1"), None), Lit("None"), Lit("..."), Slice(None, None, Lit("-1")))),
           Unary("-", Name("t"))),
    Assign(Tuple((Name("a"), Name("b")), bare=True), Tuple((y, x), bare=True)),
    Assign(Attr(Name("o"), "field"), List((x, Tuple((y,)), Tuple(())))),
    AugAssign(Name("b_x"), "+", Call(Attr(Name("xp"), "sum"), (Name("t"),), (("axis", Lit("0")),))),
    AugAssign(Index(Name("b_x"), (i, Slice())), "*", BinOp("**", Paren(BinOp("-", x, y)), Lit("2"), spaced=False)),
    ExprStmt(Call(Attr(Name("tape"), "append"), (Tuple((x, y), trailing=True),))),
    If(BoolOp("and", (Compare(">", Name("n"), Lit("0")), Unary("not", Name("done")))),
       (Assign(Name("u"), IfExp(x, Compare("<", y, Lit("-math.inf")), Lit("'valid'"))),),
       (Comment("no statement"),)),
    For(Name("k"), Call(Name("range"), (BinOp("-", Call(Name("len"), (Name("tape"),)), Lit("1")), Lit("-1"),
                                         Lit("-1"))),
        (Assign(Tuple((Name("a"), Name("b")), bare=True), Index(Name("tape"), (Name("k"),))), Break())),
    While(Lit("True"), (If(Compare("is not", x, Lit("None")), (Pass(),)), Break())),
    Free(("t", "u")),
    Raise(Call(Name("ValueError"), (Lit(repr("it's \"odd\"\n")),))),
    Return(Tuple((x, BinOp("@", x, Attr(y, "T"))), bare=True)),
)


def test_every_record_type_is_the_node_python_parses_its_print_into():
    _same_as_parsed(EVERY_RECORD)
    _same_as_parsed(EVERY_RECORD, depth=1)
    assert to_ast(Comment("x")) == [] and isinstance(to_ast(x), ast.Name)


def test_text_is_refused_not_parsed():
    with pytest.raises(NotStructured, match="text"):
        to_ast((Assign(x, lir.Raw("a + b")),))
    with pytest.raises(NotStructured, match="text"):
        to_ast((lir.Text("x = 1"),))


@settings(max_examples=300, deadline=None)
@given(bodies())
def test_random_bodies_are_the_nodes_of_their_print(body):
    _same_as_parsed(body)


@settings(max_examples=300, deadline=None)
@given(exprs)
def test_random_expressions_are_the_nodes_of_their_print(e):
    assert ast.dump(expression(e)) == ast.dump(ast.parse(str(e), mode="eval").body)


@settings(max_examples=300, deadline=None)
@given(_printed.filter(lambda e: not any(isinstance(n, lir.Raw) for n in lir.walk(e))))
def test_expressions_nested_without_parentheses_group_as_python_groups_their_print(e):
    _agrees(e)


_leaves = st.sampled_from([Name("a"), Name("b"), Lit("2"), Lit("-1"), Lit("0.5"), Lit("-math.inf"), Lit("True"),
                           Index(Name("v"), (Lit("0"),))])
_ungrouped = st.recursive(_leaves, lambda sub: st.one_of(
    st.builds(BinOp, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^"]), sub, sub,
              st.booleans()),
    st.builds(Compare, st.sampled_from(["<", "<=", "==", "!=", "is not", "not in"]), sub, sub),
    st.builds(lambda op, a, b: BoolOp(op, (a, b)), st.sampled_from(["and", "or"]), sub, sub),
    st.builds(Unary, st.sampled_from(["-", "+", "~", "not"]), sub),
    st.builds(IfExp, sub, sub, sub),
    st.builds(lambda a: Attr(a, "shape"), sub),
    st.builds(lambda a, b: Index(a, (b, Slice(b, None))), sub, sub),
    st.builds(lambda f, a: Call(f, (a,), (("axis", a),)), sub, sub),
    st.builds(Paren, sub),
), max_leaves=10)


@settings(max_examples=1000, deadline=None)
@given(_ungrouped)
def test_any_operator_nesting_groups_by_pythons_precedence(e):
    """Records nested with no Paren print text Python groups its own way: the adapter groups as it does."""
    _agrees(e)


def _agrees(e):
    try:
        parsed = ast.parse(str(e), mode="eval").body
    except SyntaxError:           # (`a + not b`, `0.shape`: records whose print is not Python are refused)
        with pytest.raises(ValueError):
            expression(e)
        return
    assert ast.dump(expression(e)) == ast.dump(parsed), str(e)


def test_a_function_is_its_def_with_the_body_at_its_lines():
    body = (Comment("SOI 1", (2,)), While(Compare("<", Name("sh"), Name("n")), (AugAssign(Name("sh"), "*", Lit("2")),)),
            Return(Name("sh")))
    fn = function_def("f_vjp", ("n", "_bar"), (Lit("1.0"),), body, def_line=7)
    text = "\n" * 6 + "def f_vjp(n, _bar=1.0):\n" + "\n".join(lir.print_body(body)) + "\n"
    parsed = ast.parse(text).body[0]
    assert ast.dump(fn) == ast.dump(parsed)
    assert [n.lineno for n in ast.walk(fn) if isinstance(n, ast.stmt)] == \
        [n.lineno for n in ast.walk(parsed) if isinstance(n, ast.stmt)]


# -- the line table ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(bodies(), st.integers(1, 40), st.integers(0, 2))
def test_a_body_prints_the_same_with_its_line_table(body, first, depth):
    lines, table = print_body_with_lines(body, depth, first)
    assert lines == lir.print_body(body, depth)
    assert sorted(table) == list(range(first, first + len(lines)))
    for n, s in table.items():
        text = lines[n - first].strip()
        if s is PADDING:
            assert text == "pass"
        elif isinstance(s, (If, For, While)):
            assert text == "else:" or text.startswith(lir.print_statement(s, 0)[0])
        else:
            assert lir.print_statement(s, depth)[0].strip() == text


def test_the_table_of_a_module_names_each_line_of_each_function():
    f = PrintedFunction("f", ("x",), (), (Comment("SOI 1 (line 3)", (3,)), Return(x)), def_line=10)
    g = PrintedFunction("f_vjp", ("x",), (), (Assign(Name("t"), x), Comment("SOI 1: adjoint", (3,)),
                                               If(x, (Comment("SOI 2", ()),), (Return(Name("t")),))), def_line=14)
    table = line_table([f, g])
    assert sorted(table) == [11, 12, 15, 16, 17, 18, 19, 20, 21]
    assert user_lines(table, 12) == [3] and user_lines(table, 10) == [] and user_lines(table, 13) == []
    assert user_lines(table, 15) == [], "before the function's first comment: its first lines"
    assert user_lines(table, 21) == [] and user_lines(table, 18) == [3] and user_lines(table, 17) == [3]


# -- what the compiler emits ----------------------------------------------------------------------------


def test_the_functions_the_compiler_writes_are_the_nodes_of_their_print():
    """Every entry function of the modules compiled for corpus functions (NumPy and numba backends): the
    records the writer keeps (``ModuleWriter.printed``), as ``ast``, are the nodes Python parses from the
    module's text at those lines."""
    import numpy as np
    from corpus import CORPUS

    import coarsen_nb as cn
    from coarsen_nb import backends
    from coarsen_nb.lower.module import ModuleWriter

    checked = 0
    for entry in CORPUS[:12]:
        f = cn.coarsen(entry.fn)
        f.grad(*entry.make_args(np.random.default_rng(0)))
        for backend in ("numpy", "numba"):
            w = ModuleWriter(f.plan, tuple(f._last.wrt), backends.BACKENDS[backend], "")
            parsed = {n.name: n for n in ast.parse(w.source()).body if isinstance(n, ast.FunctionDef)}
            for name, p in w.printed.items():
                built = function_def(p.name, p.params, p.defaults, p.body, p.def_line)
                want = parsed[name]
                want.decorator_list = []
                assert ast.dump(built) == ast.dump(want), name
                checked += 1
    assert checked > 40


# -- the cost model's seam --------------------------------------------------------------------------------


def test_the_cost_model_takes_the_vjp_function_from_records_and_parses_nothing(monkeypatch):
    """cost.vjp_function: the writer's records (``printed``), as the nodes of their print, at their lines;
    nothing parsed, and a record holding text refused."""
    from dataclasses import replace

    from coarsen_nb.lower import cost

    body = (Comment("SOI 1 (line 2)", (2,)), Assign(Name("sh"), Lit("1")),
            While(Compare("<", Name("sh"), Name("n")), (AugAssign(Name("sh"), "*", Lit("2")),)), Return(Name("sh")))
    printed = PrintedFunction("f_vjp", ("n", "_bar"), (Lit("1.0"),), body, def_line=4)
    source = '"""m"""\n\n\ndef f_vjp(n, _bar=1.0):\n' + "\n".join(lir.print_body(body)) + "\n"
    parsed = ast.parse(source).body[1]

    class Writer:
        def __init__(self, printed):
            self.printed = printed

        def source(self):
            return source

    real_parse = ast.parse
    with monkeypatch.context() as m:
        m.setattr(ast, "parse", lambda *a, **k: pytest.fail("parsed the module's text"))
        fn = cost.vjp_function(Writer({"f_vjp": printed}), "f_vjp")
    assert ast.dump(fn, include_attributes=False) == ast.dump(parsed)
    assert [n.lineno for n in ast.walk(fn) if isinstance(n, ast.stmt)] == \
        [n.lineno for n in ast.walk(parsed) if isinstance(n, ast.stmt)]
    with_text = replace(printed, body=body[:-1] + (lir.Text("return sh"),))
    assert ast.parse is real_parse
    with pytest.raises(NotStructured):          # text is never parsed: a record that is not one is refused
        cost.vjp_function(Writer({"f_vjp": with_text}), "f_vjp")

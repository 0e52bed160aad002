"""lower/lir_wrap.py: long generated statements broken inside their brackets.

Oracles: Python's parser (the broken text parses to the same tree as the one-line text, and each statement
starts at the line lir_ast and the line table say), the one-line print itself (the broken lines are the same
tokens), and the width (every line fits where every piece can be broken). Random statements over long names,
calls, tuples and operator chains (hypothesis), at several indentation depths.
"""

import ast

from hypothesis import given, settings
from hypothesis import strategies as st
from lower.test_lir_ast import _same_as_parsed

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import (
    Assign,
    Attr,
    AugAssign,
    BinOp,
    Call,
    ExprStmt,
    For,
    FunctionDef,
    If,
    List,
    Lit,
    Name,
    Paren,
    Return,
    Tuple,
    While,
)
from coarsen_nb.lower.lir_lines import print_body_with_lines
from coarsen_nb.lower.lir_wrap import WIDTH

_names = st.builds(lambda stem, n: Name(stem * n), st.sampled_from(["b_log_sigma", "x", "theta_", "jac_0_omega"]),
                   st.integers(1, 3))
_breakable = st.recursive(_names | st.sampled_from([Lit("0.5"), Lit("-1")]), lambda sub: st.one_of(
    st.builds(lambda f, args: Call(f, tuple(args)), _names, st.lists(sub, min_size=1, max_size=12)),
    st.builds(lambda f, a, b: Call(Attr(Name("xp"), "sum"), (a,), (("axis", b),)), _names, sub, sub),
    st.builds(lambda elts: Tuple(tuple(elts)), st.lists(sub, min_size=1, max_size=8)),
    st.builds(lambda elts: Tuple(tuple(elts), trailing=True), st.lists(sub, min_size=1, max_size=4)),
    st.builds(lambda elts: List(tuple(elts)), st.lists(sub, min_size=1, max_size=6)),
    st.builds(BinOp, st.sampled_from(["+", "-", "*", "/", "@", "%"]), sub, sub),
    st.builds(lambda op, a, b: Paren(BinOp(op, a, b)), st.sampled_from(["+", "*", "-"]), sub, sub),
), max_leaves=25)


@st.composite
def _statements(draw):
    value = draw(_breakable)
    if isinstance(value, Tuple) and draw(st.booleans()):
        value = Tuple(value.elts, bare=True)          # ``return a, b``: a bare tuple at the top only
    kind = draw(st.sampled_from(["assign", "aug", "expr", "return", "targets"]))
    if kind == "assign":
        return Assign(draw(_names), value)
    if kind == "aug":
        return AugAssign(draw(_names), draw(st.sampled_from(["+", "*"])), value)
    if kind == "expr":
        return ExprStmt(value)
    if kind == "return":
        return Return(value)
    targets = draw(st.lists(_names, min_size=2, max_size=12, unique=True))
    return Assign(Tuple(tuple(targets), bare=True), value)


@settings(max_examples=150, deadline=None)
@given(st.lists(_statements(), min_size=1, max_size=4), st.integers(0, 3))
def test_broken_statements_parse_as_their_one_line_print_and_fit(body, depth):
    body = tuple(body) + (While(Name("going"), (Assign(Name("going"), Lit("False")),)),)
    for _ in range(depth):                 # the same statements nested: the width counts the indentation
        body = (If(Name("c"), body),)
    _same_as_parsed(body, depth=1)         # the tree Python parses, each statement at the line lir_ast says
    lines = lir.print_body(body, 1)
    assert all(len(line) <= WIDTH for line in lines), "\n".join(line for line in lines if len(line) > WIDTH)
    table_lines, table = print_body_with_lines(body, 1, first_line=1)
    assert table_lines == lines and sorted(table) == list(range(1, len(lines) + 1))


@settings(max_examples=200, deadline=None)
@given(_statements())
def test_the_broken_lines_are_the_one_line_tokens(s):
    """Breaking adds line breaks and at most one pair of parentheses, nothing else."""
    lines = lir.print_statement(s, 1)
    joined = " ".join(line.strip() for line in lines)
    one_line = f"{s.target} = {s.value}" if isinstance(s, Assign) else None
    if one_line is None or len(lines) == 1:
        return
    squeeze = lambda text: text.replace(" ", "").replace("(", "").replace(")", "")  # noqa: E731
    assert squeeze(joined) == squeeze(one_line)
    assert ast.dump(ast.parse(joined)) == ast.dump(ast.parse(one_line))


def test_a_loop_call_with_many_arrays_breaks_after_its_name():
    args = tuple(Name(n) for n in ["b_result", "k_count", "m_5", "n", "s_6", "log_sigma", "mu", "x", "log_w_2_out",
                                   "b_mu", "b_log_sigma", "b_log_w_2_out"])
    s = Return(Call(Name("_soi4_vjp_nest"), args))
    assert lir.print_statement(s, 2) == [
        "        return _soi4_vjp_nest(",
        "            b_result, k_count, m_5, n, s_6, log_sigma, mu, x, log_w_2_out, b_mu, b_log_sigma, b_log_w_2_out)"]
    short = Return(Call(Name("f"), args[:3]))
    assert lir.print_statement(short, 2) == ["        return f(b_result, k_count, m_5)"]


def test_a_def_with_many_parameters_indents_them_twice():
    params = tuple(f"parameter_number_{k}" for k in range(8))
    lines = lir.print_body((FunctionDef("_soi1_vjp_rows", params, (Return(Name("parameter_number_0")),)),), 0)
    assert lines[0] == "def _soi1_vjp_rows(" and lines[1].startswith(" " * 8 + "parameter_number_0,")
    assert lines[-2].endswith("):") and lines[-1] == "    return parameter_number_0"
    space = {}
    exec("\n".join(lines), space)          # noqa: S102 (the function this test printed)
    assert space["_soi1_vjp_rows"](*range(8)) == 0


def test_a_sum_of_long_products_breaks_before_its_operators():
    product = BinOp("*", Call(Attr(Name("xp"), "sum"), (Name("d_px_block_" * 4),), (("axis", Lit("1")),)),
                    Paren(BinOp("+", Name("k"), Call(Attr(Name("xp"), "zeros"), (Name("n_i"),)))))
    s = Assign(Name("t16"), BinOp("+", Paren(product), Paren(BinOp("*", Lit("-1"), product))))
    lines = lir.print_statement(s, 1)
    assert lines[0] == "    t16 = (" and lines[2].lstrip().startswith("+ (-1 * xp.sum(")
    assert all(len(line) <= WIDTH for line in lines)
    assert ast.dump(ast.parse("\n".join(line.strip() for line in lines))) == ast.dump(ast.parse(f"t16 = {s.value}"))


def test_a_statement_with_nothing_to_break_stays_one_line():
    s = Assign(Name("t"), Name("a" * 200))
    assert lir.print_statement(s, 1) == ["    t = " + "a" * 200]
    loop = For(Name("k"), Call(Name("range"), (Lit("3"),)), (s,))
    assert len(lir.print_body((loop,), 1)) == 2

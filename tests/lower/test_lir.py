"""The lowered IR's records (coarsen_nb.lower.lir) and the passes over them (lower/lir_passes.py).

Oracles: printed expressions are evaluated by Python and compared with an evaluator of the records
written here; the passes are compared with the text passes of lower/liveness.py, which they replace, on
random function bodies, and the function's result is the same before and after each pass.
"""

import liveness_text as liveness
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import (
    Assign,
    AugAssign,
    BinOp,
    Call,
    Comment,
    Compare,
    For,
    Free,
    If,
    IfExp,
    Index,
    Lit,
    Name,
    Paren,
    Return,
    Slice,
    Text,
    Tuple,
    Unary,
    While,
)
from coarsen_nb.lower.lir_passes import (
    drop_dead_assignments,
    free_dead_names,
    modules_used,
    names_called,
)

# -- expressions print as the Python they stand for --------------------------------------------------

_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def _evaluate(e, env):
    """The value of a record, computed from the records (not from their text)."""
    if isinstance(e, Name):
        return env[e.id]
    if isinstance(e, Lit):
        return float(e.code)
    if isinstance(e, Paren):
        return _evaluate(e.inner, env)
    if isinstance(e, BinOp):
        return _OPS[e.op](_evaluate(e.left, env), _evaluate(e.right, env))
    if isinstance(e, Unary):
        return -_evaluate(e.operand, env)
    if isinstance(e, Call):
        return max(_evaluate(a, env) for a in e.args)
    if isinstance(e, IfExp):
        return _evaluate(e.body, env) if _evaluate(e.test, env) else _evaluate(e.orelse, env)
    if isinstance(e, Compare):
        return _evaluate(e.left, env) < _evaluate(e.right, env)
    if isinstance(e, Index):
        return env[e.value.id][int(_evaluate(e.items[0], env))]
    raise TypeError(e)


def _grouped(e):
    """Every compound operand in parentheses: the printer's job, as it was in the f-strings."""
    return e if isinstance(e, (Name, Lit, Call, Index, Paren)) else Paren(e)


leaves = st.one_of(st.sampled_from([Name("a"), Name("b")]),
                   st.integers(-5, 5).map(lambda v: Lit(repr(float(v)))),
                   st.integers(0, 2).map(lambda i: Index(Name("v"), (Lit(str(i)),))))
exprs = st.recursive(leaves, lambda sub: st.one_of(
    st.builds(lambda op, a, b: BinOp(op, _grouped(a), _grouped(b)), st.sampled_from(sorted(_OPS)), sub, sub),
    st.builds(lambda a: Unary("-", _grouped(a)), sub),
    st.builds(lambda a, b: Call(Name("max"), (a, b)), sub, sub),
    st.builds(lambda a, t, b: IfExp(_grouped(a), Compare("<", _grouped(t), Lit("0.5")), _grouped(b)),
              sub, sub, sub),
), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(exprs, st.floats(-3, 3), st.floats(-3, 3))
def test_a_printed_expression_is_the_python_it_stands_for(e, a, b):
    env = {"a": a, "b": b, "v": [1.5, -2.0, 0.25], "max": max}
    assert eval(str(e), {}, env) == _evaluate(e, env)        # noqa: S307 (our own printed text)
    assert sorted(set(lir.names_in(e)) - {"max"}) == sorted({"a", "b", "v"} & set(lir.names_in(e)))


def test_statements_print_as_python_with_the_users_indentation():
    body = (
        Comment("SOI 1 (line 3)", lines=(3,)),
        Assign(Name("t"), BinOp("*", Name("x"), Lit("0.5"))),
        Assign(Index(Name("b_x"), (Slice(Lit("1"), None),)), Name("t")),
        AugAssign(Name("b_x"), "+", Call(lir.Attr(Name("xp"), "sum"), (Name("t"),), (("axis", Lit("0")),))),
        If(Compare(">", Name("n"), Lit("0")), (Assign(Tuple((Name("p"), Name("q")), bare=True),
                                                      Tuple((Name("q"), Name("p")), bare=True)),),
           (lir.Pass(),)),
        For(Name("k"), Call(Name("range"), (Name("n"),)), (Free(("t",)),)),
        While(Lit("True"), (lir.Break(),)),
        Return(Tuple((Name("p"),))),
    )
    assert lir.print_body(body) == [
        "    # SOI 1 (line 3)",
        "    t = x * 0.5",
        "    b_x[1:] = t",
        "    b_x += xp.sum(t, axis=0)",
        "    if n > 0:",
        "        p, q = q, p",
        "    else:",
        "        pass",
        "    for k in range(n):",
        "        del t",
        "    while True:",
        "        break",
        "    return (p,)",
    ]
    assert lir.print_statement(body[4], 2) == ["        if n > 0:", "            p, q = q, p", "        else:",
                                               "            pass"]
    assert lir.reads(body[2]) == ["t", "b_x"] and body[2].targets() == ()
    assert body[4].body[0].targets() == ("p", "q") and lir.reads(body[3]) == ["xp", "t", "b_x"]
    lir.verify(body, structured=True)
    assert names_called(body) == {"range"} and modules_used(body) == {"xp"}


def test_verify_names_what_is_not_structured():
    lir.verify((Text("t = 1"),))
    with pytest.raises(AssertionError, match="text line"):
        lir.verify((Text("t = 1"),), structured=True)
    with pytest.raises(AssertionError, match="structured expression"):
        lir.verify((Return(lir.expr("x + 1")),), structured=True)
    with pytest.raises(AssertionError, match="not an expression"):
        lir.verify((Return("x"),))
    with pytest.raises(AssertionError, match="cannot assign"):
        lir.verify((Assign(Lit("1"), Name("x")),))
    with pytest.raises(AssertionError, match="tuple of statements"):
        lir.verify((If(Name("c"), [Return(Name("x"))]),))


# -- the passes agree with the text passes, and keep the result ---------------------------------------

_VARS = ["a", "b", "c", "d", "e"]


@st.composite
def bodies(draw, depth=0, defined=("x", "y")):
    """A random function body over x and y: assignments, accumulations, branches, loops; ends in a return
    at the top."""
    defined = list(defined)
    out = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["assign", "assign", "number", "aug", "if", "for"] if depth < 2
                                    else ["assign", "aug"]))
        operands = [Name(n) for n in defined] + [Lit("2.0")]
        value = BinOp(draw(st.sampled_from(["+", "*"])), draw(st.sampled_from(operands)),
                      draw(st.sampled_from(operands)))
        if kind in ("assign", "number"):
            name = draw(st.sampled_from(_VARS))
            if kind == "number":
                value = Call(Name("max"), (Lit("0"), draw(st.sampled_from(operands))))
            out.append(Assign(Name(name), value))
            defined.append(name)
        elif kind == "aug" and len(defined) > 2:
            out.append(AugAssign(Name(draw(st.sampled_from(defined[2:]))), "+", value))
        elif kind == "if":
            out.append(If(Compare(">", draw(st.sampled_from(operands)), Lit("1.0")),
                          draw(bodies(depth + 1, tuple(defined))), draw(bodies(depth + 1, tuple(defined)))))
        elif kind == "for":
            out.append(For(Name("k"), Call(Name("range"), (Lit("3"),)), draw(bodies(depth + 1, tuple(defined)))))
    if depth == 0:
        out.append(Return(Tuple(tuple(Name(n) for n in draw(st.lists(st.sampled_from(defined), min_size=1,
                                                                      max_size=3))))))
    return tuple(out)


def _run(body):
    """The function's result on x = 0.5, y = 1.5 (names a branch left unassigned read as a NameError)."""
    source = "def f(x, y):\n" + "\n".join(lir.print_body(body)) + "\n"
    space = {}
    exec(source, space)       # noqa: S102 (a body this test built)
    try:
        return space["f"](0.5, 1.5)
    except (NameError, UnboundLocalError):
        return "unbound"


@settings(max_examples=300, deadline=None)
@given(bodies())
def test_dead_assignments_as_the_text_pass_drops_them(body):
    after = drop_dead_assignments(body)
    lir.verify(after, structured=True)
    assert lir.print_body(after) == liveness.drop_dead_assignments(lir.print_body(body))
    before_value = _run(body)
    if before_value != "unbound":
        assert _run(after) == before_value


@settings(max_examples=300, deadline=None)
@given(bodies())
def test_frees_as_the_text_pass_places_them(body):
    after = free_dead_names(body, keep=("x", "y"))
    lir.verify(after, structured=True)
    assert lir.print_body(after) == liveness.free_dead_names(lir.print_body(body), keep=["x", "y"])
    before_value = _run(body)
    if before_value != "unbound":
        assert _run(after) == before_value


def test_a_loop_only_the_replay_reads_is_dropped_but_an_accumulation_is_kept():
    # the reverse sweep's replay: the next state `s2` is read by nothing after the loop
    body = (Assign(Name("s"), Name("x")),
            For(Name("k"), Call(Name("range"), (Lit("3"),)), (
                Assign(Name("s2"), BinOp("*", Name("s"), Lit("2.0"))),
                AugAssign(Name("acc"), "+", Name("s")))),
            Return(Name("acc")))
    after = drop_dead_assignments(body)
    assert [type(s).__name__ for s in after[1].body] == ["AugAssign"]
    assert lir.print_body(after) == liveness.drop_dead_assignments(lir.print_body(body))


# -- the printers' record tests answer as their text tests did ---------------------------------------

_printed_leaves = st.one_of(
    st.sampled_from([Name("a"), Name("x_2"), Name("inf"), Lit("True"), Lit("'valid'"), Lit("math.inf"),
                     Lit("-1"), Lit("0.5"), Lit("3"), lir.Raw("(a + b)"), lir.Raw("(a) + (b)"), lir.Raw("x.shape"),
                     lir.Raw("((c,))"), lir.Raw("-2")]),
    st.integers(-5, 5).map(lambda v: Lit(str(v))))
_printed = st.recursive(_printed_leaves, lambda sub: st.one_of(
    st.builds(Paren, sub),
    st.builds(lambda a: Unary("-", a), sub),
    st.builds(lambda a, b: BinOp("*", a, b), sub, sub),
    st.builds(lambda a: lir.Attr(a, "shape"), sub),
    st.builds(lambda a: Index(a, (Lit("0"),)), sub),
    st.builds(lambda xs: Tuple(tuple(xs)), st.lists(sub, max_size=3)),
    st.builds(lambda a, b: Call(Name("f"), (a, b)), sub, sub),
), max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(_printed)
def test_the_record_tests_agree_with_the_text_tests_they_replace(e):
    """printing.unwrapped/is_atom_code/is_number_code/is_int_literal of a record print and answer as the
    same functions did of its printed text: the printers moved to records print the same code."""
    from coarsen_nb.lower import printing

    text = str(e)
    assert str(printing.unwrapped(e)) == printing.unwrapped(text)
    assert printing.is_atom_code(e) == printing.is_atom_code(text)
    assert printing.is_number_code(e) == printing.is_number_code(text)
    assert printing.is_int_literal(e) == printing.is_int_literal(text)


def test_a_power_prints_spaced_or_tight_as_the_printer_asks():
    a, two = Name("a"), Lit("2")
    assert str(BinOp("**", a, two)) == "a ** 2" and str(BinOp("**", Paren(a), two, spaced=False)) == "(a)**2"
    assert eval(str(BinOp("**", a, two, spaced=False)), {}, {"a": 3.0}) == 9.0      # noqa: S307


def test_a_list_prints_as_a_list_display_and_its_names_are_read():
    joined = Call(lir.Attr(Name("xp"), "concat"), (lir.List((Name("a"), Lit("1"))),), (("axis", Lit("1")),))
    assert str(joined) == "xp.concat([a, 1], axis=1)" and lir.names_in(joined) == ["xp", "a"]
    lir.verify((Assign(Name("t"), joined),), structured=True)


def test_a_tuple_with_a_trailing_comma_prints_it_whatever_its_length():
    a, b = Name("a"), Name("b")
    assert str(Tuple((a, b), trailing=True)) == "(a, b,)" and str(Tuple((a,), trailing=True)) == "(a,)"
    assert str(Tuple((), trailing=True)) == "()" and str(Tuple((a, b), bare=True, trailing=True)) == "a, b,"
    assert eval(str(Tuple((a, b), trailing=True)), {}, {"a": 1, "b": 2}) == (1, 2)      # noqa: S307


def test_text_enters_as_a_name_where_it_is_one_else_as_raw():
    assert lir.expr("b_x2") == Name("b_x2") and lir.expr(Lit("1")) == Lit("1")
    assert lir.expr("True") == lir.Raw("True") and lir.expr("x.shape") == lir.Raw("x.shape")


def test_a_printer_block_collects_the_body_of_an_if_and_prints_it_indented():
    from coarsen_nb.lower.emit import Printer

    pr = Printer("xp", lambda s: (str(s), False), {}, {})
    pr.emit(Assign(Name("a"), Lit("1")))
    with pr.block() as body:
        pr.emit(Assign(Name("b"), Name("a")))
        with pr.block() as inner:
            pr.emit(lir.Pass())
        pr.emit(If(Name("b"), tuple(inner)))
    assert pr.lines == ["    a = 1"]     # nothing printed while the block is open
    pr.emit(If(Name("a"), tuple(body), (Assign(Name("b"), Lit("0")),)))
    assert pr.lines == ["    a = 1", "    if a:", "        b = a", "        if b:", "            pass", "    else:",
                        "        b = 0"]


def test_rewrite_replaces_what_visit_returns_and_walks_into_everything_else():
    """``lir.rewrite``: a visit's replacement stands (its parts as the visit made them), None walks into a
    record's fields and a tuple's elements, and nothing else is changed (the printed text says so)."""
    body = (Assign(Name("s"), Lit("0.0")),
            For(Name("k"), Call(Name("range"), (Name("n"),)), (
                AugAssign(Name("s"), "+", Index(Name("x"), (Name("k"),))),
                AugAssign(Name("s"), "+", Call(Name("f"), (Name("x"),))))))

    def visit(e):
        if isinstance(e, Name) and e.id == "x":
            return Name("y")
        if isinstance(e, Call) and e.func == Name("f"):
            return Lit("1.0")                               # (its argument x is not visited)
        return None

    got = lir.rewrite(body, visit)
    assert lir.print_body(got, 0) == ["s = 0.0", "for k in range(n):", "    s += y[k]", "    s += 1.0"]
    assert lir.print_body(body, 0)[2] == "    s += x[k]"     # (the records are not changed in place)


def _rewrite_rebuilding_everything(node, visit):
    """``lir.rewrite`` as it was before stop 44: every record and block built again, changed or not."""
    import dataclasses

    made = visit(node)
    if made is not None:
        return made
    if isinstance(node, tuple):
        return tuple(_rewrite_rebuilding_everything(x, visit) for x in node)
    if not isinstance(node, (lir.Stmt, lir.Expr)) or not dataclasses.is_dataclass(node):
        return node
    return dataclasses.replace(node, **{f.name: _rewrite_rebuilding_everything(getattr(node, f.name), visit)
                                        for f in dataclasses.fields(node)})


def test_rewrite_keeps_what_no_visit_replaced_and_equals_a_rewrite_that_rebuilds_everything():
    """A record or block with nothing replaced inside is returned itself (the records are frozen: a copy was
    equal to it); where one part is replaced, the record is new and its other parts are the old ones; and the
    result equals, record for record, that of a walk that builds every node again."""
    untouched = For(Name("k"), Call(Name("range"), (Name("n"),)), (AugAssign(Name("s"), "+", Name("k")),))
    touched = Assign(Index(Name("out"), (Name("i"),)), BinOp("*", Name("x"), Call(Name("g"), (Name("x"),))))
    body = (untouched, touched, If(Name("c"), (lir.Pass(),), (touched,)))

    def visit(e):
        return Name("y") if isinstance(e, Name) and e.id == "x" else None

    def nothing(e):
        return None

    assert lir.rewrite(body, nothing) is body
    got = lir.rewrite(body, visit)
    assert got == _rewrite_rebuilding_everything(body, visit)
    assert got[0] is untouched
    assert got[1] is not touched and got[1].target is touched.target      # (out[i]: nothing in it replaced)
    assert got[2].body is body[2].body and got[2].orelse[0] == got[1]
    assert lir.print_body(got, 0) == ["for k in range(n):", "    s += k", "out[i] = y * g(y)", "if c:", "    pass",
                                      "else:", "    out[i] = y * g(y)"]

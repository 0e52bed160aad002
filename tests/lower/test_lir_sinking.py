"""The pass that moves a statement into the one ``if`` arm reading it (lower/lir_sinking.py).

Oracle: each body is run by Python before and after the pass, with the inputs that take either arm, and must
return the same; the moved statement must be where the docstring says (in the arm), or not moved where moving
it would change what runs (a read after the ``if``, a rebinding of what it reads, an effect)."""

import pytest

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Assign, BinOp, Call, Compare, For, If, Lit, Name, Return
from coarsen_nb.lower.lir_sinking import sink_into_branches


def _run(body, **inputs):
    source = "def f(n, c):\n" + "\n".join(lir.print_body(tuple(body))) + "\n"
    namespace: dict = {}
    exec(source, namespace)
    return namespace["f"](**inputs)


def _sum_loop(acc: str, i: str) -> list:
    """acc = 0; for i in range(n): acc = acc + i"""
    return [Assign(Name(acc), Lit("0")),
            For(Name(i), Call(Name("range"), (Name("n"),)), (Assign(Name(acc), BinOp("+", Name(acc), Name(i))),))]


def _choice(then_reads: str, else_reads: str) -> If:
    return If(Name("t"), (Assign(Name("r"), Name(then_reads)),), (Assign(Name("r"), Name(else_reads)),))


def _test_of(c: str):
    return Assign(Name("t"), Compare(">", Name(c), Lit("0")))


@pytest.mark.parametrize("c", [-1, 1])
def test_a_loop_only_the_else_reads_moves_into_it(c):
    body = [*_sum_loop("s", "i"), _test_of("c"), _choice("c", "s"), Return(Name("r"))]
    moved = sink_into_branches(body)
    assert _run(moved, n=5, c=c) == _run(body, n=5, c=c)
    branch = next(s for s in moved if isinstance(s, If))
    assert isinstance(branch.orelse[1], For) and not any(isinstance(s, For) for s in moved)


def test_a_later_test_of_the_same_expression_takes_the_same_arm():
    second = [Assign(Name("t2"), Compare(">", Name("c"), Lit("0"))),
              If(Name("t2"), (Assign(Name("q"), Lit("1")),), (Assign(Name("q"), Name("s")),))]
    body = [*_sum_loop("s", "i"), _test_of("c"), _choice("c", "s"),
            If(Compare(">", Name("n"), Lit("0")), tuple(second)), Return(BinOp("+", Name("r"), Name("q")))]
    moved = sink_into_branches(body)
    for c in (-1, 1):
        assert _run(moved, n=5, c=c) == _run(body, n=5, c=c)
    assert not any(isinstance(s, For) for s in moved)


@pytest.mark.parametrize("after", ["read after the if", "input rebound", "an effect"])
def test_what_must_run_where_it_is_stays(after):
    loop = _sum_loop("s", "i")
    if after == "an effect":
        loop[1] = For(Name("i"), Call(Name("range"), (Name("n"),)), (
            Assign(Name("s"), Call(Name("print_and_add"), (Name("s"), Name("i")))),))
    tail = [Return(BinOp("+", Name("r"), Name("s")))] if after == "read after the if" else [Return(Name("r"))]
    rebind = [Assign(Name("n"), Lit("2"))] if after == "input rebound" else []
    body = [*loop, *rebind, _test_of("c"), _choice("c", "s"), *tail]
    moved = sink_into_branches(body)
    assert any(isinstance(s, For) for s in moved)

"""lower/numba_bounds.bounds_guard: an in-bounds loop's tests under one ``if`` (``or``), printed within the width.

Oracles: the ``if`` per test it replaces (the same branch taken for every drawn size, a stop written as a
conditional expression included: it must stay one operand of the ``or``), Python's parser (the broken ``if``
parses to the tree of its one-line print) and the width.
"""

import ast
import itertools

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Attr, Compare, If, IfExp, Index, Lit, Name, Paren, Raise, Return, Unary
from coarsen_nb.lower.lir_wrap import WIDTH
from coarsen_nb.lower.numba_bounds import bounds_guard

_CHECKED = (Return(Lit("'twin'")),)


def _shape(array):
    return Index(Attr(Name(array), "shape"), (Lit("0"),))


def _tests():
    """A test of each kind ``out_of_bounds`` makes: a loop from 0, one from a start, a stop that is a choice."""
    choice = IfExp(Name("n"), Compare(">", Name("n"), Lit("0")), Lit("0"))
    inside = lir.BoolOp("and", (Compare("<=", Lit("0"), Name("lo")), Compare("<=", Name("n"), _shape("b"))))
    return [Compare(">", Name("n"), _shape("a")),
            Unary("not ", Paren(lir.BoolOp("or", (Compare("<=", Name("n"), Name("lo")), Paren(inside))))),
            Compare(">", choice, _shape("c"))]


def _run(body, **values):
    space = dict(values)
    exec("def f():\n" + "\n".join(lir.print_body(tuple(body), 1)) + "\n    return 'loop'", space)  # noqa: S102
    return space["f"]()


class _Shaped:
    def __init__(self, n):
        self.shape = (n,)


def test_one_guard_takes_the_branch_the_tests_one_by_one_take():
    tests = _tests()
    guard = [bounds_guard(tests, _CHECKED)]
    one_by_one = [If(t, _CHECKED) for t in tests]
    for n, lo, a, b, c in itertools.product((-1, 0, 2, 5), (-1, 0, 3), (0, 2, 5), (0, 4, 5), (0, 1, 5)):
        values = dict(n=n, lo=lo, a=_Shaped(a), b=_Shaped(b), c=_Shaped(c))
        assert _run(guard, **values) == _run(one_by_one, **values), values


def test_a_single_test_is_its_own_guard():
    test = Compare(">", Name("n"), _shape("a"))
    assert bounds_guard([test], _CHECKED) == If(test, _CHECKED)


def test_a_long_guard_breaks_before_its_ors_two_indents_in():
    tests = [Compare(">", Name(f"k_count_{k}"), _shape(f"b_log_sigma_{k}")) for k in range(7)]
    guard = bounds_guard(tests, (Raise(Name("_BoundsNotProved")),))
    lines = lir.print_statement(guard, 1)
    assert len(lines) > 2 and lines[0] == "    if (" and all(len(line) <= WIDTH for line in lines)
    assert lines[2].startswith(" " * 12 + "or ") and lines[-2].endswith("):")
    one_line = f"if {guard.test}:\n    raise _BoundsNotProved"
    assert ast.dump(ast.parse("\n".join(line[4:] for line in lines))) == ast.dump(ast.parse(one_line))

"""coarsen_nb/call_errors.py's line table (the record printed at each generated line) against the regexes
over the printed module it replaced (tests/call_errors_text.py).

On modules printed from records with the comments the module writer writes (hand-built and random), on an
exception raised by such a module, and on the modules compiled for corpus functions with iterated and
hoisted loops (every line of their entry functions).
"""

import linecache

import call_errors_text
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb import CoarsenError, call_errors
from coarsen_nb.lower import lir, lir_lines
from coarsen_nb.lower.lir import Assign, AugAssign, BinOp, Call, Comment, Compare, For, If, Index, Lit, Name, Return
from coarsen_nb.lower.lir_lines import PrintedFunction, line_table, print_body_with_lines


def _module(functions) -> tuple[str, list[PrintedFunction]]:
    """The module text of ``functions`` (name, params, body), each ``def`` after a blank line, and their
    PrintedFunction records at the lines they print at."""
    lines, printed = ['"""Generated."""', "import numpy as xp"], []
    for name, params, body in functions:
        lines.append("")
        printed.append(PrintedFunction(name, params, (), body, def_line=len(lines) + 1))
        lines.append(f"def {name}({', '.join(params)}):")
        lines += print_body_with_lines(body, 1, len(lines) + 1)[0]
    return "\n".join(lines) + "\n", printed


def _soi(k, lines=(), note="", suffix=""):
    """A segment's comment as ModuleWriter.kernel / ReverseSweep / the tangent sweep write it."""
    where = f" (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})" if lines and not suffix else ""
    return Comment(f"SOI {k}{where}{': ' + note if note else ''}{suffix}", tuple(lines))


x, y, n, s = Name("x"), Name("y"), Name("n"), Name("s")
FORWARD = (
    Assign(Name("t"), Call(Name("len"), (x,))),
    _soi(1, (3, 4)),
    Assign(Name("p1_1"), Call(lir.Attr(Name("xp"), "sum"), (x,))),
    # a hoisted segment: no lines of its own, its loop's (ModuleWriter.kernel gives them)
    Comment("SOI 2: loop-invariant sums hoisted out of the loop at line 7", (7,)),
    Assign(Name("h"), Call(lir.Attr(Name("xp"), "sum"), (y,))),
    Comment("loop at line 7, run iteration by iteration", (7,)),
    Assign(s, Lit("0.0")),
    For(Name("i"), Call(Name("range"), (n,)), (
        _soi(3, (8,)),
        AugAssign(s, "+", BinOp("*", Index(x, (Name("i"),)), Index(y, (Name("i"),)))),
        If(Compare(">", s, Lit("1.0")), (_soi(4),), (Assign(Name("u"), x),)),
    )),
    Assign(Index(Name("w"), (Lit("0"),)), BinOp("*", Name("h"), s)),
    _soi(5, (9,)),
    Return(s),
)
VJP = (
    *FORWARD[:-1],
    Assign(Name("_value"), s),
    _soi(5, (9,), suffix=": adjoint"),
    AugAssign(Name("b_x"), "+", BinOp("*", Name("_bar"), y)),
    _soi(6, suffix=": adjoint"),
    Assign(Name("b_y"), x),
    Comment("loop at line 7: state and tangent state, iteration by iteration", (7,)),
    Return(lir.Tuple((Name("b_x"), Name("b_y")), bare=True)),
)


class _Plan:
    """What _opaque_line asks of a plan (its steps, for an opaque step's line): here, none."""

    steps = ()


def test_the_table_path_reads_and_places_each_line_as_the_text_path_did():
    source, printed = _module([("f", ("x", "y", "n"), FORWARD), ("f_vjp", ("x", "y", "n", "_bar"), VJP)])
    table, lines = line_table(printed), source.splitlines()
    assert len(table) > 30
    for k in table:                 # (the other lines, a def's, a blank one, are no entry point's line)
        assert call_errors._read_from_table(table, k, ("x", "y", "n"), None) == \
            call_errors_text.read_from_text(lines, k, ("x", "y", "n"), None), lines[k - 1]


_LINES = {k: (k + 1,) if k % 2 else (k + 1, k + 3) for k in range(1, 10)}     # SOI k's lines (10-12: none)
_KIND = st.sampled_from(["assign", "aug", "store", "soi", "soi_none", "adjoint", "loop", "hoisted", "if", "for"])


@st.composite
def _bodies(draw, depth=0):
    out = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(_KIND if depth < 2 else st.sampled_from(["assign", "soi", "aug"]))
        operand = draw(st.sampled_from([x, y, n, Name("t"), Lit("2.0"), Index(x, (Name("i"),))]))
        line = draw(st.integers(1, 30))
        if kind == "assign":
            out.append(Assign(Name(draw(st.sampled_from(["t", "p1_1", "x_1"]))), BinOp("*", operand, y)))
        elif kind == "aug":
            out.append(AugAssign(Name("t"), "+", operand))
        elif kind == "store":
            out.append(Assign(Index(Name("w"), (Lit("0"),)), operand))
        elif kind == "soi":
            k = draw(st.integers(1, 9))
            out.append(_soi(k, _LINES[k]))
        elif kind == "soi_none":
            out.append(_soi(draw(st.integers(10, 12))))
        elif kind == "adjoint":
            k = draw(st.integers(1, 12))
            out.append(_soi(k, _LINES.get(k, ()), suffix=": adjoint"))
        elif kind == "loop":
            out.append(Comment(f"loop at line {line}, run iteration by iteration", (line,)))
        elif kind == "hoisted":
            out.append(Comment(f"SOI {draw(st.integers(13, 15))}: loop-invariant sums hoisted out of the loop at "
                               f"line {line}", (line,)))
        elif kind == "if":
            out.append(If(Name("c"), draw(_bodies(depth + 1)), draw(_bodies(depth + 1))))
        else:
            out.append(For(Name("i"), Call(Name("range"), (n,)), draw(_bodies(depth + 1))))
    return tuple(out)


@settings(max_examples=200, deadline=None)
@given(_bodies(), _bodies())
def test_random_modules_read_and_place_each_line_as_the_text_path_did(forward, vjp):
    """(As in a module: SOI k has one set of lines, and its adjoint follows its forward segment, which a
    first function holds here.)"""
    every = tuple(_soi(k, lines) for k, lines in _LINES.items()) + (Return(x),)
    source, printed = _module([("f_all", ("x",), every), ("f", ("x", "y", "n"), forward),
                               ("f_vjp", ("x", "y", "n", "_bar"), vjp)])
    table, lines = line_table(printed), source.splitlines()
    for k in table:
        assert call_errors._read_from_table(table, k, ("x", "y", "n"), None) == \
            call_errors_text.read_from_text(lines, k, ("x", "y", "n"), None), lines[k - 1]


class _UserSource:
    """What from_generated asks of the user's source (coarsen_nb.source.Source's fields it reads)."""

    filename, first_line = "<user>", 1
    text = "\n".join([f"# line {k}" for k in range(1, 7)] + ["for i in range(n):", "    s += x[i] * y[i]",
                                                              "return s"]) + "\n"

    def line_text(self, line):
        return self.text.splitlines()[line - 1]


def test_an_exception_of_a_module_printed_from_records_is_reported_at_the_users_line():
    source, printed = _module([("f", ("x", "y", "n"), FORWARD), ("f_vjp", ("x", "y", "n", "_bar"), VJP)])
    filename = "<coarsen_nb_test_call_errors>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    space: dict = {}
    exec(compile(source, filename, "exec"), space)       # noqa: S102 (a module this test built)
    args = (np.ones(3), np.ones(2), 3)
    with pytest.raises(IndexError) as info:
        space["f"](*args)
    kw = dict(filename=filename, fname="f", params=("x", "y", "n"), primal=args, user_source=_UserSource(),
              plan=_Plan())
    by_table = call_errors.from_generated(info.value, **kw, line_table=line_table(printed))
    assert isinstance(by_table, CoarsenError) and isinstance(by_table, IndexError)
    assert by_table.line == 8 and "'x' of shape (3,)" in str(by_table) and "'y' of shape (2,)" in str(by_table)


LOOP_SRC = """
def loop(a, x, n):
    s = 0.0
    k = 0
    while k < n:
        s = s + a * x[k] * x[k]
        k += 1
    return s
"""


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("which", ["bgd_hyperopt", "while"])
def test_the_writers_line_table_places_every_line_as_the_text_did(which, backend):
    """The real module's line table (the writer's records, iterated and hoisted loops, adjoints and tangents)
    gives each entry-function line the user's lines the regexes read from its comments."""
    if which == "bgd_hyperopt":
        from corpus import CORPUS

        entry = next(e for e in CORPUS if e.name == "bgd_hyperopt")
        fn, args = entry.fn, entry.make_args(np.random.default_rng(0))
    else:
        fn, args = LOOP_SRC, (0.3, np.ones(5), 4)
    if backend == "numba":
        pytest.importorskip("numba")
    f = cn.coarsen(fn, backend=backend)
    f.grad(*args)                       # (the module holds the forward, VJP, gradient and JVP functions)
    table, lines = f._last.line_table, f.source.splitlines()
    assert sum(isinstance(s, Comment) for s in table.values()) >= 8
    for k, stmt in table.items():
        if isinstance(stmt, (Assign, AugAssign, Comment, Return)):       # the record printed at that line
            assert lines[k - 1].strip() == lir.print_statement(stmt, 0)[0]
        assert lir_lines.user_lines(table, k) == call_errors_text.user_lines(lines, k), lines[k - 1]

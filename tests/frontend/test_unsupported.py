"""Outside the subset: a CoarsenError naming the construct, pointing at it, saying what to do.

Never another exception type, never a silent success.  The expected
positions in :mod:`unsupported` are first checked against :mod:`ast` itself,
so that a wrong expectation cannot pass for a frontend bug (or hide one).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import traceback

import numpy as np
import pytest
from unsupported import UNSUPPORTED, UNSUPPORTED_IDS

from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import to_ssa


def _error_of(thunk) -> CoarsenError:
    try:
        thunk()
    except CoarsenError as err:
        return err
    except Exception:  # noqa: BLE001 - any other type is the failure we report
        pytest.fail("expected CoarsenError, got:\n" + traceback.format_exc())
    pytest.fail("expected CoarsenError, but it compiled")


def _check_message(err: CoarsenError, source_line: str, col: int) -> None:
    assert err.hint.strip(), "the error says what to do instead"
    lines = str(err).splitlines()
    assert "    " + source_line in lines, f"the source line is shown:\n{err}"
    caret = lines[lines.index("    " + source_line) + 1]
    assert caret.strip() == "^", f"a caret line follows the source line:\n{err}"
    assert caret.index("^") == 4 + col, f"the caret sits under column {col}:\n{err}"
    assert any(line.startswith("hint: ") for line in lines)


@pytest.mark.parametrize("case", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_expected_position_is_that_node(case):
    tree = ast.parse(case.source)
    at = [type(n).__name__ for n in ast.walk(tree)
          if getattr(n, "lineno", None) == case.line and getattr(n, "col_offset", None) == case.col]
    assert case.node in at, f"no {case.node} at {case.line}:{case.col}, found {at}"


@pytest.mark.parametrize("case", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_rejected_with_construct_and_position(case):
    err = _error_of(lambda: to_ssa(parse(case.source)))
    assert err.construct == case.construct
    assert (err.line, err.col) == (case.line, case.col)
    _check_message(err, case.source.splitlines()[case.line - 1], case.col)


@pytest.mark.parametrize("case", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_indented_source_shifts_the_column(case):
    # A def copied from inside a block (a method, an `if` in a script) keeps its columns.
    source = textwrap.indent(case.source, "    ")
    err = _error_of(lambda: parse(source))
    assert err.construct == case.construct
    assert (err.line, err.col) == (case.line, case.col + 4)
    _check_message(err, source.splitlines()[case.line - 1], case.col + 4)


def test_enough_distinct_constructs():
    assert len({c.construct for c in UNSUPPORTED}) >= 28


# ---------------------------------------------------------------- function objects
# Lines count from the top of this file, as they would from the top of a notebook cell.


def _with_lambda(x):
    g = lambda t: t * 2.0  # noqa: E731
    return g(x)


def _with_try(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = 0.0
    return y


def _with_print(x):
    s = 0.0
    for i in range(3):
        print(i)
        s += x
    return s


def _writes_param(x):
    for i in range(len(x)):
        x[i] = 0.0
    return np.sum(x)


def _method_call(x):
    return x.argsort()


def _line_of(fn, needle: str) -> tuple[int, str]:
    lines, first = inspect.getsourcelines(fn)
    k = next(k for k, text in enumerate(lines) if needle in text)
    return first + k, lines[k].rstrip("\n")


@pytest.mark.parametrize("fn,construct,needle", [
    (_with_lambda, "lambda", "lambda t"),
    (_with_try, "try/except", "try:"),
    (_with_print, "unknown function 'print'", "print(i)"),
    (_writes_param, "write into a parameter array", "x[i] = 0.0"),
    (_method_call, "method call", "x.argsort()"),
], ids=["lambda", "try", "print", "param-write", "method"])
def test_function_object_lines_count_from_the_file(fn, construct, needle):
    err = _error_of(lambda: parse(fn))
    line, text = _line_of(fn, needle)
    assert err.construct == construct
    assert err.line == line
    assert err.col == text.index(needle.split("(")[0].split(" ")[0])
    _check_message(err, text, err.col)


def test_closure_is_rejected():
    k = 2.0

    def scaled(x):
        return k * x

    err = _error_of(lambda: parse(scaled))
    assert err.line == inspect.getsourcelines(scaled)[1]


# ---------------------------------------------------------------- other rejections: still CoarsenError


@pytest.mark.parametrize("source", [
    "",
    "x = 1.0\n",
    "def f(x):\n    return x +\n",                               # syntax error
    "def f(x):\n    y = x\n",                                      # no return
    "def f(x):\n    return\n",                                     # return without a value
    "def f(x):\n    break\n    return x\n",                        # break outside a loop
    "def f(x):\n    return y\n",                                   # unknown name
    "def f(x):\n    return None\n",
    "def f(x):\n    return x.real\n",                              # attribute other than shape
    "def f(x):\n    return math.gamma(x)\n",                       # not a primitive
    "def f(x):\n    return np.linalg.matrix_rank(x)\n",         # np.linalg.norm compiles (rules/spreads.py)
    "def h(a, b):\n    return a\n\n\ndef f(x):\n    return h(x)\n",  # wrong arity for a helper
    "def f(x):\n    for i in range(1, 2, 3, 4):\n        x = x\n    return x\n",
    "def f(x):\n    for i in range(0, 3, 0):\n        x = x\n    return x\n",
    "def f(x):\n    a, b = x\n    return a\n",                     # unpacking a non-tuple
    "def f(x):\n    a, b = 1.0, 2.0, 3.0\n    return a\n",
    "def f(x, x):\n    return x\n",                             # duplicate parameter: a SyntaxError
], ids=lambda s: s.replace("\n", "|")[:40] or "empty")
def test_other_bad_input_is_a_coarsen_error(source):
    err = _error_of(lambda: to_ssa(parse(source)))
    assert str(err)

"""Error messages in the user's words (item 18 of issue 12): the user's names and lines, never an SSA
name (``x.1``, ``$k1``, ``i.1``), and hints that name something that exists."""

from __future__ import annotations

import re

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError

_SSA_NAME = re.compile(r"\$\w+|\b[A-Za-z_]\w*\.\d+\b")


def _error(src: str, *args) -> CoarsenError:
    with pytest.raises(CoarsenError) as info:
        f = cn.coarsen(src)
        f(*args)
    return info.value


INDEXED = """def f(x):
    s = 0.0
    for i in range(3):
        s = s + x[i]
    return s
"""

LOOPED = """def f(x):
    s = 0.0
    for v in x:
        s = s + v
    return s
"""


def test_a_0d_array_for_an_indexed_parameter_names_the_parameter_and_the_line():
    """It said ``too many indices for an array of rank 0: x[i.1]``, with no line."""
    err = _error(INDEXED, np.array(2.0))
    assert (err.line, err.col) == (4, INDEXED.splitlines()[3].index("x[i]"))
    assert "'x'" in err.message and not _SSA_NAME.search(str(err)), str(err)
    assert "1 dimension" in err.hint


def test_a_0d_array_looped_over_points_at_the_loop():
    """It said ``x[$k1.2]``, with no line.  (The caret sits under ``x`` where the column is known; a
    check of the arguments that runs before inference may report the line alone.)"""
    err = _error(LOOPED, np.array(2.0))
    assert err.line == 3 and err.col in (None, LOOPED.splitlines()[2].index("x"))
    assert "'x'" in str(err) and not _SSA_NAME.search(str(err)), str(err)


def test_yield_says_generators_are_not_supported():
    """A generator without a return was reported as ``function 'f' has no return statement``."""
    err = _error("def f(x):\n    yield x * 2.0\n")
    assert err.construct == "yield" and (err.line, err.col) == (2, 4)
    assert "generators are not supported" in err.hint and "no return" not in str(err)


def test_for_else_points_at_the_else_block():
    src = "def f(x, n):\n    s = x\n    for i in range(n):\n        s = s * x\n    else:\n        s = s + 1.0\n" \
          "    return s\n"
    err = _error(src)
    assert err.construct == "for/else" and (err.line, err.col) == (6, 8)


def test_linalg_hint_names_only_what_exists():
    """The hint said ``np.solve(x)``, which does not exist; now it lists the np.linalg functions there are
    rules for, each a real NumPy function."""
    err = _error("import numpy as np\n\ndef f(A, b):\n    return np.sum(np.linalg.eigh(A)[0])\n")
    assert err.construct == "np.linalg.eigh"
    assert "np.eigh" not in str(err) and "outside the compiled function" in err.hint
    named = re.findall(r"np\.linalg\.(\w+)", err.hint)
    assert {"solve", "inv", "det", "slogdet"} <= set(named)
    assert all(callable(getattr(np.linalg, n)) for n in named)


def test_linalg_function_is_named_as_the_function_not_a_method_call():
    """Issue 19 saw ``np.linalg.det(A)`` reported as a "method call"."""
    err = _error("import numpy as np\n\ndef f(A):\n    return np.linalg.cholesky(A)\n")
    assert err.construct == "np.linalg.cholesky" and "method" not in str(err)
    assert "outside the compiled function" in err.hint


def test_a_method_hint_suggests_only_a_function_that_exists():
    assert "np.abs(x)" in _error("def f(x):\n    return x.abs()\n").hint
    hint = _error("def f(x):\n    return x.foo()\n").hint
    assert "np.foo" not in hint and "'foo'" in hint


def test_a_write_into_a_parameter_says_why_and_shows_the_one_line_fix():
    err = _error("def f(x, a):\n    x[0] = a * x[1]\n    return x[0]\n")
    assert err.construct == "write into a parameter array"
    assert "caller's array" in err.hint and "`x = x.copy()`" in err.hint


def test_a_parameter_rebound_to_its_copy_may_be_written_and_the_caller_keeps_its_array():
    g = cn.coarsen("def f(x, a):\n    x = x.copy()\n    x[0] = a * x[1]\n    return x[0] + x[1]\n",
                   wrt=("x", "a"))
    x = np.array([1.0, 2.0])
    assert g(x, 3.0) == 8.0 and list(x) == [1.0, 2.0]
    dx, da = g.grad(x, 3.0)
    assert list(dx) == [0.0, 4.0] and da == 2.0


def test_a_list_of_arrays_is_refused_at_its_line_as_a_2d_literal():
    g = cn.coarsen("import numpy as np\n\ndef f(x, y):\n    v = np.array([x, y])\n    return np.sum(v)\n")
    with pytest.raises(CoarsenError) as info:
        g.grad(np.ones(3), np.ones(3))
    assert info.value.line == 4 and "2-D array literal" in str(info.value)


@pytest.mark.parametrize("src", [INDEXED, LOOPED], ids=["indexed", "looped"])
def test_generated_code_has_no_ssa_or_numbered_temporary_names(src):
    """The code a user reads (``f.source``, the code view, ``f.export``) uses their words too: no
    ``$k1``, ``i.1`` or ``_t98`` (the temporaries are named after what they compute)."""
    f = cn.coarsen(src, wrt=("x",))
    x = np.array([0.5, 1.5, -2.0])
    assert f.grad(x).tolist() == [1.0, 1.0, 1.0]
    body = f.source[f.source.index("def f("):]
    assert not _SSA_NAME.search(body), _SSA_NAME.findall(body)[:5]
    assert not re.search(r"\b_t\d+\b", body), re.findall(r"\b_t\d+\b", body)[:5]

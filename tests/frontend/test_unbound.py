"""Reads of a variable that may be unbound (item 2 of issue 12): Python's error on the path where it is
unbound, the right value and gradient on every other path, under the three selections."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from ssa_interp import run_ir

import coarsen_nb as cn
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import to_ssa, verify

SELECTIONS = [pytest.param({}, id="default"), pytest.param({"max_soi": 1}, id="L=1"),
              pytest.param({"per_block": True}, id="per-block")]


def one_path(x):
    if x > 0:
        y = x
    return y


def assigned_in_a_loop(a, x):
    for v in x:
        y = v * a
    return y


def elif_without_else(a):
    if a > 1.0:
        y = a
    elif a > 0.0:
        y = 2.0 * a
    return y * y


def read_under_the_same_test(a):
    if a > 1.0:
        y = math.sqrt(a - 1.0)
    if a > 1.0:
        return y * a
    return a


def previous_iteration(a, x):
    s = 0.0
    for i in range(len(x)):
        if i > 0:
            s = s + prev * a    # noqa: F821 - bound from the previous iteration, as the test says
        prev = x[i]         # noqa: F841 - read in the next iteration
    return s


def _python(fn, args):
    try:
        return fn(*args), None
    except Exception as e:          # noqa: BLE001 - the oracle's error is what we compare with
        return None, type(e)


def _agrees_with_python(fn, args, selection):
    """Python's value and gradient, or Python's exception (from the value, the gradient and the JVP)."""
    f = cn.coarsen(fn, **selection)
    want, error = _python(fn, args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no fallback to a finer selection
        if error is not None:
            for call in (lambda: f(*args), lambda: f.grad(*args),
                         lambda: f.jvp(args, tuple(1.0 if not isinstance(a, np.ndarray) else np.ones_like(a)
                                                   for a in args if not isinstance(a, int)))):
                with pytest.raises(error):
                    call()
            return
        got, grads = f(*args), f.grad(*args)
    assert math.isclose(got, want, rel_tol=1e-13, abs_tol=1e-15)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for k, g in enumerate(grads):
        assert_close(g, finite_difference(fn, args, k), rtol=1e-5, atol=1e-6, what=f"d/d arg {k}")


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_variable_assigned_on_one_path_raises_unbound_local_error(selection):
    """``f(-0.5)`` returned -0.5 with gradient 1.0 (the φ(y, undef) was read as y), where Python raises
    UnboundLocalError; under L = 1 and per-block it returned 0.0."""
    _agrees_with_python(one_path, (-0.5,), selection)
    _agrees_with_python(one_path, (0.5,), selection)
    with pytest.raises(UnboundLocalError, match=r"'y'.*line \d+"):
        cn.coarsen(one_path, **selection)(-0.5)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_variable_assigned_only_in_a_loop_that_runs_zero_times_raises(selection):
    _agrees_with_python(assigned_in_a_loop, (2.0, np.zeros(0)), selection)
    _agrees_with_python(assigned_in_a_loop, (2.0, np.array([0.5, -1.0, 3.0])), selection)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_an_elif_chain_without_else_raises_on_the_path_that_assigns_nothing(selection):
    for a in (2.0, 0.5, -1.0):
        _agrees_with_python(elif_without_else, (a,), selection)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_read_under_the_same_test_as_its_assignment_is_legal(selection):
    """A variable unbound only on a path the program never reads it on is an ordinary program: no
    error, and ``math.sqrt(a - 1.0)`` is not evaluated at a = 0.5 (φ(a, undef) lifted to a evaluated it
    on the path that skipped it: math domain error under the default selection)."""
    _agrees_with_python(read_under_the_same_test, (0.5,), selection)
    _agrees_with_python(read_under_the_same_test, (2.0,), selection)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_value_from_the_previous_iteration_read_after_the_first(selection):
    _agrees_with_python(previous_iteration, (2.0, np.array([0.5, -1.0, 3.0])), selection)
    _agrees_with_python(previous_iteration, (2.0, np.zeros(0)), selection)


NO_RETURN = """def h(u):
    if u > 0:
        return u * u

def main(a):
    return h(a) + 1.0
"""


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_helper_that_can_end_without_return_raises_where_python_returns_none(selection):
    """``h(-1.0)`` is None in Python, and ``None + 1.0`` a TypeError; the compiled code read the other
    path's value instead."""
    f = cn.coarsen(NO_RETURN, **selection)
    assert f(2.0) == 5.0 and f.grad(2.0) == 4.0
    with pytest.raises(TypeError, match=r"h\(\) reached its end without a return"):
        f(-1.0)


def test_functions_that_always_return_get_no_check():
    """Several returns set the frontend's `$done` flags, which hide from the φs that `$ret` is always
    bound; no check (and no change in the generated code) may follow from that."""
    src = "def f(a):\n    if a > 0:\n        return a * a\n    return -a\n"
    f = cn.coarsen(src)
    assert f(2.0) == 4.0
    assert "raise" not in f.source


def test_the_checked_ssa_verifies_and_interprets_like_python():
    fn = to_ssa(parse(one_path))
    verify(fn)
    assert run_ir(fn, (0.5,)) == 0.5
    with pytest.raises(UnboundLocalError):
        run_ir(fn, (-0.5,))


def read_before_and_after_a_loop(a, n):
    if a > 0:
        y = a * a
    t = math.sin(n + y)     # noqa: F841 - a read the gradient does not need, checked all the same
    for _ in range(n):
        a = a * 0.5
    return y + a


def read_in_two_branches(a, b):
    if a > 0:
        y = math.exp(a)
    if b > 0:
        z = y * b
    else:
        z = y - b
    return z + y


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_value_read_in_two_blocks_is_checked_in_each_and_counted_once(selection, backend):
    """Each block's check of ``y`` defined the same ``$checked:y.2``, so the SSA had two definitions of one
    name, and the reverse sweep added the read's adjoint twice: d/da of ``read_before_and_after_a_loop`` counted
    2a twice (found by ``test_ssa.test_random_programs_round_trip``'s verify, on a generated program)."""
    pytest.importorskip(backend)
    selection = dict(selection, backend=backend)
    for args in ((0.3, 2), (0.3, 0), (-0.3, 1)):
        _agrees_with_python(read_before_and_after_a_loop, args, selection)
    for args in ((0.3, 0.7), (0.3, -0.7), (-0.3, 0.7)):
        _agrees_with_python(read_in_two_branches, args, selection)


def test_each_check_of_a_value_read_in_two_blocks_has_its_own_name():
    for fn in (read_before_and_after_a_loop, read_in_two_branches):
        verify(to_ssa(parse(fn)))


def unused_read_in_a_branch(a, b):
    if a > 0:
        y = a * a
    if b > 0:
        t = math.sin(y)     # noqa: F841 - a read nothing uses: Python raises at it all the same
    return a * b


def _python_error_line(fn, args) -> int:
    """The line (of the file) where the plain function raised."""
    try:
        fn(*args)
    except UnboundLocalError as e:
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        return tb.tb_lineno
    raise AssertionError(f"{fn.__name__}{args} did not raise")


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_an_unused_read_raises_where_python_raises(selection, backend):
    """The check of a read whose value nothing uses was dropped with the read: the UnboundLocalError named
    the next checked read (``read_before_and_after_a_loop``: line 8 of it, where Python raises at line 4),
    and where there was none the compiled function returned a number (``unused_read_in_a_branch(-0.3, 1)``
    returned -0.3, gradient 1.0)."""
    pytest.importorskip(backend)
    selection = dict(selection, backend=backend)
    for fn, args in ((read_before_and_after_a_loop, (-0.3, 1)), (read_before_and_after_a_loop, (-0.3, 0)),
                     (unused_read_in_a_branch, (-0.3, 1.0))):
        line = _python_error_line(fn, args)
        f = cn.coarsen(fn, **selection)
        for call in (f, f.grad):
            with pytest.raises(UnboundLocalError, match=rf"'y'.* reads it at line {line}\b"):
                call(*args)
    for args in ((-0.3, -1.0), (0.3, 1.0), (0.3, -1.0)):
        _agrees_with_python(unused_read_in_a_branch, args, selection)

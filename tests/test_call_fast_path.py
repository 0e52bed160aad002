"""The call path's fast lookup (runtime.Coarsened._specialize, keyed by the arguments' types, dtypes and shapes):
after a good call, a bad one gets the very error a fresh compiled function gives; arguments of another type,
dtype or rank get their own specialization; what ``f.cost`` reports follows the last call's shapes and int
values as before.  References: the plain Python function and a fresh ``coarsen`` of the same source."""

from __future__ import annotations

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb import CoarsenError

SOURCE = '''
def energy(x, w, n):
    s = 0.0
    for i in range(n):
        s += w * x[i] * x[i]
    return s
'''


def _plain(x, w, n):
    return sum(w * x[i] * x[i] for i in range(n))


def _compiled(backend="numpy"):
    return cn.coarsen(SOURCE, backend=backend)


X = np.linspace(0.5, 2.0, 6)


def _message(call) -> str:
    with pytest.raises(CoarsenError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("bad", [
    (X.astype(object), 1.5, 4),                  # an object array
    (X.astype(complex), 1.5, 4),                 # a complex array
    ("abc", 1.5, 4),                             # a string
    (list(X), 1.5, 4),                           # a list
    (X, None, 4),                                # None for a number
    (X, 1.5),                                    # an argument missing
    (X, 1.5, 4, 5),                              # one too many
], ids=["object", "complex", "str", "list", "none", "missing", "extra"])
def test_bad_arguments_after_a_good_call_get_the_same_error(backend, bad):
    warmed = _compiled(backend)
    for _ in range(2):                          # (the second call takes the fast path)
        gx, gw = warmed.grad(X, 1.5, 4)
        np.testing.assert_allclose(gx, 2 * 1.5 * X * (np.arange(6) < 4))
        assert gw == pytest.approx(X[:4] @ X[:4])
    fresh = _message(lambda: _compiled(backend).grad(*bad))
    assert _message(lambda: warmed.grad(*bad)) == fresh
    assert _message(lambda: warmed(*bad)) == _message(lambda: _compiled(backend)(*bad))


def test_a_keyword_call_after_a_positional_one_binds_the_same():
    f = _compiled()
    f.grad(X, 1.5, 4)
    got = f.grad(X, n=3, w=2.0)
    np.testing.assert_allclose(got[0], 2 * 2.0 * X * (np.arange(6) < 3))
    assert got[1] == pytest.approx(X[:3] @ X[:3])
    assert _message(lambda: f.grad(X, 1.5, 4, w=2.0)) == _message(lambda: _compiled().grad(X, 1.5, 4, w=2.0))


@pytest.mark.parametrize("args", [
    (X.astype(np.float32), 1.5, 4),              # another dtype of the same kind
    (np.arange(6), 1.5, 4),                      # an int array: x is no longer differentiated
    (X, 1, 4),                                   # an int where a float was
    (X, np.float64(1.5), np.int64(4)),           # NumPy scalars
    (X, 1.5, True),                              # a bool where an int was
], ids=["float32", "int-array", "int-w", "numpy-scalars", "bool-n"])
def test_arguments_of_another_type_get_their_own_specialization(args):
    f = _compiled()
    f.grad(X, 1.5, 4)
    f.grad(X, 1.5, 4)
    expected = _compiled().value_and_grad(*args)
    got = f.value_and_grad(*args)
    assert got[0] == pytest.approx(_plain(*args)) and got[0] == pytest.approx(expected[0])
    for g, e in zip(got[1] if isinstance(got[1], tuple) else (got[1],),
                    expected[1] if isinstance(expected[1], tuple) else (expected[1],), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_cost_follows_the_last_calls_shapes_and_ints():
    f = _compiled()
    f.grad(X, 1.5, 4)
    f.grad(np.linspace(0.0, 1.0, 40), 1.5, 30)           # same types: the fast path
    fresh = _compiled()
    fresh.grad(np.linspace(0.0, 1.0, 40), 1.5, 30)
    assert f.cost == fresh.cost
    f.grad(X, 1.5, 4)
    assert f.cost != fresh.cost


def test_a_new_shape_on_every_call_stays_right_and_bounded():
    """The fast path's key holds the shapes (what f.cost reads): a caller giving a new length on every call
    gets the plain function's gradient each time, one compilation, and a bounded table of keys."""
    from coarsen_nb import call_keys

    f = _compiled()
    for m in range(1, call_keys.SEEN_MAX + 40):
        x = np.linspace(0.5, 2.0, m)
        got = f.grad(x, 1.5, m)
        np.testing.assert_allclose(got[0], 2 * 1.5 * x, rtol=1e-12)
        assert got[1] == pytest.approx(float(np.sum(x * x)), rel=1e-12)
    assert len(f._cache) == 1 and len(f._seen) <= call_keys.SEEN_MAX
    fresh = _compiled()
    fresh.grad(x, 1.5, m)
    assert f.cost == fresh.cost


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("method", ["grad", "value_and_grad", "call"])
def test_an_error_inside_the_generated_code_on_a_repeated_call_is_the_users(backend, method):
    """The same argument types as a good call (the fast path), but ``n`` past the array's end: the generated
    code's IndexError is reported at the user's line, as a fresh compiled function reports it."""
    def run(f, *args):
        return f(*args) if method == "call" else getattr(f, method)(*args)

    warmed = _compiled(backend)
    for _ in range(2):
        run(warmed, X, 1.5, 4)
    fresh = _message(lambda: run(_compiled(backend), X, 1.5, 10))
    assert "line" in fresh and "IndexError" in fresh
    assert _message(lambda: run(warmed, X, 1.5, 10)) == fresh
    np.testing.assert_allclose(warmed.grad(X, 1.5, 4)[0], 2 * 1.5 * X * (np.arange(6) < 4))    # and it goes on


def test_a_strided_array_after_a_contiguous_one_of_the_same_key():
    """Numba types a strided array apart from a contiguous one (its layout is not in the key): the same
    key's entry gives the plain function's gradient for both, in either order."""
    f = _compiled("numba")
    wide = np.linspace(0.5, 2.0, 12)
    for x in (wide[::2].copy(), wide[::2], wide[1::2], wide[::2].copy()):
        got = f.grad(x, 1.5, 5)
        np.testing.assert_allclose(got[0], 2 * 1.5 * x * (np.arange(6) < 5), rtol=1e-12)
        assert got[1] == pytest.approx(float(x[:5] @ x[:5]), rel=1e-12)
    assert len(f._seen) == 1


def test_grad_of_a_function_without_a_scalar_result_says_so_on_every_call():
    f = cn.coarsen("def double(x):\n    return 2.0 * x\n", backend="numba")
    for _ in range(3):
        assert "does not return a scalar" in _message(lambda: f.grad(X))

"""How a call with Dask arguments runs: what stays lazy, what is computed, which module, what is refused.

References are the NumPy backend's results on the same data as NumPy arrays.  The tests here run on Dask's
local scheduler (one given explicitly, or a counting one that delegates to it), never on a cluster.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
from dask_chunks import chunked, computed, da

import coarsen_nb as cn

PIECEWISE = '''
def piecewise(x, a):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s += a * x[i] ** 2
        else:
            s += math.sin(x[i])
    return s
'''

SQUARES = '''
def squares(x, a):
    return a * x * x
'''


def _piecewise(backend="numpy"):
    return cn.coarsen(PIECEWISE, backend=backend, namespace={"math": __import__("math")})


class Counting:
    """A scheduler that counts the graphs it is given and runs them on Dask's synchronous scheduler."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


@pytest.fixture
def counting():
    sched = Counting()
    with dask.config.set(scheduler=sched):
        yield sched


def test_a_gradient_with_respect_to_a_chunked_array_is_lazy_until_computed(counting):
    x = np.random.default_rng(0).standard_normal(11)
    f = cn.coarsen(PIECEWISE, wrt="x", namespace={"math": __import__("math")})
    want = f.grad(x, 0.7)
    g = f.grad(chunked(x, "uneven"), 0.7)
    assert counting.calls == 0                 # the whole gradient is a graph: nothing ran yet
    assert isinstance(g, da.Array) and g.chunks == ((3, 3, 3, 2),)
    np.testing.assert_allclose(g.compute(), want, rtol=1e-12, atol=1e-12)
    assert counting.calls == 1


def test_a_scalars_gradient_is_computed_at_return_the_arrays_stays_lazy(counting):
    x = np.random.default_rng(10).standard_normal(11)
    f = _piecewise()
    want = f.grad(x, 0.7)
    g = f.grad(chunked(x, "uneven"), 0.7)
    assert counting.calls == 1                 # a's gradient, computed at return
    assert isinstance(g[1], np.floating) and isinstance(g[0], da.Array) and g[0].chunks == ((3, 3, 3, 2),)
    np.testing.assert_allclose(g[0].compute(), want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g[1], want[1], rtol=1e-12)


def test_value_and_scalar_gradients_are_computed_in_one_pass(counting):
    x = np.random.default_rng(1).standard_normal(9)
    f = cn.coarsen(PIECEWISE, wrt="a", namespace={"math": __import__("math")})
    want = f.value_and_grad(x, 1.3)
    value, ga = f.value_and_grad(chunked(x, "single"), 1.3)
    assert counting.calls == 1
    assert not isinstance(value, da.Array) and not isinstance(ga, da.Array)
    np.testing.assert_allclose((value, ga), want, rtol=1e-12)


def test_an_array_value_stays_lazy_and_its_pullback_takes_a_dask_cotangent(counting):
    x = np.random.default_rng(2).standard_normal(8)
    ct = np.random.default_rng(3).standard_normal(8)
    f = cn.coarsen(SQUARES)
    want_value, pull = f.vjp(x, 1.5)
    want = pull(ct)
    value, pull = f.vjp(chunked(x, "uneven"), 1.5)
    assert isinstance(value, da.Array) and value.chunks == ((3, 3, 2),)
    gx, ga = pull(chunked(ct, "uneven"))
    assert gx.chunks == ((3, 3, 2),)
    np.testing.assert_allclose(value.compute(), want_value, rtol=1e-12)
    np.testing.assert_allclose(gx.compute(), want[0], rtol=1e-12)
    np.testing.assert_allclose(ga, want[1], rtol=1e-12)


def test_jvp_with_a_dask_tangent(counting):
    x = np.random.default_rng(4).standard_normal(7)
    dx = np.random.default_rng(5).standard_normal(7)
    f = _piecewise()
    want = f.jvp((x, 0.4), (dx, 0.25))
    got = f.jvp((chunked(x, "uneven"), 0.4), (chunked(dx, "uneven"), 0.25))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_dask_argument_selects_the_dask_module_whatever_the_backend(backend):
    x = np.random.default_rng(6).standard_normal(10)
    f = _piecewise(backend)
    with dask.config.set(scheduler="threads"):
        got = f.grad(chunked(x, "uneven"), 0.3)
        assert "import dask.array as xp" in f.source
        want = _piecewise().grad(x, 0.3)
        np.testing.assert_allclose(computed(got[0]), want[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_backend_dask_with_numpy_arguments_gives_numpy_values():
    x = np.random.default_rng(7).standard_normal(6)
    with dask.config.set(scheduler="threads"):
        value, grads = _piecewise("dask").value_and_grad(x, 0.9)
    want_value, want = _piecewise().value_and_grad(x, 0.9)
    assert isinstance(grads[0], np.ndarray)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grads[0], want[0], rtol=1e-12, atol=1e-12)


def test_the_dask_module_is_compiled_once_per_signature_whatever_the_chunks():
    x = np.random.default_rng(8).standard_normal(8)
    f = _piecewise()
    with dask.config.set(scheduler="threads"):
        for how in ("one", "uneven", "single"):
            f.grad(chunked(x, how), 0.5)
        first = f._last
        f.grad(chunked(x, "uneven"), 0.5)
    assert f._last is first
    f.grad(x, 0.5)                             # NumPy arguments: the NumPy module, compiled beside it
    assert f._last is not first and "import numpy as xp" in f.source


def test_a_write_into_a_copy_leaves_the_callers_dask_array_unchanged():
    """Regression: ``z = x.copy(); z[i] = ...`` is ``xp.asarray(x, copy=True)`` then an element write; dask's
    ``asarray`` returned the caller's own array object, and dask's assignment rebinds the graph of the object
    written, so the caller's ``x`` changed (and ``x.sum()`` later in the function read the written values)."""
    src = '''
def copy_then_write(x, a):
    z = x.copy()
    for i in range(len(z)):
        z[i] = a * z[i] * z[i]
    return z.sum() + x.sum()
'''
    x = np.random.default_rng(9).standard_normal(6)
    f = cn.coarsen(src)
    want = f.value_and_grad(x, 0.8)
    dx = chunked(x, "one")
    name = dx.name
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(dx, 0.8)
        assert dx.name == name
        np.testing.assert_array_equal(dx.compute(), x)
        np.testing.assert_allclose(value, want[0], rtol=1e-12)
        np.testing.assert_allclose(computed(grads[0]), want[1][0], rtol=1e-12)
        np.testing.assert_allclose(grads[1], want[1][1], rtol=1e-12)


def test_a_loop_carried_along_a_chunked_axis_is_refused_before_anything_runs(counting):
    src = '''
def recurrence(x, a):
    s = 0.0
    for i in range(len(x)):
        s = math.sin(a * s + x[i])
    return s
'''
    f = cn.coarsen(src, namespace={"math": __import__("math")})
    x = np.linspace(-1.0, 1.0, 6)
    with pytest.raises(cn.CoarsenError) as err:
        f.grad(chunked(x, "uneven"), 0.5)
    assert counting.calls == 0
    text = str(err.value)
    assert "line 4" in text and "'x' along axis 0" in text and "2 chunks" in text and "rechunk" in text
    # in one chunk it runs, iteration by iteration, and equals the NumPy backend
    got, want = computed(f.grad(chunked(x, "one"), 0.5)), f.grad(x, 0.5)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_a_function_without_a_lazy_dask_form_is_refused_at_the_users_line():
    """A trip count read from the data (``range(k[i])``): the inner loop's lanes are ``repeat`` by counts the
    data decides, an array of unknown length (``lower/dask_xp_forms._repeat`` refuses it, NotImplementedError);
    the refusal names the user's line and says what to do instead."""
    src = '''
def ragged(x, k, w):
    s = 0.0
    for i in range(len(x)):
        for j in range(k[i]):
            s += w[j] * x[i]
    return s
'''
    f = cn.coarsen(src, wrt="w")
    x, k, w = np.linspace(-1.0, 1.0, 7), np.array([1, 0, 3, 2, 1, 4, 2]), np.linspace(0.1, 0.5, 4)
    with dask.config.set(scheduler="threads"), pytest.raises(cn.CoarsenError) as err:
        f.grad(chunked(x, "uneven"), chunked(k, "uneven"), chunked(w, "uneven"))
    assert "repeat by counts computed from the data" in str(err.value) and "line 4" in str(err.value), str(err.value)
    # what to do instead: the parameter in memory, only the records in Dask (then a sum over them, chunk by chunk)
    assert "pass w as a NumPy array (w.compute()) and keep only x, k in Dask" in str(err.value), str(err.value)
    with dask.config.set(scheduler="threads"):
        got = f.grad(chunked(x, "uneven"), chunked(k, "uneven"), w)
        np.testing.assert_allclose(computed(got), f.grad(x, k, w), rtol=1e-12, atol=1e-15)


LANES = '''
def lanes(xs, y, theta):
    u = 0.0
    for i in range(xs.shape[0]):
        z = 0.0
        for j in range(len(theta)):
            z += xs[i, j] * theta[j]
        if y[i] > 0.5:
            u += math.log(1.0 + math.exp(-z))
        else:
            u += math.log(1.0 + math.exp(z))
    return u
'''


@pytest.mark.parametrize("selected", ["some", "none", "all"])
@pytest.mark.parametrize("how", ["one", "uneven", "single"])
def test_a_sum_over_the_lanes_a_branch_selects_counts_them_once_and_says_so(how, selected):
    """A matrix's rows read over the lanes a branch selects (``xs[i2[seg], j2]``, then reshaped to (lanes, j)):
    the shapes need the lanes' number, so the call computes the mask's count per block while it builds the
    graph (``dask_xp.lane_counts``), once per branch, and ``f.chunking`` says so; the rest stays lazy, and
    the value and gradient equal the NumPy backend's, also where a branch selects no lane at all."""
    f = cn.coarsen(LANES, wrt="theta", namespace={"math": __import__("math")})
    xs, theta = np.arange(15.0).reshape(5, 3) / 10.0 - 0.6, np.array([0.5, -1.0, 2.0])
    y = {"some": np.array([0.0, 1.0, 1.0, 0.2, 0.9]), "none": np.zeros(5), "all": np.ones(5)}[selected]
    counting = Counting()
    with dask.config.set(scheduler=counting):
        got = f.value_and_grad(chunked(xs, how), chunked(y, how), chunked(theta, how))
        assert counting.calls == 2 + 1, counting.calls    # (each branch's count, then the one compute at return)
        said = str(f.chunking)
        assert "computed while the graph was built: the number of lanes a branch selects" in said, said
        assert said.count("computed while the graph was built") == 1, said      # (both branches: one line)
    want = f.value_and_grad(xs, y, theta)
    np.testing.assert_allclose(computed(got[0]), want[0], rtol=1e-12)
    np.testing.assert_allclose(computed(got[1]), want[1], rtol=1e-12, atol=1e-15)


def test_a_loop_over_an_array_computed_from_a_chunked_argument_is_refused_too(counting):
    src = '''
def smoothed(x, a):
    y = 2.0 * x + 1.0
    s = 0.0
    for i in range(len(y)):
        s = math.sin(a * s + y[i])
    return s
'''
    f = cn.coarsen(src, namespace={"math": __import__("math")})
    x = np.linspace(-1.0, 1.0, 7)
    with pytest.raises(cn.CoarsenError) as err:
        f.grad(chunked(x, "single"), 0.5)
    assert counting.calls == 0
    text = str(err.value)
    assert "line 5" in text and "'y' (computed from 'x') along axis 0" in text and "7 chunks" in text
    got, want = computed(f.grad(chunked(x, "one"), 0.5)), f.grad(x, 0.5)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)

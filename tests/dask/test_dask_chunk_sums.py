"""A function that is a sum over its records runs chunk by chunk through its in-memory module
(coarsen_nb/dask_chunk_sums.py decides from the plan, coarsen_nb/dask_chunk_runs.py runs it).

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere.  Each test also asserts *which* path ran (``chunk_refusal``: empty where the chunks ran through
the in-memory module), so a refusal cannot pass silently as the dask module's equal answer.
"""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask_chunks import CHUNKINGS, MEAN_LOSS, MIRRORED, chunked, computed, da
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

REFUSED = {
    "mirrored": (MIRRORED, "it reads x at [len(x) - 1 - i]: not record i's own row"),
    "mirrored_paren": (MIRRORED.replace("len(x) - 1 - i", "len(x) - (i + 1)"),
                       "it reads x at [len(x) - (i + 1)]: not record i's own row"),    # (as the user wrote it)
    "far": (MIRRORED.replace("range(len(x))", "range(len(x) - 9)").replace("len(x) - 1 - i", "i + 9"),
            "it reads x at [i + 9]: not record i's own row"),
    "wraps": (MIRRORED.replace("range(len(x))", "range(len(x) - 1)").replace("len(x) - 1 - i", "i - 1"),
              "reads the records at [i - 1] .. [i]: beyond their ends"),
    # (terms reading i, or the number of records, are told them: test_dask_chunk_index.py, _counts.py)
    "smoothed": ('''
def smoothed(x, a):
    s = 0.0
    loss = 0.0
    for i in range(len(x)):
        s = a * s + x[i]
        loss += (s - 2.0 * x[i]) ** 2
    return loss
''', "each record's term runs a loop of its own up to the number of records"),   # (iir_filter's state)
    "halved": ('''
def halved(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * i * x[i // 2]
    return s
''', "it reads x at [i // 2]: not record i's own row"),       # (i read as an index other than [i])
    "centred": ('''
def centred(x, a):
    m = np.mean(x)
    s = 0.0
    for i in range(len(x)):
        s += a * (x[i] - m) ** 2
    return s
''', "(mean_x, line 3) is computed from its records x or their number"),
    "sized": ('''
def sized(x, a):
    z = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        s += (x[i] - a) ** 2 + z[0]
    return s
''', "(zeros_arr, line 3) is computed from its records x or their number"),
    "around": ('''
def around(x, a):
    s = 0.0
    for i in range(len(x)):
        s += (a * x[i]) ** 2
    return math.log(s)
''', "not the sum over the records times a factor"),
}


def _runs_chunk_by_chunk_and_equals(f, args, want):
    """``f.value_and_grad(*args)`` (threads) runs chunk by chunk and equals ``want``, the in-memory result."""
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
    assert _run(f, args).chunk_refusal(args) == ""
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w_ in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


def _run(f, args, kind="vjp"):
    """The dask entry ``kind`` of ``f`` at ``args`` (its chunk_refusal says how a call runs)."""
    return getattr(f._specialize(args), kind)


def _mean_loss(backend="numpy"):
    return cn.coarsen(MEAN_LOSS, wrt=("w", "b", "X"), backend=backend, namespace={"math": math})


def _data(rows, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), 0.2, rng.standard_normal((rows, 3)), rng.standard_normal(rows)


@pytest.mark.parametrize("how", CHUNKINGS)
def test_a_mean_over_records_runs_chunk_by_chunk_on_a_cluster(client, how):
    """The records' chunks run the numba module in the workers; value and gradients (w, b small, X chunked)
    equal the NumPy backend's.  The factor 1/(n - 1) is not finite on one record: single-element chunks
    are refused (and run as the dask module, equal too)."""
    w, b, X, y = _data(8, 0)
    want_value, want = _mean_loss().value_and_grad(w, b, X, y)
    f = _mean_loss("numba")
    args = (w, b, chunked(X, how), chunked(y, how))
    with client.as_current():
        value, grads = f.value_and_grad(*args)
    refusal = _run(f, args).chunk_refusal(args)
    assert refusal == ("the factor around its sum is not finite at a chunk's number of records"
                       if how == "single" else ""), refusal
    assert not isinstance(value, da.Array) and not isinstance(grads[0], da.Array)
    assert isinstance(grads[2], da.Array) and grads[2].chunks == args[2].chunks
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    for g, w_ in zip(grads, want, strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(0, 4), min_size=1, max_size=6).filter(lambda s: sum(s) >= 2),
       seed=st.integers(0, 2**16))
def test_any_chunking_gives_the_numpy_backends_value_and_gradients(sizes, seed):
    """Random chunkings (empty chunks included) on Dask's threaded scheduler, the NumPy module per chunk."""
    rows = sum(sizes)
    w, b, X, y = _data(rows, seed)
    f = _mean_loss()
    want_value, want = f.value_and_grad(w, b, X, y)
    args = (w, b, da.from_array(X, chunks=(tuple(sizes), (3,))), da.from_array(y, chunks=(tuple(sizes),)))
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
        ran = _run(f, args).chunk_refusal(args)
        assert ran == ("" if 1 not in sizes else
                       "the factor around its sum is not finite at a chunk's number of records")
        np.testing.assert_allclose(f(*args), want_value, rtol=1e-12)
        np.testing.assert_allclose(value, want_value, rtol=1e-12)
        for g, w_ in zip(grads, want, strict=True):
            np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


def test_records_chunked_differently_run_the_dask_module():
    w, b, X, y = _data(9, 3)
    f = _mean_loss()
    want_value = f(w, b, X, y)
    args = (w, b, da.from_array(X, chunks=(3, 3)), da.from_array(y, chunks=4))
    with dask.config.set(scheduler="threads"):
        assert "same chunks" in _run(f, args, "forward").chunk_refusal(args)
        np.testing.assert_allclose(f(*args), want_value, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_is_not_a_sum_over_records_is_refused_in_words_and_still_right(name):
    source, words = REFUSED[name]
    f = cn.coarsen(source, namespace={"math": math, "np": np})
    x = np.random.default_rng(4).uniform(0.5, 1.5, 7)
    want = f.value_and_grad(x, 0.3)
    args = (chunked(x, "uneven"), 0.3)
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
    refusal = _run(f, args).chunk_refusal(args)
    assert words in refusal and "$" not in refusal, refusal      # (the user's names, never the compiler's)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w_ in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)


def test_a_record_read_at_a_fixed_row_is_refused():
    """x[0] in every record's term is the first record of all, not of each chunk: not a chunk sum."""
    f = cn.coarsen('''
def first_row(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * x[i] * x[0]
    return s
''')
    x = np.random.default_rng(5).standard_normal(7)
    want = f.value_and_grad(x, 0.3)
    args = (chunked(x, "uneven"), 0.3)
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
    assert "x at [0]" in _run(f, args).chunk_refusal(args)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(computed(grads[0]), want[1][0], rtol=1e-12, atol=1e-12)


def test_a_vjp_with_a_cotangent_and_records_of_unknown_chunk_sizes():
    """f.vjp's cotangent scales each chunk's gradients; records whose chunk sizes are unknown (a mask
    selected them) are refused and run the dask module (which refuses X[i, j] of unknown rows in words)."""
    w, b, X, y = _data(9, 6)
    f = _mean_loss()
    want_value, pullback = f.vjp(w, b, X, y)
    want = pullback(2.5)
    args = (w, b, chunked(X, "uneven"), chunked(y, "uneven"))
    with dask.config.set(scheduler="threads"):
        value, got = f.vjp(*args)
        got = got(2.5)
        assert _run(f, args).chunk_refusal(args) == ""
        np.testing.assert_allclose(value, want_value, rtol=1e-12)
        for g, w_ in zip(got, want, strict=True):
            np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)
        keep = args[3] > -10.0          # (all of them, which Dask does not know before computing the mask)
        unknown = (w, b, args[2][keep], args[3][keep])
        assert "not known" in _run(f, unknown).chunk_refusal(unknown)
        with pytest.raises(cn.CoarsenError, match="shape \\(nan, 3\\)"):     # (the dask module's own limit)
            f(*unknown)


def test_a_sum_over_zip_runs_chunk_by_chunk_where_the_records_have_one_length():
    """``zip(x, y)`` runs to the shorter one: ``range(min(len(x), len(y)))``, which is all the records where
    they share their chunks (a call whose records are cut differently runs the dask module)."""
    f = cn.coarsen('''
def zip_loss(x, y, a):
    s = 0.0
    for u, v in zip(x, y):
        s += (a * u - v) ** 2
    return s / len(x)
''')
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(8), rng.standard_normal(8)
    want = f.value_and_grad(x, y, 0.6)
    args = (chunked(x, "uneven"), chunked(y, "uneven"), 0.6)
    _runs_chunk_by_chunk_and_equals(f, args, want)


PRIOR = '''
def prior_loss(q, x):
    u = 0.0
    for j in range(len(q)):
        u += 0.5 * q[j] ** 2
    for i in range(len(x)):
        u += math.log1p(math.exp(-q[0] * x[i] - q[1]))
    return u
'''


@pytest.mark.parametrize("how", ("uneven", "single"))
def test_a_term_beside_the_records_sum_is_the_module_on_no_records(how):
    """hmc's form: a prior over q (a sum over q's elements, q a NumPy array) beside the sum over the records x.
    Which sum is over the records the call says (x is the Dask argument); the prior is added once."""
    f = cn.coarsen(PRIOR, wrt=("q", "x"), namespace={"math": math})
    q, x = np.array([0.7, -0.3, 1.1]), np.random.default_rng(9).standard_normal(7)
    want = f.value_and_grad(q, x)
    args = (q, chunked(x, how))
    _runs_chunk_by_chunk_and_equals(f, args, want)


def test_a_term_beside_a_mean_over_records_is_the_module_told_n_on_no_records():
    """With the records' sum divided by their number, the module on no records would be 0/0: each chunk's
    module is told the call's number of records instead (weight 1), and so is the one on no records."""
    f = cn.coarsen(PRIOR.replace("return u", "return u / len(x)").replace("u = 0.0", "u = 0.0\n    p = 0.0")
                   .replace("u += 0.5", "p += 0.5").replace("return u / len(x)", "return p + u / len(x)"),
                   namespace={"math": math})
    q, x = np.array([0.7, -0.3, 1.1]), np.random.default_rng(9).standard_normal(7)
    want = f.value_and_grad(q, x)
    args = (q, chunked(x, "uneven"))
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
    assert _run(f, args).chunk_refusal(args) == "" and "(told the number of records)" in str(f.chunking)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(grads[0], want[1][0], rtol=1e-12)


#: work before the sum on the other arguments (an opaque np.exp, its elements read in every record's term):
#: the same in every chunk, so each chunk computes it again
BEFORE = '''
def before(x, w):
    v = np.exp(w)
    s = 0.0
    for i in range(len(x)):
        s += (x[i] - v[0]) ** 2 + v[1] * x[i]
    return s / len(x)
'''


@pytest.mark.parametrize("how", ("uneven", "single"))
def test_work_on_the_other_arguments_before_the_sum_is_repeated_in_each_chunk(how):
    f = cn.coarsen(BEFORE, namespace={"np": np})
    x, w = np.random.default_rng(11).standard_normal(8), np.array([0.3, -0.2])
    _runs_chunk_by_chunk_and_equals(f, (chunked(x, how), w), f.value_and_grad(x, w))


@pytest.mark.parametrize("how", CHUNKINGS)
def test_gmm_runs_chunk_by_chunk_on_a_cluster(client, how):
    """gmm's mixture weights (np.zeros(k), written from its logits) are computed in each chunk, then its sum
    over the records x: the numba module in the workers equals the NumPy backend."""
    mod = KERNELS["gmm"]
    args = mod.make_inputs(9, seed=2)
    want = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numpy").value_and_grad(*args)
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numba")
    dargs = (chunked(args[0], how), *args[1:])
    with client.as_current():
        value, grads = f.value_and_grad(*dargs)
    assert _run(f, dargs).chunk_refusal(dargs) == ""
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w_ in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w_, rtol=1e-12, atol=1e-12)

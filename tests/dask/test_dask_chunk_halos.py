"""A sum whose terms read nearby records (``x[i + 1]``, ``x[i - 2]``) runs chunk by chunk with a halo
(coarsen_nb/dask_chunk_halos.py; the form decided in coarsen_nb/dask_chunk_sums.py).

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere, and :func:`_owned`, a direct count of which chunk owns which term.  Each test also asserts that
the halo path ran (``chunk_refusal`` empty), so a refusal cannot pass as the dask module's equal answer.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
from dask_chunks import CHUNKINGS, SHIFTED, chunked, computed, da
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.dask_chunk_halos import Halos, gather_tasks
from coarsen_nb.kernels import KERNELS, function

#: reads two records back and one ahead, over range(2, n - 1), divided by the number of terms: each chunk
#: runs with 2 rows before and 1 after, and its weight is (m - 3) / (n - 3) on its m extended rows
BOTH_WAYS = '''
def both_ways(x, y, a):
    s = 0.0
    for i in range(2, len(x) - 1):
        s += a * x[i - 2] * y[i] + (x[i + 1] - y[i - 1]) ** 2
    return s / (len(x) - 3)
'''


def _rosenbrock(backend):
    return cn.coarsen(function(KERNELS["rosenbrock"]), wrt=("x",), backend=backend)


def _vjp(f, args):
    return f._specialize(args).vjp


@pytest.mark.parametrize("how", CHUNKINGS)
def test_rosenbrock_runs_chunk_by_chunk_on_a_cluster(client, how):
    """The numba module in the workers, each chunk with the next one's first row; the gradient's halo rows
    added to the next chunk's block.  Equal to the NumPy backend, the gradient with x's chunks."""
    x = 1.0 + 0.5 * np.random.default_rng(3).standard_normal(11)
    want = _rosenbrock("numpy").value_and_grad(x)
    f = _rosenbrock("numba")
    xd = chunked(x, how)
    with client.as_current():
        value, grad = f.value_and_grad(xd)
    assert _vjp(f, (xd,)).chunk_refusal((xd,)) == ""
    assert isinstance(grad, da.Array) and grad.chunks == xd.chunks
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(computed(grad), want[1], rtol=1e-12, atol=1e-12)


def test_a_halo_chunk_is_one_task_and_the_graph_stays_lazy():
    """One task per chunk (its input the blocks its rows and halo lie in), the chunks of x kept."""
    f = _rosenbrock("numpy")
    xd = chunked(np.linspace(0.2, 1.4, 10), "uneven")
    with dask.config.set(scheduler="threads"):
        f.value_and_grad(xd)
    c = f.chunking
    assert c.chunkwise and c.chunks == 4
    grad = _vjp(f, (xd,)).chunkwise.call("grad", (xd,))[0]
    layers = grad.__dask_graph__().layers
    (per_chunk,) = [name for name in layers if name.startswith("rosenbrock-chunk-")]
    assert len(layers[per_chunk]) == 4


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(0, 4), min_size=1, max_size=7).filter(lambda s: sum(s) >= 4),
       seed=st.integers(0, 2**16))
def test_reads_before_and_after_under_any_chunking(sizes, seed):
    """Random chunkings (empty and one-row chunks, chunks shorter than the halo) on Dask's threaded scheduler:
    x read at i - 2 and i + 1, y at i and i - 1, a mean over the n - 3 terms."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(sum(sizes)), rng.standard_normal(sum(sizes))
    f = cn.coarsen(BOTH_WAYS, wrt=("x", "y", "a"))
    want = f.value_and_grad(x, y, 0.4)
    args = (da.from_array(x, chunks=(tuple(sizes),)), da.from_array(y, chunks=(tuple(sizes),)), 0.4)
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
        assert _vjp(f, args).chunk_refusal(args) == ""
        np.testing.assert_allclose(f(*args), want[0], rtol=1e-12)
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("how", CHUNKINGS)
def test_a_shifted_sum_with_a_number_and_a_record_gradient(how):
    """``a`` is a number: its gradient is the tree sum of the chunks' (the halo's terms counted once)."""
    x = np.linspace(0.5, 1.5, 8)
    f = cn.coarsen(SHIFTED, wrt=("x", "a"))
    want = f.value_and_grad(x, 0.3)
    args = (chunked(x, how), 0.3)
    with dask.config.set(scheduler="threads"):
        value, (gx, ga) = f.value_and_grad(*args)
    assert _vjp(f, args).chunk_refusal(args) == ""
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    np.testing.assert_allclose(computed(gx), want[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga, want[1][1], rtol=1e-12)


def _owned(chunks, before, after):
    """Which global terms k (of range(before, n - after)) each chunk's extended rows sum over, counted
    directly: the module's own range(before, m - after) on rows [lo, hi)."""
    halos = Halos.of(chunks, before, after)
    return [set(range(lo + before, hi - after)) for lo, hi in halos.spans]


@settings(max_examples=50, deadline=None)
@given(chunks=st.lists(st.integers(0, 5), min_size=1, max_size=8), before=st.integers(0, 3),
       after=st.integers(0, 3))
def test_every_term_is_summed_by_exactly_the_chunk_that_holds_its_row(chunks, before, after):
    n = sum(chunks)
    owned = _owned(tuple(chunks), before, after)
    starts = np.cumsum([0, *chunks[:-1]])
    for c, (s, m) in enumerate(zip(starts, chunks, strict=True)):
        assert owned[c] == set(range(max(s, before), min(s + m, n - after)))
    halos = Halos.of(tuple(chunks), before, after)
    for (lo, hi), pieces in zip(halos.spans, halos.pieces, strict=True):     # (the pieces are those rows)
        rows = [r for d, a, b in pieces for r in range(starts[d] + a, starts[d] + b)]
        assert rows == list(range(lo, hi))
    gathered = gather_tasks("g", "p", halos, tuple(chunks), 0, ())    # (each block reads every span over it)
    for c, (s, m) in enumerate(zip(starts, chunks, strict=True)):
        reads = gathered[("g", c)][-1]
        assert [d for _, d in reads] == [d for d, (lo, hi) in enumerate(halos.spans) if max(lo, s) < min(hi, s + m)]

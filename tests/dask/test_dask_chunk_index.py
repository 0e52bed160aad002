"""A sum whose terms read their own index (``g ** i``, ``t = i * dt``, a weight by position) runs chunk by
chunk, each chunk's module told the global index of its first record (coarsen_nb/dask_chunk_index.py; the
form decided in coarsen_nb/dask_chunk_sums.py).

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere.  Each test asserts that the chunks ran through the in-memory module's told variant
(``chunk_refusal`` empty), so a refusal cannot pass as the dask module's equal answer; the refusals of forms
still not taken (``i / len(x)``, ``x[i // 2]``) are in test_dask_chunk_sums.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dask_chunks import (
    CHUNKINGS,
    assert_chunk_sum_equals_numpy,
    assert_chunks_kept,
    assert_equal_to,
    chunked,
    da,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb import module_parts

#: corpus-style programs whose summand reads its index i as a number: (source, wrt, arguments by rows)
PROGRAMS = {
    # a weight by position: later records count more
    "position_weights": ('''
def position_weights(x, a):
    s = 0.0
    for i in range(len(x)):
        s += (1.0 + 0.25 * i) * (x[i] - a) ** 2
    return s
''', ("x", "a"), lambda rng, n: (rng.standard_normal(n), 0.3)),
    # a discounted return over rewards and a value estimate: g ** i
    "discounted": ('''
def discounted(r, v, g):
    s = 0.0
    for i in range(len(r)):
        s += g ** i * (r[i] - v[i]) ** 2
    return s
''', ("r", "v", "g"), lambda rng, n: (rng.standard_normal(n), rng.standard_normal(n), 0.9)),
    # a time t = i * dt, a mean over the records (F = 1/n)
    "sampled_wave": ('''
def sampled_wave(y, w, dt):
    s = 0.0
    for i in range(len(y)):
        t = i * dt
        s += (y[i] - math.sin(w * t)) ** 2
    return s / len(y)
''', ("y", "w"), lambda rng, n: (rng.standard_normal(n), 1.3, 0.1)),
    # the next record and the index: a halo and an offset together (range(1, n), x[i - 1])
    "indexed_steps": ('''
def indexed_steps(x, c):
    s = 0.0
    for i in range(1, len(x)):
        s += (x[i] - x[i - 1] - c * i) ** 2
    return s
''', ("x", "c"), lambda rng, n: (np.cumsum(rng.standard_normal(n)), 0.2)),
    # a term beside the sum (a prior on c) and rows of a matrix weighted by a discount
    "discounted_rows": ('''
def discounted_rows(X, c, g):
    s = 0.5 * c * c
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * c
        s += g ** i * z ** 2
    return s
''', ("X", "c"), lambda rng, n: (rng.standard_normal((n, 3)), 0.7, 0.95)),
}


def _f(name, backend):
    source, wrt, _ = PROGRAMS[name]
    return cn.coarsen(source, wrt=wrt, backend=backend, namespace={"math": math})


def _chunked_args(args, how):
    """The records (the arrays of the program's arguments) cut ``how``; the others as they are."""
    return tuple(chunked(a, how) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_summand_reading_its_index_runs_chunk_by_chunk_on_a_cluster(client, name, how):
    """The numba module told each chunk's first index, in the workers; value and gradients (the records'
    with their chunks) equal the NumPy backend's."""
    args = PROGRAMS[name][2](np.random.default_rng(11), 10)
    want = _f(name, "numpy").value_and_grad(*args)
    f = _f(name, "numba")
    dargs = _chunked_args(args, how)
    with client.as_current():
        value, grads = f.value_and_grad(*dargs)
    assert f._specialize(dargs).vjp.chunk_refusal(dargs) == ""
    assert_chunks_kept(f, PROGRAMS[name][1], dargs, grads)
    assert_equal_to(value, grads, want)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)),
       sizes=st.lists(st.integers(0, 4), min_size=1, max_size=7).filter(lambda s: sum(s) >= 3),
       seed=st.integers(0, 2**16))
def test_any_chunking_numbers_the_records_as_one_array(name, sizes, seed):
    """Random chunkings (empty and one-record chunks) on Dask's threaded scheduler, the NumPy module per chunk:
    f.value_and_grad and f.vjp with a cotangent."""
    args = PROGRAMS[name][2](np.random.default_rng(seed), sum(sizes))
    f = _f(name, "numpy")
    dargs = tuple(da.from_array(a, chunks=(tuple(sizes), *a.shape[1:])) if isinstance(a, np.ndarray) else a
                  for a in args)
    assert_chunk_sum_equals_numpy(f, args, dargs)
    assert "module (told each chunk's first record's index)" in str(f.chunking)


def test_the_chunks_module_is_told_its_start_and_the_in_memory_one_is_not():
    """The in-memory module keeps the user's parameters; the chunks' module has one more, the block's first
    index, read where the sum reads ``i`` as a number (``g ** (i + chunk_start)``), never in ``r[i]``."""
    f = _f("discounted", "numpy")
    args = PROGRAMS["discounted"][2](np.random.default_rng(1), 6)
    f(*args)
    assert "chunk_start" not in f.source
    dargs = _chunked_args(args, "uneven")
    schedule = f._specialize(dargs).vjp.chunkwise
    (told,) = schedule.told
    source = module_parts.joined(told.parts)
    assert "def discounted(r, v, g, chunk_start):" in source
    assert "chunk_start" in source and "r[chunk_start" not in source

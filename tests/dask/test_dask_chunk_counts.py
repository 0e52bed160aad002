"""A sum whose terms read the number of records (horner's ``t ** (n - 1 - i)``, ``i / len(x)``), or with a term
beside it that does (``a ** n * v0``), runs chunk by chunk, each chunk's module told the whole call's number
of records as well as its first record's index (coarsen_nb/dask_chunk_index.py; the form decided in
coarsen_nb/dask_chunk_sums.py).

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere.  Each test asserts that the chunks ran through the told module (``chunk_refusal`` empty and
``f.chunking`` saying so), so a refusal cannot pass as the dask module's equal answer.
"""

from __future__ import annotations

import math

import dask
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

#: programs whose terms, or a term beside their sum, read the number of records: (source, wrt, arguments by rows)
PROGRAMS = {
    # a polynomial's value at t by its coefficients, highest first: c[i] * t ** (n - 1 - i)
    "polynomial": ('''
def polynomial(c, t):
    s = 0.0
    n = len(c)
    for i in range(n):
        s += c[i] * t ** (n - 1 - i)
    return s
''', ("c", "t"), lambda rng, n: (rng.standard_normal(n), 0.9)),
    # a linear recurrence's closed form: a term beside the sum reads n (a ** n * v0)
    "recurrence": ('''
def recurrence(a, c, v0):
    v = v0
    for i in range(len(c)):
        v = a * v + c[i]
    return v
''', ("a", "c", "v0"), lambda rng, n: (0.8, rng.standard_normal(n), 1.5)),
    # a position in [0, 1): i / n
    "fraction": ('''
def fraction(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * (i / len(x)) * x[i] ** 2
    return s
''', ("x", "a"), lambda rng, n: (rng.standard_normal(n), 0.7)),
    # a mean inside each term and a mean outside (F = 1/n as well): weight 1 where the module is told n
    "centred_scale": ('''
def centred_scale(x, c):
    s = 0.0
    for i in range(len(x)):
        s += (x[i] - c / len(x)) ** 2
    return s / len(x)
''', ("x", "c"), lambda rng, n: (rng.standard_normal(n), 0.4)),
    # the next record (a halo) and n together: a weight falling to 1 at the last term
    "tapered_steps": ('''
def tapered_steps(x, c):
    n = len(x)
    s = 0.0
    for i in range(n - 1):
        s += (n - 1 - i) * (x[i + 1] - c * x[i]) ** 2
    return s
''', ("x", "c"), lambda rng, n: (rng.standard_normal(n), 0.5)),
    # np.sum of an elementwise value of the records that reads their number
    "elementwise_shift": ('''
def elementwise_shift(x, y, a):
    return np.sum((x - a * y / len(x)) ** 2)
''', ("x", "y", "a"), lambda rng, n: (rng.standard_normal(n), rng.standard_normal(n), 1.1)),
    # zip's bound min(len(x), len(y)), computed in an SOI of its own, and len(x) in each term: the bound read
    # as the block's rows, the term's len(x) as the call's n
    "zipped_count": ('''
def zipped_count(x, y, a):
    s = 0.0
    for u, v in zip(x, y):
        s += (u - a * v) ** 2 * len(x)
    return s
''', ("x", "y", "a"), lambda rng, n: (rng.standard_normal(n), rng.standard_normal(n), 0.6)),
    # enumerate, a phase centred on n / 2, and a term beside the sum reading n (a * n)
    "centred_phase": ('''
def centred_phase(x, a):
    s = 0.0
    n = len(x)
    for i, v in enumerate(x):
        s += math.cos(a * (i - n / 2)) * v
    return s / n + a * n
''', ("x", "a"), lambda rng, n: (rng.standard_normal(n), 0.3)),
    # matrix rows, a prior beside the sum, and the last rows counting most: (i + 1) / n
    "ramped_rows": ('''
def ramped_rows(X, w):
    n = X.shape[0]
    s = 0.5 * (w[0] ** 2 + w[1] ** 2)
    for i in range(n):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += (i + 1) / n * math.log1p(math.exp(z))
    return s
''', ("X", "w"), lambda rng, n: (rng.standard_normal((n, 2)), np.array([0.3, -0.6]))),
}


def _f(name, backend):
    source, wrt, _ = PROGRAMS[name]
    return cn.coarsen(source, wrt=wrt, backend=backend, namespace={"math": math, "np": np})


def _chunked_args(args, how):
    return tuple(chunked(a, how) if isinstance(a, np.ndarray) and a.ndim and a.shape[0] > 2 else a for a in args)


def _records(args):
    """The program's records: its arrays longer than two (ramped_rows' weights w are not chunked)."""
    return [a for a in args if isinstance(a, np.ndarray) and a.shape[0] > 2]


@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_term_reading_the_number_of_records_runs_chunk_by_chunk_on_a_cluster(client, name, how):
    """The numba module told each chunk's first index and the number of records, in the workers; value and
    gradients (the records' with their chunks) equal the NumPy backend's."""
    args = PROGRAMS[name][2](np.random.default_rng(5), 10)
    want = _f(name, "numpy").value_and_grad(*args)
    f = _f(name, "numba")
    dargs = _chunked_args(args, how)
    with client.as_current():
        value, grads = f.value_and_grad(*dargs)
    assert f._specialize(dargs).vjp.chunk_refusal(dargs) == ""
    assert "told" in str(f.chunking) and "the number of records" in str(f.chunking), str(f.chunking)
    assert_chunks_kept(f, PROGRAMS[name][1], dargs, grads)
    assert_equal_to(value, grads, want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)),
       sizes=st.lists(st.integers(0, 4), min_size=1, max_size=7).filter(lambda s: sum(s) >= 3),
       seed=st.integers(0, 2**16))
def test_any_chunking_counts_the_records_of_the_whole_call(name, sizes, seed):
    """Random chunkings (empty and one-record chunks) on Dask's threaded scheduler, the NumPy module per chunk:
    f.value_and_grad, f.vjp with a cotangent and f."""
    args = PROGRAMS[name][2](np.random.default_rng(seed), sum(sizes))
    f = _f(name, "numpy")
    dargs = tuple(da.from_array(a, chunks=(tuple(sizes), *a.shape[1:])) if any(a is r for r in _records(args))
                  else a for a in args)
    assert_chunk_sum_equals_numpy(f, args, dargs)
    assert "the number of records)" in str(f.chunking)


def test_the_chunks_module_reads_the_told_number_in_its_terms_and_its_own_rows_in_its_bounds():
    """The chunks' module has two more parameters; its terms read ``chunk_records`` where the user's code reads
    ``len(c)``, its sum still runs over the block's own rows (``c.shape[0]``); the in-memory module has
    neither."""
    f = _f("polynomial", "numpy")
    args = PROGRAMS["polynomial"][2](np.random.default_rng(1), 7)
    f(*args)
    assert "chunk_records" not in f.source
    dargs = _chunked_args(args, "uneven")
    (told,) = f._specialize(dargs).vjp.chunkwise.told
    source = module_parts.joined(told.parts)
    assert "def polynomial(c, t, chunk_start, chunk_records):" in source
    assert "chunk_records - 1 - i - chunk_start" in source and "n_c = c.shape[0]" in source


SPREAD = '''
def spread(x, a):
    s = 0.0
    for i in range(len(x)):
        s += (x[i] - a * i / len(x)) ** 2
    return s / (len(x) - 1)
'''


def test_a_factor_not_finite_at_the_calls_number_of_records_is_refused_in_words():
    """``/ (len(x) - 1)`` beside terms that read ``len(x)``: on one record the factor is not finite, and the
    call runs the dask module, saying why.  Its value is the plain function's: a sum of array elements is a
    NumPy float in Python, and its division by 0 is inf with a warning, not a ZeroDivisionError (the NumPy
    backend's checked division, ``lower/division_checks.py``, raises only for a numerator of 0)."""
    plain = {}
    exec(SPREAD, plain)
    f = cn.coarsen(SPREAD, wrt=("x", "a"), backend="numpy")
    for rows, refused in ((5, False), (1, True)):
        x = np.random.default_rng(rows).standard_normal(rows)
        dargs = (da.from_array(x, chunks=1), 0.3)
        with dask.config.set(scheduler="threads"), np.errstate(all="ignore"):
            got = f(*dargs)
            want = plain["spread"](x, 0.3)
            numpy_backend = f(x, 0.3)
        ran = f._specialize(dargs).forward.chunk_refusal(dargs)
        assert ran == ("the factor around its sum is not finite at a chunk's number of records" if refused else "")
        assert np.isfinite(want) != refused
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(numpy_backend, want, rtol=1e-12)


def test_the_told_number_is_wired_with_the_chunk_structure():
    """Two calls on new arrays of the same chunks find their wiring (one build); a call on more records in chunks
    of the same size wires its own, told its own ``n``: each equals the NumPy backend on its data."""
    f = _f("polynomial", "numpy")
    rng = np.random.default_rng(3)
    calls = [(rng.standard_normal(9), 0.8, 3), (rng.standard_normal(9), 0.7, 3), (rng.standard_normal(12), 0.7, 3)]
    schedule = None
    for c, t, size in calls:
        dargs = (da.from_array(c, chunks=size), t)
        with dask.config.set(scheduler="threads"):
            value, grads = f.value_and_grad(*dargs)
        assert_equal_to(value, grads, f.value_and_grad(c, t))
        schedule = f._specialize(dargs).vjp.chunkwise
    assert schedule.cache_info().builds == 2      # (the first structure once, the longer array its own)

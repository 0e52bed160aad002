"""Several sums over the same records, and ``np.sum`` of an elementwise value of them, run chunk by chunk
(coarsen_nb/dask_chunk_sums.py: one form where the result is linear in the sums, with factors that differ by
a number; each chunk's module adds its part of each).

References: the same function on NumPy arrays (the NumPy backend), itself checked against finite differences
elsewhere.  Each test asserts which path ran (``chunk_refusal``), so a refusal cannot pass as the dask
module's equal answer, and each refusal is said in words.
"""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask_chunks import CHUNKINGS, chunked, computed
from scipy.special import expit, logit, xlogy

import coarsen_nb as cn

#: two loops over the records, their sums combined linearly over the records' number
TWO_LOOPS = '''
def two_loops(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * x[i] ** 2
    u = 0.0
    for j in range(len(x)):
        u += math.sin(a * x[j])
    return (s - 3.0 * u) / len(x)
'''

#: two np.sum of elementwise values of the same records (the corpus's logit_roundtrip)
ELEMENTWISE = '''
def elementwise(q, t):
    return np.sum((logit(q) - t) ** 2) + np.sum(expit(logit(q)) * t) - np.sum(xlogy(t, q))
'''

REFUSED = {
    "product": (TWO_LOOPS.replace("(s - 3.0 * u) / len(x)", "s * u"),
                "not the sum over the records times a factor free of them"),
    "read_beside": (TWO_LOOPS.replace("(s - 3.0 * u) / len(x)", "s - u + x[0]"),
                    "it reads x at [0]: not record i's own row"),
}

#: sums whose factors each chunk's module computes itself (weight 1; told the call's n where they read it):
#: factors that differ by more than a number, factors that read another argument, and a term beside a mean,
#: whose factor 1/n is not finite on no records (the module on no records told n)
OWN_FACTORS = {
    "factors": TWO_LOOPS.replace("(s - 3.0 * u) / len(x)", "s / len(x) + u"),
    "scaled": TWO_LOOPS.replace("(s - 3.0 * u) / len(x)", "a * s - u / (a * len(x)) + a ** 2"),
    "offset": TWO_LOOPS.replace("/ len(x)", "/ len(x) + a ** 2"),
}

NAMES = {"math": math, "np": np, "logit": logit, "expit": expit, "xlogy": xlogy}


def _check(f, args, want, refusal=""):
    with dask.config.set(scheduler="threads"):
        value, grads = f.value_and_grad(*args)
        said = f._specialize(args).vjp.chunk_refusal(args)
    assert (said == "") if not refusal else (refusal in said and "$" not in said), said
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("how", CHUNKINGS)
def test_two_loops_over_the_records_on_a_cluster(client, how):
    """The numba module in the workers: each chunk adds its part of both sums."""
    x = np.random.default_rng(2).standard_normal(10)
    want = cn.coarsen(TWO_LOOPS, wrt=("x", "a"), namespace=NAMES).value_and_grad(x, 0.7)
    f = cn.coarsen(TWO_LOOPS, wrt=("x", "a"), backend="numba", namespace=NAMES)
    args = (chunked(x, how), 0.7)
    with client.as_current():
        value, grads = f.value_and_grad(*args)
    assert f._specialize(args).vjp.chunk_refusal(args) == ""
    np.testing.assert_allclose(value, want[0], rtol=1e-12)
    for g, w in zip(grads, want[1], strict=True):
        np.testing.assert_allclose(computed(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("how", CHUNKINGS)
def test_np_sums_of_elementwise_values_of_the_records(how):
    rng = np.random.default_rng(3)
    q, t = rng.uniform(0.1, 0.9, 9), rng.uniform(0.1, 0.9, 9)
    f = cn.coarsen(ELEMENTWISE, namespace=NAMES)
    _check(f, (chunked(q, how), chunked(t, how)), f.value_and_grad(q, t))


def test_records_of_two_shapes_summed_elementwise_are_refused():
    """np.sum(x * y) of x (n, 1) and y (n,) broadcasts to (n, n): a chunk's rows are not its part of it."""
    f = cn.coarsen("def outer(x, y):\n    return np.sum(x * y)\n", namespace=NAMES)
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((7, 1)), rng.standard_normal(7)
    _check(f, (chunked(x, "uneven"), chunked(y, "uneven")), f.value_and_grad(x, y),
           "its records, summed elementwise, have different shapes")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_sums_that_do_not_combine_per_chunk_are_refused_in_words_and_still_right(name):
    source, words = REFUSED[name]
    f = cn.coarsen(source, wrt=("x", "a"), namespace=NAMES)
    x = np.random.default_rng(5).standard_normal(8)
    _check(f, (chunked(x, "uneven"), 0.7), f.value_and_grad(x, 0.7), words)


@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(OWN_FACTORS))
def test_factors_each_chunk_computes_itself(name, how):
    """Each chunk's module computes ``A(a, n) + Σ_i G_i(a, n) S_i`` on its rows (told n): the chunks add up to
    the whole, empty and one-record chunks included, and ``f.chunking`` says the module was told n."""
    f = cn.coarsen(OWN_FACTORS[name], wrt=("x", "a"), namespace=NAMES)
    x = np.random.default_rng(6).standard_normal(8)
    _check(f, (chunked(x, how), 0.7), f.value_and_grad(x, 0.7))
    assert "(told the number of records)" in str(f.chunking)

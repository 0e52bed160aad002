"""Every corpus entry with an array argument, its arrays as Dask arrays: the NumPy backend's answer, or a refusal.

Each entry runs with its arrays in one chunk, in chunks of 2 along every axis (uneven where a size is odd) and
in one-element chunks, on Dask's local scheduler (no client: ``scheduler="threads"``).  The value and the
gradient (the value alone where the entry has none) equal the NumPy backend's on the same NumPy arrays to
1e-12, or the call raises a CoarsenError: never a different number.  Which entries are refused, and in
which chunkings, is listed below with the reason, so that a refusal that appears or goes away fails here;
so are the entries whose call computes a part of its graph while building it (``EAGER``): one that starts or
stops doing so fails here too (the entries made lazy run again, failing at the first compute, in
test_dask_lazy.py).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import dask
import dask.threaded
import numpy as np
import pytest
from dask_chunks import EarlyComputes, computed, da

import coarsen_nb as cn

sys.path.insert(0, str(Path(__file__).parent.parent))     # the corpora (tests/corpus*.py) import by name

from corpus import CORPUS  # noqa: E402
from corpus_arrays import ARRAYS  # noqa: E402
from corpus_linalg import LINALG  # noqa: E402
from corpus_python_forms import PYTHON_FORMS  # noqa: E402
from corpus_reductions import REDUCTIONS  # noqa: E402
from corpus_slices import SLICES  # noqa: E402
from corpus_special import SPECIAL  # noqa: E402

#: a NumPy function handed a Dask array (Dask's FutureWarning "... is not implemented by Dask array") computes it
#: inside a task or in the client: a form the dask module must not print (a full_like filled with a lazy number
#: did, moving_window's gradient)
pytestmark = pytest.mark.filterwarnings("error:.*is not implemented by Dask array:FutureWarning")

CHUNK_SIZES = {"one": None, "twos": 2, "single": 1}
CHUNKED = ("twos", "single")
EVERY = ("one", "twos", "single")

#: loops run iteration by iteration (state with no closed form), indexing an argument along a chunked axis:
#: refused by name (dask_limits.check_chunks) whenever that axis has several chunks; in one chunk they run
ITERATED = {
    "running_max_if", "break_first_negative", "early_return_in_loop", "param_private_copy_write",
    "ones_full_write", "ones_like_2d_write", "list_in_loop", "helper_in_loop", "helper_nested",
    "image_gradient", "row_blocks", "block_writes", "extremum_filter_default", "helper_keywords_in_loop",
    # ... or an array computed from one (z = x.copy(), then z[i] written element by element)
    "copy_then_write", "methods_copy_then_write",
    # ... (Z[:, 1:] of Z = np.concatenate((X, 2.0 * Y), axis=1): the slice copied row by row, a loop run
    # iteration by iteration over Z's rows, as image_gradient's and row_blocks' slices are)
    "concatenated_rows",
}

#: the entries whose call computes part of its graph while building it (scalar code on a reduced value, which
#: Python runs: coarsen_nb/dask_arrays.py and notes/README.md name the forms), in these chunkings; every other
#: entry's graph is built without computing anything (the runtime's one ``dask.compute`` at return).  (Counts of
#: ``repeat`` and indices of element writes built by Dask from shapes alone, ``arange`` and ``zeros``, are
#: evaluated where the graph is built, by lower/dask_xp_forms._known_values on Dask's synchronous scheduler: a
#: graph with no argument's data in it, so not an early compute of the data, and not seen here)
EAGER = {
    "bgd_hyperopt": (EVERY, "a while loop the data ends (if abs(w) > 1e6: break)"),
    # the lanes a branch on y[i] selects, counted per block (dask_xp.lane_counts): an arange of them, then
    # xs[i2[seg], j2] reshaped to (lanes, j) need their number.  No lazy form: a cumulative sum of the mask
    # numbers the lanes, but the read i2[seg] (i2 of unknown chunks, by an index array) and the reshape still
    # need the sizes.  f.chunking says so (test_dask_runtime.py)
    "hmc_like_potential": (EVERY, "the number of lanes a branch selects, where a shape needs it"),
    # loops run iteration by iteration (refused where chunked, ITERATED), a Python if on an element's value
    **{name: (("one",), "a Python if on an element of a loop run iteration by iteration") for name in (
        "break_first_negative", "copy_then_write", "early_return_in_loop", "extremum_filter_default",
        "helper_in_loop", "helper_nested", "running_max_if")},
}


#: the entries whose call runs chunk by chunk through the in-memory module (coarsen_nb/dask_chunk_sums.py: a
#: sum over the records, with a halo where its terms read x[i + 1], or np.sum of elementwise values of them),
#: in every chunking; every other entry runs the dask module, and says why (``f.chunking.reason``)
CHUNKWISE = {
    "beta_logpdf", "binary_cross_entropy", "brachistochrone", "clipped_residual", "continue_skip", "count_positive",
    "erf_features", "far_tail", "for_over_array", "hookean_spring", "huber_loss", "logistic_renamed",
    "logit_roundtrip", "named_ufuncs_array", "negative_binomial_nll", "nested_three", "piecewise_sum", "probit_nll",
    "rosenbrock", "safe_log_where", "sum_generator_filter", "sum_listcomp_start", "zip_dot",
    # (terms reading their index i as a number: each chunk's module told its first index, dask_chunk_index)
    "enumerate_start", "enumerate_weighted", "enumerate_zip",
    # (terms, or a term beside the sum, reading the number of records: the module told it too)
    "horner", "linear_rec_array", "nested_def_in_loop", "normal_tail_loop",
    # (a number every element broadcasts, inside np.sum: each chunk counts its own elements)
    "shifted_sum",
}
#: chunk by chunk where the records are one chunk only (cut into twos, a matrix is cut along its second axis too)
CHUNKWISE_IN_ONE = {"matrix_weighted"}


def computes_early(name: str, how: str) -> bool:
    chunkings, _ = EAGER.get(name, ((), ""))
    return how in chunkings


def _has_array(entry) -> bool:
    return any(np.ndim(a) >= 1 for a in entry.make_args(np.random.default_rng(0)))


ENTRIES = {e.name: e for corpus in (CORPUS, ARRAYS, REDUCTIONS, SLICES, PYTHON_FORMS, SPECIAL, LINALG)
           for e in corpus if _has_array(e)}


def refused(name: str, how: str) -> bool:
    return name in ITERATED and how in CHUNKED


@functools.cache
def _compiled(name: str):
    """The entry compiled (one per test process: its NumPy and dask modules are both cached in it) and the
    NumPy backend's result on its NumPy arguments."""
    e = ENTRIES[name]
    f = cn.coarsen(e.fn, wrt=e.wrt or None)
    args = e.make_args(np.random.default_rng(0))
    want = f.value_and_grad(*args) if e.differentiable else f(*args)
    return f, args, want


def _leaves(x):
    if isinstance(x, tuple):
        for e in x:
            yield from _leaves(e)
    else:
        yield x


def assert_same_results(got, want):
    """``got`` (computed where lazy) equals the NumPy backend's ``want`` to 1e-12, leaf by leaf, in shape too."""
    for w, g in zip(_leaves(want), _leaves(got), strict=True):
        g = computed(g)
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("how", EVERY)
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_corpus_entry_on_dask_arrays_equals_the_numpy_backend_or_is_refused(name, how):
    e = ENTRIES[name]
    f, args, want = _compiled(name)
    size = CHUNK_SIZES[how]
    dargs = tuple(da.from_array(a, chunks=size or a.shape) if np.ndim(a) >= 1 else a for a in args)
    scheduler = EarlyComputes(dask.threaded.get)
    with dask.config.set(scheduler=scheduler):
        if refused(name, how):
            with pytest.raises(cn.CoarsenError):
                f.value_and_grad(*dargs) if e.differentiable else f(*dargs)
            return
        got = f.value_and_grad(*dargs) if e.differentiable else f(*dargs)
        assert bool(scheduler.early) == computes_early(name, how), scheduler.early
        said = str(f.chunking)      # (how it ran and why not chunk by chunk: in the user's names)
        assert f.chunking.chunkwise == (name in CHUNKWISE or how == "one" and name in CHUNKWISE_IN_ONE), said
        counted = computes_early(name, how) and "lanes" in EAGER[name][1]    # (the one early compute it says)
        assert ("computed while the graph was built" in said) == counted, said
        assert "$" not in said and f.chunking.chunks == max(a.npartitions for a in dargs if isinstance(a, da.Array))
        assert_same_results(got, want)


@pytest.mark.parametrize(("name", "how"), [(name, how) for name in sorted(ENTRIES) for how in EVERY
                                           if not refused(name, how)])
def test_corpus_entry_on_a_cluster_equals_the_numpy_backend(client, name, how):
    """The same entries, in the same three chunkings (those refused left out: the test above checks the
    refusal), computed on the LocalCluster's two worker processes (the issue's test bed): the generated
    module's tasks are pickled to the workers and run there."""
    e = ENTRIES[name]
    f, args, want = _compiled(name)
    size = CHUNK_SIZES[how]
    dargs = tuple(da.from_array(a, chunks=size or a.shape) if np.ndim(a) >= 1 else a for a in args)
    with client.as_current():
        got = f.value_and_grad(*dargs) if e.differentiable else f(*dargs)
        assert_same_results(got, want)         # (computed on the cluster: its client is the current one)


def test_the_lists_of_refusals_name_corpus_entries():
    unknown = (ITERATED | set(EAGER) | CHUNKWISE | CHUNKWISE_IN_ONE) - set(ENTRIES)
    assert not unknown, f"not corpus entries with an array argument: {sorted(unknown)}"

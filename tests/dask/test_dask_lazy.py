"""The entries whose scalar glue was made lazy build their whole graph without computing any of it.

Each ran part of its graph while building it before the dask namespace kept that glue lazy (measured with
``dask_chunks.EarlyComputes``; the list is in notes/README.md, issue 18): ``math.log``/``math.tanh``/
``math.sqrt`` of a reduced value (``lower/dask_xp.py``'s ``math``), ``float()`` of one in an array literal
(its ``float`` and ``asarray``), the scalar helpers' ``if`` on their argument and ``_erfc``'s ``if xp.any``
(``where`` of both arms, ``lower/dask_helpers.py``), ``_lin_scan``'s loop test on a number made a 0-d Dask
array, the NumPy printer's ``if t2: choice = a else: choice = b`` between two names or numbers (printed
``choice = xp.where(t2, a, b)`` for the dask backend: ``lower/branches.py``).  Here each runs under a
scheduler that fails at the first compute other than the runtime's one at return, on Dask's synchronous
scheduler (the laziness is the graph's, not the cluster's: the kernels' own file runs them on the
LocalCluster), and the result, computed afterwards, equals the NumPy backend's on the same NumPy arrays to
1e-12.  The entries still eager are listed, with why, in test_dask_corpus.py (EAGER) and
test_dask_kernels.py (LAZY and its complement); those tests fail if that list is not exact.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
import test_dask_corpus as corpus
import test_dask_kernels as kernels
from dask_chunks import EarlyComputes, da

#: corpus entries (and the chunkings they run in: ITERATED ones only in one chunk) made lazy
CORPUS_LAZY = {
    "array_literal_2d": corpus.EVERY, "autocorrelation": corpus.EVERY, "mahalanobis_solve": ("one", "single"),
    "methods_in_loop": corpus.EVERY, "normal_tail_loop": corpus.EVERY, "probit_nll": corpus.EVERY,
    "row_weights": corpus.EVERY, "rows_of_matrix": corpus.EVERY, "streaming_logsumexp": corpus.EVERY,
    "helper_keywords_in_loop": ("one",), "list_in_loop": ("one",),
    "far_tail": corpus.EVERY,     # (refused before: _erfc's masked lanes; its where form runs, lazily)
    # a choice between two reduced values, and its indicator adjoint, printed `xp.where(t2, m_1, t)` for the
    # dask backend (Backend.where_choices, lower/branches.py): the NumPy printer's `if t2:` computed t2
    "logsumexp": corpus.EVERY, "max_of_generator": corpus.EVERY, "running_max": corpus.EVERY,
    # the sign of det(A) in its gradient, `_python_sign(det_linalg)` for the dask backend (lower/dask_printing.py):
    # the rule's scalar `1.0 if det_linalg > 0 else ...` computed det(A)
    "determinant": corpus.EVERY,
}

#: kernels made lazy (math.sqrt and _ieee_div in brachistochrone's gradient, _lin_scan's loop in the others)
KERNELS_LAZY = ("brachistochrone", "exp_smoothing", "iir_filter")


_equal = corpus.assert_same_results      # (the corpus test's comparison: leaf by leaf, 1e-12)


@pytest.mark.parametrize(("name", "how"), [(n, h) for n, hs in sorted(CORPUS_LAZY.items()) for h in hs])
def test_a_corpus_entry_made_lazy_computes_nothing_until_its_result_is(name, how):
    e = corpus.ENTRIES[name]
    f, args, want = corpus._compiled(name)
    size = corpus.CHUNK_SIZES[how]
    dargs = tuple(da.from_array(a, chunks=size or a.shape) if np.ndim(a) >= 1 else a for a in args)
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        got = f.value_and_grad(*dargs) if e.differentiable else f(*dargs)
    with dask.config.set(scheduler="sync"):
        _equal(got, want)


@pytest.mark.parametrize("how", ("one", "uneven", "single"))
@pytest.mark.parametrize("name", KERNELS_LAZY)
def test_a_kernel_made_lazy_computes_nothing_until_its_result_is(name, how):
    f, args, want = kernels._compiled(name)
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        got = f.value_and_grad(*kernels._on_dask(name, args, how))
    with dask.config.set(scheduler="sync"):
        _equal(got, want)


def test_the_lists_name_entries_that_were_eager_and_are_not_listed_eager_now():
    assert set(CORPUS_LAZY) <= set(corpus.ENTRIES) and not set(CORPUS_LAZY) & set(corpus.EAGER)
    assert set(KERNELS_LAZY) <= set(kernels.LAZY)


def test_a_scalar_choice_between_names_is_where_in_the_dask_module_and_an_if_in_numpys():
    """logsumexp's maximum ``m = max(m, v)`` chooses between two reduced values: the NumPy module's ``if t2:``
    (Python's choice on a number, the arm not taken never read) is ``xp.where`` in the dask module only."""
    import coarsen_nb as cn

    e = corpus.ENTRIES["logsumexp"]
    (x,) = e.make_args(np.random.default_rng(0))
    numpy_f = cn.coarsen(e.fn, wrt=e.wrt, backend="numpy")
    dask_f = cn.coarsen(e.fn, wrt=e.wrt, backend="dask")
    numpy_f.value_and_grad(x)
    dask_f.value_and_grad(x)
    # (the dask module's prologue, lower/dask_xp.py's text, quotes the NumPy form in its docstring: statements only)
    assert "    choice = xp.where(t2, m_1, t)\n" in dask_f.source and "    if t2:\n" not in dask_f.source
    assert "if t2:\n        choice = m_1" in numpy_f.source and "xp.where(t2" not in numpy_f.source

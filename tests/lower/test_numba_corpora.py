"""``backend="numba"`` on the vectorized corpora (arrays, slices, linear algebra, reductions, special
functions, Python forms): values and gradients equal the NumPy backend's to 1e-10, and nothing runs as
NumPy code but what :data:`RUNS_AS_NUMPY` names (the table may only shrink; the test says when it can).

Numba compiles each entry's forward and gradient afresh (10-50 s an entry on two cores), so the whole
of these corpora (150 entries, about 11 minutes of compiling) runs with ``COARSEN_NUMBA_CORPORA=all``;
by default the entries below run: for each kind of call form the numba namespace writes for Numba
(``lower/numba_xp*.py``), an entry whose generated code calls it; ``test_numba_xp_reductions.py``
compares the forms themselves with NumPy's over every axis choice.  The loop-style corpus and the
kernels run in full in ``test_numba_backend.py``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from corpus_arrays import ARRAYS
from corpus_linalg import LINALG
from corpus_python_forms import PYTHON_FORMS
from corpus_reductions import REDUCTIONS
from corpus_slices import SLICES
from corpus_special import SPECIAL
from test_numba_backend import _check_fallbacks, _compare

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

_CORPORA = {"arrays": ARRAYS, "linalg": LINALG, "python_forms": PYTHON_FORMS, "reductions": REDUCTIONS,
            "slices": SLICES, "special": SPECIAL}

#: corpus/entry -> its generated functions that run as NumPy code under backend="numba"
RUNS_AS_NUMPY: dict[str, set[str]] = {}

#: the entries that run by default: one per call form of the numba namespace
BY_DEFAULT = {
    "arrays/image_gradient_energy",      # diff along an axis, and its transpose diff_vjp
    "arrays/periodic_laplacian_2d",      # roll along an axis
    "arrays/stacked_coordinates",        # stack
    "arrays/pairwise_gaussian_energy",   # squeeze (the adjoint of x[:, None])
    "linalg/einsum_matmul",              # einsum with explicit subscripts
    "reductions/row_sums_keepdims",      # sum over an axis, keepdims
    "reductions/variance_penalty",       # var with ddof
    "reductions/row_norms",              # linalg.norm over an axis
    "reductions/geometric_means",        # prod over an axis: prod_except_axes
    "reductions/column_range",           # max/min over an axis: first_extremum
    "slices/max_of_generator",           # argmin, argmax
    "special/beta_logpdf",               # gammaln, digamma, xlogy
    "special/log_partition",             # logsumexp of a vector
}

_ALL = [(f"{c}/{e.name}", e) for c, entries in _CORPORA.items() for e in entries]
_RUN = _ALL if os.environ.get("COARSEN_NUMBA_CORPORA") == "all" else [(k, e) for k, e in _ALL if k in BY_DEFAULT]


def test_the_default_entries_exist():
    assert BY_DEFAULT <= {k for k, _ in _ALL}, sorted(BY_DEFAULT - {k for k, _ in _ALL})


@pytest.mark.parametrize("key, entry", _RUN, ids=[k for k, _ in _RUN])
def test_corpus_entry_equals_numpy(key, entry):
    args = entry.make_args(np.random.default_rng(0))
    fell_back = _compare(entry.name, entry.fn, entry.wrt, args, entry.differentiable, pullback=False)
    _check_fallbacks(key, fell_back, RUNS_AS_NUMPY)

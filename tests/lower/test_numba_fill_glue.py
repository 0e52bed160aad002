"""``backend="numba"``: the glue of a loop that fills a fresh array whole, ``w[k] = g(k)`` over ``range(0, n)``,
is one loop function forward (``_fwd_fill``: the reads at k and the arithmetic, no ``_take`` of each array
and no array expression) and one adjoint (``_vjp_loop``: the write's cotangent read at k, its sums and its
scatter-adds in one pass, no ``_take``/``_scatter_add``/``xp.sum``): each of those was a Numba compilation of
its own in the entry (gmm's SOI 3, ``lower/numba_fusion._fill_domain``, ``fusion_domain.point_gather``).

Each program is checked against the NumPy backend (array code with NumPy's pairwise sums) to 1e-10 and
1e-12 absolute, the plain function, and central differences; which loops numba made is read from its module.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numba_pairs import BackendPairs

import coarsen_nb as cn
from coarsen_nb.kernels import gmm as gmm_kernel

pytestmark = [pytest.mark.usefixtures("private_numba_cache"),     # (tests/lower/conftest.py)
              # (a function Numba cannot compile runs as NumPy code, with this warning: a failure here)
              pytest.mark.filterwarnings("error::coarsen_nb.numba_loader.NumbaFallbackWarning")]


def weighted_pairs(x, a, b, c):
    k = len(a)
    w = np.zeros(k)
    for j in range(k):
        w[j] = a[j] * c - b[j] / 3.0
    total = 0.0
    for i in range(len(x)):
        for j in range(k):
            total += w[j] * math.sin(x[i] - a[j])
    return total


def shifted_table(x, t, s):
    n = len(t)
    w = np.zeros(n)
    for j in range(n):
        w[j] = math.exp(t[j] - s) + s * s
    total = 0.0
    for i in range(len(x)):
        for j in range(n):
            total += w[j] / (1.0 + (x[i] - j) ** 2)
    return total


def shifted_write(x, a, c):
    n = len(a)
    w = np.zeros(n + 1)
    for j in range(n):
        w[j + 1] = a[j] * c
    total = 0.0
    for i in range(len(x)):
        for j in range(n + 1):
            total += w[j] * math.cos(x[i] + j)
    return total


PAIRS = BackendPairs({
    "gmm": (gmm_kernel.gmm, tuple(gmm_kernel.META["wrt"])),
    "weighted_pairs": (weighted_pairs, ("x", "a", "b", "c")),
    "shifted_table": (shifted_table, ("x", "t", "s")),
    "shifted_write": (shifted_write, ("x", "a", "c")),
})
FILLS = ("gmm", "weighted_pairs", "shifted_table")


def _args(name, n, k, seed=0):
    rng = np.random.default_rng(seed)
    if name == "gmm":
        return gmm_kernel.make_inputs(n, seed)
    if name == "weighted_pairs":
        return rng.normal(size=n), rng.normal(size=k), rng.normal(size=k), 0.7
    if name == "shifted_write":
        return rng.normal(size=n), rng.normal(size=k), 0.7
    return rng.normal(size=n), rng.normal(size=k), 0.3


def _entry(source: str, name: str) -> str:
    entry = source[source.index(f"def {name}_grad("):]
    return entry[:entry.index("\n\n\n")] if "\n\n\n" in entry else entry


@pytest.mark.parametrize("name", list(PAIRS.programs))
def test_numba_equals_numpy_and_differences(name):
    PAIRS.check_with_differences(name, _args(name, 6, 5))


@pytest.mark.parametrize("name", FILLS)
def test_fill_glue_is_two_loop_functions(name):
    """NAME_grad calls a fill loop before the nest and one adjoint loop after it; the glue's array helpers
    and array expressions are gone from the entry."""
    _, _, by_numba = PAIRS.pair(name)
    args = _args(name, 4, 3)
    by_numba.grad(*args)
    entry = _entry(by_numba.source, name)
    # (an adjoint loop calling exp/log/erf sums in chunks, unchecked where tests before it prove its subscripts
    # in bounds: ``_vjp_loop_in_bounds``, whose checked twin ``_vjp_loop`` runs only where a test fails,
    # lower/numba_bounds.py; a module may number a second one ``_2``)
    fills = re.findall(r"\b(_soi\d+_fwd_fill(?:_in_bounds)?(?:_\d+)?)\(", entry)
    adjoints = re.findall(r"\b(_soi\d+_vjp_loop(?:_in_bounds)?(?:_\d+)?)\(", entry)
    assert len(fills) == 1 and len(adjoints) == 1, entry
    for spelled in ("_take(", "_scatter_add(", "xp.sum("):
        assert spelled not in entry, entry


def test_a_shifted_writes_adjoint_reads_its_cotangent_at_the_shifted_point():
    """``w[j + 1] = a[j] * c`` fills all of ``w`` but ``w[0]`` (array code forward, the zeros kept); its adjoint
    reads ``b_w[j + 1]`` in the loop that sums ``b_c`` and adds into ``b_a``."""
    _, _, by_numba = PAIRS.pair("shifted_write")
    by_numba.grad(*_args("shifted_write", 4, 3))
    entry = _entry(by_numba.source, "shifted_write")
    adjoint = entry[entry.index("# SOI 2: adjoint"):]
    assert "_vjp_loop(" in adjoint and "_fwd_fill(" not in entry, entry
    for spelled in ("_take(", "_scatter_add(", "xp.sum("):
        assert spelled not in adjoint, entry


@pytest.mark.parametrize("name", ["gmm", "weighted_pairs"])
def test_fused_sums_equal_numpys_pairwise_sums(name):
    """The adjoint loop's sum (gmm's ``b_log_norm``, weighted_pairs' ``b_c``) is sequential where NumPy's is
    pairwise: over a few hundred components they agree to 1e-12 relative."""
    args = _args(name, 50, 300, seed=3)
    if name == "gmm":
        rng = np.random.default_rng(3)
        x, _, _, _ = args
        args = (x, rng.normal(size=300), rng.uniform(-0.5, 0.5, 300), rng.normal(size=300))
    _, by_numpy, by_numba = PAIRS.pair(name)
    for got, want in zip(by_numba.grad(*args), by_numpy.grad(*args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [0, 1])
def test_empty_and_single_fills(k):
    PAIRS.check("weighted_pairs", _args("weighted_pairs", 4, k, seed=k))
    PAIRS.check("shifted_table", _args("shifted_table", 4, k, seed=k))
    PAIRS.check("shifted_write", _args("shifted_write", 4, k, seed=k))


def test_a_read_past_the_end_is_the_users_index_error():
    """``b`` shorter than ``a``: the fill loop's ``b[k]`` raises the IndexError the NumPy backend (and Python)
    raise, in the user's words, forward and gradient."""
    rng = np.random.default_rng(1)
    args = rng.normal(size=5), rng.normal(size=4), rng.normal(size=3), 0.7
    with pytest.raises(IndexError):
        weighted_pairs(*args)
    _, by_numpy, by_numba = PAIRS.pair("weighted_pairs")
    for compiled in (by_numpy, by_numba):
        for call in (compiled, compiled.grad):
            with pytest.raises(cn.CoarsenError, match=r"IndexError.*reading 'b'"):
                call(*args)

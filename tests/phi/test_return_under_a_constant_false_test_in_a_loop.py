"""A ``return`` inside a loop under a test that is False whatever the input (``(1.5 < i * 0.25) and (3.0 <
1.25)``): the gradient is right, and numba compiles it.

Found by ``tests/fuzz_driver.py`` (extended generator, seed 21, numba: ``Type of variable 'exp_cos_s10_2.1'
cannot be determined`` under all three selections, RESULTS.md stop 46); minimized by h-iadd22.

**Left (strict xfail on numba):** the folded test prints ``cond = False`` and the arm under ``if cond:``; the
reverse sweep's loop recomputes that arm and reads its value (``result3``) under a second ``if cond:``.
Numba's dead-branch pruning of the constant test leaves the read with no definition: its type cannot be
determined, and numba's gradient falls back to NumPy code.  Numba alone does it, where ``cond = False`` is
assigned in two loops as here (the forward loop and the reverse sweep's): ``for k ...: cond = False; if cond:
r = ...`` then ``for k ...: cond = False; if cond: r = ...; if cond: out += r`` fails so; either loop alone
compiles.  The fix is the lowering dropping the arm a constant test never takes (forward and reverse writers,
``lower/forward.py`` ``cond``), not done.
"""

from __future__ import annotations

import math
import warnings

import pytest
from gradcheck import finite_difference
from program_gen import main_function

import coarsen_nb as cn
from coarsen_nb.numba_loader import NumbaFallbackWarning

SOURCE = """
import math

def main(a):
    s8 = a
    for i9 in range(2, 6):
        if (1.5 < i9 * 0.25) and (3.0 < 1.25):
            return math.exp(a)
        s8 = s8 + math.sin(a)
    return s8
"""

SELECTIONS = {"default": {}, "max_soi=1": {"max_soi": 1}, "per_block": {"per_block": True}}

_PRUNED = pytest.mark.xfail(strict=True, raises=NumbaFallbackWarning, reason=(
    "numba prunes the forward arm under `cond = False` but not the reverse's: the arm's value has no type "
    "(not fixed, stop 46)"))


@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=_PRUNED)])
@pytest.mark.parametrize("selection", list(SELECTIONS))
def test_gradient_of_a_return_under_a_test_never_taken(selection, backend, private_numba_cache):
    warnings.simplefilter("error", NumbaFallbackWarning)
    py = main_function(SOURCE)
    f = cn.coarsen(SOURCE, wrt=("a",), backend=backend, **SELECTIONS[selection])
    g = f.grad(0.7840637787136031)
    assert math.isclose(f(0.7840637787136031), py(0.7840637787136031), rel_tol=1e-12)
    assert math.isclose(g, finite_difference(py, (0.7840637787136031,), 0), rel_tol=1e-6)


@pytest.fixture
def private_numba_cache(tmp_path, monkeypatch):
    """Numba's disk cache in this test's own directory (never the user's ~/.cache)."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))

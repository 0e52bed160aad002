"""Property: random programs (``tests/program_gen.py``, and the mixed loop-and-array programs of
``tests/vector_program_gen.py``) give the NumPy backend's values and gradients under ``backend="numba"``,
to 1e-10 relative — issue 14's bar for "every corpus entry, kernel and random program".

The NumPy backend is the reference here; ``tests/phi/test_random_programs.py`` checks it against the plain
function and finite differences on the same generators.  A program the NumPy backend refuses or that
raises at run time must raise the same kind of error under numba.  A fallback of either kind (a finer
selection, a segment run as NumPy code) fails the example: it would compare NumPy with itself.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from program_gen import program_cases
from vector_program_gen import mixed_programs

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

#: examples per generator; ``COARSEN_RANDOM_EXAMPLES=N`` runs N (each compiles with Numba: ~0.5 s)
_EXAMPLES = int(os.environ.get("COARSEN_RANDOM_EXAMPLES", 0))
_SETTINGS = settings(max_examples=_EXAMPLES or 15, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(program_cases())
def test_random_programs_equal_numpy_under_numba(p):
    _same(p)


@_SETTINGS
@given(mixed_programs())
def test_mixed_programs_equal_numpy_under_numba(p):
    _same(p)


def _run(p, backend):
    """(value, gradient) of ``p`` under ``backend``, or the exception it raised."""
    f = cn.coarsen(p.source, wrt=p.wrt, backend=backend)
    try:
        return f(*p.args), f.grad(*p.args)
    except Exception as e:          # the NumPy backend's own error: numba must raise the same kind
        return e


def _same(p) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        warnings.simplefilter("error", NumbaFallbackWarning)
        want = _run(p, "numpy")
        got = _run(p, "numba")
    where = f"\n{p.source}\nargs={p.args}"
    if isinstance(want, Exception):
        assert type(got) is type(want), f"numpy raised {want!r}, numba gave {got!r}{where}"
        return
    assert not isinstance(got, Exception), f"numba raised {got!r}, numpy did not{where}"
    (value, grads), (want_value, want_grads) = got, want
    np.testing.assert_allclose(value, want_value, rtol=1e-10, atol=1e-12, err_msg=f"value{where}")
    grads = grads if isinstance(grads, tuple) else (grads,)
    want_grads = want_grads if isinstance(want_grads, tuple) else (want_grads,)
    assert len(grads) == len(want_grads) == len(p.wrt)
    for name, g, w in zip(p.wrt, grads, want_grads, strict=True):
        assert np.shape(g) == np.shape(w), f"d/d{name}: shape {np.shape(g)} against {np.shape(w)}{where}"
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"d/d{name}{where}")

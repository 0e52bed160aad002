"""Property: random programs that mix slices, broadcasting, ``np.where`` and reductions with loops and
branches (tests/vector_program_gen.py), under the default selection, ``max_soi=1`` and ``per_block=True``.

The value equals the plain function's; the gradient w.r.t. ``x``, ``a`` and ``b`` equals central finite
differences wherever those are a reference (two step sizes agree and the one-sided slopes agree: no
branch boundary, ``np.where`` switch, ``max``/``min``/``clip`` kink within a step); no selection falls back.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from gradcheck import finite_difference, one_sided_differences
from hypothesis import HealthCheck, assume, given, settings
from program_gen import main_function, run_source
from vector_program_gen import mixed_programs

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning

_EXAMPLES = int(os.environ.get("COARSEN_RANDOM_EXAMPLES", 0))
_SETTINGS = settings(max_examples=_EXAMPLES or 60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _check(p, selection):
    want = run_source(p.source, p.args, "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        f = cn.coarsen(p.source, name="f", wrt=p.wrt, **selection)
        got = f(*p.args)
        grads = f.grad(*p.args)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"forward\n{p.source}\nargs={p.args}")
    py = main_function(p.source, "f")
    for name, g in zip(p.wrt, grads, strict=True):
        i = p.params.index(name)
        fd = np.asarray(finite_difference(py, p.args, i, eps=1e-6))
        fd_coarse = np.asarray(finite_difference(py, p.args, i, eps=1e-5))
        scale = 1.0 + np.abs(fd)
        left, right = one_sided_differences(py, p.args, i, 1e-6)
        assume(np.all(np.abs(fd - fd_coarse) <= 1e-6 * scale) and np.all(np.abs(left - right) <= 1e-3 * scale))
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6, err_msg=f"d/d{name}\n{p.source}\nargs={p.args}")


@_SETTINGS
@given(mixed_programs())
def test_default_selection(p):
    _check(p, {})


@_SETTINGS
@given(mixed_programs())
def test_operator_level(p):
    _check(p, {"max_soi": 1})


@_SETTINGS
@given(mixed_programs())
def test_per_block(p):
    _check(p, {"per_block": True})

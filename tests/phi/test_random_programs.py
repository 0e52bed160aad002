"""Property: random programs of the supported subset (tests/program_gen.py).

For every generated program and input: the compiled forward value equals the
plain Python function, and the gradient w.r.t. every float parameter equals
central finite differences.  Finite differences are only a reference where
the function is smooth around the input: an example is discarded
(``hypothesis.assume``) when central differences at two step sizes (1e-6
and 1e-5, relative) disagree — a branch boundary, ``abs``, ``min``/``max`` or
a loop exit within a step of the input.  Where they agree, the compiled
gradient must match to rtol 1e-5.
"""

from __future__ import annotations

import numpy as np
from gradcheck import finite_difference
from hypothesis import HealthCheck, assume, given, settings
from program_gen import program_cases, run_source

import coarsen_nb as cn

_SETTINGS = settings(max_examples=500, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _main(source: str):
    ns: dict = {"math": __import__("math"), "np": np}
    exec(compile(source, "<program>", "exec"), ns)
    name = [ln[4:ln.index("(")] for ln in source.splitlines() if ln.startswith("def ")][-1]
    return ns[name]


@_SETTINGS
@given(program_cases())
def test_forward_and_gradient_match_python_and_fd(p):
    want = run_source(p.source, p.args)
    f = cn.coarsen(p.source, wrt=p.wrt)
    got = f(*p.args)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"forward\n{p.source}\nargs={p.args}")

    py = _main(p.source)
    grads = f.grad(*p.args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert len(grads) == len(p.wrt)
    for name, g in zip(p.wrt, grads, strict=True):
        i = p.params.index(name)
        fd = np.asarray(finite_difference(py, p.args, i, eps=1e-6))
        fd_coarse = np.asarray(finite_difference(py, p.args, i, eps=1e-5))
        scale = 1.0 + np.abs(fd)
        assume(np.all(np.isfinite(fd)) and np.all(np.abs(fd - fd_coarse) <= 1e-6 * scale))
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6,
                                   err_msg=f"d/d{name}\n{p.source}\nargs={p.args}")

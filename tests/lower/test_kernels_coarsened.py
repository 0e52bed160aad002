"""Every workload of kernels/ at its test size: coarsen_nb's gradient equals the
hand-written analytical gradient and central finite differences, under the
default selection and the two baselines (L = 1, per-block)."""

from __future__ import annotations

import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


def _tuple(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_gradient(name, selection):
    mod = KERNELS[name]
    fn = function(mod)
    wrt = mod.META["wrt"]
    f = cn.coarsen(fn, wrt=wrt, **SELECTIONS[selection])
    for seed in (0, 1):
        args = mod.make_inputs(mod.META["test_size"], seed)
        value, grads = f.value_and_grad(*args)
        assert_close(value, fn(*args), rtol=1e-10, atol=1e-12, what=f"{name} value")
        for w, g, ref in zip(wrt, _tuple(grads), _tuple(mod.grad(*args)), strict=True):
            assert_close(g, ref, rtol=1e-8, atol=1e-10, what=f"{name} d/d{w} vs hand-written")
        if name != "bgd_hyperopt" or selection == "default":
            for w, g in zip(wrt, _tuple(grads), strict=True):
                eps = 1e-8 if name == "bgd_hyperopt" else 1e-6
                fd = finite_difference(fn, args, f.params.index(w), eps)
                assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"{name} d/d{w} vs finite differences")

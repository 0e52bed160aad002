"""The end-to-end checks of one primitive's registration (tests/rules/test_cbrt.py,
tests/rules/test_inverse_hyperbolic.py): value against the plain function, gradient against central finite
differences and ``jax.grad``, and the CUDA spelling compiled by nvcc."""

from __future__ import annotations

import shutil
import subprocess
import types

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


def check_value_and_gradient(fn, args, wrt, selection) -> None:
    """``fn`` compiled under ``selection``: its value is the plain function's, its gradient central
    differences'."""
    f = cn.coarsen(fn, wrt=wrt, **selection)
    assert_close(f(*args), fn(*args), rtol=1e-13, atol=1e-13, what="value")
    for k, g in enumerate(f.grad(*args)):
        assert_close(g, finite_difference(fn, args, k), rtol=1e-6, atol=1e-8, what=f"d/d arg {k}")


def check_against_jax(fn, args, wrt, math_names: dict) -> None:
    """The gradient under every selection equals ``jax.grad`` of the same source, with ``np`` bound to
    jax.numpy and ``math`` to ``math_names`` (the ``math`` functions ``fn`` calls, as jax.numpy's)."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    traced = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp,
                                              "math": types.SimpleNamespace(**math_names)})
    want = jax.grad(traced, argnums=(0, 1))(*args)
    for selection in SELECTIONS.values():
        got = cn.coarsen(fn, wrt=wrt, **selection).grad(*args)
        for g, j in zip(got, want, strict=True):
            assert_close(g, np.asarray(j), rtol=1e-12, atol=1e-12, what=f"{fn.__name__} vs jax.grad")


def assert_nvcc_compiles(fused, tmp_path, stem: str) -> None:
    """The CuPy backend's fused kernels ``fused`` compile with nvcc (skipped where nvcc is not installed)."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    cu = tmp_path / f"{stem}.cu"
    cu.write_text("".join(cl.translation_unit(fk, namespace=f"k{i}") for i, fk in enumerate(fused)))
    res = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-std=c++17", "-o", str(tmp_path / f"{stem}.o"), str(cu)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]

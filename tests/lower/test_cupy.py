"""The CuPy backend's fused kernels (coarsen_nb.lower.cupy), checked with and without a GPU.

Without a GPU (this machine, CI): every fused kernel the corpus and kernels/
produce is wrapped in the ``__global__`` skeleton CuPy generates
(:func:`~coarsen_nb.lower.cupy.translation_unit`) and compiled with ``nvcc``;
the printer's semantics (ternaries that never evaluate the untaken arm,
Python's negative indices, atomics for scatters) are checked on the source;
and the generated Python module — with the fused kernels spliced in the way
``ModuleWriter`` will call them — must be valid Python.

With CuPy and a CUDA device: the fused module's forward and gradient are
compared with the NumPy build on the corpus and the kernels.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp
from corpus import CORPUS

import coarsen_nb as cn
from coarsen_nb.lower import cupy as cl
from coarsen_nb.lower import lir
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.phi import elementary, forms
from coarsen_nb.plan import Kernel, Output, Read
from coarsen_nb.symbolic.diff import vjp as kernel_vjp

try:
    from coarsen_nb.kernels import KERNELS, function
except ImportError:          # kernels/ lives at the repository root
    KERNELS, function = {}, None


def _inputs_of(mod):
    """``make_args(rng)`` for a kernels/ module (its inputs are seeded by the module)."""
    def make_args(rng):
        return mod.make_inputs(mod.META["test_size"])
    return make_args


def _cases():
    out = [(e.name, e.fn, e.make_args, e.wrt or None) for e in CORPUS]
    out += [(n, function(m), _inputs_of(m), tuple(m.META["wrt"])) for n, m in KERNELS.items()]
    return out


CASES = _cases()
GRADIENT_CASES = {e.name for e in CORPUS if e.differentiable and e.wrt} | set(KERNELS)


def _compiled(fn, make_args, wrt, seed=0):
    f = cn.coarsen(fn, wrt=wrt)
    args = make_args(np.random.default_rng(seed))
    f(*args)
    return f, args


class HookedWriter(ModuleWriter):
    """ModuleWriter with the CuPy hooks applied exactly as proposed for module.py."""

    def kernel(self, k, tape: bool = False) -> None:
        lines = cl.forward_lines(self, k)
        if lines is None:
            return super().kernel(k, tape)
        self.emit(lir.Comment(f"SOI {k.index}"))
        self.emit_all(lines)

    def kernel_reverse(self, k, reached=None) -> None:
        outs = {o.name: sp.Symbol("bar:" + o.name, real=True) for o in k.outputs if o.name in self.active}
        if not outs or not (set(k.inputs) & self.active):
            return
        v = kernel_vjp(k, self.active, outs)
        leaves = {sym: (self.names.bar(name), self.is_array(name)) for name, sym in outs.items()}
        lines = cl.reverse_lines(self, k, v, leaves)
        if lines is None:
            return super().kernel_reverse(k, reached)
        getattr(self, "_printers", {}).pop(id(k), None)
        self.emit(lir.Comment(f"SOI {k.index}: adjoint"))
        self.emit_all(lines)


# ---- nvcc: every fusable kernel compiles -------------------------------------------------------


def _all_fused():
    out = []
    for name, fn, make_args, wrt in CASES:
        f, _ = _compiled(fn, make_args, wrt)
        out += [(name, fk) for fk in cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))]
    return out


def _nvcc(src: str, tmp_path, stem: str) -> subprocess.CompletedProcess:
    cu = tmp_path / f"{stem}.cu"
    cu.write_text(src)
    return subprocess.run(["nvcc", "-c", "-arch=sm_90", "-std=c++17", "-o", str(tmp_path / f"{stem}.o"), str(cu)],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_every_fused_kernel_compiles_with_nvcc(tmp_path):
    fused = _all_fused()
    kinds = {fk.kind for _, fk in fused}
    assert len(fused) > 50 and kinds == {"elementwise", "reduction"}
    src = "".join(cl.translation_unit(fk, namespace=f"k{i}") for i, (_, fk) in enumerate(fused))
    res = _nvcc(src, tmp_path, "all")
    if res.returncode != 0:       # name the kernels that fail, one file each
        bad = [f"{name}/{fk.name}" for i, (name, fk) in enumerate(fused)
               if _nvcc(cl.translation_unit(fk), tmp_path, f"k{i}").returncode != 0]
        pytest.fail(f"nvcc failed on {bad}:\n{res.stderr[-4000:]}")


# ---- what fuses, and how it is printed ---------------------------------------------------------


def _entry(name):
    return next(c for c in CASES if c[0] == name)


def test_rosenbrock_is_one_reduction_forward_and_one_scatter_adjoint():
    f, _ = _compiled(*_entry("rosenbrock")[1:])
    fused = cl.fused_kernels(ModuleWriter(f.plan, tuple(f._last.wrt), "cupy", ""))
    assert [fk.kind for fk in fused] == ["reduction", "elementwise"]
    red, sc = fused
    assert red.reduce_expr == "a + b" and red.identity == "0.0"
    assert "raw float64 x" in red.in_params and "int64 k1_2" in red.in_params
    # x[k] and x[k + 1] from different k hit one element: atomics
    assert sc.operation.count("atomicAdd(&b_x[") == 2
    assert "_cn_wrap((long long)(1 + k1_2), b_x.shape()[0])" in sc.operation     # SymPy's canonical order
    assert "SOI" in sc.operation and "lines" in sc.operation


def _toy_kernel(body, outputs, arrays=None, scalars=None, reads=()):
    return Kernel(index=7, scalars=scalars or {}, arrays=arrays or {}, reads=tuple(reads), body=body,
                  outputs=tuple(outputs), lines=(3, 4))


def test_piecewise_is_a_ternary_and_arm_only_temps_stay_in_their_arm():
    x, t, y = sp.symbols("x t y", real=True)
    k = _toy_kernel([(t, sp.log(x)), (y, sp.Piecewise((t * t, x > 0), (0.0, True)))],
                    [Output("y.1", y)], arrays={x: "x"})
    fk = cl.fused_source(k, lambda n: n.replace(".", "_"))
    assert fk is not None and fk.kind == "elementwise"
    assert "const double t" not in fk.operation          # log(x) is not evaluated where x <= 0
    op = fk.operation
    assert "((x > 0)) ? " in op and op.index("log(x)") > op.index("?")   # only inside the taken arm


def test_unconditional_temps_are_named():
    x, t, y = sp.symbols("x t y", real=True)
    k = _toy_kernel([(t, elementary.Softplus(x)), (y, t * t + sp.exp(t))], [Output("y.1", y)], arrays={x: "x"})
    fk = cl.fused_source(k, lambda n: n.replace(".", "_"))
    assert "const double t = _cn_softplus(x);" in fk.operation
    assert "const double y = ((t) * (t)) + exp(t);" in fk.operation


def test_negative_read_index_wraps_like_python():
    x = sp.Symbol("x[k-1]", real=True)
    k_ = sp.Symbol("k", integer=True)
    n = sp.Symbol("n", integer=True)
    s = sp.Symbol("s", real=True)
    kern = _toy_kernel([(s, forms.RSum(x * x, k_, 0, n, 1))], [Output("s.1", s)], scalars={n: "n"},
                       reads=[Read(x, "x", (k_ - 1,))])
    fk = cl.fused_source(kern, lambda v: v.replace(".", "_"))
    assert fk.kind == "reduction"
    assert "_cn_wrap((long long)(-1 + k), x.shape()[0])" in fk.preamble     # SymPy's canonical order


def test_unfusable_kernels_return_none():
    x, y = sp.symbols("x y", real=True)
    k_ = sp.Symbol("k", integer=True)
    scalar_only = _toy_kernel([(y, sp.sin(x))], [Output("y.1", y)], scalars={x: "x"})
    assert cl.fused_source(scalar_only, str) is None                  # plain Python math is better
    two_level = _toy_kernel([(y, forms.RSum(forms.RSum(x, k_, 0, 3, 1), sp.Symbol("j"), 0, 3, 1))],
                            [Output("y.1", y)], scalars={x: "x"})
    assert cl.fused_source(two_level, str) is None


# ---- the generated Python module ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_generated_cupy_module_is_valid_python(case):
    name, fn, make_args, wrt = case
    f, _ = _compiled(fn, make_args, wrt)
    src = HookedWriter(f.plan, f._last.wrt, "cupy", "").source()
    compile(src, f"<cupy {name}>", "exec")
    assert ("import cupy as xp" in src) == ("xp." in src)
    assert "import numpy" not in src


def test_generated_module_calls_the_fused_kernels():
    f, _ = _compiled(*_entry("rosenbrock")[1:])
    src = HookedWriter(f.plan, f._last.wrt, "cupy", "").source()
    assert "xp.ReductionKernel(" in src and "xp.ElementwiseKernel(" in src
    assert "def _cupy_kernel(key, make):" in src
    assert "xp.arange(int(0), int(n_x - 1), int(1), dtype=xp.int64)" in src     # n_x: len(x)


# ---- on a GPU: CuPy gradients equal NumPy's ---------------------------------------------------------


def _cupy_with_device():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - any CUDA runtime error means no usable device
        pytest.skip(f"CuPy cannot reach a CUDA device: {e}")
    if n == 0:
        pytest.skip("no CUDA device")
    return cupy


def _host(v):
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    return np.asarray(v.get() if hasattr(v, "get") else v, dtype=float)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cupy_forward_and_gradient_match_numpy(case):
    cupy = _cupy_with_device()
    name, fn, make_args, wrt = case
    f, args = _compiled(fn, make_args, wrt)
    src = HookedWriter(f.plan, f._last.wrt, "cupy", "").source()
    env: dict = {}
    exec(compile(src, f"<cupy {name}>", "exec"), env)
    dargs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = f(*args)
    got = env[f.name](*dargs)
    for g, w in zip(_host(got) if isinstance(got, tuple) else (_host(got),),
                    want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(g, np.asarray(w, dtype=float), rtol=1e-10, atol=1e-12)
    if f._last.wrt and name in GRADIENT_CASES:
        _, g_np = f._last.vjp(*args)
        _, g_cp = env[f.name + "_vjp"](*dargs)
        for a, b in zip(g_cp, g_np, strict=True):
            np.testing.assert_allclose(_host(a), np.asarray(b, dtype=float), rtol=1e-10, atol=1e-12)


# ---- which CuPy ------------------------------------------------------------------------------------


def _cupy_source(fn, make_args, wrt):
    f = cn.coarsen(fn, wrt=wrt, backend="cupy")
    try:
        f._specialize(tuple(make_args(np.random.default_rng(0))))     # compiled, not run (no device needed)
    except cn.CoarsenError:
        pass            # no CuPy here: the source is still generated
    return f.source


@pytest.mark.parametrize("version,loads", [("13.6.0", False), ("14.0.0", True), ("15.1.2", True)])
def test_the_generated_module_refuses_cupy_before_14(monkeypatch, version, loads):
    """CuPy 13 lacks cumulative_sum, cumulative_prod, concat and bool (checked against CuPy 13.6.0 and
    14.2.0 without a GPU): the module says so on import instead of failing inside a gradient."""
    import sys
    import types

    src = _cupy_source(*_entry("pairwise_energy")[1:])
    fake = types.ModuleType("cupy")
    fake.__version__ = version
    monkeypatch.setitem(sys.modules, "cupy", fake)
    code = compile(src, "<cupy module>", "exec")
    if loads:
        exec(code, {})
    else:
        with pytest.raises(ImportError, match="needs CuPy >= 14"):
            exec(code, {})


def test_the_generated_modules_use_only_names_the_installed_cupy_has():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    import ast

    missing = set()
    for name, fn, make_args, wrt in CASES:
        for node in ast.walk(ast.parse(_cupy_source(fn, make_args, wrt))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "xp" \
                    and not hasattr(cupy, node.attr):
                missing.add((name, node.attr))
    assert not missing


def test_each_backend_calls_the_special_functions_of_its_own_array_module():
    """scipy.special under NumPy, cupyx.scipy.special under CuPy: a backend's own ``_special`` helper
    (Backend.load_helpers), not a test of the array module's name inside the generated code."""
    import scipy.special as sc

    src = "def f(x):\n    return np.sum(sc.gammaln(x) * x)\n"
    x = np.linspace(1.0, 3.0, 5)
    sources = {}
    for backend in ("numpy", "cupy"):
        f = cn.coarsen(src, backend=backend, namespace={"np": np, "sc": sc})
        try:
            f.grad(x)
        except cn.CoarsenError as exc:       # CuPy absent here: the source is still made
            assert backend == "cupy" and "cannot be loaded here" in str(exc)
        sources[backend] = f.source
    assert "import scipy.special as special" in sources["numpy"] and "cupyx" not in sources["numpy"]
    assert "import cupyx.scipy.special as special" in sources["cupy"]
    assert "import scipy.special" not in sources["cupy"]
    np.testing.assert_allclose(cn.coarsen(src, namespace={"np": np, "sc": sc}).grad(x),
                               sc.gammaln(x) + x * sc.digamma(x), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_cupy_argument_runs_the_cupy_module_whatever_cpu_backend_was_chosen(backend):
    """Called on CuPy arrays, a function compiled for the CPU (the default is numba) runs the cupy module:
    gradients equal the CPU ones, on the device, and the NumPy arguments still run the CPU module."""
    cupy = _cupy_with_device()
    src = "def f(x, a):\n    s = 0.0\n    for i in range(len(x)):\n        s += a * np.sin(x[i]) ** 2\n    return s\n"
    f = cn.coarsen(src, backend=backend)
    x, a = np.linspace(-1.0, 2.0, 7), 0.75
    want = f.grad(x, a)
    got = f.grad(cupy.asarray(x), a)
    assert isinstance(got[0], cupy.ndarray) and "backend=cupy" in f.source
    np.testing.assert_allclose(_host(got[0]), want[0], rtol=1e-12)
    np.testing.assert_allclose(float(got[1]), want[1], rtol=1e-12)
    f.grad(x, a)                                    # (NumPy arguments: the CPU module again)
    assert f.backend == backend and f"backend={backend}" in f.source

"""The array-namespace code against ``array_api_strict``: no NumPy-only API in what claims portability.

Every corpus entry, every kernel of kernels/ (under the default selection,
L = 1 and per-block) and random programs of the subset are compiled for
``xp = array_api_strict`` (via ``ModuleWriter(plan, wrt, "array_api_strict",
"")``), and their forward values, ``NAME_vjp``, ``NAME_grad`` and ``NAME_jvp``
are compared with the NumPy build.  The generated code uses the names of the
2024.12 standard (which added integer-array indexing and Python scalars in
elementwise functions); what the standard lacks — scatter-add, segmented
reductions, assignment through integer arrays — sits behind the module's
helpers (``_scatter_sum``, ``_segment_*``, ``_put``), which take NumPy's and
CuPy's fast paths (``bincount``, ``ufunc.at``, fancy assignment) where the
namespace has them and a sort-based standard-only form otherwise.  Under
``array_api_strict`` the standard-only forms run; they are also checked
directly against the NumPy forms below.  No entry is excluded.
"""

from __future__ import annotations

import linecache
import math

import numpy as np
import pytest
from corpus import CORPUS
from gradcheck import finite_difference
from hypothesis import HealthCheck, given, settings
from program_gen import program_cases

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower.helpers import HELPERS
from coarsen_nb.lower.module import ModuleWriter

xps = pytest.importorskip("array_api_strict", reason="array_api_strict is not installed")

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


@pytest.fixture(autouse=True)
def _standard_2024_12():
    """The standard version the generated code targets (integer-array indexing arrived in 2024.12)."""
    with xps.ArrayAPIStrictFlags(api_version="2024.12"):
        yield


def _module(source: str, name: str) -> dict:
    filename = f"<array_api_strict {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)   # readable tracebacks
    env: dict = {}
    exec(compile(source, filename, "exec"), env)
    return env


def _np(v):
    if isinstance(v, tuple):
        return tuple(_np(x) for x in v)
    if type(v).__module__.startswith("array_api_strict"):
        return np.asarray(np.from_dlpack(v), dtype=float)
    return np.asarray(v, dtype=float)


def _close(got, want, what):
    got, want = _np(got), _np(want)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for k, (a, b) in enumerate(zip(got, want, strict=True)):
            _close(a, b, f"{what}[{k}]")
        return
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=what)


def _strict(v):
    return xps.asarray(v) if isinstance(v, np.ndarray) else v


def _check(fn, wrt, arg_sets, selection):
    f = cn.coarsen(fn, wrt=wrt or None, **selection)
    for args in arg_sets:
        want = f(*args)
        c = f._last
        src = ModuleWriter(c.plan, c.wrt, "array_api_strict", "").source()
        # the namespace is imported exactly when the module uses it (scalar-only code needs only math)
        assert ("import array_api_strict as xp" in src) == ("xp." in src)
        env = _module(src, f.name)
        ref = _module(f.source, f.name + " numpy")
        sargs = [_strict(a) for a in args]
        _close(env[f.name](*sargs), want, "value")
        if not c.wrt:
            continue
        v_np, g_np = ref[f.name + "_vjp"](*args)
        v_st, g_st = env[f.name + "_vjp"](*sargs)
        _close(v_st, v_np, "vjp value")
        _close(g_st, g_np, "vjp gradients")
        assert (f.name + "_grad" in env) == (f.name + "_grad" in ref)
        if f.name + "_grad" in env:     # (a gradient exists for scalar results only)
            _close(env[f.name + "_grad"](*sargs), g_np, "grad")
        rng = np.random.default_rng(3)
        t = [rng.normal(size=args[i].shape) if isinstance(args[i], np.ndarray) else float(rng.normal())
             for i in (f.params.index(w) for w in c.wrt)]
        _close(env[f.name + "_jvp"](*sargs, *map(_strict, t)), ref[f.name + "_jvp"](*args, *t), "jvp")


@pytest.mark.parametrize("entry", CORPUS, ids=[e.name for e in CORPUS])
def test_corpus_matches_numpy(entry):
    _check(entry.fn, entry.wrt, [entry.make_args(np.random.default_rng(seed)) for seed in (0, 1)], {})


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_matches_numpy(name, selection):
    mod = KERNELS[name]
    sets = [mod.make_inputs(mod.META["test_size"], seed) for seed in (0, 1)]
    _check(function(mod), mod.META["wrt"], sets, SELECTIONS[selection])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(program_cases())
def test_random_programs_match_numpy(p):
    _check(p.source, p.wrt, [p.args], {})


#: Found by the random programs above: ``abs(t0)`` of a scalar in an ``if`` on a scalar inside an array
#: level printed as ``xp.abs(t0)``, which the standard refuses for a Python float.
_SCALAR_IF_IN_ARRAY_LEVEL = (
    "def main(a, x):\n"
    "    t0 = a * a\n"
    "    if a < a + a:\n"
    "        t0 = math.sin(math.exp(math.sin(a)))\n"
    "    s1 = a + a\n"
    "    for i in range(len(x)):\n"
    "        t3 = min(math.log(abs(t0) + 1.0), abs(i * 0.25))\n"
    "        s1 += math.sin(min(x[i], min(t3, i * 0.25)))\n"
    "    return s1 + max(1.0, a)\n"
)


@pytest.mark.parametrize("a", [-1.8884197593698424, 0.7])
def test_scalar_if_inside_an_array_level_uses_python_math(a):
    x = np.array([-1.48784051, 0.100004438, -1.38627538e-133, -1.31892728, 2.0, -1.62659516e-101])
    _check(_SCALAR_IF_IN_ARRAY_LEVEL, ("a", "x"), [(a, x)], {})


# -- the scatter helpers: the standard-only forms equal the NumPy fast paths ---------------------------------


def _helpers(xp) -> dict:
    env = {"xp": xp, "math": math}
    for h in ("_segments", "_segment_sum", "_segment_prod", "_segment_max", "_segment_min", "_scatter_sum",
              "_put", "_scatter_add", "_prod_except"):
        exec(HELPERS[h].source, env)
    return env


@pytest.mark.parametrize("seed", range(6))
def test_scatter_helpers_standard_forms(seed):
    rng = np.random.default_rng(seed)
    hn, hs = _helpers(np), _helpers(xps)
    n = int(rng.integers(0, 6))
    counts = rng.integers(0, 4, n)                      # empty runs included
    seg = np.repeat(np.arange(n), counts)
    v = rng.normal(size=seg.shape[0])
    for kind in ("sum", "prod", "max", "min"):
        want = hn[f"_segment_{kind}"](seg, v, n)
        _close(hs[f"_segment_{kind}"](xps.asarray(seg), xps.asarray(v), n), want, kind)
    m = int(rng.integers(1, 6))
    idx = rng.integers(0, m, 9)                         # repeated indices accumulate
    w = rng.normal(size=9)
    _close(hs["_scatter_sum"](xps.asarray(idx), xps.asarray(w), m), hn["_scatter_sum"](idx, w, m), "scatter")
    x = rng.normal(size=(m, 3))
    i, j = rng.integers(-m, m, 5), rng.integers(-3, 3, 5)  # Python's negative indices
    want = hn["_put"](x.copy(), (i, j), w[:5])
    _close(hs["_put"](xps.asarray(x), (xps.asarray(i), xps.asarray(j)), xps.asarray(w[:5])), want, "put")
    b_np, b_st = np.zeros(m), xps.zeros(m)
    hn["_scatter_add"](b_np, -2, 4, 1, w[:4])          # out of bounds: the indexed path
    hs["_scatter_add"](b_st, -2, 4, 1, xps.asarray(w[:4]))
    _close(b_st, b_np, "scatter_add")
    a = np.array([2.0, 0.0, 3.0, -1.0])[: int(rng.integers(1, 5))]
    _close(hs["_prod_except"](xps.asarray(a)), hn["_prod_except"](a), "prod_except")


#: A whole-array sum of a float times an integer array: the unit seed folds into the products, so the
#: adjoint is the integer array itself (of a scalar: its sum, a 0-d integer array), which the standard does
#: not add into a float adjoint; beside a float part of the same input (an Add of the two)
_INT_ADJOINTS = {
    "of_an_array": "def f(x):\n    return np.sum(x * np.arange(len(x)))\n",
    "of_a_scalar": "def f(a, x):\n    return np.sum(a * np.arange(len(x))) + np.sum(x * x)\n",
    "beside_a_float_part": "def f(x):\n    return np.sum(x * np.arange(len(x)) ** 2) + np.sum(x * x)\n",
    "of_a_slice": "def f(x, n):\n    return np.sum(x[:n] * np.arange(n))\n",
}


@pytest.mark.parametrize("name", sorted(_INT_ADJOINTS))
def test_integer_valued_adjoints_are_floats(name):
    src = _INT_ADJOINTS[name]
    x = np.linspace(-1.0, 2.0, 5)
    args = {"of_a_scalar": (0.5, x), "of_a_slice": (x, 3)}.get(name, (x,))
    _check(src, None, [args], {})
    ns: dict = {"np": np}
    exec(src, ns)       # noqa: S102 (the test's own function)
    f = cn.coarsen(src)
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    floats = [i for i, a in enumerate(args) if not isinstance(a, int)]
    for g, i in zip(grads, floats, strict=True):
        np.testing.assert_allclose(g, finite_difference(ns["f"], args, i), rtol=1e-6, atol=1e-7)

"""``backend="numba"``: the NumPy module compiled by Numba gives the NumPy backend's values and gradients.

Every corpus entry and kernel is compiled under both backends and compared to 1e-10 (relative):
forward and gradient, and for the kernels the VJP too.  A function Numba cannot compile runs as
the NumPy code with a :class:`NumbaFallbackWarning` naming the construct; which functions do so is
pinned exactly in :data:`RUNS_AS_NUMPY`.  The set may only shrink, and the test says so when it
does.  The array-API functions Numba lacks are written for it in ``coarsen_nb/lower/numba_xp*.py``,
which ``test_numba_xp.py`` and ``test_numba_xp_reductions.py`` compare with NumPy directly; the
vectorized corpora run in ``test_numba_corpora.py``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


#: corpus entry -> its generated functions (forward, grad) that run as NumPy code under backend="numba"
RUNS_AS_NUMPY: dict[str, set[str]] = {
    "atleast_and_asarray": {"grad"},       # a float adjoint += a 0-d array (b_p += copy_a)
}

#: the same for the kernels
KERNELS_AS_NUMPY: dict[str, set[str]] = {}


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


def _same(got, want, what):
    for g, w in zip(_flat(got), _flat(want), strict=True):
        assert np.shape(g) == np.shape(w), f"{what}: shape {np.shape(g)} != {np.shape(w)}"
        assert_close(np.asarray(g, dtype=float), np.asarray(w, dtype=float), rtol=1e-10, atol=1e-12, what=what)


def _compare(name, fn, wrt, args, differentiable=True, pullback=True):
    """Values, gradients and (with ``pullback``) VJPs under numba equal NumPy's; returns the kinds of
    function that fell back."""
    ref = cn.coarsen(fn, wrt=wrt or None)
    f = cn.coarsen(fn, wrt=wrt or None, backend="numba")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumbaFallbackWarning)
        _same(f(*args), ref(*args), f"{name} forward")
        if differentiable and wrt:
            _same(f.grad(*args), ref.grad(*args), f"{name} gradient")
        if differentiable and wrt and pullback:
            v, pull = f.vjp(*args)
            rv, rpull = ref.vjp(*args)
            _same(v, rv, f"{name} vjp value")
            _same(pull(), rpull(), f"{name} pullback")
    kinds = {name: "forward", f"{name}_grad": "grad", f"{name}_vjp": "vjp", f"{name}_jvp": "jvp"}
    return {kinds[str(w.message).split(": ")[1].split(" runs as")[0]] for w in caught
            if isinstance(w.message, NumbaFallbackWarning)}


def _check_fallbacks(name, fell_back, table):
    want = table.get(name, set())
    assert fell_back <= want, f"{name}: {sorted(fell_back - want)} now run as NumPy code under numba"
    assert fell_back == want, (f"{name}: {sorted(want - fell_back)} compile under Numba now: "
                               "remove them from the table")


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_entry_equals_numpy(entry):
    args = entry.make_args(np.random.default_rng(0))
    # (the pullback is the kernels' to check: NAME_vjp is NAME_grad's code returning the value too, and
    # compiling it for all of the corpus doubles this file's time)
    _check_fallbacks(entry.name, _compare(entry.name, entry.fn, entry.wrt, args, entry.differentiable,
                                          pullback=False), RUNS_AS_NUMPY)


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_equals_numpy(name):
    m = KERNELS[name]
    args = m.make_inputs(m.META["test_size"])
    _check_fallbacks(name, _compare(name, getattr(m, name), m.META["wrt"], args), KERNELS_AS_NUMPY)


SCALAR_LOOP = '''
import math

def x_scale(i):
    return 1.0 + 0.5 * (i % 3)

def damped(a, s0, n):
    s = s0
    for i in range(n):
        s = math.sin(s) * 0.999 + a * 0.001 * x_scale(i)
    return s
'''

SHIFTED_READ = '''
def shifted(x, n):
    s = 0.0
    for i in range(n):
        s = s * 0.5 + x[i + 1] * x[i]
    return s
'''


def test_scalar_loop_is_compiled_and_equals_numpy():
    """The loop, its tape and the reverse sweep all run compiled (no fallback), with NumPy's numbers."""
    f = cn.coarsen(SCALAR_LOOP, wrt=("a", "s0"), backend="numba")
    ref = cn.coarsen(SCALAR_LOOP, wrt=("a", "s0"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        for n in (0, 1, 7, 500):
            _same(f.value_and_grad(0.3, 0.2, n), ref.value_and_grad(0.3, 0.2, n), f"n={n}")
            _same(f.jvp((0.3, 0.2, n), (1.0, -2.0)), ref.jvp((0.3, 0.2, n), (1.0, -2.0)), f"jvp n={n}")
    c = f._compiled()
    assert "@_jit" in c.source and "\n    del " not in c.source
    assert all(fn.fallback is None for fn in (c.forward, c.vjp, c.grad, c.jvp))


def test_an_error_inside_compiled_code_names_the_users_line():
    """An index past the end raises inside compiled code (boundscheck=True, never a read past the array);
    the error is the NumPy backend's, at the user's line."""
    errors = {}
    for backend in ("numpy", "numba"):
        f = cn.coarsen(SHIFTED_READ, wrt="x", backend=backend)
        x = np.arange(4.0)
        _same(f.grad(x, 3), cn.coarsen(SHIFTED_READ, wrt="x").grad(x, 3), backend)
        with pytest.raises(cn.CoarsenError) as info:
            f.grad(x, 4)
        errors[backend] = info.value
    assert isinstance(errors["numba"], IndexError)
    assert (errors["numba"].line, str(errors["numba"])) == (errors["numpy"].line, str(errors["numpy"]))
    assert errors["numba"].line == 5


def test_a_construct_numba_lacks_runs_as_numpy_code_and_says_which():
    entry = next(e for e in CORPUS if e.name == "atleast_and_asarray")
    f = cn.coarsen(entry.fn, wrt=entry.wrt, backend="numba")
    args = entry.make_args(np.random.default_rng(1))
    with pytest.warns(NumbaFallbackWarning, match=r"atleast_and_asarray_grad runs as NumPy code: Numba cannot "
                                                  r"compile it \(No implementation of function .*iadd"):
        got = f.grad(*args)
    _same(got, cn.coarsen(entry.fn, wrt=entry.wrt).grad(*args), "atleast_and_asarray under numba")
    c = f._compiled()
    assert c.forward.fallback is None and "iadd" in c.grad.fallback


_PROCESS = textwrap.dedent('''
    import sys
    import coarsen_nb as cn
    f = cn.coarsen(sys.argv[1], wrt=("a", "s0"), backend="numba")
    g = f.grad(0.3, 0.2, 50)
    c = f._compiled()
    stats = c.grad.dispatcher.stats
    print(repr(g), sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), sep="|")
''')


def test_a_new_process_finds_the_compiled_code_in_the_disk_cache(tmp_path):
    """The module's file is named by its source's hash, so a restarted kernel reuses Numba's cache."""
    env = {**os.environ, "COARSEN_NB_CACHE": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", _PROCESS, SCALAR_LOOP], capture_output=True, text=True,
                           env=env, check=True).stdout.strip().split("|") for _ in range(2)]
    (g1, hits1, misses1), (g2, hits2, misses2) = runs
    assert g1 == g2
    assert (int(hits1), int(misses1)) == (0, 1), runs[0]
    assert (int(hits2), int(misses2)) == (1, 0), runs[1]


def test_the_exported_module_needs_only_numpy_and_numba(tmp_path):
    f = cn.coarsen(SCALAR_LOOP, wrt=("a", "s0"), backend="numba")
    want = f.grad(0.3, 0.2, 40)
    path = f.export(tmp_path / "damped_numba.py")
    lines = open(path).read().splitlines()
    imported = {ln.split()[1].split(".")[0] for ln in lines if ln.startswith(("import ", "from "))}
    # (llvmlite is Numba's own dependency, installed with it: the elementary helpers' LLVM instructions,
    # lower/numba_xp_elementary.py, are written with it)
    assert any(r.startswith("llvmlite") for r in importlib.metadata.requires("numba") or ())
    assert imported <= {"math", "types", "numpy", "numba", "llvmlite"} and {"numpy", "numba"} <= imported, imported
    script = (f"import importlib.util; s = importlib.util.spec_from_file_location('m', {str(path)!r}); "
              "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); "
              "print(repr(m.damped_grad(0.3, 0.2, 40)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}).stdout
    _same(eval(out), want, "exported")


FUSED = '''
import numpy as np

def fused(x, u, a):
    s = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i] * x[i]
        if d > 0:
            s += a * d * d
        else:
            s += 1.0 / (d - 1.0)
    q = x * u + a
    r = u * u
    return s + np.sum(np.exp(q) * a) + np.sum(r) * a
'''


def test_an_soi_runs_as_one_compiled_loop_per_part():
    """Under numba a reduction over a loop, its adjoint's scatters and the elementwise parts are loop
    functions (``@_jit_loop``), and they give the plain function's value and NumPy's gradient; the
    elementwise outputs of one SOI keep their own broadcast shapes (u * u is u's, x * u is x's)."""
    import importlib.util

    spec = importlib.util.spec_from_loader("fused_ref", loader=None)
    ref_module = importlib.util.module_from_spec(spec)
    exec(FUSED, ref_module.__dict__)
    f = cn.coarsen(FUSED, wrt=("x", "u", "a"), backend="numba")
    ref = cn.coarsen(FUSED, wrt=("x", "u", "a"))
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40):
        x, u, a = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, 1), 0.7
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = f(x, u, a)
            grads = f.grad(x, u, a)
        _same(got, ref_module.fused(x, u, a), f"value n={n}")
        _same(grads, ref.grad(x, u, a), f"gradient n={n}")
    source = f._compiled().source
    assert source.count("@_jit_loop") >= 3 and "for k in range(" in source

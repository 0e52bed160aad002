"""Slicing (``tests/corpus_slices.py``), compiled under the default selection, ``max_soi=1`` and
``per_block=True``: the value equals the plain function's (NumPy's own slicing), the gradient equals
central finite differences and, where JAX can run the same code, ``jax.grad`` of it.  The frontend's
desugaring alone is checked too (SSA verify, reference interpreter), and under the default selection
a slice is vectorized code, not a loop run element by element."""

from __future__ import annotations

import types

import numpy as np
import pytest
from corpus_slices import SLICES, SLICES_IDS
from gradcheck import assert_close, finite_difference
from ssa_interp import assert_same, run_ir

import coarsen_nb as cn
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import to_ssa, verify

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}
SEEDS = (0, 1, 2)
#: Entries with a loop iterated under the default selection: the user's own loop whose body makes a fresh
#: array (the window) or rewrites the whole array each step, or the row loop of a 2-D block.
USER_LOOPS_ITERATED = {"moving_window", "heat_steps", "column_sums", "row_weights", "extremum_filter_default",
                       # a 2-D block: each row vectorized, the rows iterated (frontend/slices.py)
                       "image_gradient", "row_blocks", "block_writes"}


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_desugared_ir_means_what_python_means(entry):
    ssa = to_ssa(parse(entry.fn))
    verify(ssa)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_same(run_ir(ssa, args), entry.fn(*args), f"{entry.name}, seed {seed}")


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_value_and_gradient(entry, selection):
    f = cn.coarsen(entry.fn, wrt=entry.wrt, **SELECTIONS[selection])
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_close(f(*args), entry.fn(*args), rtol=1e-10, atol=1e-12, what=f"{entry.name} seed {seed} value")
        grads = _flat(f.grad(*args))
        assert len(grads) == len(entry.wrt)
        for name, g in zip(entry.wrt, grads, strict=True):
            fd = finite_difference(entry.fn, args, f.params.index(name))
            assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"{entry.name} seed {seed} d/d{name} vs FD")


@pytest.mark.parametrize("entry", [e for e in SLICES if e.name not in USER_LOOPS_ITERATED],
                         ids=[n for n in SLICES_IDS if n not in USER_LOOPS_ITERATED])
def test_slices_are_vectorized(entry):
    """Under the default selection no loop of the generated code runs iteration by iteration: every
    slice's element loop got its closed form."""
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f(*entry.make_args(np.random.default_rng(0)))
    assert "iteration by iteration" not in f.source, f.source


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_gradient_matches_jax(entry):
    jax = _jax()
    if "write" in entry.tags:
        pytest.skip("JAX arrays are immutable: u[a:b] = v cannot run under JAX")
    if "extremum" in entry.tags:
        pytest.skip("Python's max/min compare traced values, which jax.grad cannot")
    glb = dict(entry.fn.__globals__)
    glb["np"] = jax.numpy
    jfn = types.FunctionType(entry.fn.__code__, glb, entry.fn.__name__, entry.fn.__defaults__)
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    argnums = tuple(f.params.index(w) for w in entry.wrt)
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        jargs = tuple(jax.numpy.asarray(a, dtype=jax.numpy.float64) if isinstance(a, (np.ndarray, float)) else a
                      for a in args)
        want = jax.grad(jfn, argnums=argnums)(*jargs)
        for name, g, w in zip(entry.wrt, _flat(f.grad(*args)), want, strict=True):
            assert_close(g, np.asarray(w), rtol=1e-9, atol=1e-12, what=f"{entry.name} seed {seed} d/d{name} vs JAX")


@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_generated_module_is_clean_python(entry, tmp_path):
    """As for the loop-style corpus (test_generated_code.py): ruff-clean, standalone."""
    import subprocess
    import sys
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f(*entry.make_args(np.random.default_rng(0)))
    path = tmp_path / f"{entry.name}_generated.py"
    path.write_text(f.source)
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W",
                        "--ignore", "E501", "--output-format", "concise", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, f"ruff on the module generated for {entry.name}:\n{r.stdout}{r.stderr}"
    assert "coarsen_nb" not in "\n".join(ln for ln in f.source.splitlines() if "import" in ln)

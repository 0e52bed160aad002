"""Slicing (``tests/corpus_slices.py``), compiled under the default selection, ``max_soi=1`` and
``per_block=True``: the value equals the plain function's (NumPy's own slicing), the gradient equals
central finite differences and, where JAX can run the same code, ``jax.grad`` of it.  The frontend's
desugaring alone is checked too (SSA verify, reference interpreter), and under the default selection
a slice is vectorized code, not a loop run element by element."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_slices import SLICES, SLICES_IDS
from entry_checks import (
    SELECTIONS,
    check_desugared_ir,
    check_gradient_against_jax,
    check_value_and_gradient,
    jax_module,
)

import coarsen_nb as cn

#: Entries with a loop iterated under the default selection: the user's own loop whose body makes a fresh
#: array (the window) or rewrites the whole array each step, or the row loop of a 2-D block.
USER_LOOPS_ITERATED = {"moving_window", "heat_steps", "column_sums", "row_weights", "extremum_filter_default",
                       # a 2-D block: each row vectorized, the rows iterated (frontend/slices.py)
                       "image_gradient", "row_blocks", "block_writes"}


@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_desugared_ir_means_what_python_means(entry):
    check_desugared_ir(entry)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_value_and_gradient(entry, selection):
    check_value_and_gradient(entry, selection)


@pytest.mark.parametrize("entry", [e for e in SLICES if e.name not in USER_LOOPS_ITERATED],
                         ids=[n for n in SLICES_IDS if n not in USER_LOOPS_ITERATED])
def test_slices_are_vectorized(entry):
    """Under the default selection no loop of the generated code runs iteration by iteration: every
    slice's element loop got its closed form."""
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f(*entry.make_args(np.random.default_rng(0)))
    assert "iteration by iteration" not in f.source, f.source


@pytest.mark.parametrize("entry", SLICES, ids=SLICES_IDS)
def test_gradient_matches_jax(entry):
    jax_module()
    if "write" in entry.tags:
        pytest.skip("JAX arrays are immutable: u[a:b] = v cannot run under JAX")
    if "extremum" in entry.tags:
        pytest.skip("Python's max/min compare traced values, which jax.grad cannot")
    check_gradient_against_jax(entry, may_write=False)


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

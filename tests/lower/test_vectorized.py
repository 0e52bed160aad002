"""Vectorized code as users write it (issue 15): the reductions (``tests/corpus_reductions.py``) and the
other corpora of that style, compiled under the default selection, ``max_soi=1`` and ``per_block=True``.

The value equals the plain function's (NumPy itself), the gradient equals central finite differences
and ``jax.grad`` of the same code, the JVP equals the gradient's directional derivative, and the
generated module is clean standalone Python.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from corpus_arrays import ARRAYS
from corpus_linalg import LINALG
from corpus_reductions import REDUCTIONS
from corpus_special import SPECIAL
from entry_checks import SEEDS, SELECTIONS, check_desugared_ir, check_gradient_against_jax, check_value_and_gradient
from gradcheck import assert_close

import coarsen_nb as cn

VECTORIZED = [*REDUCTIONS, *LINALG, *ARRAYS, *SPECIAL]
IDS = [e.name for e in VECTORIZED]


@pytest.mark.parametrize("entry", VECTORIZED, ids=IDS)
def test_desugared_ir_means_what_python_means(entry):
    check_desugared_ir(entry)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", VECTORIZED, ids=IDS)
def test_value_and_gradient(entry, selection):
    check_value_and_gradient(entry, selection)


@pytest.mark.parametrize("entry", VECTORIZED, ids=IDS)
def test_gradient_matches_jax(entry):
    check_gradient_against_jax(entry, may_write=False)


@pytest.mark.parametrize("entry", VECTORIZED, ids=IDS)
def test_jvp_is_the_directional_derivative(entry):
    """``f.jvp`` along a random direction equals the gradient's inner product with it."""
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        args = entry.make_args(rng)
        wrt_args = [args[f.params.index(w)] for w in entry.wrt]
        directions = [rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in wrt_args]
        grads = f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        want = sum(float(np.sum(g * d)) for g, d in zip(grads, directions, strict=True))
        _, tangent = f.jvp(tuple(args), tuple(directions))
        assert_close(tangent, want, rtol=1e-9, atol=1e-12, what=f"{entry.name} seed {seed} jvp")


@pytest.mark.parametrize("entry", VECTORIZED, ids=IDS)
def test_generated_module_is_clean_python(entry, tmp_path):
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f(*entry.make_args(np.random.default_rng(0)))
    path = tmp_path / f"{entry.name}_generated.py"
    path.write_text(f.source)
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W",
                        "--ignore", "E501", "--output-format", "concise", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, f"ruff on the module generated for {entry.name}:\n{r.stdout}{r.stderr}"


def test_axis_out_of_range_is_a_located_error(tmp_path):
    """An axis the argument does not have is known once the call's shapes are: a CoarsenError at the
    word ``axis`` of the user's line, saying which axes there are."""
    src = tmp_path / "user_axis.py"
    src.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(np.sum(x, axis=1))\n")
    f = cn.coarsen(src.read_text(), name="f")
    with pytest.raises(cn.CoarsenError) as info:
        f.grad(np.ones(3))
    err = info.value
    assert err.line == 5 and err.col == src.read_text().splitlines()[4].index("axis")
    assert "axis=1 is out of range for an array of 1 dimension" in str(err)
    assert "axes 0 to 0" in str(err)

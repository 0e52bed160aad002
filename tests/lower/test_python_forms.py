"""The Python-level forms of issue 15 (``tests/corpus_python_forms.py``), compiled under the default
selection, ``max_soi=1`` and ``per_block=True``: the value equals the plain Python function's, the
gradient equals central finite differences and, where JAX can run the same code, ``jax.grad`` of it."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_python_forms import PYTHON_FORMS, PYTHON_FORMS_IDS
from entry_checks import SEEDS, SELECTIONS, check_desugared_ir, check_gradient_against_jax, check_value_and_gradient
from gradcheck import assert_close, finite_difference


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_desugared_ir_means_what_python_means(entry):
    """The frontend alone: the desugared SSA is well formed and the reference interpreter runs it to the
    plain function's value, before any lifting."""
    check_desugared_ir(entry)


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_inputs_are_off_kinks(entry):
    """Central differences at two step sizes agree, so FD is a valid reference at these inputs."""
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        for name in entry.wrt:
            k = list(entry.fn.__code__.co_varnames).index(name)
            assert_close(finite_difference(entry.fn, args, k, eps=1e-5), finite_difference(entry.fn, args, k),
                         rtol=1e-4, atol=1e-6, what=f"{entry.name} seed {seed} d/d{name}")


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_value_and_gradient(entry, selection):
    check_value_and_gradient(entry, selection)


# --------------------------------------------------------------------------
# JAX: the same code, with np → jax.numpy and math → JAX functions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("entry", PYTHON_FORMS, ids=PYTHON_FORMS_IDS)
def test_gradient_matches_jax(entry):
    check_gradient_against_jax(entry, may_write=True)

"""A generated module defines exactly the helpers its code calls, transitively (issue 13).

The module writer knows which helpers a module needs from what it printed (each printed call registers
its helper) and what each helper calls from the helper's code, never from the generated text.  Here the
generated text is read (Python's ``ast``) to check it: for every corpus entry (``tests/corpus.py`` and
the vectorized corpora of ``test_vectorized.py``) and every kernel, under the default selection, the
helpers the module defines are those its functions call and, through them, those the helpers call; and
``import math`` is there exactly when some code uses ``math``.
"""

from __future__ import annotations

import ast
import warnings

import numpy as np
import pytest
from corpus import CORPUS
from corpus_arrays import ARRAYS
from corpus_linalg import LINALG
from corpus_reductions import REDUCTIONS
from corpus_special import SPECIAL

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower.helpers import HELPERS

ENTRIES = [*CORPUS, *REDUCTIONS, *LINALG, *ARRAYS, *SPECIAL]


def _loads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def check_helpers_are_those_called(source: str, name: str) -> None:
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    entry_points = {f"{name}{suffix}" for suffix in ("", "_vjp", "_grad", "_jvp")} & functions.keys()
    defined = functions.keys() - entry_points
    assert defined <= HELPERS.keys(), f"defines functions that are no helpers: {sorted(defined - HELPERS.keys())}"
    reached, todo = set(), list(entry_points)
    while todo:
        called = _loads(functions[todo.pop()]) & HELPERS.keys()
        todo += sorted(called - reached)
        reached |= called
    assert reached <= defined, f"calls helpers it does not define: {sorted(reached - defined)}"
    assert defined == reached, f"defines helpers nothing calls: {sorted(defined - reached)}"
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert ("math" in imported) == ("math" in _loads(tree)), "import math iff some code uses math"


def _check(fn, wrt, args) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = cn.coarsen(fn, wrt=wrt or None)
        f(*args)
    check_helpers_are_those_called(f.source, f.name)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_corpus_module_defines_the_helpers_it_calls(entry):
    _check(entry.fn, entry.wrt, entry.make_args(np.random.default_rng(0)))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_module_defines_the_helpers_it_calls(name):
    mod = KERNELS[name]
    _check(function(mod), mod.META["wrt"], mod.make_inputs(mod.META["test_size"], 0))

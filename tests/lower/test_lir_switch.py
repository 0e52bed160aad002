"""The passes over records as the module writer will run them (``ModuleWriter._finish``, step 3 of
notes/lowered-ir.md): on a body with no ``Raw`` they do what the text passes ``_function`` ran did (after the
liveness pass, which they did not have), where the backend frees temporaries and where it does not; a ``Raw``
is refused."""

from __future__ import annotations

import liveness_text as liveness
import numpy as np
import pytest
from hypothesis import given, settings
from test_lir import bodies

import coarsen_nb as cn
from coarsen_nb import backends
from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Assign, Attr, BinOp, Call, Name, Return
from coarsen_nb.lower.lir_liveness import drop_dead_code
from coarsen_nb.lower.module import ModuleWriter


def _plan():
    def f(x):
        return np.sum(x * x)

    g = cn.coarsen(f, wrt=("x",))
    g(np.ones(3))
    return g.plan


_PLAN = _plan()


def _writer(backend: str) -> ModuleWriter:
    return ModuleWriter(_PLAN, ("x",), backends.BACKENDS[backend])


@settings(max_examples=200, deadline=None)
@given(bodies())
def test_finish_does_what_the_text_passes_do(body):
    # (the text passes never had the liveness pass's reach, lir_liveness.drop_dead_code: an assignment that a
    # later one overwrites before any read; that pass is checked on its own, test_lir_liveness.py, and runs
    # here first so the rest compares with the text passes)
    pruned = drop_dead_code(body)
    for backend in ("numpy", "numba"):
        w = _writer(backend)
        done, used = w._finish(list(body), keep=("x", "y"))
        lines = liveness.drop_dead_assignments(lir.print_body(pruned))
        if w.backend.frees_temporaries:
            lines = liveness.free_dead_names(lines, keep=["x", "y"])
        assert lir.print_body(done) == lines
        assert used == set()


def test_finish_reads_the_modules_the_body_uses_and_the_xp_import_follows():
    w = _writer("numpy")
    xp_sum = Call(Attr(Name("xp"), "sum"), (Name("x"),))
    body = [Assign(Name("s"), xp_sum), Assign(Name("dead"), BinOp("+", Name("s"), Name("x"))),
            Assign(Name("t"), Call(Attr(Name("math"), "exp"), (Name("s"),))), Return(Name("t"))]
    done, used = w._finish(body, keep=("x",))
    assert lir.print_body(done) == ["    s = xp.sum(x)", "    t = math.exp(s)", "    return t"]
    assert used == {"xp", "math"}
    assert w._imports_xp(used) and not w._imports_xp(set())      # (no helper called yet)


def test_finish_refuses_a_raw_whose_reads_are_unknown():
    with pytest.raises(AssertionError, match="structured"):
        _writer("numpy")._finish([Assign(Name("s"), lir.Raw("x.sum()")), Return(Name("s"))])

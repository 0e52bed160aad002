"""The numba fuser's loop functions as lowered-IR records (``lir.FunctionDef``), not text: each prints as
the helper the module carries, every name it reads is known (a parameter, a name it binds, a helper, a
module), and none is text.  The modules are written, not loaded: nothing is compiled here
(``test_numba_backend.py`` runs them)."""

from __future__ import annotations

import builtins
import warnings

import numpy as np
import pytest
from corpus import CORPUS

import coarsen_nb as cn
from coarsen_nb import module_parts, numba_loader
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower import lir, numba_bounds, numba_loops

_ENTRIES = {e.name: e for e in CORPUS}


def test_a_function_definition_prints_whole():
    body = (lir.Assign(lir.Name("acc"), lir.Lit("0.0")),
            lir.For(lir.Name("k"), lir.Call(lir.Name("range"), (lir.Name("n"),)),
                    (lir.AugAssign(lir.Name("acc"), "+", lir.Index(lir.Name("x"), (lir.Name("k"),))),)),
            lir.Return(lir.Name("acc")))
    f = lir.FunctionDef("total", ("n", "x"), body, "the sum of x[:n].", decorator="@_jit_loop")
    assert lir.print_body((f,), 0) == [
        "@_jit_loop", "def total(n, x):", '    """the sum of x[:n]."""', "    acc = 0.0",
        "    for k in range(n):", "        acc += x[k]", "    return acc"]
    assert f.targets() == ("total",) and f.blocks() == (body,)
    lir.verify((f,), structured=True)
    with pytest.raises(AssertionError, match="not a statement"):
        lir.verify((lir.FunctionDef("g", (), ("acc = 0",)),))
    namespace: dict = {"_jit_loop": lambda fn: fn}
    exec("\n".join(lir.print_body((f,), 0)), namespace)
    assert namespace["total"](3, [1.0, 2.0, 4.0, 8.0]) == 7.0


#: the decorator the module writer prints above each loop function recorded (an in-bounds copy is unchecked)
DECORATORS: dict[str, str] = {}


def _loops(monkeypatch, fn, wrt, args) -> tuple[list[lir.FunctionDef], str]:
    """The loop functions built while ``fn`` compiles under numba (as records) and the module's source."""
    made, sources = [], []
    build = numba_loops.LoopFunction.build

    def recorded(self):
        calls = build(self)
        if calls is not None:
            made.append(self.function)
            DECORATORS[self.function.name] = self.writer.helper_decorators[self.function.name]
        return calls

    def written(parts, *rest, **kwargs):
        sources.append(module_parts.joined(parts))
        raise ImportError("written, not loaded")

    monkeypatch.setattr(numba_loops.LoopFunction, "build", recorded)
    monkeypatch.setattr(numba_loader, "load", written)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(cn.CoarsenError):
            cn.coarsen(fn, wrt=wrt or None, backend="numba")._specialize(args)
    assert made and sources
    return made, sources[-1]


def _bound(body) -> set[str]:
    return {n for s in lir.statements(body) for n in s.targets()}


@pytest.mark.parametrize("source,name", [("corpus", "running_max"), ("corpus", "product_range"),
                                         ("corpus", "for_over_array"), ("kernel", "rosenbrock"),
                                         ("kernel", "asian_option"), ("kernel", "conv1d")])
def test_loop_functions_are_records_the_module_prints(monkeypatch, source, name):
    if source == "corpus":
        e = _ENTRIES[name]
        made, module = _loops(monkeypatch, e.fn, e.wrt, e.make_args(np.random.default_rng(0)))
    else:
        mod = KERNELS[name]
        made, module = _loops(monkeypatch, function(mod), mod.META["wrt"], mod.make_inputs(mod.META["test_size"], 0))
    # names a loop function may read besides its own: the helpers and modules of the numba module
    # (and the prologue's flag and signal an in-bounds copy reads: numba_bounds)
    ambient = {"math", "xp", "_flat_as", "_broadcast_shape", numba_bounds.TWINS_FLAG, numba_bounds.BOUNDS_SIGNAL} \
        | set(dir(builtins))
    for f in made:
        lir.verify(f.body, structured=True)         # no text: every read known
        assert f.docstring.startswith("SOI ") and not f.decorator      # (the module writer decorates it)
        assert DECORATORS[f.name] in (numba_loops.DECORATOR, numba_bounds.UNCHECKED)
        assert "\n".join([DECORATORS[f.name], *lir.print_body((f,), 0)]) + "\n" in module + "\n"
        assert isinstance(f.body[-1], (lir.Return, lir.For))
        assert any(isinstance(s, lir.For) for s in f.body)
        reads = {n for s in lir.statements(f.body) for n in lir.reads(s)}
        helpers = {n for n in reads if n.startswith("_") and f"def {n}(" in module}
        assert reads - set(f.params) - _bound(f.body) - ambient - helpers == set(), f.name

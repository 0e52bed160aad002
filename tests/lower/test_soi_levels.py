"""The NumPy printer's levels decided before printing (``lower/soi_levels.py``) equal those it builds while
printing, and the branch choice (``lower/branch_domains.py``) is the one the printed code shows.

Each compilation records every printer's outermost values (what the module writer and the adjoint ask it
for) and the level domains it builds (``tests/level_domains.py``'s ``LevelRecorder``), then runs the pre-pass
on the same values: it opens the same domains in the same order, per printer.  The entries cover every level kind and
every enclosing kind the corpus has: a segment per point, a rectangular nest inside another, a mask under
a segment, a rectangular nest inside an arm, an arg-extremum's point, a loop inside a scalar ``if``, the
dense nests' matrix–vector products (powers, windows) and the masked arms of a kernel.
``PYTHONPATH=. python tests/level_domains.py --pre-pass`` runs the same check on the whole corpus and every
kernel.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sp
from corpus import CORPUS
from level_domains import LevelRecorder

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower import branch_domains, soi_levels
from coarsen_nb.lower.branch_domains import BranchChoice

_ENTRIES = {e.name: e for e in CORPUS}
_CORPUS = ["triangular_sum", "nested_three", "pairwise_energy", "hmc_like_potential", "running_max", "power_rec"]
_KERNELS = ["horner_fit", "conv1d", "piecewise_sum"]


def _record(monkeypatch, source, name) -> LevelRecorder:
    rec = LevelRecorder()
    rec.install(monkeypatch.setattr)
    if source == "corpus":
        e = _ENTRIES[name]
        fn, wrt, args = e.fn, e.wrt, e.make_args(np.random.default_rng(0))
    else:
        m = KERNELS[name]
        fn, wrt, args = function(m), m.META["wrt"], m.make_inputs(m.META["test_size"], 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cn.coarsen(fn, wrt=wrt or None, backend="numpy")._specialize(args)
    return rec


@pytest.mark.parametrize("source, name", [("corpus", n) for n in _CORPUS] + [("kernel", n) for n in _KERNELS])
def test_the_pre_pass_opens_the_levels_the_printer_opens(monkeypatch, source, name):
    rec = _record(monkeypatch, source, name)
    diffs = list(rec.compare())
    assert any(d is not None for d in diffs), "no printer opened a level"
    for d in diffs:
        assert d is None or d == ([], []), f"first difference (printed, pre-pass): {d}"


def test_the_comparison_sees_a_wrong_branch_choice(monkeypatch):
    """The check can fail: a pre-pass that put every arm of hmc_like_potential's branch on all points (one
    ``where``, no mask) misses the printer's mask level (``... where y[$k2.2] > 0.5``)."""
    rec = _record(monkeypatch, "corpus", "hmc_like_potential")
    monkeypatch.setattr(soi_levels.branch_domains, "array_choice", lambda *args: BranchChoice("where"))
    printed = [x for d in rec.compare() if d is not None for x in d[0]]
    assert any("points" in x and "where" in x for x in printed), printed


@pytest.mark.expects_internal_error
def test_a_level_the_pre_pass_did_not_open_is_a_compiler_bug(monkeypatch):
    """The printer takes every level from the pre-pass: where the walk makes a branch's masked points but
    does not keep them (as if it had not opened them), the printer finds no mask level to print, and
    compiling fails as an internal error naming it (no level is decided while printing)."""
    def unkept(walk, lv, where):
        return soi_levels.Points(lv, "mask", domain=soi_levels.masked_level(lv.points_kind, lv.binders, where))
    monkeypatch.setattr(soi_levels.LevelWalk, "_mask", unkept)
    e = _ENTRIES["hmc_like_potential"]
    with warnings.catch_warnings(), pytest.raises(cn.errors.InternalCompilerError, match="opened no level .'mask'"):
        warnings.simplefilter("ignore")
        cn.coarsen(e.fn, wrt=e.wrt or None, backend="numpy")._specialize(e.make_args(np.random.default_rng(0)))


def test_branch_choice_follows_the_arms_costs():
    """Cheap total arms are one ``where``; a transcendental arm runs on its own points with the cheap one as
    the buffer; integer numbers are a ``constant_where``; a scalar predicate is a real ``if``."""
    x, n = sp.Symbol("x"), sp.Symbol("n")
    soi = _Soi(deps=lambda e: {x} & sp.sympify(e).free_symbols)
    varying = {x}
    cheap = [(2 * x + 1, x > 0), (-x, True)]
    assert not branch_domains.scalar_branch(cheap, soi.deps, True, varying)
    assert branch_domains.array_choice(cheap, soi, lambda e: False) == BranchChoice("where")
    costly = [(sp.exp(x), x > 0), (-x, True)]
    assert branch_domains.array_choice(costly, soi, lambda e: False) == BranchChoice("mask", base=1)
    assert branch_domains.array_choice(costly, soi, lambda e: e == sp.exp(x)) == BranchChoice("where")
    counts = [(sp.Integer(1), x > 0), (sp.Integer(0), True)]
    assert branch_domains.array_choice(counts, soi, lambda e: False) == BranchChoice("constant_where")
    assert branch_domains.scalar_branch([(sp.exp(x), n > 0), (-x, True)], soi.deps, True, varying)
    assert branch_domains.scalar_branch(costly, soi.deps, False, varying)


class _Soi:
    """The SOI facts the branch choice reads, for hand-made branches: no temps, no array reads."""

    def __init__(self, deps):
        self.deps, self.temps, self.reads = deps, {}, {}

    @staticmethod
    def resolved(e):
        return e


def test_a_branch_printed_again_under_one_times_is_decided_twice():
    """``1.0 * x`` prints as x computed in place (not x's memoized value), so a branch in x that is also printed
    elsewhere is asked for twice at the same level: the pre-pass decides it twice (a random program's JVP raised
    UndecidedLevel).  Reference: the plain function and central differences."""
    import math

    source = ("def main(a, b, x):\n"
              "    v = 0.0\n"
              "    for i in range(len(x)):\n"
              "        if a < x[i]:\n"
              "            t = 2.0\n"
              "        else:\n"
              "            t = (1.0 * b) * (0.1 if (x[i] * (i * 0.25)) > (x[i] / (1.0 + b * b)) else x[i])\n"
              "        v = v + math.tanh(t)\n"
              "    return v\n")
    namespace: dict = {"math": math}
    exec(source, namespace)
    plain = namespace["main"]
    f = cn.coarsen(source, backend="numpy", reuse=1)
    x = np.array([0.3, -0.7, 1.1, 2.0])
    h = 1e-6
    for a, b in ((0.0, 0.4), (0.5, -1.3), (-2.0, 0.0)):
        value, tangent = f.jvp((a, b, x), (0.0, 1.0, np.zeros_like(x)))
        assert value == pytest.approx(plain(a, b, x), rel=1e-12)
        assert tangent == pytest.approx((plain(a, b + h, x) - plain(a, b - h, x)) / (2 * h), rel=1e-6, abs=1e-9)

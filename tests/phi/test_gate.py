"""Gating (γ, μ, η) and lifting, pinned by golden text and checked structurally.

Golden files in ``tests/phi/golden/``: ``NAME.gated.txt`` is ``f.gated`` and
``NAME.plan.txt`` is ``str(f.plan)`` after a call with the recorded argument
types.  They were generated from the implementation and then read by hand
(see the notes in ``GOLDEN_CASES``).  One line was corrected by hand rather
than blessed: ``piecewise_sum.gated.txt`` says ``# line 239`` for the ``if``
(its line in ``tests/corpus.py``, the frame the loop header's ``line 238``
uses); the implementation prints the def-relative ``# line 4``.  Line numbers
are those of ``tests/corpus.py``: editing the corpus above these functions
means regenerating.  To regenerate after an intended
change: ``COARSEN_NB_REGEN_GOLDEN=1 pytest tests/phi/test_gate.py`` — and read
the diff before committing it.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS, piecewise_sum

import coarsen_nb as cn

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("COARSEN_NB_REGEN_GOLDEN") == "1"

_BY_NAME = {e.name: e for e in CORPUS}
GOLDEN_CASES = {
    # piecewise_sum: γ inside a loop; lifts to Σ_k Piecewise(...) over range(0, len(x)).
    "piecewise_sum": (np.array([1.0, -2.0, 3.0]),),
    # horner: μ v ← v·t + c[k] (C7 with a = t); v_N = t^N·v0 + Σ_k c_k t^(N-1-k).
    "horner": (np.array([1.0, 2.0, 3.0]), 0.5),
    # while_newton_sqrt: a while loop with a compound condition; iterated, one symbolic body.
    "while_newton_sqrt": (2.0,),
}


def _check(path: Path, text: str) -> None:
    if REGEN:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text + "\n")
    want = path.read_text()
    assert text + "\n" == want, f"{path.name} changed; regenerate with COARSEN_NB_REGEN_GOLDEN=1 and review the diff"


@pytest.mark.parametrize("name", list(GOLDEN_CASES))
def test_golden_gated(name):
    f = cn.coarsen(_BY_NAME[name].fn)
    _check(GOLDEN / f"{name}.gated.txt", f.gated)


@pytest.mark.parametrize("name", list(GOLDEN_CASES))
def test_golden_plan(name):
    f = cn.coarsen(_BY_NAME[name].fn)
    f(*GOLDEN_CASES[name])
    _check(GOLDEN / f"{name}.plan.txt", str(f.plan))


# --------------------------------------------------------------------------
# Structure, over the corpus
# --------------------------------------------------------------------------


def _count(text: str, sym: str) -> int:
    return len(re.findall(re.escape(sym) + r"[\[(]", text))


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_no_untyped_phi_survives_gating(entry):
    """Gating replaces every SSA φ: the gated text has no bare φ, and μ/η appear iff the SSA has loops."""
    f = cn.coarsen(entry.fn)
    gated, ssa = f.gated, f.ssa
    assert "φ(" not in gated, gated
    loops = len(re.findall(r"\.head:", ssa))
    if loops:
        assert _count(gated, "μ") >= 1, gated
    else:
        assert _count(gated, "μ") == 0 and _count(gated, "η") == 0, gated


@pytest.mark.parametrize("entry", [e for e in CORPUS if "branch" in e.tags and "loop" not in e.tags
                                   and "while" not in e.tags],
                         ids=[e.name for e in CORPUS if "branch" in e.tags and "loop" not in e.tags
                              and "while" not in e.tags])
def test_every_ssa_join_becomes_a_gamma(entry):
    f = cn.coarsen(entry.fn)
    phis = len(re.findall(r"= φ\(", f.ssa))
    assert _count(f.gated, "γ") >= phis > 0 or phis == 0, (f.ssa, f.gated)


def test_piecewise_sum_gamma_under_mu():
    gated = cn.coarsen(piecewise_sum).gated
    mu = gated.index("μ[for1.head]")
    gamma = gated.index("γ(")
    eta = gated.index("η[for1.head]")
    assert mu < gamma < eta


def test_line_numbers_are_consistent():
    """Loop headers and ``if`` s report lines in the same frame (the file's), like the module header does."""
    f = cn.coarsen(piecewise_sum)
    lines, first = inspect.getsourcelines(piecewise_sum)
    want_for = first + next(i for i, ln in enumerate(lines) if ln.strip().startswith("for "))
    want_if = first + next(i for i, ln in enumerate(lines) if ln.strip().startswith("if "))
    gated = f.gated
    loop_line = int(re.search(r"loop for .*, line (\d+)", gated).group(1))
    if_line = int(re.search(r"if \$\S+:\s+# line (\d+)", gated).group(1))
    assert loop_line == want_for, gated
    assert if_line == want_if, f"the `if` is on line {want_if} of {inspect.getsourcefile(piecewise_sum)}, " \
                               f"the gated text says {if_line}; the loop header says {loop_line} (for line {want_for})"

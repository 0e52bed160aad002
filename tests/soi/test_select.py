"""SOI selection under a finite cap L: split an oversized run at its most-used value, merge small neighbours.

The size of a run's node is what it added to the run's lifting (``count_ops`` of its value with the values
it inlines; :mod:`coarsen_nb.soi.partition`); reuse is set to ∞ here so that no value is materialized by
the reuse rule and the cuts are the cap's alone.
"""

import math

import numpy as np
import pytest
from corpus import CORPUS
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb.phi.lift import use_counts
from coarsen_nb.soi import partition

# t is read by b, c and d (3 uses); every other value of the body at most twice.
SPLIT = """import math
def f(x, y):
    a = x * y + 1.0
    t = math.sin(a) * x
    b = t + y
    c = b * t
    d = c - t * y
    e = d * d + x
    return e
"""

# With L = 5 the run is cut after a (most used in its first five operations) and then, restarting at b,
# after b (most used from there on): two one-value SOIs that fit in one SOI of at most 5 operations.
MERGE = """import math
def f(x, y):
    a = x * y
    b = math.sin(x) + y
    c = a * a + a
    d = a * b + b
    e = d * b * b + c
    g = e * b + d
    return g
"""


def _outputs(src, max_soi, args, merge=True, monkeypatch=None):
    if not merge:
        monkeypatch.setattr(partition, "_merge", lambda run, pieces, cap: pieces)
    f = cn.coarsen(src, max_soi=max_soi, reuse=math.inf)
    f.grad(*args)
    return f, [k.output_names for k in f.plan.kernels()]


def test_an_oversized_run_is_split_at_its_most_used_value():
    f, outs = _outputs(SPLIT, 8, (0.3, 0.7))
    uses = use_counts(f._gated)
    body = ("a.1", "t.1", "b.1", "c.1", "d.1", "e.1")
    assert max(body, key=uses.__getitem__) == "t.1" and uses["t.1"] == 3
    # In program order the SOI would close where the count first reaches 8 (after b: 2 + 4 + 5 ops);
    # the split closes it after t instead, so t is materialized once, not inlined into b, c and d.
    assert outs[0] == ["t.1"]
    assert all("t.1" not in o for o in outs[1:])
    # The first SOI holds a and t (a is inlined into t), and the values after t read t as an input.
    first, second = f.plan.kernels()[:2]
    assert set(first.inputs) == {"x", "y"} and "t.1" in second.inputs


def test_small_neighbouring_sois_are_merged(monkeypatch):
    _, merged = _outputs(MERGE, 5, (0.3, 0.7))
    _, unmerged = _outputs(MERGE, 5, (0.3, 0.7), merge=False, monkeypatch=monkeypatch)
    assert unmerged[:2] == [["a.1"], ["b.1"]]
    assert merged[0] == ["a.1", "b.1"] and merged[1:] == unmerged[2:]


@pytest.mark.parametrize("max_soi", [2, 5, 16])
def test_split_and_merge_change_the_partition_never_the_values(max_soi):
    args = (0.3, 0.7)
    for src in (SPLIT, MERGE):
        ref = cn.coarsen(src, max_soi=1).grad(*args)
        got = cn.coarsen(src, max_soi=max_soi, reuse=math.inf).grad(*args)
        for g, r in zip(got, ref, strict=True):
            assert_close(g, r, rtol=1e-12, atol=1e-12, what=f"L={max_soi}")


def _flat(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("entry", [e for e in CORPUS if e.differentiable and e.wrt],
                         ids=[e.name for e in CORPUS if e.differentiable and e.wrt])
def test_finite_caps_agree_with_operator_level_on_the_corpus(entry):
    """The corpus equality of tests/lower (L=1, per-block, default, L=R=∞) for caps that split and merge."""
    args = entry.make_args(np.random.default_rng(3))
    ref = _flat(cn.coarsen(entry.fn, wrt=entry.wrt, max_soi=1).grad(*args))
    for max_soi, reuse in ((4, None), (12, math.inf)):
        got = _flat(cn.coarsen(entry.fn, wrt=entry.wrt, max_soi=max_soi, reuse=reuse).grad(*args))
        for g, r in zip(got, ref, strict=True):
            assert_close(g, r, rtol=1e-12, atol=1e-12, what=f"{entry.name}: L={max_soi} R={reuse} vs L=1")

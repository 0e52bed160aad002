"""The cost model against the generated code, run instrumented (tests/lower/measure.py)."""

import numpy as np
import pytest
from measure import measure

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower.cost import estimate
from coarsen_nb.lower.module import ModuleWriter
from coarsen_nb.lower.trip_counts import iter_steps


def _compiled(name):
    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["quick_sizes"][0], seed=0)
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    f.grad(*args)  # a kernel that stops compiling fails here: every kernel is measured
    return f, args


def _model_and_measure(name):
    f, args = _compiled(name)
    counts = measure(f.source, f.name, args)
    ints = {p: int(a) for p, a in zip(f.params, args, strict=True) if isinstance(a, (int, np.integer))}
    shapes = tuple(getattr(a, "shape", ()) for a in args)
    first = estimate(f.plan, f.wrt, shapes, ints=ints)
    # Loops whose trip count the model cannot know get the count the forward run recorded, and data
    # masks (a distance cutoff) the fraction of true elements the run observed.
    w = ModuleWriter(f.plan, f.wrt)
    recorded = counts.trips()
    trips = {s.label: recorded[w.tape_name(s)] for s in iter_steps(f.plan.steps)
             if s.label in first.unknown_trips and w.tape_name(s) in recorded}
    seen = counts.mask_fractions()
    masks = {m: seen[m] for m in first.unknown_masks if m in seen}
    return estimate(f.plan, f.wrt, shapes, ints=ints, trips=trips, masks=masks), counts


def _close(model, measured, tol=0.10):
    return abs(model - measured) <= tol * max(measured, 1)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_allocations_match_the_generated_code(name):
    cost, counts = _model_and_measure(name)
    print(name, cost.as_dict(), counts.allocations)
    assert _close(cost.allocations, counts.allocations)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_operations_match_the_generated_code(name):
    cost, counts = _model_and_measure(name)
    assert _close(cost.forward_ops, counts.ops[0])
    assert _close(cost.derivative_ops, counts.ops[1])


def test_unknown_trip_count_is_reported():
    mod = KERNELS["bgd_hyperopt"]
    args = mod.make_inputs(8, seed=0)
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    f.grad(*args)
    d = f.cost.as_dict()
    assert "while2.head" in d["unknown_trips"] and d["trip_counts"].startswith("unknown")


# Small programs for the generated forms the kernels above may not reach: a linear recurrence inside a
# loop (a Hillis–Steele scan, `while sh < n:` on slices), exclusive products (cumulative_prod, concat,
# flip), dense two-level nests as block products (_block @ h, g @ _block, xp.sum(axis=1), _block_add),
# an out-of-bounds block (a gather).
_PROGRAMS = {
    "linear_recurrence": ('''
def linrec(a, b):
    s = 0.0
    for i in range(len(a)):
        v = 0.0
        for j in range(len(b)):
            v = a[i] * b[j] * v + b[j]
        s += v * v
    return s
''', lambda: (np.linspace(0.1, 0.9, 7), np.linspace(-1.0, 1.0, 13)), ("while ", "cumulative_prod", "xp.flip")),
    "array_literal_and_reshapes": ('''
def lit(x, m):
    a = np.sum(x)
    v = np.array([a, a * a, 2.0])
    w = np.atleast_2d(x) * m
    return np.sum(v * v) * np.sum(w) + np.sum(np.atleast_3d(m) * np.atleast_3d(m))
''', lambda: (np.linspace(-1.0, 1.0, 7), np.arange(35.0).reshape(5, 7) / 10), ("xp.asarray([", "xp.reshape(")),
    "matrix_vector": ('''
def mv(A, w, g):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * w[j] * g[i]
    return s
''', lambda: (np.arange(35.0).reshape(5, 7) / 10, np.linspace(-1.0, 1.0, 7), np.linspace(0.0, 1.0, 5)),
        ("_block(A", " @ ")),
    "block_products": ('''
def blocks(A, B):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1] - 2):
            s += A[i, j + 2] * B[i - 1, j]
    return s
''', lambda: (np.arange(35.0).reshape(5, 7) / 10, np.arange(48.0).reshape(6, 8) / 10), ("_block_add(", "axis=1")),
}


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_generated_forms_match(name):
    text, make, forms = _PROGRAMS[name]
    args = make()
    f = cn.coarsen(text)
    f.grad(*args)
    vjp = f.source[f.source.index(f"def {f.name}_vjp"):f.source.index(f"def {f.name}_grad")]
    assert all(s in vjp for s in forms), vjp
    counts = measure(f.source, f.name, args)
    cost = estimate(f.plan, f.params, tuple(a.shape for a in args))
    assert not cost.unknown_trips and not cost.unknown_masks
    assert _close(cost.forward_ops, counts.ops[0]) and _close(cost.derivative_ops, counts.ops[1])
    assert _close(cost.allocations, counts.allocations)


def test_data_mask_fraction():
    """A data mask is assumed half true and reported; given its fraction, the gathers under it (and
    under its complement) have that many elements."""
    text = '''
def cutoff(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0.25:
            s += math.exp(x[i]) * x[i] ** 3
    return s
'''
    x = np.linspace(0.0, 1.0, 1000)
    f = cn.coarsen("import math\n" + text)
    f.grad(x)
    counts = measure(f.source, f.name, (x,))
    first = estimate(f.plan, ("x",), (x.shape,))
    assert first.unknown_masks and first.as_dict()["mask_fractions"].startswith("0.5 assumed")
    seen = counts.mask_fractions()
    assert all(0.2 < seen[m] < 0.3 or 0.7 < seen[m] < 0.8 for m in first.unknown_masks)
    # the comparison's fraction alone: the masks made from it (asarray, ~) follow
    root = [m for m, e in first.unknown_masks.items() if "<" in e]
    assert len(root) == 1
    given = estimate(f.plan, ("x",), (x.shape,), masks={root[0]: seen[root[0]]})
    assert not given.unknown_masks
    assert given.derivative_ops < first.derivative_ops
    assert _close(given.forward_ops, counts.ops[0]) and _close(given.derivative_ops, counts.ops[1])
    none = estimate(f.plan, ("x",), (x.shape,), masks={root[0]: 0.0})
    assert none.derivative_ops < given.derivative_ops


def test_cost_is_lowered_once_per_argument_shapes(monkeypatch):
    """``f.cost`` lowers the plan once per argument shapes (the tuning widget reads it on every redraw),
    and a later call with other shapes gets the cost of those shapes, not the cached one."""
    import coarsen_nb.lower.cost as cost_module

    runs = []
    real = cost_module.estimate
    monkeypatch.setattr(cost_module, "estimate", lambda *a, **k: runs.append(a[2]) or real(*a, **k))
    f = cn.coarsen("def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i] * x[i]\n    return s\n")
    f.grad(np.ones(100))
    small = f.cost
    assert f.cost == small and runs == [((100,),)]
    f.cost.derivative_ops = -1.0          # a caller's copy: the cached figures do not change
    assert f.cost == small
    f.grad(np.ones(1000))
    large = f.cost
    assert runs == [((100,),), ((1000,),)]
    assert large.derivative_ops > small.derivative_ops and large == estimate(f.plan, ("x",), ((1000,),))

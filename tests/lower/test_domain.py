"""The index-domain record (``lower/domain.py``): built for the real SOIs of corpus entries and kernels, its
text, and ``verify`` refusing broken records.

The domains are those the fusers build while compiling (``fusion_domain.domain`` and the numba fuser's
groups, recorded as they are made), checked against what the user's loop says: its reduction, its index's
range, the arrays it reads.
"""

from __future__ import annotations

import dataclasses
import types
import warnings

import numpy as np
import pytest
import sympy as sp
from corpus import CORPUS

import coarsen_nb as cn
from coarsen_nb import numba_loader
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower import domain as domain_module
from coarsen_nb.lower import fusion, fusion_domain, numba_fusion, numba_loops, soi_levels
from coarsen_nb.lower.domain import Domain, Reduce, Target, verify
from coarsen_nb.lower.fusion_domain import Body, domain
from coarsen_nb.phi import forms
from coarsen_nb.plan import Kernel, Output, Read
from coarsen_nb.symbolic.levels import ELEM, Deps

_ENTRIES = {e.name: e for e in CORPUS}


def _domains(monkeypatch, fn, wrt, args, backend="numba") -> list[tuple[Body, Domain]]:
    """Every domain built while ``fn`` compiles under ``backend`` (numba: its module written, not loaded or
    compiled), with the SOI body it was built from: each target's and each numba loop's group."""
    seen = []

    def recorded(body, targets, **options):
        dom = fusion_domain.domain(body, targets, **options)
        if dom is not None:
            seen.append((body, dom))
        return dom

    class Loop(numba_loops.LoopFunction):
        def __init__(self, writer, kernel, body, dom, tag):
            seen.append((body, dom))
            super().__init__(writer, kernel, body, dom, tag)

    def not_loaded(*args, **kwargs):
        raise ImportError("written, not loaded")

    monkeypatch.setattr(fusion, "domain", recorded)
    monkeypatch.setattr(numba_fusion, "domain", recorded)
    monkeypatch.setattr(numba_fusion, "LoopFunction", Loop)
    monkeypatch.setattr(numba_loader, "load", not_loaded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cn.coarsen(fn, wrt=wrt or None, backend=backend)._specialize(args)
        except cn.CoarsenError:         # (the module is not loaded here: it was built)
            pass
    assert seen, "no domain was built"
    return seen


def _entry(monkeypatch, name, backend="numba"):
    e = _ENTRIES[name]
    return _domains(monkeypatch, e.fn, e.wrt, e.make_args(np.random.default_rng(0)), backend)


def _kernel(monkeypatch, name, backend="numba"):
    mod = KERNELS[name]
    return _domains(monkeypatch, function(mod), mod.META["wrt"], mod.make_inputs(mod.META["test_size"], 0), backend)


@pytest.mark.parametrize("backend", ["numba", "cupy"])
@pytest.mark.parametrize("source,name,kinds", [
    ("corpus", "product_range", {"reduce"}),
    ("corpus", "running_max", {"reduce"}),
    ("corpus", "for_over_array", {"reduce", "scatter"}),
    # (numba's loop function of the sum and the scatters over one loop is one ``loop`` domain)
    ("corpus", "helper_with_loop", {"elem", "reduce", "scatter", "loop@numba"}),
    ("kernel", "rosenbrock", {"reduce", "scatter"}),
    ("kernel", "pendulum_batch", {"elem", "elemsum"}),
    ("kernel", "conv1d", {"elem", "reduce", "scatter"}),
])
def test_the_domains_of_real_sois_verify(monkeypatch, source, name, kinds, backend):
    found = (_entry if source == "corpus" else _kernel)(monkeypatch, name, backend)
    for body, dom in found:
        verify(dom, body)
    want = {k.split("@")[0] for k in kinds if "@" not in k or k.endswith(f"@{backend}")}
    assert {dom.kind for _, dom in found} == want


def test_a_whole_fill_and_its_adjoints_loop(monkeypatch):
    """gmm's SOI 3 under numba: ``log_w[k] = ...`` over ``range(k_count)`` into a fresh ``zeros(k_count)`` is a
    ``fill`` domain; its adjoint reads ``b_log_w[k]`` (a point gather) in a sum and two scatters over k, which
    share one ``loop`` domain.  (The CuPy fuser takes neither: a gather is a level of its own there.)"""
    found = _kernel(monkeypatch, "gmm")
    for body, dom in found:
        verify(dom, body)
    # (once per function that prints the SOI: the forward, NAME_vjp's and NAME_grad's sweeps)
    fills = {(d.index, d.bounds, tuple(t.target for t in d.targets)) for _, d in found if d.kind == "fill"}
    loops = {(d.index, d.bounds, tuple((t.target, t.mode) for t in d.targets)) for _, d in found if d.kind == "loop"}
    assert len(fills) == 1 and len(loops) == 1, [d.kind for _, d in found]
    ((k, bounds, filled),), ((k2, bounds2, added),) = fills, loops
    assert (k, bounds, filled) == (k2, bounds2, ("log_w_2_out",))
    assert added == (("b_log_norm", "add"), ("b_logits", "scatter"), ("b_log_sigma", "scatter"))


def test_a_loop_sum_and_its_scatters(monkeypatch):
    """rosenbrock: ``f += 100 (x[i+1] - x[i]²)² + (1 - x[i])²`` over ``range(len(x) - 1)``: the forward is
    one sum over i, the adjoint the scatters into ``b_x`` at ``i`` and ``i + 1`` over the same range."""
    found = [dom for _, dom in _kernel(monkeypatch, "rosenbrock")]
    sums = [d for d in found if d.kind == "reduce"]
    scatters = [d for d in found if d.kind == "scatter" and len(d.targets) > 1]
    assert sums and scatters
    dom = sums[0]
    assert dom.reduce.kind == "sum" and dom.reduce.identity == 0 and not dom.reduce.integer
    assert dom.index == dom.reduce.node.args[1] and dom.bounds[0] == 0 and dom.bounds[2] == 1
    assert str(dom).startswith(f"over {dom.index} in range(0, {dom.bounds[1]}): sum of ")
    group = scatters[0]
    assert group.index == dom.index and group.bounds == dom.bounds
    assert {t.target for t in group.targets} == {"b_x"}
    assert {sp.sympify(t.index[0]) - group.index for t in group.targets} == {0, 1}     # x[i], x[i + 1]


def test_products_and_maxima_start_from_their_identity(monkeypatch):
    (_, prod), *_ = _entry(monkeypatch, "product_range")
    assert prod.reduce.kind == "prod" and prod.reduce.identity == 1 and isinstance(prod.reduce.node, forms.RProd)
    maxima = [dom for _, dom in _entry(monkeypatch, "running_max")]
    assert {d.reduce.kind for d in maxima} == {"max"} and {d.reduce.identity for d in maxima} == {-sp.oo}
    assert all(d.bounds[0] == 1 for d in maxima)           # for i in range(1, len(x))
    assert " max of " in str(maxima[0])


def test_elementwise_domains_run_over_the_arrays_they_read(monkeypatch):
    found = _kernel(monkeypatch, "pendulum_batch")
    elem = [(b, d) for b, d in found if d.kind == "elem"]
    sums = [(b, d) for b, d in found if d.kind == "elemsum"]
    assert elem and sums
    for body, dom in elem + sums:
        read = {body.leaves[s][0] for e in ([dom.reduce.operand] if dom.reduce else [t.expr for t in dom.targets])
                for s in sp.sympify(body.expand(e)).free_symbols if s in body.leaves and body.leaves[s][2]}
        # (expanded, SymPy may cancel a read, ``0*p``: the domain runs over those the code reads)
        arrays = {code for code, _, is_array, _ in body.leaves.values() if is_array}
        assert read <= set(dom.arrays) <= arrays and read and dom.index is None and dom.bounds is None
        assert str(dom).startswith(f"over the elements of {', '.join(dom.arrays)}")
    assert all(d.reduce.kind == "sum" and isinstance(d.reduce.node, forms.ElemSum) for _, d in sums)


# ---- a hand-made SOI: the text ----------------------------------------------------------------------


def _toy(body, outputs, arrays=None, scalars=None, reads=()):
    return Kernel(index=7, scalars=scalars or {}, arrays=arrays or {}, reads=tuple(reads), body=body,
                  outputs=tuple(outputs), lines=(3,))


def _sum_of_squares():
    x = sp.Symbol("x[k]", real=True)
    k, n, s = sp.Symbol("k", integer=True), sp.Symbol("n", integer=True), sp.Symbol("s", real=True)
    kern = _toy([(s, forms.RSum(x * x, k, 0, n, 1))], [Output("s.1", s)], scalars={n: "n"},
                reads=[Read(x, "x", (k,))])
    body = Body(kern, lambda v: v.replace(".", "_"))
    return body, domain(body, [Target("s", s)]), k


def test_text_of_a_loop_sum():
    body, dom, k = _sum_of_squares()
    verify(dom, body)
    assert str(dom) == "over k in range(0, n): sum of x[k]**2  ->  s = s"       # (s: the SOI's temp holding it)
    # the code around the reduction, with the reduction named by its kind
    around = domain(body, [Target("b_a", 2 * body.temps[sp.Symbol("s", real=True)] + 1, "add")])
    verify(around, body)
    assert str(around) == "over k in range(0, n): sum of x[k]**2  ->  b_a += 2*sum + 1"


def test_text_of_elementwise_targets():
    x, u, y, z = sp.symbols("x u y z", real=True)
    kern = _toy([(y, sp.exp(x) * u), (z, x * x)], [Output("y.1", y), Output("z.1", z)], arrays={x: "x", u: "u"})
    body = Body(kern, str)
    dom = domain(body, [Target("y", y), Target("z", z, "add")])
    verify(dom, body)
    assert str(dom) == "over the elements of u, x:\n    y = y\n    z += z"
    assert dom.arrays == ("u", "x") and dom.reduce is None


def test_text_of_a_nest():
    """A nest has no one index (its loops are its targets' nested sums): the text says so and prints them."""
    x = sp.Symbol("x[k]", real=True)
    k, j, n = sp.Symbol("k", integer=True), sp.Symbol("j", integer=True), sp.Symbol("n", integer=True)
    nested = forms.RSum(forms.RSum(x * j, j, 0, k, 1), k, 0, n, 1)
    dom = Domain("nest", (Target("s", nested), Target("b_x", 2 * j, "scatter", (k,))))
    assert dom.index is None and dom.bounds is None
    assert str(dom) == f"over nested loops:\n    s = {nested}\n    b_x[k] += 2*j"


# ---- verify refuses broken records ----------------------------------------------------------------------


def test_verify_refuses_broken_records():
    body, dom, k = _sum_of_squares()
    broken = {
        "unknown domain kind": dataclasses.replace(dom, kind="tiles"),
        "computes nothing": dataclasses.replace(dom, targets=()),
        "without a reduction": dataclasses.replace(dom, reduce=None),
        "depend on it": dataclasses.replace(dom, bounds=(0, k, 1)),
        "not the reduction's": dataclasses.replace(dom, bounds=(1, dom.bounds[1], 1)),
        "one new or added target": dataclasses.replace(dom, targets=dom.targets * 2),
        "kind or identity": dataclasses.replace(dom, reduce=Reduce("max", dom.reduce.node, -sp.oo)),
        "does not hold": dataclasses.replace(dom, reduce=Reduce.of(forms.RSum(k, k, 0, 3, 1))),
        "with a loop index": dataclasses.replace(dom, kind="elem", reduce=None),
        "a scatter in": Domain("elem", (Target("b_x", k, "scatter", (k,)),)),
        # a loop domain: each target a scatter or its one reduction over the loop
        "do not match": Domain("loop", dom.targets, index=k, bounds=dom.bounds, reduces=()),
        "has no reduction": Domain("loop", dom.targets + (Target("b_x", k, "scatter", (k,)),), index=k,
                                   bounds=dom.bounds, reduces=(None, dom.reduce)),
        "is not the reduction's": Domain("loop", dom.targets, index=k, bounds=(1, dom.bounds[1], 1),
                                         reduces=(dom.reduce,)),
        "does not hold the reduction": Domain("loop", dom.targets, index=k, bounds=dom.bounds,
                                              reduces=(Reduce.of(forms.RSum(k, k, 0, 3, 1)),)),
    }
    for message, record in broken.items():
        with pytest.raises(AssertionError, match=message):
            verify(record, body)
    scatter = Domain("scatter", (Target("b_x", k, "scatter", (k,)), Target("y", k, "add")), index=k,
                     bounds=(0, sp.Symbol("n", integer=True), 1))
    with pytest.raises(AssertionError, match="non-scatter|not the range"):
        verify(scatter, body)
    # and a right one: the sum and a scatter over its loop
    verify(Domain("loop", dom.targets + (Target("b_x", 2 * k, "scatter", (k,)),), index=k, bounds=dom.bounds,
                  reduces=(dom.reduce, None)), body)


# ---- the NumPy printer's levels: a loop at one point, a rectangular nest, a segment per point ----------------


def _levels(monkeypatch, name) -> list[tuple[object, Domain]]:
    """Every level domain the NumPy printer builds while ``name`` (a corpus entry) compiles (its loops, a
    branch's points, an arg-extremum's point), with the deps it was built from (what ``verify`` checks a
    level against), and the generated module's source."""
    seen = []

    def recorder(builder, deps=None):
        def recorded(*args):
            dom = builder(*args)
            seen.append((types.SimpleNamespace(deps=deps or args[0]), dom))
            return dom
        return recorded

    monkeypatch.setattr(soi_levels, "loop_level", recorder(domain_module.loop_level))
    no_deps = lambda e: frozenset()         # noqa: E731 (a mask or a point checks no bounds)
    monkeypatch.setattr(soi_levels, "masked_level", recorder(domain_module.masked_level, no_deps))
    monkeypatch.setattr(soi_levels, "arg_point", recorder(domain_module.arg_point, no_deps))
    e = _ENTRIES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = cn.coarsen(e.fn, wrt=e.wrt or None, backend="numpy")
        f._specialize(e.make_args(np.random.default_rng(0)))
    assert seen, "no level was opened"
    return seen, f.source


@pytest.mark.parametrize("name,kinds", [
    ("product_range", {"range"}),
    ("triangular_sum", {"range", "segment"}),       # for j in range(i + 1, n) inside for i in range(n)
    ("pairwise_energy", {"range", "segment", "mask"}),  # (and a branch on each pair's distance)
    ("nested_three", {"range", "rect"}),            # three nested loops of fixed bounds
    ("hmc_like_potential", {"range", "rect", "mask"}),  # a branch on y[i] > 0.5 inside the loop over i
    ("running_max", {"range", "point"}),            # max's adjoint: the gradient at the argmax alone
])
def test_the_printers_levels_of_real_sois_verify(monkeypatch, name, kinds):
    found, _ = _levels(monkeypatch, name)
    for deps, dom in found:
        verify(dom, deps)
    assert {dom.kind for _, dom in found} == kinds


def test_a_segment_level_is_printed_as_segments(monkeypatch):
    """triangular_sum: the inner loop ``j in range(i + 1, n)`` varies with the outer ``i``, so it is a segment
    per point of ``i``: its bounds read ``i``, the text says so, and the module reduces it by segments."""
    found, source = _levels(monkeypatch, "triangular_sum")
    seg = next(dom for _, dom in found if dom.kind == "segment")
    (i,) = seg.over
    assert i in seg.bounds[0].free_symbols and seg.outer == "range" and seg.index != i
    assert str(seg).endswith(f", a segment at each point over {i}")
    assert "= _segment_sum(seg" in source and "xp.tile(" not in source    # (not the helper's own lines)


def test_a_rectangular_level_is_printed_as_a_table(monkeypatch):
    """nested_three: ``for k in range(2)`` inside ``for j in range(m)`` inside ``for i in range(n)``: each
    inner loop has the same count at every point, a rectangular nest (``tile``d indices, a reshaped sum)."""
    found, source = _levels(monkeypatch, "nested_three")
    rects = [dom for _, dom in found if dom.kind == "rect"]
    assert {len(d.over) for d in rects} == {1, 2}          # j at each i; k at each (i, j)
    assert all(not (d.bounds[0].free_symbols | d.bounds[1].free_symbols) & set(d.over) for d in rects)
    assert "xp.tile(" in source and "= _segment_sum(seg" not in source
    top = next(dom for _, dom in found if dom.kind == "range")
    assert top.outer == "root" and top.over == () and str(top) == f"over {top.index} in range(0, {top.bounds[1]})"


def test_a_branch_inside_a_loop_is_a_masked_level(monkeypatch):
    """hmc_like_potential: ``if y[i] > 0.5`` inside ``for i in range(n)`` varies over i, so each arm runs on
    the points of i where its predicate holds: a mask level under the loop's, printed as an index array."""
    found, source = _levels(monkeypatch, "hmc_like_potential")
    loop = next(dom for _, dom in found if dom.kind == "range")
    masks = [dom for _, dom in found if dom.kind == "mask"]
    assert masks and all(d.outer == "range" and d.over == (loop.index,) for d in masks)
    first = next(d for d in masks if isinstance(d.where, sp.StrictGreaterThan))
    assert first.where.rhs == sp.Float(0.5)
    assert str(first).startswith(f"over the range points (over {loop.index}) where ")
    assert any(isinstance(d.where, sp.LessThan) for d in masks)      # the else arm: not y[i] > 0.5
    assert "xp.nonzero(" in source


def _where_log(x):
    return np.sum(np.where(x > 0, np.log(np.abs(x) + 1.0) * x, x * x))


def test_an_elementwise_branch_is_a_mask_of_the_elements(monkeypatch):
    """``np.where(x > 0, log(|x| + 1) x, x²)``: the arm that may fail runs on the elements where ``x > 0``
    alone, a mask under the elements; their points are numbered in the flattened array (the mask reshaped
    to (-1,) before ``nonzero``), which the record says by ``outer == "elem"``."""
    seen = []

    def recorded(*args):
        seen.append(domain_module.masked_level(*args))
        return seen[-1]

    monkeypatch.setattr(soi_levels, "masked_level", recorded)
    f = cn.coarsen(_where_log, wrt="x", backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f._specialize((np.linspace(-1.0, 1.0, 7),))
    assert seen
    for dom in seen:
        verify(dom, None)
        assert dom.outer == "elem" and dom.over == (ELEM,) and isinstance(dom.where, sp.StrictGreaterThan)
    assert "xp.nonzero(xp.reshape(m, (-1,)))" in f.source


def test_a_maximums_adjoint_is_its_arg_point(monkeypatch):
    """running_max: ``m = max(m, x[i])`` for i in range(1, n); the adjoint of the maximum is the gradient at
    its argmax alone: a point level of that loop, the ArgOneHot of the loop's own index and bounds."""
    found, source = _levels(monkeypatch, "running_max")
    (point,) = {dom.where: dom for _, dom in found if dom.kind == "point"}.values()
    loop = next(dom for _, dom in found if dom.kind == "range")
    assert isinstance(point.where, forms.ArgOneHot) and point.where.args[5] > 0
    assert (point.index, point.bounds) == (loop.index, loop.bounds) and point.bounds[0] == 1
    assert point.over == (loop.index,) and point.outer == "range"
    assert str(point).endswith(" is largest") and "xp.argmax(" in source


def test_verify_refuses_broken_levels():
    i, j, n = sp.Symbol("i", integer=True), sp.Symbol("j", integer=True), sp.Symbol("n", integer=True)
    deps = types.SimpleNamespace(deps=lambda e: sp.sympify(e).free_symbols & {i, j})
    seg = domain_module.loop_level(deps.deps, j, (i + 1, n, 1), "range", (i,))
    rect = domain_module.loop_level(deps.deps, j, (0, n, 1), "range", (i,))
    top = domain_module.loop_level(deps.deps, i, (0, n, 1), "root", ())
    assert (seg.kind, rect.kind, top.kind) == ("segment", "rect", "range")
    for dom in (seg, rect, top):
        verify(dom, deps)
    broken = {
        "with targets": dataclasses.replace(rect, targets=(Target("s", j),)),
        "without its own loop index": dataclasses.replace(rect, index=i),
        "depend on it": dataclasses.replace(rect, bounds=(0, j, 1)),
        "under range points": dataclasses.replace(seg, kind="range"),
        "whose bounds": dataclasses.replace(seg, kind="rect"),
        "vary over set()": dataclasses.replace(rect, kind="segment"),
        "under root points": dataclasses.replace(top, kind="rect"),
    }
    x = sp.Symbol("x", real=True)
    mask = domain_module.masked_level("range", (i,), x > 0)
    point = domain_module.arg_point(forms.ArgOneHot(x * i, i, 0, n, 1, 1), "range", (i,))
    for dom in (mask, point):
        verify(dom, deps)
    assert str(mask) == "over the range points (over i) where x > 0"
    assert str(point) == "over i in range(0, n) at its one point where i*x is largest"
    broken.update({
        "mask level with a loop index": dataclasses.replace(mask, index=i, bounds=(0, n, 1)),
        "without its predicate": dataclasses.replace(mask, where=None),
        "a branch on one point is an if": dataclasses.replace(mask, outer="root"),
        "not its loop's arg-extremum": dataclasses.replace(point, bounds=(1, n, 1)),
        "not among the points of its loop": dataclasses.replace(point, over=(j,)),
    })
    for message, record in broken.items():
        with pytest.raises(AssertionError, match=message):
            verify(record, deps)


def test_loops_nest_as_their_ranges_say():
    """``loop_nesting``, the order every printer nests loops in: a loop whose range reads another's inside it;
    among loops of fixed ranges the one whose range was recorded later outside; a row contraction's sums inside."""
    i, j, n = sp.Symbol("i", integer=True), sp.Symbol("j", integer=True), sp.Symbol("n", integer=True)
    triangular = Deps({}, {}, lambda s: False, [forms.RSum(forms.RSum(i * j, j, i + 1, n, 1), i, 0, n, 1)])
    assert domain_module.loop_nesting(triangular, [j, i]) == [i, j] == domain_module.loop_nesting(triangular, [i, j])
    assert domain_module.loop_nesting(triangular, [i, j], inner={i}) == [j, i]      # (a sum's index innermost)
    square = Deps({}, {}, lambda s: False, [forms.RSum(forms.RSum(i * j, j, 0, n, 1), i, 0, n, 1)])
    assert list(square.ranges) == [i, j] and domain_module.loop_nesting(square, [i, j]) == [j, i]
    assert domain_module.loop_nesting(square, [i, j], inner={j}) == [i, j]

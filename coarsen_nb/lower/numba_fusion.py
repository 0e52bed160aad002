"""The numba backend's fuser: each fusable part of an SOI as one compiled loop, no temporaries.

Under ``backend="numba"`` the NumPy printer's array code is compiled as it is; every operation still
makes an array (Numba fuses only within one statement).  Here the parts of an SOI that
:func:`coarsen_nb.lower.fusion_domain.domain` finds to vary over one domain (the same analysis that makes the
CuPy backend's one kernel per part) become one function of the module with one ``for`` loop:

``elem``     the outputs (or adjoint contributions ``b_x += ...``) that vary over the elements of the
             SOI's arrays: one pass over the elements, each output written once;
``reduce``   one output holding one reduction ``RSum``/``RProd``/``RMax``/``RMin`` over a loop index
             (or ``ElemSum`` over the elements): the body accumulated in a scalar, then the code around
             the reduction;
``scatter``  the adjoint's scatters ``b_x[i(k)] += g(k)`` over one loop index, added in place;
``fill``     the new float arrays a loop over ``range(0, n)`` writes whole, ``w[k] = g(k)`` into a fresh
             ``zeros(n)`` (:func:`coarsen_nb.lower.trivial.whole_fills`): ``g`` stored at each k, the glue's
             ``_take`` of each read array and its array expressions one loop instead (:func:`_fill_domain`);
``scan``     a whole SOI whose loop carries linear recurrences: one pass in the loop's order, its adjoint a
             forward pass and a reverse one carrying the costates (:mod:`coarsen_nb.lower.numba_scans`;
             tried first, on all of the SOI's targets);
``rows``     a row contraction (``X @ w`` inside a row's value, its adjoint ``b_w[j] += g_i X[i, j]``):
             one loop over the rows with inner loops over the columns (:mod:`coarsen_nb.lower.numba_rows`;
             a target :func:`~coarsen_nb.lower.fusion_domain.domain` finds no domain for may be one);
``nest``     the parts over nested loops (nested reductions, scatters over several loops) as the user's
             loop nest (:mod:`coarsen_nb.lower.numba_nests`; tried before ``rows`` for scatters that are zero
             outside a branch, which a nest adds inside it, and after ``rows`` for the rest).

The loop body is the NumPy printer's own *scalar* code (:class:`~coarsen_nb.lower.emit.Printer` at its
root level, the level plain ``math`` code is printed at) with the loop index and the element reads as
scalars.  So the semantics are the printer's: a ``Piecewise`` is a real ``if`` on each element (the arm
not taken is never evaluated), ``and``/``or`` short-circuit, the derivative code's IEEE division and
powers.  Element order is NumPy's row-major order; arrays of different shapes are broadcast first
(``_flat_as``).

Each loop function is built as lowered-IR records (a :class:`~coarsen_nb.lower.lir.FunctionDef` of the
domain's statements: the flattening or the bounds, the accumulator, one ``For``, the code after it), which
are printed once into the module's helpers (:class:`~coarsen_nb.lower.numba_loops.LoopFunction`); the
:class:`~coarsen_nb.lower.domain.Domain` record says what it iterates and how it reduces.

The loop functions are compiled with NumPy's error model (``_jit_loop``): a division by zero on an
element is ``inf``, as NumPy's array division gives, not Python's ``ZeroDivisionError``.  The sums are
sequential, where NumPy's ``sum`` is pairwise: the two agree to rounding (about 1e-15 relative per term).

Anything else (gathers, writes, segment operations, ``_sum_to``, iterated loops over arrays) is printed by
the array printer, and is then compiled by Numba as array code.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from coarsen_nb.lower import lir, trivial
from coarsen_nb.lower.domain import Domain, Target
from coarsen_nb.lower.forward_reads import read_forward_values
from coarsen_nb.lower.fusion_domain import NOT_ONE_PASS, Body, domain, point_gather, rows_domain
from coarsen_nb.lower.leaf_types import leaf_ctype
from coarsen_nb.lower.nest_analysis import guarded_contribution, nest_domains
from coarsen_nb.lower.numba_loops import LoopFunction
from coarsen_nb.lower.numba_nests import NestLoops
from coarsen_nb.lower.numba_rows import RowLoopFunction
from coarsen_nb.lower.numba_scan_domain import scan_domain
from coarsen_nb.lower.numba_scans import ScanLoops
from coarsen_nb.phi import forms, scans
from coarsen_nb.phi.gammas import is_boolean

# nodes the scalar printer prints as whole-array code: never inside a loop over elements
_WHOLE_ARRAY = (forms.SumTo,)



def forward_lines(writer, kernel) -> list[lir.Stmt] | None:
    """The forward of ``kernel`` for ``ModuleWriter.kernel``: a loop per fusable part; None: none fuses."""
    targets = [Target(writer.py(o.name), o.symbol, dtype=leaf_ctype(kernel.types.get(o.name))[0])
               for o in kernel.outputs]
    return _lines(writer, kernel, targets, None, None, "fwd", None)


def reverse_lines(writer, kernel, v, leaves) -> list[lir.Stmt] | None:
    """The adjoint of ``kernel`` for ``ModuleWriter.kernel_reverse``; None: nothing fuses.  A log-sum-exp or
    reduction its forward computed is read, not computed again (:mod:`coarsen_nb.lower.forward_reads`)."""
    kernel, v, leaves = read_forward_values(kernel, v, leaves, writer.forward_numbers(kernel))
    targets = [Target(writer.names.bar(n), e, "add") for n, e in v.scalars + v.arrays]
    targets += [Target(writer.names.bar(sc[0]), sc[2], "scatter", tuple(sc[1]), sc[3] if len(sc) > 3 else None)
                for sc in v.scatters]
    return _lines(writer, kernel, targets, leaves, v.temps, "vjp", v)


def _lines(writer, kernel, targets, leaves, temps, tag, v) -> list[lir.Stmt] | None:
    body = Body(kernel, writer.py, leaves, temps)
    scanned = scan_domain(body, targets)
    if scanned is not None:
        made = ScanLoops(writer, kernel, body, scanned, tag).build()
        if made is not None:
            return made
    parts = [part for target in targets for part in _split_sums(body, target)]
    parts = [part for target in parts for part in _summed_to(body, target)]
    fills = trivial.whole_fills(writer, kernel) if v is None else frozenset()
    calls, parts = _fused(writer, kernel, body, tag, parts, lambda b, t: _fill_domain(b, t, fills), LoopFunction)
    made, rest = _fused(writer, kernel, body, tag, parts, _domain, LoopFunction, _primals(writer, v))
    calls += made
    rest = [t.whole() for t in rest]
    # what no one loop computes: the parts over nested loops.  A row contraction's loop (X @ w, its
    # adjoint) is the faster schedule where both fit, but for scatters that are zero outside a branch,
    # which a nest adds inside the branch only (pairwise_energy's cutoff)
    guarded = [t for t in rest if t.mode == "scatter" and guarded_contribution(body, t.expr) is not None]
    made, rest = _nested(writer, kernel, body, tag, guarded, [t for t in rest if t not in guarded])
    calls += made
    made, rest = _fused(writer, kernel, body, tag, rest, _rows_domain, RowLoopFunction)
    calls += made
    made, rest = _nested(writer, kernel, body, tag, rest, [])
    calls += made
    if not calls:
        return None
    return _rest_lines(writer, kernel, rest, leaves, temps, v) + calls


def _fused(writer, kernel, body, tag, targets, find, builder, primals=None) -> tuple[list[lir.Stmt], list[Target]]:
    """The loops of the targets that ``find`` gives a domain (grouped by it), and the targets left;
    ``primals``: adjoint name -> its primal's SSA name, for the contributions of exactly the primal's shape
    (:func:`_claim_exact`)."""
    groups: dict = {}
    rest = []
    exact = set()
    original: dict = {}     # id of a target whose sum_to is dropped (a fill's value) -> the target as it came
    for t in targets:
        dom = find(body, t)
        if dom is None:
            rest.append(t)
        else:
            if dom.kind == "fill":      # (its target is the value stored at each point, not the write)
                original[id(dom.targets[0])] = t
                t = dom.targets[0]
            if _sums_to_itself(body, t, dom):
                original[id(t)] = t
                t = dataclasses.replace(t, sum_to=None)
                exact.add(t.target)
            elif primals and _of_its_one_array(kernel, body, t, dom, primals):
                exact.add(t.target)
            # elementwise outputs share a loop when they read the same arrays: their shape is the one
            # those arrays broadcast to (u * u keeps u's shape beside x * u in the same SOI)
            # (scatters and reductions over one loop index share its loop: black_scholes's b_r and b_spot;
            # each sum over the elements is a loop of its own)
            key = ("elem", dom.arrays) if dom.kind == "elem" else \
                ("loop", dom.index, dom.bounds) if dom.kind in ("scatter", "reduce") else \
                ("rows", dom.index, dom.bounds, dom.inner) if dom.kind == "rows" else \
                ("fill", dom.index, dom.bounds) if dom.kind == "fill" else ("elemsum", len(groups))
            groups.setdefault(key, []).append((dom, t))
    calls = []
    for members in groups.values():
        dom = _merged(members)
        group = list(dom.targets)
        loop = builder(writer, kernel, body, dom, tag)
        made = loop.build()
        if made is None:
            rest += [original.get(id(t), t) for t in group]
        else:
            if primals and dom.kind == "elem":
                # (an output two contributions share is read by both: neither takes its adjoint's zeros' place)
                shared = loop.shared_targets()
                _claim_exact(writer, made, {t.target: primals[t.target] for t in group if t.mode == "add" and
                                            t.target in exact and t.target in primals and t.target not in shared})
            calls += made
    return calls, rest


def _sums_to_itself(body: Body, target: Target, dom: Domain) -> bool:
    """Whether ``target``'s ``sum_to(g, x.shape)`` is ``g`` itself: an element loop that reads ``x`` alone runs
    over ``x``'s shape, so ``g`` has it (pendulum_batch's energy: its two arrays are read by a loop each)."""
    return target.sum_to is not None and dom.kind == "elem" and \
        set(dom.arrays) == {body.leaves[target.sum_to][0]}


def _of_its_one_array(kernel, body: Body, target: Target, dom: Domain, primals: dict) -> bool:
    """Whether ``target`` (``b_x += g``, no ``sum_to``) is an element loop's output of exactly x's shape: the
    SOI reads one array, x (so its VJP wrote no ``SumTo``: nothing broadcasts, ``symbolic.diff.vjp``), and the
    loop reads x alone, so it runs over x's shape (flatten_matrix's ``2 * cumsum_v * b``)."""
    if target.sum_to is not None or target.mode != "add" or dom.kind != "elem" or \
            len(set(kernel.arrays.values())) != 1:
        return False
    x = primals.get(target.target)
    codes = {v[0] for v in body.leaves.values() if v[2] and v[1] == x}
    return len(codes) == 1 and set(dom.arrays) == codes


def _primals(writer, v) -> dict:
    """adjoint name -> primal SSA name, of the array contributions of the kernel VJP ``v`` (None: a forward)."""
    return {} if v is None else {writer.names.bar(n): n for n, _ in v.arrays}


def _claim_exact(writer, made: list, primals: dict) -> None:
    """Tell the writer that the element loop's contribution ``d = f(...)`` / ``b += d`` (its call's statements,
    ``made``) to each adjoint of ``primals`` has exactly the primal's shape and is a new float64 array (the
    loop's output, ``xp.empty`` reshaped): where it is the adjoint's first, it takes the zeros' place."""
    for k, s in enumerate(made):
        if not (isinstance(s, lir.AugAssign) and s.op == "+" and isinstance(s.target, lir.Name)
                and s.target.id in primals and isinstance(s.value, lir.Name)):
            continue
        assigned = next((a for a in made[:k] if isinstance(a, lir.Assign) and isinstance(a.value, lir.Call)
                         and (a.target == s.value or isinstance(a.target, lir.Tuple) and s.value in a.target.elts)),
                        None)
        if assigned is not None:
            writer.claim_fresh_contribution(primals[s.target.id], s, assigned)


def _merged(members: list) -> Domain:
    """One domain for ``members`` (``(domain, target)`` pairs a key of :func:`_fused` grouped): the first's
    with all the targets, or, where reductions share the loop with scatters or with each other, a ``loop``
    domain computing all of them in one pass."""
    dom = members[0][0]
    targets = [t for _, t in members]
    reductions = [d.reduce for d, _ in members if d.kind == "reduce"]
    if dom.kind not in ("scatter", "reduce") or (len(reductions) == 1 and len(members) == 1) or not reductions:
        return dom.with_targets(targets)
    return Domain("loop", tuple(targets), index=dom.index, bounds=dom.bounds,
                  reduces=tuple(d.reduce if d.kind == "reduce" else None for d, _ in members))


def _nested(writer, kernel, body, tag, targets, others) -> tuple[list[lir.Stmt], list[Target]]:
    """The nest loops of ``targets`` (:mod:`coarsen_nb.lower.numba_nests`), and what is left of them and
    ``others``."""
    nests, rest = nest_domains(body, targets)
    calls = []
    for dom in nests:
        made = NestLoops(writer, kernel, body, dom, tag).build()
        if made is None:
            rest += list(dom.targets)
        else:
            calls += made
    return calls, rest + others


def _split_sums(body: Body, target: Target) -> list[Target]:
    """An adjoint contribution ``b_a += s1 + s2 + ...`` that adds several reductions, as one ``+=`` per
    reduction (and one for the terms around them): each reduction is then a loop of its own, where the
    sum of them matches no one domain (``np.sum(u * u) + np.sum(np.exp(x * u))``, over u's and x's
    elements).  Only for ``+=``: a new output stays one expression."""
    if target.mode != "add":
        return [target]
    e = target.expr
    while isinstance(e, sp.Symbol) and e in body.temps:
        e = body.temps[e]
    if not isinstance(e, sp.Add):
        return [target]
    reducing, around = [], []
    for term in e.args:
        has = any(isinstance(n, (forms.Reduction, forms.ElemSum)) for n in body.nodes(term))
        (reducing if has else around).append(term)
    if len(reducing) < 2:
        return [target]
    parts = reducing + ([sp.Add(*around)] if around else [])
    return [Target(target.target, part, "add", target.index, target.level, target.dtype) for part in parts]


def _summed_to(body: Body, target: Target) -> list[Target]:
    """An adjoint contribution ``b_x += sum_to(g, x.shape)`` (or a sum of such) as the element loop's target
    ``g`` (one per term), summed to ``x``'s shape by the call's ``_sum_to`` after the loop: an adjoint of an
    SOI whose arrays may broadcast is written so (``symbolic.diff.vjp``), and where they do not (the lanes
    of an iterated loop, all of one shape) the sum is a copy.  A target left unfused is made whole again
    (:meth:`Target.whole`)."""
    if target.mode != "add":
        return [target]
    e = target.expr
    while isinstance(e, sp.Symbol) and e in body.temps:
        e = body.temps[e]
    terms = e.args if isinstance(e, sp.Add) else (e,)
    if not all(isinstance(t, forms.SumTo) and t.args[1] in body.leaves and body.leaves[t.args[1]][2]
               and not any(isinstance(n, forms.SumTo) for n in body.nodes(t.args[0])) for t in terms):
        return [target]
    return [Target(target.target, t.args[0], "add", target.index, target.level, target.dtype, t.args[1])
            for t in terms]


def _rows_domain(body: Body, target: Target) -> Domain | None:
    """A row contraction's domain (``fusion_domain.rows_domain``), for a target no other loop computes."""
    try:
        return rows_domain(body, target)
    except (KeyError, ValueError):
        return None


def _domain(body: Body, target: Target) -> Domain | None:
    try:
        dom = domain(body, [target], point_gathers=True)
    except (KeyError, ValueError):
        return None
    if dom is None or any(isinstance(n, _WHOLE_ARRAY) for n in body.nodes(target.expr)):
        return None
    if target.sum_to is not None and dom.kind != "elem":
        return None         # (only the element loop's call sums its contribution to the adjoint's shape)
    if dom.kind == "elem":
        e = target.expr
        while isinstance(e, sp.Symbol) and e in body.temps:
            e = body.temps[e]
        if isinstance(e, sp.Symbol) or e.is_integer or is_boolean(e) or target.dtype != "float64":
            return None     # a copy of an array (nothing to fuse), or integers or truth values (NumPy's dtype)
    return dom


def _fill_domain(body: Body, target: Target, fills: frozenset) -> Domain | None:
    """A ``fill`` domain for a new output ``w`` that a write ``w[k] = g`` over ``range(0, n, 1)`` fills whole
    (``fills``: :func:`~coarsen_nb.lower.trivial.whole_fills` of the kernel, by the printed name of the fresh
    array written into), its target ``g`` at each k: ``g`` of k alone (reads and point gathers at k, numbers
    of the SOI), with no reduction, whose loop would be a second level.  None for any other target."""
    if target.mode != "new" or not fills:
        return None
    e = target.expr
    while isinstance(e, sp.Symbol) and e in body.temps:
        e = body.temps[e]
    if not isinstance(e, forms.RWrite):
        return None
    init, g, k, a, b, s, *idx = e.args
    leaf = body.leaves.get(init)
    if leaf is None or leaf[0] not in fills or idx != [k] or a != 0 or s != 1 or body.deps(b):
        return None
    for n in body.nodes(g):
        if isinstance(n, (forms.Reduction, forms.ElemSum, forms.SumTo)) or \
                isinstance(n, NOT_ONE_PASS + scans.SCAN_FORMS) and not point_gather(body, n):
            return None
    if body.deps(g) - {k}:
        return None
    return Domain("fill", (Target(target.target, g, "new", dtype="float64"),), index=k, bounds=(a, b, s))


def _rest_lines(writer, kernel, rest, leaves, temps, v) -> list[lir.Stmt]:
    """The targets no loop computes, printed by the array printer (as without a fuser)."""
    if not rest:
        return []
    pr = writer.printer(kernel, extra_leaves=leaves, extra_temps=temps)
    pr.ieee = v is not None
    for t in rest:
        if t.mode == "scatter":
            name = next(sc[0] for sc in v.scatters if writer.names.bar(sc[0]) == t.target and sc[2] == t.expr)
            writer.scatter(pr, name, t.index, t.expr, *([t.level] if t.level is not None else []))
        elif t.mode == "add":
            pr.emit(lir.AugAssign(lir.Name(t.target), "+", pr.value(t.expr)))
        else:
            pr.assign(t.target, t.expr)
    return writer.take_statements(pr)

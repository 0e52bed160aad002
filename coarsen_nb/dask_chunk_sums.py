"""Which functions are a sum over their records: the plan read for the chunkwise schedule (issue 18).

A function whose work over its chunked axis is one sum of independent per-record terms,

    f(θ, X) = F(n) · Σ_{k < n} φ(θ, X[k, ...], Y[k, ...])        (n the number of records, F a factor of n)

can run each chunk of the records through the function's own compiled module (the NumPy or numba backend's,
in memory) and add the results: on a chunk c of n_c records the module computes F(n_c) · Σ_{k ∈ c} φ, so

    f = Σ_c w_c · f(θ, X_c),     w_c = F(n) / F(n_c),

and, the weights being numbers, ∂f/∂θ = Σ_c w_c · ∂f(θ, X_c)/∂θ (a tree sum of the small gradients), while
∂f/∂X on the rows of chunk c is w_c · ∂f(θ, X_c)/∂X_c (a block of the gradient with the records' chunks).
logreg_nll (F = 1/n) and piecewise_sum (F = 1) have this form.  A term beside the sum that reads neither the
records nor their number, ``f = A(θ) + F(n) · Σ_k φ`` (hmc's prior), is the module's value on no records where
F(0) is finite: then ``f = Σ_c w_c · f(θ, X_c) + (1 − Σ_c w_c) · f(θ, X[:0])``, and so are its gradients.

:func:`chunk_sum` decides it from the plan (the lifted SOIs), never from generated code, and says in words
why not where it does not hold:

* the plan is shape reads (``X.shape``, ``len(x)``) and SOIs, whose outputs are inlined into the result,
  and work on the other arguments alone (gmm's ``np.zeros(k)`` written from its logits: each chunk computes
  it again; none computed from the records or their number, :mod:`coarsen_nb.dask_chunk_before`);
* that result is ``A + F · Σ_i r_i S_i``, each ``S_i`` a sum over the records (a loop's ``Σ_{k in range(a,
  n - b)}``, or ``np.sum`` of an elementwise value of whole records of one shape), ``n`` the first axis's
  length of the records (``min(len(x), len(y))`` too: one length where they share their chunks), F a
  function of such lengths only, the ``r_i`` numbers, A free of the records (several sums
  over the same records: each chunk's module adds its part of each, and the weight is the same for all);
  or, more generally, ``A + Σ_i G_i S_i`` with factors ``G_i`` free of the records that read other arguments
  (``a * s``) or differ by more than a number (``s / n + u``): each chunk's module computes them itself,
  told ``n`` where they read it, with weight 1 (:attr:`ChunkSum.own_factor`), as where A sits beside a mean
  (F(0) = 1/0 on no records: the module on no records told ``n``);
* a loop's summand reads the records at ``[k + j, ...]`` only, ``j`` a small integer (``x[k + 1]``:
  rosenbrock) within the range's ends (``range(a, n - b)`` with ``-a <= j <= b``: a chunk then runs with
  ``a`` rows of the chunks before and ``b`` after, its *halo*, and owns exactly the terms of its own rows,
  ``k`` in it; :mod:`coarsen_nb.dask_chunk_halos`), never along another axis; the other arrays at indices
  free of ``k``.  It may read ``k`` itself as a number (``γ ** k``, ``t = k * dt``): each chunk's module is
  then one whose sums read ``k + start``, ``start`` the global index of the block's first row
  (:mod:`coarsen_nb.dask_chunk_index`).  The sums of one form share their range's ends;
* the terms, or A, may read ``n`` (horner's ``c[k] * t ** (n - 1 - k)``, ``k / n``, a linear recurrence's
  ``a ** n * v0`` beside its sum): each chunk's module is then told the call's ``n`` as well, read
  everywhere but in the bounds of the sums over the records, and computes ``A(θ, n) + F(n) · Σ_{k in c} φ``
  itself, so its weight is 1 (:attr:`ChunkSum.counted`; F(n) must be finite).

A loop run iteration by iteration between the SOIs is taken where every value it carries is lane-wise in
the records or free of them (pendulum_batch's ensemble: :mod:`coarsen_nb.dask_chunk_lanes`): each chunk runs
it whole on its lanes, and the arrays it ends with are summed elementwise as the records are.

Everything else (branches between SOIs, loops carrying a value that reads the records across their lanes,
primitives on the records, scans along the records, sums combined otherwise than linearly, a maximum) is
refused here and runs as the dask module's array statements
(:mod:`coarsen_nb.dask_arrays`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.dask_chunk_before import BeforeTheSum, shape_read
from coarsen_nb.dask_chunk_lanes import Lanes
from coarsen_nb.dask_chunk_words import Said, Spellings, spoken
from coarsen_nb.phi import forms
from coarsen_nb.plan import CondStep, IterStep, KernelStep, PrimStep

_NO_RECORDS = "its sum reads no argument record by record"


@dataclass(frozen=True)
class ChunkSum:
    """A function of the form the module docstring gives: ``records`` are the parameters read at
    ``[k, ...]`` (chunked along their first axis), ``factor`` is F as a SymPy expression of ``length``."""

    records: tuple[str, ...]
    factor: sp.Expr
    length: sp.Symbol
    offset: bool = False        # a term A(θ) beside the sum: f = A + F(n)·Σ (hmc's prior)
    halo: tuple[int, int] = (0, 0)  # the sum runs over range(a, n - b): a chunk's rows with a rows before, b after
    whole: bool = False             # np.sum of an elementwise value of the records: their shapes must be one
    indices: tuple = ()             # the indices of its sums whose terms read them as numbers (γ ** i: each
                                    # chunk's module is told its first record's index, dask_chunk_index)
    counted: tuple = ()             # the plan's lengths of the records, where its terms or the term beside its
                                    # sums read them: each chunk's module is told their number (weight 1)
    sums: tuple = ()                # the indices of its sums over the records (their bounds: a block's rows)
    own_factor: bool = False        # its factors read other arguments or differ by more than a number: each
                                    # chunk's module computes them (told n where they read it), weight 1
    loops: tuple = ()               # the lines of the loops run iteration by iteration that each chunk runs
                                    # whole, their state lane by lane or free of the records (dask_chunk_lanes)

    def weight(self, n: int, n_chunk: int) -> float:
        """w_c = F(n) / F(n_c); NaN where F(n_c) is zero or either is not finite (that chunking is refused).
        1 where the chunks' module is told the number of records (it computes F(n) itself), F(n) finite."""
        whole, part = self.at(n), self.at(n_chunk)
        if self.counted or self.own_factor:     # (a factor of n alone must be finite at n; others are θ's)
            return float("nan") if math.isnan(whole) and self.factor.free_symbols <= {self.length} else 1.0
        return float("nan") if part == 0 else whole / part

    def at(self, n: int) -> float:
        """F(n), a real number; NaN where it is not a finite one (F = 1/n at n = 0)."""
        try:
            v = complex(self.factor.subs(self.length, n))
        except (TypeError, ValueError):
            return float("nan")
        return v.real if not v.imag and abs(v.real) < math.inf else float("nan")


@dataclass(frozen=True)
class Refusal:
    """Why a function is not a chunk sum, in the user's words."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def chunk_sum(plan, params: tuple[str, ...], source: str | None = None) -> tuple[ChunkSum, ...] | Refusal:
    """The :class:`ChunkSum` s of ``plan`` (a function of the parameters ``params``; one per sum that may be
    over the records), or why it is not one (an index it names spelled as the function's ``source`` text
    writes it, where that has it: :mod:`coarsen_nb.dask_chunk_words`).

    The SOIs' outputs are inlined into the result, in plan order (``s / len(x)`` of an SOI after the sum's
    is the sum's value over the length), so the result is one expression over the parameters, the shape
    reads and the reads of all the SOIs: what it is in each chunk is decided on it alone."""
    lengths: dict[str, str] = {}      # plan name -> the parameter whose first axis's length it is
    shapes: dict[str, str] = {}       # plan name -> the parameter whose shape tuple it is
    values: dict[str, sp.Expr] = {}   # an SOI's output -> its expression, earlier SOIs' outputs inlined
    symbols: dict[str, sp.Symbol] = {}   # a name the SOIs read -> its symbol
    reads: dict = {}
    arrays: dict = {}
    say = Said(plan.words, Spellings(source))   # (a refusal names the user's variables: i, not $k1.2)
    inputs = BeforeTheSum(params)            # what each plan name is computed from, for the steps before the sum
    lanes = Lanes(params)                    # which names are lane-wise in the records (dask_chunk_lanes)
    loops: list[int] = []
    for step in plan.steps:
        if not isinstance(step, CondStep):
            lanes.note(step)
        if isinstance(step, PrimStep):
            inputs.note(step.name, ir.names_used(step.expr))
            if shape_read(step, params, lengths, shapes, say):
                inputs.opaque.append(step)
        elif isinstance(step, KernelStep):
            k = step.kernel
            inputs.note_kernel(k)
            symbols.update({name: sym for sym, name in k.scalars.items()})
            reads.update({r.symbol: r for r in k.reads})
            arrays.update(k.arrays)
            inlined = {sym: values[name] for sym, name in k.scalars.items() if name in values}
            values.update({out: sp.sympify(e).xreplace(inlined) for out, e in k.exprs().items()})
        elif isinstance(step, IterStep) and all(isinstance(s, (PrimStep, KernelStep))
                                                for s in (*step.header, *step.body)):
            # (its state lane by lane, or free of the records: each chunk runs it on its lanes; judged below)
            loops.append(step.line)
            for out, _ in step.etas:
                inputs.sources[out] = set(lanes.lane.get(out, ())) | set(lanes.crossed.get(out, ()))
        elif isinstance(step, (CondStep, IterStep)):
            kind = "a branch" if isinstance(step, CondStep) else "a loop run iteration by iteration"
            return Refusal(f"{kind} (line {step.line}) runs between its SOIs")
        else:
            return Refusal(f"its plan has a {type(step).__name__}")
    result = plan.result.id if isinstance(plan.result, ir.Name) else None
    if result not in values:
        return Refusal("its result is not the value of an SOI over its records")
    counts = {symbols[n]: p for n, p in lengths.items() if n in symbols}      # length symbol -> its parameter
    forms_ = _sum_forms(values[result], reads, arrays, counts, params, say, lanes)
    if isinstance(forms_, Refusal) and loops:   # (the loop first: it is what a user changes)
        return Refusal(lanes.refusal(lanes.read_by_lanes(), say) or
                       f"a loop run iteration by iteration (line {loops[0]}) runs between its SOIs ({forms_})")
    if loops and not isinstance(forms_, Refusal):
        forms_ = tuple(dataclasses.replace(f, loops=tuple(loops)) for f in forms_)
    if not isinstance(forms_, Refusal):   # (the told lengths: every plan name of the records' lengths)
        forms_ = tuple(dataclasses.replace(f, counted=tuple(n for n, p in lengths.items() if p in f.records))
                       if f.counted else f for f in forms_)
    if isinstance(forms_, Refusal) or not inputs.opaque and not inputs.arrays and not lanes.loops:
        return forms_

    def why_not(f: ChunkSum) -> str:
        return lanes.refusal(f.records, say) or inputs.of_records(f.records, say, lanes)

    kept = tuple(f for f in forms_ if not why_not(f))
    return kept or Refusal(why_not(forms_[0]))


def _sum_forms(e: sp.Expr, reads: dict, arrays: dict, counts: dict, params,
               say: Said, lanes: Lanes | None = None) -> tuple[ChunkSum, ...] | Refusal:
    """The ChunkSums of the result ``e`` (the SOIs' ``reads`` and whole ``arrays`` by symbol; ``counts``: the
    symbols of the first axes' lengths, by parameter), one for each set of records that outermost sums read
    at their index (hmc's prior over q[k] beside its likelihood over X[k], y[k]: which one is over the
    records is the call's to say, by which arguments are Dask arrays), or why there is none.  Several sums
    over the same records (two loops, ``np.sum`` of two elementwise terms) are one form where ``e`` is linear
    in them with factors that differ by a number: each chunk's module adds its part of each."""
    groups: dict = {}
    told = []
    # (a record read at another outermost sum's index is that sum's own: judged with it, or beside this one)
    indices = {r.args[1] for r in _outermost(e) if isinstance(r, forms.RSum)}
    for total in _outermost(e):
        got = _over_records(total, reads, arrays, counts, params, say, indices, lanes)
        if isinstance(got, Refusal):
            told.append(got.reason)
        else:
            groups.setdefault(got, []).append(total)
    made = []
    for (records, halo, whole), group in groups.items():
        form = _linear_form(e, group, records, halo, whole, reads, arrays, counts, say, lanes)
        if isinstance(form, ChunkSum):     # (the sums whose terms read their own index as a number)
            own = tuple(t.args[1] for t in group
                        if isinstance(t, forms.RSum) and t.args[1] in t.args[0].free_symbols)
            length_syms = {s for s, p in counts.items() if p in records}
            counted = form.counted or any(t.args[0].free_symbols & length_syms for t in group)
            # (a mark here: chunk_sum names the plan's lengths of the records in its place)
            form = dataclasses.replace(form, indices=own, counted=(True,) if counted else (),
                                       sums=tuple(t.args[1] for t in group if isinstance(t, forms.RSum)))
        (made if isinstance(form, ChunkSum) else told).append(form if isinstance(form, ChunkSum) else form.reason)
    if made:
        return tuple(made)
    told = list(dict.fromkeys(r for r in told if r != _NO_RECORDS))
    return Refusal("; or ".join(told) if told else
                   "its result is not a sum over the records (a sum over the first axis of an argument)")


def _over_records(total, reads: dict, arrays: dict, counts: dict, params, say: Said, indices: set,
                  lanes: Lanes | None = None):
    """``(records, halo, whole)`` of the reduction ``total`` where it is a sum over records (a loop's sum
    over their index, or ``np.sum`` of an elementwise value of whole records: ``whole``), or why not."""
    if isinstance(total, forms.ElemSum):
        records = _whole_records(reads, arrays, total.args[0], params, say, indices, lanes)
        if isinstance(records, Refusal):
            return records
        # (an element's term reading the number of records: each chunk's module is told it, dask_chunk_index)
        if _loops_to(total.args[0], {s for s, p in counts.items() if p in records}):
            return Refusal(_OWN_LOOP)
        return records, (0, 0), True
    if not isinstance(total, forms.RSum):
        return Refusal(_NO_RECORDS)
    summand, k, lo, hi, step = total.args
    records = _records(reads, arrays, summand, k, params, say, indices)
    if isinstance(records, Refusal):
        return records
    length_syms = {s for s, p in counts.items() if p in records}
    n = sp.Symbol("n", positive=True, integer=True)
    # (the records have one length n in every call that runs chunk by chunk: ``range(min(len(x), len(y)))``,
    # zip's bound, is all of them too)
    short = sp.simplify(n - sp.sympify(hi).xreplace({s: n for s in length_syms}))
    if step != 1 or not sp.sympify(hi).free_symbols <= length_syms or not _small(lo) or not _small(short):
        return Refusal(f"its sum over the records of {', '.join(records)} runs over "
                       f"range({spoken(lo, say)}, {spoken(hi, say)}, {spoken(step, say)}), "
                       f"not over all of them but at most {_HALO} at either end")
    far = _shifts(reads, records, k)
    if far[0] < -int(lo) or far[1] > int(short):
        return Refusal(f"its sum over range({spoken(lo, say)}, {spoken(hi, say)}) reads the records at "
                       f"[{spoken(k + far[0], say)}] .. [{spoken(k + far[1], say)}]: beyond their ends")
    # (a term reading k itself, γ ** k, is the chunk's module's told where its records start, and one reading
    # their number n, t ** (n - 1 - k), told n: dask_chunk_index)
    if _loops_to(summand, length_syms):
        return Refusal(_OWN_LOOP)
    return records, (int(lo), int(short)), False


#: why a term that loops up to the number of records is not one record's own
_OWN_LOOP = "each record's term runs a loop of its own up to the number of records (a scan along them)"


def _loops_to(summand, length_syms: set) -> bool:
    """Whether ``summand`` reads the number of records inside a form of its own (a sum, a scan: iir_filter's
    state ``scan(v <- a·v + g·x[k], k in range(n))`` in every term), which would run over the chunk's rows or
    the told number of them, never the records before the term's: a number in arithmetic (``t ** (n - 1 -
    k)``, ``k / n``) is the module's told ``n``, a loop bound is not."""
    return any(isinstance(node, forms.Inert) and node.free_symbols & length_syms
               for node in sp.preorder_traversal(summand))


def _linear_form(e, group: list, records, halo, whole, reads: dict, arrays: dict, counts: dict,
                 say: Said, lanes: Lanes | None = None) -> ChunkSum | Refusal:
    """The ChunkSum of ``e`` whose sums over ``records`` are ``group``: ``e = A + F · Σ_i r_i S_i`` with F a
    function of the records' number, the r_i numbers and A free of the records; or why not."""
    length_syms = {s for s, p in counts.items() if p in records}
    n = sp.Symbol("n", positive=True, integer=True)
    held = [sp.Dummy() for _ in group]
    linear = e.xreplace(dict(zip(group, held, strict=True)))
    factors = [sp.diff(linear, t) for t in held]
    of_records = {s for s, r in reads.items() if r.array in records} | {s for s, a in arrays.items() if a in records}
    if lanes is not None:       # (an array lane-wise in the records is theirs too: a loop's state over them)
        of_records |= {s for s, a in arrays.items() if lanes.lanes_of(a) & set(records)}
    if any(f.free_symbols & (set(held) | of_records) or f == 0 for f in factors):
        return Refusal("its result is not the sum over the records times a factor free of them")
    # (factors that read other arguments, a * Σ, or differ by more than a number, a * S1 + b * S2: each
    # chunk's module computes them itself, weight 1, told n where they read it)
    own = any(not f.free_symbols <= length_syms for f in factors) \
        or any(not sp.simplify(f / factors[0]).is_number for f in factors[1:])
    rest = linear.xreplace({t: sp.S.Zero for t in held})
    if rest.free_symbols & of_records:
        return Refusal("a term beside its sum over the records reads the records")
    # (a term beside the sum reading the records' number, a ** n * v0: each chunk's module is told it)
    counted = rest.free_symbols & length_syms or own and any(f.free_symbols & length_syms for f in factors)
    form = ChunkSum(records, factors[0].xreplace({s: n for s in length_syms}), n, offset=rest != 0, halo=halo,
                    whole=whole, counted=(True,) if counted else (), own_factor=own)
    if form.offset and not form.counted and not own and math.isnan(form.at(0)):
        # (the term beside the sum is the module on no records, where F(0) = 1/0: told n, F(n) it is)
        form = dataclasses.replace(form, counted=(True,))
    return form


def _outermost(e: sp.Basic) -> list:
    """The reductions of ``e`` (sums, products, maxima, sums over elements) not inside another one."""
    if isinstance(e, (forms.Reduction, forms.ElemSum)):
        return [e]
    return [r for a in e.args for r in _outermost(a)]


def _records(reads: dict, arrays: dict, summand, k, params, say: Said, indices: set) -> tuple[str, ...] | Refusal:
    """The parameters ``summand`` reads at ``[k, ...]`` (in ``params``' order), or why its reads are not
    record k's own: an array read elsewhere along ``k``, an array computed inside, a whole array."""
    records = set()
    for sym in sorted(summand.free_symbols, key=str):     # (a refusal names the same array each run)
        if sym in arrays:
            return Refusal(f"it reads {say(arrays[sym])} elementwise as a whole array")
        r = reads.get(sym)
        if r is None:
            continue
        index_syms = [sp.sympify(i).free_symbols for i in r.index]
        if index_syms and _shift(r.index[0], k) is not None and not any(k in s for s in index_syms[1:]):
            if r.array not in params:
                return Refusal(f"it reads {say(r.array)}, computed from its arguments, record by record")
            records.add(r.array)
        elif any(k in s for s in index_syms):
            return Refusal(_not_own_row(r, k, say))
    if not records:
        return Refusal(_NO_RECORDS)
    for r in reads.values():    # (a record read at a fixed row would read the chunk's row instead)
        if r.array in records and not _at_a_sum(r, indices | {k}):
            return Refusal(_not_own_row(r, k, say))
    return tuple(p for p in params if p in records)


def _whole_records(reads: dict, arrays: dict, summand, params, say: Said, indices: set,
                   lanes: Lanes | None = None) -> tuple[str, ...] | Refusal:
    """The parameters ``np.sum``'s elementwise ``summand`` reads as whole arrays, or why not: an array
    computed inside (its chunk's part is not the chunk's to compute, unless it is lane-wise in the records:
    :mod:`coarsen_nb.dask_chunk_lanes`), a record read at a fixed index."""
    records = set()
    computed = []
    for sym in sorted(summand.free_symbols, key=str):
        if sym in arrays:
            if arrays[sym] in params:
                records.add(arrays[sym])
            elif lanes is not None and lanes.lanes_of(arrays[sym]):
                records |= lanes.lanes_of(arrays[sym])
                computed.append(arrays[sym])
            else:
                return Refusal(f"it sums {say(arrays[sym])}, computed from its arguments, elementwise")
    if not records:
        return Refusal(_NO_RECORDS)
    for name in computed:
        if not lanes.lane_wise(name, records):
            return Refusal(f"it sums {say(name)}, computed from its arguments across their lanes, elementwise")
    for r in reads.values():
        if r.array in records and not _at_a_sum(r, indices):
            return Refusal(f"it reads {say(r.array)} at [{say.index(r)}] "
                           "beside summing it elementwise")
    return tuple(p for p in params if p in records)


def _at_a_sum(read, indices: set) -> bool:
    """Whether ``read`` is at ``[i + j, ...]`` for the index ``i`` of one of the outermost sums."""
    return bool(read.index) and any(_shift(read.index[0], i) is not None for i in indices)


def _not_own_row(read, k, say: Said) -> str:
    """Why ``read`` (of a record array) is not record ``k``'s own row, in the user's names."""
    return f"it reads {say(read.array)} at [{say.index(read)}]: not record {spoken(k, say)}'s own row"


#: the most rows a chunk reads beyond its own at either end (``x[k + 1]``, ``range(len(x) - 1)``): its halo
_HALO = 8


def _small(e) -> bool:
    """Whether ``e`` is an integer from 0 to :data:`_HALO`: how far the sum stops short of an end."""
    e = sp.sympify(e)
    return e.is_Integer and 0 <= int(e) <= _HALO


def _shift(index, k) -> int | None:
    """``j`` where ``index`` is ``k + j`` for an integer ``j`` of at most :data:`_HALO` (a read of the record
    ``j`` rows away: x[k + 1] reads the next one), else None."""
    j = sp.simplify(sp.sympify(index) - k)
    return int(j) if j.is_Integer and abs(int(j)) <= _HALO else None


def _shifts(reads: dict, records, k) -> tuple[int, int]:
    """The nearest and farthest rows from ``k`` at which the summand reads the records: (min j, max j)."""
    js = [_shift(r.index[0], k) for r in reads.values() if r.array in records and r.index]
    js = [j for j in js if j is not None]       # (the others are another sum's reads)
    return min(js), max(js)

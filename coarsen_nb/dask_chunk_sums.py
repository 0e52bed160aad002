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

* the plan is shape reads (``X.shape``, ``len(x)``) and SOIs, whose outputs are inlined into the result;
* that result is ``A + F · Σ_{k in range(0, n)}`` of a summand, ``n`` the first axis's length of the
  records (``min(len(x), len(y))`` too: one length where they share their chunks), F a function of such
  lengths only, A free of the records and their number;
* the summand reads the records at ``[k + j, ...]`` only, ``j`` a small integer (``x[k + 1]``: rosenbrock)
  within the range's ends (``range(a, n - b)`` with ``-a <= j <= b``: a chunk then runs with ``a`` rows of
  the chunks before and ``b`` after, its *halo*, and owns exactly the terms of its own rows, ``k`` in it;
  :mod:`coarsen_nb.dask_chunk_halos`), never along another axis; the other arrays at indices free of ``k``;
  it reads neither ``k`` itself nor ``n``.

Everything else (branches or loops between SOIs, opaque primitives, scans along the records, several sums
over the records, a maximum) is refused here and runs as the dask module's array statements
(:mod:`coarsen_nb.dask_arrays`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import naming
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

    def weight(self, n: int, n_chunk: int) -> float:
        """w_c = F(n) / F(n_c); NaN where F(n_c) is zero or either is not finite (that chunking is refused)."""
        whole, part = self.at(n), self.at(n_chunk)
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


def chunk_sum(plan, params: tuple[str, ...]) -> tuple[ChunkSum, ...] | Refusal:
    """The :class:`ChunkSum` s of ``plan`` (a function of the parameters ``params``; one per sum that may be
    over the records), or why it is not one.

    The SOIs' outputs are inlined into the result, in plan order (``s / len(x)`` of an SOI after the sum's
    is the sum's value over the length), so the result is one expression over the parameters, the shape
    reads and the reads of all the SOIs: what it is in each chunk is decided on it alone."""
    lengths: dict[str, str] = {}      # plan name -> the parameter whose first axis's length it is
    shapes: dict[str, str] = {}       # plan name -> the parameter whose shape tuple it is
    values: dict[str, sp.Expr] = {}   # an SOI's output -> its expression, earlier SOIs' outputs inlined
    symbols: dict[str, sp.Symbol] = {}   # a name the SOIs read -> its symbol
    reads: dict = {}
    arrays: dict = {}
    say = _Said(plan.words)             # (a refusal names the user's variables: i, not $k1.2)
    inputs = _Inputs(params)            # what each plan name is computed from, for the steps before the sum
    for step in plan.steps:
        if isinstance(step, PrimStep):
            inputs.note(step.name, ir.names_used(step.expr))
            if _shape_read(step, params, lengths, shapes, say):
                inputs.opaque.append(step)
        elif isinstance(step, KernelStep):
            k = step.kernel
            inputs.note_kernel(k)
            symbols.update({name: sym for sym, name in k.scalars.items()})
            reads.update({r.symbol: r for r in k.reads})
            arrays.update(k.arrays)
            inlined = {sym: values[name] for sym, name in k.scalars.items() if name in values}
            values.update({out: sp.sympify(e).xreplace(inlined) for out, e in k.exprs().items()})
        elif isinstance(step, (CondStep, IterStep)):
            kind = "a branch" if isinstance(step, CondStep) else "a loop run iteration by iteration"
            return Refusal(f"{kind} (line {step.line}) runs between its SOIs")
        else:
            return Refusal(f"its plan has a {type(step).__name__}")
    result = plan.result.id if isinstance(plan.result, ir.Name) else None
    if result not in values:
        return Refusal("its result is not the value of an SOI over its records")
    counts = {symbols[n]: p for n, p in lengths.items() if n in symbols}      # length symbol -> its parameter
    forms_ = _sum_forms(values[result], reads, arrays, counts, params, say)
    if isinstance(forms_, Refusal) or not inputs.opaque and not inputs.arrays:
        return forms_
    kept = tuple(f for f in forms_ if not inputs.of_records(f.records, say))
    return kept or Refusal(inputs.of_records(forms_[0].records, say))


class _Inputs:
    """What each plan name is computed from (the parameters, their data or their lengths), for the work a
    chunk repeats before its sum: an opaque primitive (gmm's ``np.zeros(k)``) or an SOI's array (gmm's
    ``log_w`` from its ``logits``) on the other arguments is the same in every chunk, so each chunk may compute
    it again; one computed from the records, or from their number, would be the chunk's own (refused)."""

    def __init__(self, params):
        self.params = set(params)
        self.sources: dict[str, set] = {}       # name -> the parameters it is computed from
        self.opaque: list = []                  # the primitives that are not shape reads
        self.arrays: set = set()                # the names later SOIs read as arrays

    def note(self, name: str, used) -> None:
        self.sources[name] = set().union(*({u} & self.params | self.sources.get(u, set()) for u in used))

    def note_kernel(self, k) -> None:
        used = set(k.scalars.values()) | {r.array for r in k.reads} | set(k.arrays.values())
        self.arrays |= {r.array for r in k.reads if r.array not in self.params} | set(k.arrays.values())
        for out in k.exprs():
            self.note(out, used)

    def of_records(self, records, say: _Said) -> str:
        """Why the work before the sum reads ``records`` or their number (empty: it does not)."""
        for step in self.opaque:
            if self.sources.get(step.name, set()) & set(records):
                return (f"an operation between its SOIs ({say(step.name)}, line {step.line}) is computed from "
                        f"its records {', '.join(records)} or their number")
        for name in sorted(self.arrays):
            if self.sources.get(name, set()) & set(records):
                return f"it computes the array {say(name)} from its records {', '.join(records)} before its sum"
        return ""


@dataclass(frozen=True)
class _Said:
    """A plan name as a refusal says it: the user's variable (``x.2`` -> ``x``, the loop counter ``$k1.2`` ->
    ``i``, ``len(x)``'s ``$p2.1`` -> ``n_x``: the frontend's words), never a compiler name.  Not the generated
    module's names (:class:`~coarsen_nb.lower.names.Names`): a sentence needs no unique identifiers."""

    words: dict

    def __call__(self, name: str) -> str:
        return self.words.get(name.split(".")[0]) or naming.user_word(name) or naming.kind_word(name) or "a value"


def _spoken(e, say: _Said) -> str:
    """The expression ``e`` (a SymPy index, or a plan name) as the user's names print it."""
    if isinstance(e, str):
        return say(e)
    e = sp.sympify(e)
    return str(e.xreplace({s: sp.Symbol(say(s.name)) for s in e.free_symbols}))


def _shape_read(step: PrimStep, params, lengths: dict, shapes: dict, say: _Said) -> str:
    """Note what the shape read ``step`` gives (a length of a first axis, a shape); a refusal otherwise."""
    e = step.expr
    if isinstance(e, ir.Attr) and e.attr == "shape" and isinstance(e.value, ir.Name) and e.value.id in params:
        shapes[step.name] = e.value.id
    elif isinstance(e, ir.Call) and e.func == "unpack_shape" and isinstance(e.args[0], ir.Name) \
            and e.args[0].id in shapes:
        shapes[step.name] = shapes[e.args[0].id]
    elif isinstance(e, ir.Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], ir.Name) \
            and e.args[0].id in params:
        lengths[step.name] = e.args[0].id
    elif isinstance(e, ir.Index) and isinstance(e.value, ir.Name) and e.value.id in shapes \
            and len(e.index) == 1 and isinstance(e.index[0], ir.Const):
        if e.index[0].value == 0:
            lengths[step.name] = shapes[e.value.id]
        # (another axis's length is the same in every chunk: the records are cut along the first only)
    else:
        return f"an operation between its SOIs ({say(step.name)}, line {step.line}) is not a shape read"
    return ""


def _sum_forms(e: sp.Expr, reads: dict, arrays: dict, counts: dict, params,
               say: _Said) -> tuple[ChunkSum, ...] | Refusal:
    """The ChunkSums of the result ``e`` (the SOIs' ``reads`` and whole ``arrays`` by symbol; ``counts``: the
    symbols of the first axes' lengths, by parameter), one for each outermost sum that reads arguments at its
    index (hmc's prior over q[k] beside its likelihood over X[k], y[k]: which one is over the records is the
    call's to say, by which arguments are Dask arrays), or why there is none."""
    sums = [r for r in _outermost(e) if isinstance(r, forms.RSum)]
    found = [_sum_form(e, total, _records(reads, arrays, total.args[0], total.args[1], params, say), reads, arrays,
                       counts, say) for total in sums]
    made = tuple(f for f in found if isinstance(f, ChunkSum))
    if made:
        return made
    told = list(dict.fromkeys(f.reason for f in found if f.reason != _NO_RECORDS))
    return Refusal("; or ".join(told) if told else
                   "its result is not a sum over the records (a sum over the first axis of an argument)")


def _sum_form(e, total, records, reads: dict, arrays: dict, counts: dict, say: _Said) -> ChunkSum | Refusal:
    """The ChunkSum of ``e`` whose sum over the records is ``total``, or why not."""
    summand, k, lo, hi, step = total.args
    if isinstance(records, Refusal):
        return records
    length_syms = {s for s, p in counts.items() if p in records}
    n = sp.Symbol("n", positive=True, integer=True)
    # (the records have one length n in every call that runs chunk by chunk: ``range(min(len(x), len(y)))``,
    # zip's bound, is all of them too)
    one_length = {s: n for s in length_syms}
    short = sp.simplify(n - sp.sympify(hi).xreplace(one_length))
    if step != 1 or not sp.sympify(hi).free_symbols <= length_syms or not _small(lo) or not _small(short):
        return Refusal(f"its sum over the records of {', '.join(records)} runs over "
                       f"range({_spoken(lo, say)}, {_spoken(hi, say)}, {_spoken(step, say)}), "
                       f"not over all of them but at most {_HALO} at either end")
    halo = (int(lo), int(short))
    far = _shifts(reads, records, k)
    if far[0] < -halo[0] or far[1] > halo[1]:
        return Refusal(f"its sum over range({_spoken(lo, say)}, {_spoken(hi, say)}) reads the records at "
                       f"[{_spoken(k + far[0], say)}] .. [{_spoken(k + far[1], say)}]: beyond their ends")
    rest, around = e.as_independent(total, as_Add=True)
    factor, held = around.as_independent(total, as_Add=False)
    if held != total or not factor.free_symbols <= length_syms:
        return Refusal("its result is not the sum over the records times a factor of their number")
    of_records = length_syms | {s for s, r in reads.items() if r.array in records} \
        | {s for s, a in arrays.items() if a in records}
    if rest.free_symbols & of_records:
        return Refusal("a term beside its sum over the records reads the records or their number")
    if summand.free_symbols & (length_syms | {k}):
        return Refusal("each record's term reads the number of records or the record's index itself")
    form = ChunkSum(records, factor.xreplace(one_length), n, offset=rest != 0, halo=halo)
    if form.offset and math.isnan(form.at(0)):
        return Refusal("a term beside its sum over the records, whose factor is not finite on no records")
    return form


def _outermost(e: sp.Basic) -> list:
    """The reductions of ``e`` (sums, products, maxima, sums over elements) not inside another one."""
    if isinstance(e, (forms.Reduction, forms.ElemSum)):
        return [e]
    return [r for a in e.args for r in _outermost(a)]


def _records(reads: dict, arrays: dict, summand, k, params, say: _Said) -> tuple[str, ...] | Refusal:
    """The parameters ``summand`` reads at ``[k, ...]`` (in ``params``' order), or why its reads are not
    record k's own: an array read elsewhere along ``k``, an array computed inside, a whole array."""
    records = set()
    for sym in summand.free_symbols:
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
        if r.array in records and (not r.index or _shift(r.index[0], k) is None):
            return Refusal(_not_own_row(r, k, say))
    return tuple(p for p in params if p in records)


def _not_own_row(read, k, say: _Said) -> str:
    """Why ``read`` (of a record array) is not record ``k``'s own row, in the user's names."""
    at = ", ".join(_spoken(i, say) for i in read.index)
    return f"it reads {say(read.array)} at [{at}]: not record {_spoken(k, say)}'s own row"


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
    return min(js), max(js)

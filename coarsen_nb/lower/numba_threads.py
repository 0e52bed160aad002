"""``parallel=True``: which fused loops of the numba backend may run their iterations on several threads.

A loop function of :mod:`coarsen_nb.lower.numba_loops` runs ``for i in range(...)`` over one domain.  Under
``parallel=True`` its loop runs as ``numba.prange`` (where it has :data:`THREADED_FROM` iterations or more)
where no two iterations can touch the same memory but through a reduction Numba knows how to split:

* a name assigned in the body is the iteration's own (Numba privatizes it);
* an element written or added to at ``[i]`` (or ``[int(i)]``) is the iteration's own element;
* an accumulator before the loop updated by ``acc += v`` or ``acc *= v`` is a sum or a product, which Numba
  splits into per-thread partials and adds (or multiplies) at the end.

Anything else keeps the loop sequential: a maximum or minimum (NumPy's NaN-propagating ``if v > acc or
v != v: acc = v`` is not a reduction Numba recognizes), a scatter to another index (two iterations may add
to the same element), an accumulator updated under an ``if``, a ``break``.  Those loops are the user's
iterated loops and the nests, rows, scans and log-sum-exp rows, which stay single-threaded: the outer loops
of those print a different schedule.

The sums' partials are added in another order than one thread adds them, so a threaded sum differs from the
sequential one by rounding (relative 1e-15 per term, within the 1e-12 the backends agree to); elementwise
results are bit-identical.  Threads are a choice the user makes (``parallel=True``): the headline
benchmarks stay single-threaded, and ``coarsen_nb numba parallel`` is reported as its own method.
"""

from __future__ import annotations

from coarsen_nb.lower import lir

#: The decorator of a loop function whose loop is ``numba.prange`` (bounds checked, as ``_jit_loop``).
THREADED = '@numba.njit(cache=True, boundscheck=True, parallel=True, error_model="numpy")'

#: The fewest iterations a loop runs on threads: waking the threads costs tens of microseconds on a quiet
#: machine and milliseconds where the cores are busy, so a short loop (a loop over 10 features, a loop called
#: at each step of the user's iterated loop) stays on the calling thread.  Measured: hmc's 10-feature sums
#: 4.4 -> 15.9 ms and bgd_hyperopt's 2,000-element passes 16.5 us -> 28 ms a gradient when threaded always.
THREADED_FROM = 1 << 16


def threaded(loop: lir.For, trips: lir.Expr) -> lir.If:
    """``loop`` on threads where it runs at least :data:`THREADED_FROM` iterations (``trips``), else as it is."""
    many = lir.Compare(">=", trips, lir.Lit(str(THREADED_FROM)))
    spread = lir.For(loop.target, lir.Call(lir.Attr(lir.Name("numba"), "prange"), loop.iter.args), loop.body)
    return lir.If(many, (spread,), (loop,))


def threadable(loop: lir.For, accumulators: set[str], after=()) -> bool:
    """Whether the iterations of ``loop`` (a loop function's one loop, ``for i in range(a, b)``) are
    independent but for sums and products into ``accumulators`` (names assigned before the loop), and no
    statement ``after`` it reads a name the iterations assign (which iteration's would it be?)."""
    index = loop.target.id if isinstance(loop.target, lir.Name) else None
    if index is None or not _independent(loop.body, index, accumulators, top=True):
        return False
    own = {n for s in loop.body for n in _assigned(s)} - accumulators
    return not own & {n for s in after for n in _read(s)}


def _assigned(s: lir.Stmt):
    if isinstance(s, lir.Assign) and isinstance(s.target, lir.Name):
        yield s.target.id
    for block in s.blocks():
        for inner in block:
            yield from _assigned(inner)


def _read(s: lir.Stmt):
    for e in s.exprs():
        yield from lir.names_in(e)
    for block in s.blocks():
        for inner in block:
            yield from _read(inner)


def _independent(body, index: str, accumulators: set[str], top: bool) -> bool:
    for s in body:
        if isinstance(s, lir.Comment):
            continue
        if isinstance(s, lir.Assign):
            if isinstance(s.target, lir.Name) and s.target.id not in accumulators:
                continue
            if isinstance(s.target, lir.Index) and _own_element(s.target, index):
                continue
            return False
        if isinstance(s, lir.AugAssign):
            if isinstance(s.target, lir.Name) and s.target.id in accumulators and s.op in ("+", "*") and top:
                continue
            if isinstance(s.target, lir.Index) and _own_element(s.target, index):
                continue
            return False
        if isinstance(s, lir.If):
            if _independent(s.body, index, accumulators, False) and \
                    _independent(s.orelse, index, accumulators, False):
                continue
            return False
        return False            # a loop inside, a break, a return, a call for its effect: sequential
    return True


def _own_element(target: lir.Index, index: str) -> bool:
    """``a[i]`` or ``a[int(i)]``: the element of iteration ``i`` only."""
    if len(target.items) != 1:
        return False
    item = target.items[0]
    if isinstance(item, lir.Call) and item.func == lir.Name("int") and len(item.args) == 1 and not item.kwargs:
        item = item.args[0]
    return item == lir.Name(index)

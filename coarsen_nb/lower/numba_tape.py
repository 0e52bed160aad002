"""The numba backend's tape of an iterated loop: one preallocated array per state scalar.

The module writer's own tape (:mod:`coarsen_nb.lower.iterated`) is a list of state tuples:
``_tape.append((i, x))`` forward, ``i, x = _tape[k]`` backward.  Under Numba that list is already a
contiguous buffer of unboxed tuples grown by ``realloc``; what arrays add is that the stores and loads
are plain indexed memory, with no growth check and no list header to reload each iteration.  So this
printer gives a loop arrays when, and only when, **the number of iterations has a bound before the
loop**: the condition is ``counter < bound`` (alone, or one term of an ``and``, as a ``break`` makes it),
the counter is an int μ stepped by ``+ 1`` in the body, and ``bound`` is an int defined before the loop
(a parameter, a literal, a value computed earlier).  Then ``max(0, bound - start)`` entries suffice,
and ``_jit``'s bounds checks turn a bound read wrong into an ``IndexError``, never a silent overrun.

Why no geometric growth (double and copy) for the other loops, a ``while`` on data: measured on the
Lorenz RK4 gradient (``scalar_loops``, 10⁵ steps), a grown array makes the gradient 2.7× *slower*
than the list.  An array reassigned inside the loop is a loop-carried value of seven fields (data,
shape, strides, meminfo, ...) per array; they crowd the loop's registers and the state spills.  Growing
in an outer loop around an inner one that cannot grow was still 15 % slower than the list.  Those loops
keep the list (``tape_for`` returns None), which grows without a loop-carried array.

The counter itself is not stored: entry k's is ``start + k``.  Only scalar states of kind float, int
or bool are stored so (the types are exact per signature, :mod:`coarsen_nb.phi.types`); a loop with an
array state keeps the list.  An array the loop writes in place is not in the state (its overwritten
elements have their own list, ``_tape_L_w``).

**Kept values.**  The reverse sweep replays each iteration from its entry before its adjoint, so a
costly function of the step (a libm call: ``exp``, ``log``, ``sin``, ...) is computed twice per step,
once going forward and once in the replay, where the adjoint reads it too (``d exp(u) = exp(u) du``:
barrier_option's price step).  The numba hand loop computes it once.  So the forward sweep also stores
each such value its body computes at the top of a kernel (:func:`kept_values`) in an array of its own,
``_tape_L_s_t3``, and the reverse sweep loads it for the replay's printer, which then reads the load
instead of calling the function again: a store and a load for a call.  A value neither the replay nor
the adjoint reads leaves a dead load, and its array is then dropped like a state's
(:func:`~coarsen_nb.lower.numba_tape_finish.drop_unread`, once the function is printed).  The values are the
same numbers: the replay computes the same kernel on the same state.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_tape_ahead import computed_ahead  # noqa: F401 (the tape printer's, iterated.py)
from coarsen_nb.lower.numba_tape_finish import finished  # noqa: F401 (the tape printer's, module.py)
from coarsen_nb.lower.numba_tape_loads import element_states
from coarsen_nb.lower.printing import xp_call
from coarsen_nb.phi.gammas import AndThen
from coarsen_nb.plan import IterStep, KernelStep

# the dtype of each kind of scalar state's array
_DTYPES = {"float": "float64", "int": "int64", "bool": "bool_"}

# the functions worth a store and a load to compute once a step: each a libm call of tens of cycles
_COSTLY = (sp.exp, sp.log, sp.sin, sp.cos, sp.tan, sp.asin, sp.acos, sp.atan, sp.atan2, sp.sinh, sp.cosh,
           sp.tanh, sp.asinh, sp.acosh, sp.atanh, sp.erf, sp.erfc)


@dataclass(frozen=True)
class KeptValue:
    """A costly value an iteration's body computes, kept on the tape for the replay: ``expr`` of the
    kernel ``kernel`` (its id), computed into ``name`` going forward, stored in ``array``."""

    kernel: int
    expr: sp.Expr
    name: str
    array: str


@dataclass(frozen=True)
class ArrayTape:
    """A loop's tape as arrays: ``count`` entries so far, ``arrays[j]`` holding ``states[j]``'s values.
    Each method returns the records to print; the names are the tape's name plus a suffix, so that the
    forward and the reverse sweep, which ask for the tape separately, name the same arrays.

    A **follower** is a state whose next value is another state's current value: ``y2 = y1`` in a
    filter, ``x_prev, x = x, x_new`` in a two-step integrator.  Its value at entry k is its leader's at
    entry k - 1 (at entry 0, its own start), so it has no array: the leader's array is ``lag`` entries
    longer, entry k at ``lag + k``, and the follower ``d`` steps behind reads ``lag + k - d``, the slot
    ``lag - d`` holding its value at entry 0 (written before the loop).  A chain (``z = y``, ``y = x``)
    follows at depths 1, 2, ..."""

    count: str                              # ``_tape_L_len``: the entries pushed
    states: tuple[tuple[str, str], ...]     # (Python name of the state, dtype attribute of xp)
    arrays: tuple[str, ...]                 # ``_tape_L_s_x`` for state ``x``
    capacity: lir.Expr                      # the bound on the number of iterations
    # the loop counter (Python name, start): not stored, entry k's is ``start + k``
    counter: tuple[str, lir.Expr] | None = None
    # (Python name of the follower, its leader's array, how many entries behind it is)
    followers: tuple[tuple[str, str, int], ...] = ()
    lag: int = 0                            # the most entries any follower is behind
    # (Python name of a state read from an array at the counter, the array, the scalar of its value at
    # entry 0): no array on the tape, entry k's is the array's element at the counter of entry k - 1
    # (:mod:`coarsen_nb.lower.numba_tape_loads`)
    elements: tuple[tuple[str, str, str], ...] = ()

    def _slots(self) -> lir.Expr:
        return self.capacity if not self.lag else lir.BinOp("+", self.capacity, lir.Lit(str(self.lag)))

    def _at(self, k: lir.Expr, offset: int) -> tuple[lir.Expr]:
        return (k if not offset else lir.BinOp("+", k, lir.Lit(str(offset))),)

    def start(self) -> list[lir.Stmt]:
        """Before the loop (after the state's start): the count at zero, each array allocated for every
        iteration, each follower's value at entry 0 in its slot."""
        out: list[lir.Stmt] = [lir.Assign(lir.Name(self.count), lir.Lit("0"))]
        for (_, dtype), arr in zip(self.states, self.arrays, strict=True):
            out.append(lir.Assign(lir.Name(arr), xp_call("empty", self._slots(),
                                                          dtype=lir.Attr(lir.Name("xp"), dtype))))
        out += [lir.Assign(lir.Index(lir.Name(arr), (lir.Lit(str(self.lag - d)),)), lir.Name(name))
                for name, arr, d in self.followers]
        return out + [lir.Assign(lir.Name(first), lir.Name(name)) for name, _, first in self.elements]

    def push(self) -> list[lir.Stmt]:
        """One iteration's entry, the state at its start: ``_tape_L_s_x[_tape_L_len] = x``, ..."""
        at = self._at(lir.Name(self.count), self.lag)
        out: list[lir.Stmt] = [lir.Assign(lir.Index(lir.Name(arr), at), lir.Name(name))
                               for (name, _), arr in zip(self.states, self.arrays, strict=True)]
        out.append(lir.AugAssign(lir.Name(self.count), "+", lir.Lit("1")))
        return out

    def allocate(self, kept: tuple[KeptValue, ...]) -> list[lir.Stmt]:
        """Before the loop: an array for each value ``kept``, for every iteration (as long as the states'
        arrays: one block with them, :func:`~coarsen_nb.lower.numba_tape_finish.packed`)."""
        return [lir.Assign(lir.Name(v.array), xp_call("empty", self._slots(), dtype=lir.Attr(lir.Name("xp"),
                                                                                           "float64")))
                for v in kept]

    def store(self, kept: tuple[KeptValue, ...]) -> list[lir.Stmt]:
        """The values ``kept``, stored at the entry's index (the count goes up at the end of the body; the
        reverse sweep reads entry k at k: no follower reads them, so no lag)."""
        return [lir.Assign(lir.Index(lir.Name(v.array), (lir.Name(self.count),)), lir.Name(v.name)) for v in kept]

    def length(self) -> lir.Expr:
        return lir.Name(self.count)

    def read(self, k: lir.Expr) -> list[lir.Stmt]:
        """The state of entry ``k``: one load per scalar (the dead ones are dropped by the writer's pass),
        the counter recomputed."""
        out: list[lir.Stmt] = []
        if self.counter is not None:
            name, start = self.counter
            out.append(lir.Assign(lir.Name(name), lir.BinOp("+", start, k)))
        out += [lir.Assign(lir.Name(name), lir.Index(lir.Name(arr), self._at(k, self.lag)))
                for (name, _), arr in zip(self.states, self.arrays, strict=True)]
        out += [lir.Assign(lir.Name(name), lir.Index(lir.Name(arr), self._at(k, self.lag - d)))
                for name, arr, d in self.followers]
        return out + [lir.Assign(lir.Name(name), lir.IfExp(
            lir.Index(lir.Name(array), (lir.BinOp("-", lir.BinOp("+", self.counter[1], k), lir.Lit("1")),)),
            lir.Compare(">", k, lir.Lit("0")), lir.Name(first))) for name, array, first in self.elements]


def tape_for(writer, s: IterStep, in_place) -> ArrayTape | None:
    """The arrays for loop ``s``'s tape, or None where the list stays (no bound before the loop on the
    number of iterations, or a state that is not a float, int or bool scalar)."""
    bound = trip_bound(writer, s)
    if bound is None:
        return None
    capacity, counter, start = bound
    kinds = {}
    for n, _, _ in s.mus:
        if n in in_place or n == counter:
            continue
        t = writer.plan.types.get(n)
        if t is None or t.ndim or t.kind not in _DTYPES:
            return None
        kinds[n] = t.kind
    elements = element_states(writer, s, kinds, counter)
    kinds = {n: kind for n, kind in kinds.items() if n not in elements}
    depth = _follower_depths(s, kinds)
    tape = writer.tape_name(s)
    states = [(writer.py(n), _DTYPES[kind]) for n, kind in kinds.items() if n not in depth]
    followers = tuple((writer.py(n), f"{tape}_s_{writer.py(leader)}", d) for n, (leader, d) in depth.items())
    return ArrayTape(f"{tape}_len", tuple(states), tuple(f"{tape}_s_{name}" for name, _ in states), capacity,
                     (writer.py(counter), start), followers, max((d for _, _, d in followers), default=0),
                     tuple((writer.py(n), writer.py(a), f"{tape}_first_{writer.py(n)}") for n, a in elements.items()))


def _follower_depths(s: IterStep, kinds: dict[str, str]) -> dict[str, tuple[str, int]]:
    """{follower: (its leader, how many entries behind)} among the stored states ``kinds`` of loop
    ``s`` (:class:`ArrayTape`): a state whose next value is another's current value, of the same kind,
    followed back to a state that follows none (a swap, ``x, y = y, x``, has none: neither follows)."""
    follows = {}
    for n, _, nxt in s.mus:
        if n not in kinds or not isinstance(nxt, ir.Name):
            continue
        source = nxt.id
        found = _kernel_expr(s.body, nxt.id)
        if found is not None:
            kernel, expr = found
            source = kernel.scalars.get(expr) if isinstance(expr, sp.Symbol) else None
        if source in kinds and source != n and kinds[source] == kinds[n]:
            follows[n] = source
    depth = {}
    for n in follows:
        leader, d = n, 0
        while leader in follows and d <= len(follows):
            leader, d = follows[leader], d + 1
        if leader not in follows:
            depth[n] = (leader, d)
    return depth


def kept_values(writer, s: IterStep, kernel, pr) -> tuple[KeptValue, ...]:
    """The costly values (:data:`_COSTLY`) that ``pr``, the printer of ``kernel``, one of loop ``s``'s
    body, computed at the top of its code just now.  A value computed inside a branch of the kernel's
    code is not kept (not every iteration computes it), nor one whose operands are not real numbers;
    the writer asks for the kernels at the top of the body only, not in a branch of it."""
    top = {x.target.id for x in pr.body if isinstance(x, lir.Assign) and isinstance(x.target, lir.Name)}
    tape = writer.tape_name(s)
    return tuple(KeptValue(id(kernel), e, code.id, f"{tape}_s_{code.id}") for e, code in pr.root.memo.items()
                 if isinstance(code, lir.Name) and code.id in top and _costly(e) and _real(writer, kernel, e))


def _costly(e) -> bool:
    """A call of :data:`_COSTLY`, or a power to a number that is no integer (``x**0.5``: ``pow``); never a
    power to a symbol, which may be an int's to an int (an int, not a float64)."""
    return isinstance(e, _COSTLY) or isinstance(e, sp.Pow) and e.exp.is_Number and not e.exp.is_Integer


def _real(writer, kernel, e) -> bool:
    """Whether ``e``'s operands are all real numbers (float, int or bool scalars, or elements of such
    arrays): its value is a float64."""
    reads = {r.symbol: r.array for r in kernel.reads}
    temps = dict(kernel.body)
    seen, todo = set(), list(e.free_symbols)
    while todo:
        sym = todo.pop()
        if sym in seen:
            continue
        seen.add(sym)
        if sym in temps:
            todo.extend(sp.sympify(temps[sym]).free_symbols)
            continue
        name = kernel.scalars.get(sym) or reads.get(sym)
        t = writer.plan.types.get(name) if name is not None else None
        if t is None or t.kind not in _DTYPES or (sym not in reads and t.ndim):
            return False
    return True


def trip_bound(writer, s: IterStep) -> tuple[lir.Expr, str, lir.Expr] | None:
    """(``max(0, bound - start)``, the counter, ``start``) where ``s`` runs at most that many times: its
    condition is ``counter < bound`` or an ``and`` of it with more, the counter an int μ from ``start``
    stepped by ``+ 1`` (so iteration k's counter is ``start + k``), ``bound`` an int literal or an int
    defined before the loop.  None otherwise."""
    cond = _kernel_expr(s.header, s.cond)
    if cond is None:
        return None
    kernel, expr = cond
    terms = _conjuncts(expr)
    inside = {n for n, _, _ in s.mus} | set(writer._defined(list(s.header) + list(s.body)))
    for rel in terms:
        if not isinstance(rel, sp.StrictLessThan):
            continue
        counter = kernel.scalars.get(rel.lhs)
        mu = next((m for m in s.mus if m[0] == counter), None)
        if mu is None or not _is_int(writer, counter) or not _steps_by_one(s, mu):
            continue
        bound = _bound_code(writer, kernel, rel.rhs, inside)
        start = _start_code(writer, mu[1])
        if bound is not None and start is not None:
            return lir.Call(lir.Name("max"), (lir.Lit("0"), lir.BinOp("-", bound, start))), counter, start
    return None


def _conjuncts(e) -> list:
    """The terms that must all hold for ``e`` to: ``e`` itself, or the operands of an ``and`` (a
    ``break`` makes the condition ``AndThen(~broke, i < n)``, Python's short-circuit ``and``), nested."""
    if isinstance(e, (sp.And, AndThen)):
        return [t for a in e.args for t in _conjuncts(a)]
    return [e]


def _kernel_expr(steps, name: str):
    """(kernel, expression) of the SOI among ``steps`` that computes ``name``, or None."""
    for st in steps:
        if isinstance(st, KernelStep) and name in st.kernel.output_names:
            return st.kernel, st.kernel.exprs()[name]
    return None


def _is_int(writer, name: str) -> bool:
    t = writer.plan.types.get(name)
    return t is not None and t.kind == "int" and not t.ndim


def _steps_by_one(s: IterStep, mu) -> bool:
    """Whether the body computes the counter's next value as ``counter + 1``."""
    counter, _, nxt = mu
    if not isinstance(nxt, ir.Name):
        return False
    found = _kernel_expr(s.body, nxt.id)
    if found is None:
        return False
    kernel, expr = found
    symbol = next((sym for sym, n in kernel.scalars.items() if n == counter), None)
    return symbol is not None and sp.expand(expr - symbol) == 1


def _bound_code(writer, kernel, e: sp.Expr, inside: set[str]) -> lir.Expr | None:
    if isinstance(e, sp.Integer):
        return lir.Lit(str(int(e)))
    name = kernel.scalars.get(e) if isinstance(e, sp.Symbol) else None
    if name is None or name in inside or not _is_int(writer, name):
        return None
    return lir.Name(writer.py(name))


def _start_code(writer, init: ir.Expr) -> lir.Expr | None:
    if isinstance(init, ir.Const) and isinstance(init.value, int) and not isinstance(init.value, bool):
        return lir.Lit(repr(init.value))
    if isinstance(init, ir.Name) and _is_int(writer, init.id):
        return lir.Name(writer.py(init.id))
    return None

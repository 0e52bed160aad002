"""A counted loop's kept exponentials of its data computed ahead of it, in a loop LLVM vectorizes.

The forward sweep of a loop with an array tape keeps each costly value a step computes for the replay
(:func:`coarsen_nb.lower.numba_tape.kept_values`: barrier_option's ``exp(sigma*z[p, t] - sigma**2/2)``, one
a step).  Where that value reads no state of the loop but its counter (the step's data and numbers fixed
before the loop), every step's value is known before the loop starts: this prints a loop that only stores
them, with the helper ``_exp`` (arithmetic LLVM vectorizes, where libm's ``math.exp``, a call, cannot:
:mod:`coarsen_nb.lower.numba_helpers`), into the kept value's own tape array, and the step then loads it
instead of calling ``math.exp``.  The same as the scans' exponentials of a step's data
(:mod:`coarsen_nb.lower.numba_scans`, asian_option), for a loop run iteration by iteration.  Measured by hand on
barrier_option's gradient at 10⁴ paths of 50 steps: 3.07 → 2.46 ms CPU (a loop of ``math.exp`` ahead instead,
not vectorized: 3.58, slower than keeping it in the step).

When it applies, and why the program is the same:

* the loop's condition is ``counter < bound`` and nothing else (no ``break``, no other test), so the steps
  that run are exactly ``max(0, bound - start)``, the tape's capacity: the loop ahead computes the values of
  the steps that run, no more (a subscript of a step that never runs is never read);
* the value is ``math.exp(u)`` assigned at the top of the step's code, and ``u`` is computed there by plain
  assignments from the counter, names bound before the loop and elements of arrays the loop does not write;
  the loop ahead repeats those assignments under fresh names, the counter as ``start + j``;
* ``_exp`` is within 1 ulp of ``math.exp`` (its docstring): the replay's values are those of the same
  steps to that rounding, as the scans' are.  A step's own assignments that then compute nothing read are
  dropped by the writer's dead-code pass.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_exprs import names_in
from coarsen_nb.plan import IterStep, KernelStep

# the calls a step's assignments may make and still be computed ahead: pure functions of numbers
_PURE_CALLS = frozenset({"int", "float", "abs", "min", "max"})


def computed_ahead(writer, s: IterStep, own, body: list, kept) -> tuple[list[lir.Stmt], list[lir.Stmt]]:
    """(the loop that stores the kept exponentials of loop ``s``'s data ahead of it, its body reading them
    back); ``([], body)`` where none can be (see the module's docstring).  ``own`` is the loop's
    :class:`~coarsen_nb.lower.numba_tape.ArrayTape`, ``body`` the forward sweep's loop body as printed,
    ``kept`` its :class:`~coarsen_nb.lower.numba_tape.KeptValue` s."""
    if not kept or own.counter is None or not _counted_alone(s):
        return [], body
    counter, start = own.counter
    bound = {n for st in lir.statements(body) for n in st.targets()}
    written = {n for st in lir.statements(body) for n in _stored_into(st)}
    defs = {st.target.id: st for st in body if isinstance(st, lir.Assign) and isinstance(st.target, lir.Name)}
    found = []
    for v in kept:
        st = defs.get(v.name)
        steps = _slice(st.value.args[0], body, defs, bound, written, counter) if st is not None and _is_exp(
            st.value) else None
        if steps is not None:
            found.append((v, st, steps))
    if not found:
        return [], body
    # (fresh names only now: a loop with nothing to compute ahead prints as before, names and all)
    j = lir.Name(writer.names.fresh("j"))
    renamed: dict[str, str] = {counter: writer.names.fresh(counter)}
    ahead: list[lir.Stmt] = [lir.Assign(lir.Name(renamed[counter]), lir.BinOp("+", start, j))]
    loads: dict[int, lir.Stmt | None] = {}
    for v, st, steps in found:
        for dep in steps:
            if dep.target.id not in renamed:
                renamed[dep.target.id] = writer.names.fresh(dep.target.id)
                ahead.append(lir.Assign(lir.Name(renamed[dep.target.id]), _renamed(dep.value, renamed)))
        value = lir.Call(lir.Name(writer.helper("_exp")), (_renamed(st.value.args[0], renamed),))
        ahead.append(lir.Assign(lir.Index(lir.Name(v.array), (j,)), value))
        loads[id(st)] = lir.Assign(st.target, lir.Index(lir.Name(v.array), (lir.Name(own.count),)))
        store = _store_of(body, v)
        if store is not None:       # (the loop ahead wrote it)
            loads[id(store)] = None
    loop = lir.For(j, lir.Call(lir.Name("range"), (own.capacity,)), tuple(ahead))
    return [loop], [loads.get(id(st), st) for st in body if loads.get(id(st), st) is not None]


def _counted_alone(s: IterStep) -> bool:
    """Whether loop ``s``'s condition is one ``counter < bound`` (:func:`numba_tape.trip_bound` found the
    counter and the bound): no ``break`` and no other test, so it runs exactly the tape's capacity."""
    for st in s.header:
        if isinstance(st, KernelStep) and s.cond in st.kernel.output_names:
            return isinstance(st.kernel.exprs()[s.cond], sp.StrictLessThan)
    return False


def _is_exp(e: lir.Expr) -> bool:
    return (isinstance(e, lir.Call) and str(e.func) == "math.exp" and len(e.args) == 1 and not e.kwargs)


def _slice(e: lir.Expr, body, defs: dict, bound: set, written: set, counter: str) -> list[lir.Assign] | None:
    """The body's assignments ``e`` depends on, in the body's order, or None where ``e`` reads a state other
    than the counter, a name bound otherwise than by one top-level assignment, a call that may not be pure,
    or an array the loop writes."""
    need, todo = set(), [e]
    while todo:
        x = todo.pop()
        if not _pure(x, written):
            return None
        for n in names_in(x):
            if n == counter or n in need or n not in bound:
                continue
            st = defs.get(n)
            if st is None or sum(n in t.targets() for t in lir.statements(body)) != 1:
                return None
            need.add(n)
            todo.append(st.value)
    return [st for st in body if isinstance(st, lir.Assign) and isinstance(st.target, lir.Name)
            and st.target.id in need]


def _pure(e: lir.Expr, written: set) -> bool:
    """Whether ``e`` is arithmetic on numbers: calls only of :data:`_PURE_CALLS` and ``math``'s functions,
    subscripts only of arrays not in ``written``."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, lir.Call):
            f = str(x.func)
            if f not in _PURE_CALLS and not f.startswith("math."):
                return False
            stack.extend(x.args)
            stack.extend(v for _, v in x.kwargs)
            continue
        if isinstance(x, lir.Index) and (not isinstance(x.value, lir.Name) or x.value.id in written):
            return False
        if isinstance(x, (lir.List, lir.Raw, lir.Code)):
            return False
        stack.extend(x.children())
    return True


def _stored_into(st: lir.Stmt) -> list[str]:
    """The arrays ``st`` writes elements of (``x[i] = v``, ``x[i] += v``)."""
    target = getattr(st, "target", None)
    if isinstance(st, (lir.Assign, lir.AugAssign)) and isinstance(target, lir.Index):
        return names_in(target.value)
    return []


def _store_of(body, v) -> lir.Stmt | None:
    """The body's store of kept value ``v`` into its array (``_tape_L_s_t6[_tape_L_len] = t6``)."""
    for st in body:
        if (isinstance(st, lir.Assign) and isinstance(st.target, lir.Index) and isinstance(st.target.value, lir.Name)
                and st.target.value.id == v.array and isinstance(st.value, lir.Name) and st.value.id == v.name):
            return st
    return None


def _renamed(e: lir.Expr, renamed: dict[str, str]) -> lir.Expr:
    return lir.rewrite(e, lambda x: lir.Name(renamed[x.id]) if isinstance(x, lir.Name) and x.id in renamed else None)

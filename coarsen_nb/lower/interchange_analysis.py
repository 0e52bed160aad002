"""Which iterated loops over whole arrays may run element by element (numba's loop interchange decides
here; :mod:`coarsen_nb.lower.numba_interchange` prints).

:func:`interchangeable` reads the plan alone: the states other than numbers (a counter) are float arrays of
one rank, each starting from an array of that rank; every step of the header and body is an SOI (no opaque
primitive, branch or inner loop); no SOI reads an element by index or holds a form that spans elements (a
sum, ``np.roll``'s gather: any :class:`~coarsen_nb.phi.forms.Inert`); the header's SOIs read numbers only
(the trip count is the same for every element); what the body reads from outside the loop is numbers; only
the array states leave the loop.  Then every element's steps depend on that element's first state and the
numbers alone.

:func:`per_element` splits one SOI's adjoint contribution into one element's share.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import forms
from coarsen_nb.plan import IterStep, KernelStep, PrimStep, walk_steps

# the primitives whose one array argument's shape is their result's (``np.array(x)`` is ``copy``)
_SAME_SHAPE = frozenset({"copy", "zeros_like", "ones_like", "empty_like"})


@dataclass(frozen=True)
class Interchange:
    """A loop that may run element by element: its array states, number states and invariant numbers
    (SSA names), and the kernels of its header and body in order."""

    arrays: tuple[str, ...]
    numbers: tuple[str, ...]
    invariants: tuple[str, ...]
    kernels: tuple



def interchangeable(s: IterStep, types: dict) -> Interchange | None:
    """The interchange of loop ``s`` (see the module docstring), or None where its elements depend on
    each other or on arrays from outside."""
    steps = list(s.header) + list(s.body)
    if not steps or not all(isinstance(st, KernelStep) for st in steps):
        return None
    t = {n: types.get(n) for n, _, _ in s.mus}
    if any(v is None for v in t.values()):
        return None
    arrays = tuple(n for n, _, _ in s.mus if t[n].is_array)
    numbers = tuple(n for n, _, _ in s.mus if not t[n].is_array)
    if not arrays or len({t[n].ndim for n in arrays}) != 1 or any(t[n].kind != "float" for n in arrays):
        return None
    ndim = t[arrays[0]].ndim
    for n, init, _ in s.mus:
        it = types.get(getattr(init, "id", None))
        if n in arrays and (it is None or not it.is_array or it.ndim != ndim or it.kind != "float"):
            return None
        if n in numbers and (it is None or it.is_array or it.kind not in ("int", "float", "bool")):
            return None
    if any(mu not in arrays for _, mu in s.etas):
        return None
    defined = {n for n, _, _ in s.mus}
    for st in steps:
        defined |= set(st.kernel.output_names)
    invariants: list[str] = []
    header = {id(st) for st in s.header}
    for st in steps:
        k = st.kernel
        if k.reads or any(isinstance(n, forms.Inert) for _, e in k.body for n in sp.preorder_traversal(e)):
            return None
        for name in k.inputs:
            nt = types.get(name)
            if nt is None or (nt.is_array and (name not in defined or id(st) in header)):
                return None
            if name not in defined and name not in invariants:
                invariants.append(name)
        for o in k.outputs:
            ot = types.get(o.name)
            if ot is None or (ot.is_array and ot.ndim != ndim):
                return None
    return Interchange(arrays, numbers, tuple(invariants), tuple(st.kernel for st in steps))


def one_shape(steps, names) -> bool:
    """Whether the SSA values ``names`` have one shape whatever the call, known from the plan's ``steps``:
    each is, through ``copy``/``zeros_like``/``ones_like``/``empty_like`` and SOIs that only pass one array's
    elements on, the same array (pendulum_batch: ``theta = theta0.copy()``, ``omega = np.zeros_like(theta0)``).
    Then the interchanged loop needs no run-time test, and today's loop beside it (which Numba would compile
    although no call runs it: ~1.5 s of pendulum_batch's cold first gradient) is not printed."""
    made: dict = {}
    for st in walk_steps(steps):
        if isinstance(st, PrimStep):
            made[st.name] = st.expr
        elif isinstance(st, KernelStep):
            k = st.kernel
            if len(k.arrays) == 1 and not k.reads:
                (symbol, array), = k.arrays.items()
                body = dict(k.body)
                for o in k.outputs:
                    if body.get(o.symbol) == symbol:
                        made[o.name] = ir.Name(array)

    def source(name: str, depth: int = 0) -> str:
        e = made.get(name)
        # (a call with static parameters of its own, ``np.array(x, ndmin=2)``, may make another shape)
        if depth < 64 and isinstance(e, ir.Call) and e.func in _SAME_SHAPE and len(e.args) == 1 and not e.static:
            e = e.args[0]
        return source(e.id, depth + 1) if depth < 64 and isinstance(e, ir.Name) else name

    return len({source(n) for n in names}) == 1


def per_element(e, temps: dict, varying: set):
    """Adjoint contribution ``e`` as one element's share: a sum to an array state's shape is its operand
    (every array of the loop has that shape); a sum over the elements (``ElemSum``, a sum to a number's
    shape) is its operand where ``e`` is linear in it with a coefficient the same for every element (then
    the element's shares add up to ``e``).  None where ``e`` holds any other form or is not so linear."""
    for _ in range(64):
        nxt = e.xreplace({s: t for s, t in temps.items() if s in e.free_symbols})
        if nxt == e:
            break
        e = nxt
    sums: dict = {}

    def strip(x):
        if isinstance(x, forms.SumTo):
            if x.args[1] in varying:
                return strip(x.args[0])
            return sums.setdefault(x, (sp.Dummy("sum"), strip(x.args[0])))[0]
        if isinstance(x, forms.ElemSum):
            return sums.setdefault(x, (sp.Dummy("sum"), strip(x.args[0])))[0]
        if isinstance(x, forms.Inert):
            raise ValueError(type(x).__name__)
        return x.func(*[strip(a) for a in x.args]) if x.args else x

    try:
        e = strip(e)
    except ValueError:
        return None
    dummies = [d for d, _ in sums.values()]
    for d in dummies:
        coefficient = sp.diff(e, d)
        if coefficient.free_symbols & (set(dummies) | varying):
            return None
    if dummies and sp.simplify(e.xreplace({d: 0 for d in dummies})) != 0:
        return None
    return e.xreplace({d: operand for d, operand in sums.values()})

"""Scans: loop states that the same iteration reads, lifted to their values at every step.

A μ whose closed form is only needed at the exit is an η (:mod:`.recurrence_classes`).  When
another μ of the loop reads it inside the iteration, the state itself is needed at every step k:

=========================================  ================================================
the loop                                   lifted
=========================================  ================================================
``acc += g(k)``; ... reads ``acc``         acc_k = init + Σ_{j<k} g_j        (a prefix sum)
``p *= g(k)``; ... reads ``p``             p_k = init · Π_{j<k} g_j          (a prefix product)
``s = a·s + b(k)``; ... reads ``s``        s_k = Π_{j<k} a_j·init + Σ_{j<k} b_j Π_{j<l<k} a_l   (C7, C8)
``y[k] = a·y[k - s] + b(k)``               y[k - s] is the state w_k of w ← a·w + b, w_start = y[start - s]
=========================================  ================================================

all three one form, ``LinScan(a, b, k, start, stop, step, init)``: the state *before* step k of
v ← a_k·v + b_k from v = init (a, b free of every state of the loop).  Substituting it for the
state symbol makes the readers ordinary closed forms (``tot += exp(-acc)`` a Σ, ``total += s*s``
a Σ, ``y[i] = ...`` an element write).  The element-write row reads the array the loop writes,
but only the element the previous iteration wrote, so the read is that iteration's value.

Rules (v_k = LinScan, w the adjoint of v_k at every k; u the *costate*, :class:`LinCostate`):

    u_k     = Σ_{m>k} w_m Π_{k<l<m} a_l          (the adjoint recurrence u_k = w_{k+1} + a_{k+1}·u_{k+1})
    b̄_k     = u_k,   ā_k = v_k·u_k,   init̄ = Σ_k w_k·Π_{j<k} a_j = w_start + a_start·u_start
    v̇       = LinScan(a, ȧ·v + ḃ, init̄̇)        (the same recurrence driven by the tangents)

Lowered (``lower.scan_printing``) without a loop over k: a cumulative sum (a = 1), a cumulative
product (b = 0), otherwise a Hillis–Steele doubling scan of the affine maps (⌈log₂ N⌉ array
passes; with an invariant a the composed coefficient of 2ᵖ steps is the scalar a^(2ᵖ)).  Nothing
divides by a prefix product, so |a| < 1 over 10⁵ steps and exact zeros are fine.  The costate is
the same scan run backwards.  Not handled (the loop stays iterated, as before): a coefficient that
depends on a state, states inside enclosing closed-form loops (nests), array-valued states.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi.forms import Inert
from coarsen_nb.phi.gammas import gamma
from coarsen_nb.phi.recurrence_classes import ElementWrite, depends_on, strip_term
from coarsen_nb.phi.symbols import NotSymbolic


class LinScan(Inert):
    """v_k, the state before step k of v ← a_k·v + b_k from v = init: ``LinScan(a, b, k, start, stop, step, init)``.

    A value at every point of k's range (a prefix sum for a = 1, a prefix product for b = 0)."""

    nargs = 7

    def _eval_is_real(self):
        return True

    def _latex(self, printer):
        a, b, k, _, _, _, init = (printer._print(x) for x in self.args)
        return rf"\operatorname{{scan}}_{{{k}}}\left({a}\cdot v + {b};\ v_0 = {init}\right)"

    def _sympystr(self, printer):
        a, b, k, start, stop, step, init = self.args
        return (f"scan(v <- {printer._print(a)}*v + {printer._print(b)}, {k} in range({start}, {stop}, {step}), "
                f"v = {printer._print(init)})")


class LinCostate(Inert):
    """u_k = Σ_{m>k} w_m Π_{k<l<m} a_l over k's range: ``LinCostate(a, w, k, start, stop, step)``,
    the adjoint of a :class:`LinScan` (its reverse scan, same coefficients).  Derivative code only."""

    nargs = 6

    def _eval_is_real(self):
        return True

    def _latex(self, printer):
        a, w, k = (printer._print(x) for x in self.args[:3])
        return rf"\operatorname{{costate}}_{{{k}}}\left({a}, {w}\right)"

    def _sympystr(self, printer):
        a, w, k, start, stop, step = self.args
        return f"costate({printer._print(a)}, {printer._print(w)}, {k} in range({start}, {stop}, {step}))"


SCAN_FORMS = (LinScan, LinCostate)


def _affine(value, v):
    """(a, b) with ``value == a·v + b`` (a sum, a product, or linear in v), else None."""
    g = strip_term(value, v, "+")
    if g is not None:
        return sp.Integer(1), g
    g = strip_term(value, v, "*")
    if g is not None:
        return g, sp.Integer(0)
    if value.has(sp.Piecewise):
        return None
    expanded = sp.expand(value)
    if expanded.is_polynomial(v) and sp.degree(expanded, v) == 1:
        return expanded.coeff(v, 1), expanded.coeff(v, 0)
    return None


def _scan(kb, name, a, b, k, rng, init, word=None):
    """The temp of ``LinScan(a, b, ...)``; the generated code calls it ``word`` (default: the μ's variable)."""
    start, stop, step = rng
    # (not "a:"/"b:" names: "b:" + a temp is its adjoint, and the η of the same μ has "b:" + its name)
    at = a if a.is_Number else kb.temp(f"scan:a:{name}", a)
    bt = b if b.is_Number else kb.temp(f"scan:b:{name}", b)
    form = LinScan(at, bt, k, start, stop, step, init)
    kb.named.setdefault(form, word or name)
    return kb.temp(f"scan:{name}", form)


def _exprs(value) -> list:
    """The expressions of one μ's next value (an element write has its value and its index)."""
    if isinstance(value, ElementWrite):
        return [value.value, *(sp.sympify(i) for i in value.index)]
    return [value] if isinstance(value, sp.Basic) else []


def _replace(v, sub: dict):
    if isinstance(v, ElementWrite):
        return ElementWrite(v.base, tuple(sp.sympify(i).xreplace(sub) for i in v.index), v.value.xreplace(sub))
    return v.xreplace(sub) if isinstance(v, sp.Basic) else v


def read_states(kb, states: dict, updates: dict, k, rng, nested: bool) -> None:
    """Replace, in the other μs' updates, every scalar state that they read by its :class:`LinScan`.

    ``updates`` maps μ name → (next value, init) and is changed in place; a state whose own update
    is not affine in it with state-free coefficients is left alone (its readers then stay iterated).
    """
    if nested:
        return
    done: set = set()
    while True:
        for name, (value, init) in updates.items():
            v = states.get(name)
            if v is None or name in done or init is None or isinstance(value, ElementWrite) \
                    or not isinstance(value, sp.Expr) or kb.lifter.types[name].is_array:
                continue
            if not any(v in e.free_symbols for n, (o, _) in updates.items() if n != name for e in _exprs(o)):
                continue
            ab = _affine(value, v)
            if ab is None or any(depends_on(kb, c, set(states.values())) for c in ab):
                continue
            break
        else:
            return
        done.add(name)
        sub = {v: _scan(kb, name, ab[0], ab[1], k, rng, init)}
        for n, (value, init) in list(updates.items()):
            if n != name:
                updates[n] = (_replace(value, sub), init)


class LaggedReads:
    """Element reads ``y[i]`` of an array μ of the loop, kept as placeholders while its body is lifted."""

    def __init__(self, arrays: set):
        self.arrays = arrays            # the loop's array μs
        self.reads: dict = {}           # placeholder symbol -> (array, index)

    def read(self, array: str, index: tuple) -> sp.Symbol:
        for s, key in self.reads.items():
            if key == (array, index):
                return s
        s = sp.Symbol(f"{array}[{', '.join(map(str, index))}]@prev", real=True)
        self.reads[s] = (array, index)
        return s


def before_write(value, array: str, index: tuple, lagged: LaggedReads) -> str:
    """The array that ``array[index]`` reads: the loop's array μ itself when ``array`` is that μ written
    this iteration at an index a nonzero constant away (an element this iteration did not write)."""
    if not (isinstance(value, ElementWrite) and value.base in lagged.arrays and len(index) == len(value.index) == 1):
        return array
    d = sp.simplify(sp.sympify(index[0]) - value.index[0])
    return value.base if d.is_Integer and d != 0 else array


def resolve_lagged_elements(kb, lagged: LaggedReads, env: dict, mus, states, outer, k, rng, trip) -> None:
    """Each placeholder of ``lagged`` → the :class:`LinScan` of the element the previous iteration wrote.

    Holds for the array μ y whose update is ``y[k + c] = a·y[k + c - step] + b`` (1-D, c invariant,
    a and b free of the loop's states) and whose only reads are ``y[k + c - step]``.  Anything
    else raises NotSymbolic, as a read of an array the loop changes always did.  ``env`` (the body's
    values by name) is changed in place.
    """
    if not lagged.reads:
        return
    sub: dict = {}
    others = set(states.values()) | set(lagged.reads)
    pending = [m for m in mus if any(arr == m.name for arr, _ in lagged.reads.values())]
    while pending:      # an array whose update reads another's previous element after that one
        ready = [m for m in pending if not _unresolved(env, m, lagged, sub)]
        if not ready:
            raise NotSymbolic("read of an array that the loop changes")
        for m in ready:
            mine = [s for s, (arr, _) in lagged.reads.items() if arr == m.name]
            scan = _lagged_scan(kb, lagged, env, m, mine, sub, others, outer, k, rng, trip)
            sub.update({s: scan for s in mine})
            pending.remove(m)
    if set(sub) != set(lagged.reads):
        raise NotSymbolic("read of an array that the loop changes")
    for name, v in list(env.items()):
        env[name] = _replace(v, sub)


def _unresolved(env, m, lagged, sub) -> bool:
    """Whether μ ``m``'s write reads the previous element of another array not yet resolved."""
    nxt = env.get(getattr(m.value.next, "id", None))
    if not isinstance(nxt, ElementWrite):
        return False
    pending = {s for s, (arr, _) in lagged.reads.items() if arr != m.name and s not in sub}
    return bool(nxt.value.free_symbols & pending)


def _lagged_scan(kb, lagged, env, m, mine, sub, others, outer, k, rng, trip):
    """The scan of array μ ``m``'s previous element (see :func:`resolve_lagged_elements`)."""
    start, stop, step = rng
    nxt = env.get(getattr(m.value.next, "id", None))
    if not isinstance(nxt, ElementWrite) or nxt.base != m.name or len(nxt.index) != 1 \
            or not isinstance(m.value.init, ir.Name):
        raise NotSymbolic("read of an array that the loop changes")
    c = sp.simplify(sp.sympify(nxt.index[0]) - k)
    if depends_on(kb, c, others | {k}) or c.free_symbols & others:
        raise NotSymbolic("read of an array that the loop changes")
    prev = nxt.index[0] - step
    if any(sp.simplify(sp.sympify(lagged.reads[s][1][0]) - prev) != 0 for s in mine):
        raise NotSymbolic("read of an array that the loop changes")
    w = sp.Symbol("w", real=True)
    value = nxt.value.xreplace(sub).xreplace({s: w for s in mine})
    ab = _affine(value, w)
    if ab is None or any(c2.free_symbols & (others | {w}) or depends_on(kb, c2, others) for c2 in ab):
        raise NotSymbolic("read of an array that the loop changes")
    first = outer.index(m.value.init.id, (sp.sympify(start + c - step),))
    init = gamma(sp.Gt(trip, 0), first, sp.Float(0))    # no read when the loop does not run
    base, _, version = m.name.partition(".")
    return _scan(kb, m.name, ab[0], ab[1], k, rng, init, word=f"{base}_prev.{version}")

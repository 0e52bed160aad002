"""How the NumPy printer prints a reduction, decided before printing by its pre-pass
(:mod:`coarsen_nb.lower.soi_levels`) and read by the printer (``LevelPrinting._reduce``,
``NestPrinting.rect_product``, ``SegmentPrinting._at_arg_extremum``), so that the choice is made once.

A sum over a loop j opened at a dense nest's inner level (``dense_pair``: a rectangular unit-step j directly
inside a top-level unit-step i) is, term by term, a matrix–vector product ``M·h·g`` on blocks and windows of
the arrays read (:class:`DenseTerm`); a sum weighted by an arg-extremum one-hot of its own loop (a maximum's
adjoint) is its other factors at that one point (:class:`ArgPoint`); any other reduction is its body on
every point of the loop, reduced (:class:`Schedule` with neither).

Why the printer does not decide this itself: the decision is where the pre-pass opens the levels (the
dense nest's vector ``h`` over j under the root, the arg-extremum's point), and the levels are decided
before printing; deciding twice is how the two drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb.lower.printing import Nest


@dataclass(frozen=True)
class DenseTerm:
    """One product of a dense nest's factors (a term of Σ_j, or the adjoint's scatter ``rect_product``) at
    the nest ``(i, j)``: ``blocks``, its factors of both indices that are read as blocks or windows
    (``"block"``) or as power tables (``"power"``), ``(factor, how)`` in the order the printer builds them;
    ``general`` the other factors of both (their product computed on the points), ``fi`` those of i alone,
    ``fj`` of j alone.  ``ok`` False: not a product of the nest (a factor reads another index, after the
    ``blocks`` before it were built; or no matrix where one is needed)."""

    pair: tuple
    blocks: tuple
    general: tuple = ()
    fi: tuple = ()
    fj: tuple = ()
    ok: bool = True


@dataclass(frozen=True)
class ArgPoint:
    """Σ_k [k = argmax_k g]·h(k) as h at that one point: ``hot`` the one-hot, ``at_point`` the product of
    the other factors that vary over k or the enclosing points (computed at the point), ``outside`` that of
    those that do not (computed where the sum is)."""

    hot: object
    at_point: object
    outside: object


@dataclass(frozen=True)
class Schedule:
    """A reduction's schedule: ``terms`` the dense nest's products tried, in order (all ``ok``: the sum is
    their matrix–vector products; else the last one tried failed), ``point`` its arg-extremum point (when not
    dense), else the body on every point."""

    terms: tuple = ()
    point: ArgPoint | None = None

    @property
    def dense(self) -> bool:
        return bool(self.terms) and all(t.ok for t in self.terms)


def dense_pair(deps, child: Nest):
    """(i, j) when ``child`` is a rectangular unit-step loop j directly inside a top-level unit-step loop i
    (the points are then the rows i of an (n_i, n_j) block, row by row), else None; ``child`` a printed
    level or the pre-pass's points."""
    lv = child.parent
    if (child.kind != "range" or child.domain.kind != "rect" or lv is None or lv.kind != "range"
            or lv.parent.parent is not None or lv.domain.segmented):
        return None
    i, j = lv.binder, child.binder
    ri, rj = deps.ranges[i], deps.ranges[j]
    if ri[2] != 1 or rj[2] != 1 or deps(rj[0]) or deps(rj[1]):
        return None
    return i, j


def operands(e, op, temps) -> list:
    """The operands of ``e`` under the operator ``op`` (``sp.Add``: its terms; ``sp.Mul``: its factors),
    looking through the ``temps`` that name its parts."""
    if isinstance(e, sp.Symbol) and e in temps:
        return operands(temps[e], op, temps)
    if isinstance(e, op):
        return [g for a in e.args for g in operands(a, op, temps)]
    return [e]


def arg_factors(body, temps) -> list:
    """The factors of a sum's ``body`` an arg-extremum one-hot may be among (through the temps that name
    a product)."""
    factors, todo = [], [body]
    while todo:
        f = todo.pop()
        if isinstance(f, sp.Symbol) and f in temps and isinstance(temps[f], sp.Mul):
            todo.append(temps[f])
        elif isinstance(f, sp.Mul):
            todo.extend(f.args)
        else:
            factors.append(f)
    return factors

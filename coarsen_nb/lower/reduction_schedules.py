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
from coarsen_nb.phi import forms
from coarsen_nb.symbolic.levels import ELEM


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


def unaliased(e, temps):
    """``e`` through the temps that only name another symbol (a scatter's value ``b:x[k]`` is the name of the
    adjoint ``b:g``, itself a product): the expression whose factors ``arg_factors`` reads."""
    while isinstance(e, sp.Symbol) and isinstance(temps.get(e), sp.Symbol):
        e = temps[e]
    return e


class DenseWalk:
    """The pre-pass's part that decides a dense nest's products (``soi_levels.LevelWalk`` is one: it has
    ``deps``, ``temps``, ``soi``, ``root``, ``child`` and ``value``), as ``NestPrinting.rect_sum`` and
    ``rect_product`` print them: the factors' split, and the levels their values are computed at (the vector
    ``h`` over j under the root, ``g`` at the outer loop, the other factors of both at the nest's points)."""

    def _rect_sum(self, body, child) -> tuple:
        """The products of the terms of Σ_j ``body`` tried, up to the first that is none (``()``: not a
        dense nest)."""
        pair = dense_pair(self.deps, child)
        terms = []
        for t in (() if pair is None else operands(body, sp.Add, self.temps)):
            terms.append(self._rect_product(t, child, pair))
            if not terms[-1].ok:
                break
        return tuple(terms)

    def rect_product(self, e, child, need_matrix: bool = True) -> None:
        """As ``Printer.rect_product`` (the adjoint of a dense nest calls it for its scatter, ``scatter_adjoints.py``):
        its decision kept at ``child`` (``Points.product``)."""
        pair = dense_pair(self.deps, child)
        child.products[(e, need_matrix)] = None if pair is None else \
            self._rect_product(e, child, pair, need_matrix=need_matrix)

    def _rect_product(self, e, child, pair, need_matrix: bool = True) -> DenseTerm:
        (i, j), lv = pair, child.parent
        blocks, fi, fj, general = [], [], [], []
        for f in operands(e, sp.Mul, self.temps):
            d = self.deps(f) - {ELEM}
            if d - {i, j}:
                return DenseTerm(pair, tuple(blocks), ok=False)
            if d == {i, j}:
                if self._block_read(f, i, j):
                    blocks.append((f, "block"))
                elif self._power_table(f, i, j, lv):
                    blocks.append((f, "power"))
                else:
                    general.append(f)
            elif j in d:
                fj.append(f)
            else:
                fi.append(f)
        if general:
            self.value(sp.Mul(*general), child)
        if not blocks and not general and need_matrix:
            return DenseTerm(pair, (), ok=False)
        jl = self.child(self.root, j, *self.deps.ranges[j])
        if fi:
            self.value(sp.Mul(*fi), lv)
        if fj:
            self.value(sp.Mul(*fj), jl)
        return DenseTerm(pair, tuple(blocks), tuple(general), tuple(fi), tuple(fj))

    def _block_read(self, f, i, j) -> bool:
        if not isinstance(f, sp.Symbol) or f not in self.soi.reads:
            return False
        idx = self.soi.reads[f][1]
        if len(idx) == 1:
            c = sp.sympify(idx[0]) - i - j
            return not (self.deps(c) or i in c.free_symbols or j in c.free_symbols)
        if len(idx) == 2:
            ci, cj = sp.sympify(idx[0]) - i, sp.sympify(idx[1]) - j
            return not (self.deps(ci) or self.deps(cj) or i in ci.free_symbols or j in cj.free_symbols)
        return False

    def _power_table(self, f, i, j, lv) -> bool:
        if not isinstance(f, (sp.Pow, forms.PowInt)):
            return False
        base, ex = f.args
        if not (ex.is_integer and self.deps(base) <= {i} and self.deps(ex) <= {j}):
            return False
        jl = self.child(self.root, j, *self.deps.ranges[j])
        self.value(base, lv)
        self.value(ex, jl)
        return True

"""Loop nests beyond one flat level: dense two-level nests as matrix products on blocks,
and the per-segment operations (exclusive products, arg-extremum one-hots, linear-recurrence
states) that need a segment as a row of a 2-D array; and a sum weighted by an arg-extremum one-hot (a
maximum's adjoint) as its summand at that one point.  A mixin of :class:`~coarsen_nb.lower.emit.Printer`.

The windows ``x[i + j + c]`` of a correlation are kept as a :class:`Window`, not as the text of their
strided view, so that their contractions with vectors print as correlations and a convolution
(``_window_matvec``, ``_window_vecmat``, ``_window_outer_add``): a sliding view's rows overlap, so a
matrix product on it is not BLAS but a strided loop, and its adjoint an (n_i, n_j) outer product.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb.errors import NoSegmentForm
from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import Level, int_typed, is_atom_code
from coarsen_nb.phi import forms
from coarsen_nb.symbolic.levels import ELEM


@dataclass(frozen=True)
class Window:
    """The windows ``x[lo + i + j]`` (i < n_i, j < n_j) read by a dense nest; prints as their view."""

    arr: str
    lo: str
    n_i: str
    n_j: str

    calls = frozenset({"_window"})      # the helper its text calls (Printer.printed registers it)

    @property
    def args(self) -> str:
        return f"{self.lo}, {self.n_i}, {self.n_j}"

    def __str__(self) -> str:
        return f"_window({self.arr}, {self.args})"


@dataclass(frozen=True)
class Matrix:
    """The code of an (n_i, n_j) array of a dense nest and the helpers it calls (a block read is
    ``_block(...)``): a matrix may be built and then not printed, so its calls count once it is."""

    code: str
    calls: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return self.code


def _calls(code) -> frozenset[str]:
    """The helpers a factor of a dense nest's matrix calls (a block or window read; a table name: none)."""
    return code.calls if isinstance(code, Window | Matrix) else frozenset()


class NestPrinting:
    """Dense nests and segment operations of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def printed(self, m) -> str:
        """A dense nest's matrix ``m`` (a :class:`Window`, a :class:`Matrix` or a name) as text, the helpers
        its text calls registered: a matrix may be built and not used, so they count once it is printed."""
        self.helpers.update(_calls(m))
        return str(m)

    def _dense_pair(self, child: Level):
        """(i, j) when ``child`` is a rectangular unit-step loop j directly inside a top-level unit-step
        loop i (the points are then the rows i of an (n_i, n_j) block, row by row), else None."""
        lv = child.parent
        if (child.kind != "range" or child.rect is None or lv is None or lv.kind != "range"
                or lv.parent is not self.root or lv.seg):
            return None
        i, j = lv.binder, child.binder
        ri, rj = self.deps.ranges[i], self.deps.ranges[j]
        if ri[2] != 1 or rj[2] != 1 or self.deps(rj[0]) or self.deps(rj[1]):
            return None
        return i, j

    def rect_product(self, e, child: Level, need_matrix: bool = True):
        """``(M, g, h)`` when ``e`` at the rectangular level ``child`` (loop j, unit step, inside a
        top-level loop i, unit step) is a product of factors of both i and j — reads ``A[i + c, j + c']``
        of 2-D arrays are blocks (views), others are computed per point — that multiply to the
        ``(n_i, n_j)`` array ``M``, factors of i alone (their
        product ``g`` at the outer level, or None) and factors of j alone (``h``, a vector over j,
        or None); otherwise None (M is None without factors of both, if not ``need_matrix``).
        Then Σ_j is ``(M @ h) * g`` and the adjoint scattered over j
        is ``(g @ M) * h``: BLAS on views instead of flattened gathers, tiles and bincounts
        (``rect_rows``, ``rect_columns``; M is a :class:`Window` when it is one window read alone)."""
        pair = self._dense_pair(child)
        if pair is None:
            return None
        lv, (i, j) = child.parent, pair
        rj = self.deps.ranges[j]
        blocks, fi, fj, general = [], [], [], []
        for f in self._factors(e):
            d = self.deps(f) - {ELEM}
            if d - {i, j}:
                return None
            if d == {i, j}:
                blk = self._block_read(f, i, j) or self._power_table(f, i, j, lv)
                if blk is None:
                    general.append(f)
                else:
                    blocks.append(blk)
            elif j in d:
                fj.append(f)
            else:
                fi.append(f)
        if general:
            # the other factors of both indices: their product on the flattened points, one row per i
            prod = sp.Mul(*general)
            code = self.value(prod, child)
            if self._may_be_scalar(prod):
                code = f"({code} + {self.xp}.zeros({child.size}))"
            blocks.append(f"{self.xp}.reshape({code}, ({lv.size}, {child.rect}))")
        if not blocks and need_matrix:
            return None
        jl = self._child(self.root, j, *rj)
        m = None if not blocks else blocks[0] if len(blocks) == 1 else \
            Matrix("(" + " * ".join(map(str, blocks)) + ")", frozenset().union(*(_calls(b) for b in blocks)))
        g = self.value(sp.Mul(*fi), lv) if fi else None
        h = self.value(sp.Mul(*fj), jl) if fj else None
        # a factor that may be one number (invariant, or a branch on a scalar) becomes a vector
        if g is not None and (not self.deps(sp.Mul(*fi)) & {i} or self._may_be_scalar(sp.Mul(*fi))):
            g = f"({g} + {self.xp}.zeros({lv.size}))"
        if h is not None and self._may_be_scalar(sp.Mul(*fj)):
            h = f"({h} + {self.xp}.zeros({jl.size}))"
        # an integer factor (i + 1, j) as floats: the array API promotes no int64 array with float64 in @ or *
        if g is not None and int_typed(sp.Mul(*fi)):
            g = f"{self.xp}.asarray({g}, dtype={self.xp}.float64)"
        if h is not None and int_typed(sp.Mul(*fj)):
            h = f"{self.xp}.asarray({h}, dtype={self.xp}.float64)"
        return m, g, h

    def rect_sum(self, body, child: Level):
        """Σ_j of ``body`` at the dense level ``child`` as matrix-vector products on blocks and windows,
        one per term of a sum (a correlation's tangent Σ_j dw_j·x_{i+j} + w_j·dx_{i+j} is two), else None."""
        parts = []
        for term in self._terms(body):
            rp = self.rect_product(term, child)
            if rp is None:
                return None
            parts.append(self.rect_rows(*rp))
        return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"

    def _terms(self, e) -> list:
        """The terms of a sum, looking through the temps that name its parts."""
        if isinstance(e, sp.Symbol) and e in self.temps:
            return self._terms(self.temps[e])
        if isinstance(e, sp.Add):
            return [t for a in e.args for t in self._terms(a)]
        return [e]

    def rect_rows(self, m, g, h) -> str:
        """Σ_j M[i, j]·h[j]·g[i] of ``rect_product``'s parts (h None: 1): a correlation on windows."""
        if isinstance(m, Window):
            h = h if h is not None else f"{self.xp}.ones({m.n_j})"
            mv = f"{self.helper('_window_matvec')}({m.arr}, {m.args}, {h})"
        else:
            mv = f"{self.xp}.sum({self.printed(m)}, axis=1)" if h is None else f"({self.printed(m)} @ {h})"
        return mv if g is None else f"({mv} * {g})"

    def rect_columns(self, m, g, h) -> str:
        """Σ_i g[i]·M[i, j]·h[j] of ``rect_product``'s parts (g or M None: 1, not both)."""
        xp = self.xp
        if isinstance(m, Window):
            col = f"{self.helper('_window_vecmat')}({g if g is not None else f'{xp}.ones({m.n_i})'}, {m.arr}, {m.args})"
        else:
            col = f"{xp}.sum({self.printed(m)}, axis=0)" if g is None else f"{xp}.sum({g})" if m is None else \
                f"({g} @ {self.printed(m)})"
        return col if h is None else f"({col} * {h})"

    def window_add(self, b: str, win: Window, m, g, h) -> str:
        """The statement ``b[lo + i + j] += M[i, j]·g[i]·h[j]`` into the windows ``win`` of ``b``: one
        convolution of g and h when there is no M (h or g None: 1), else the slice adds of ``_window_add``."""
        xp = self.xp
        if m is None:
            g = g if g is not None else f"{xp}.ones({win.n_i})"
            h = h if h is not None else f"{xp}.ones({win.n_j})"
            return f"{self.helper('_window_outer_add')}({b}, {win.args}, {g}, {h})"
        factors = [self.printed(m)] + ([f"({g})[:, None]"] if g is not None else []) + \
            ([f"({h})[None, :]"] if h is not None else [])
        return f"{self.helper('_window_add')}({b}, {win.args}, {' * '.join(factors)})"

    def _power_table(self, f, i, j, lv: Level):
        """x_i ** e_j (an integer exponent of j) as an (n_i, n_j) table built by a cumulative product
        along the powers — one multiply per entry instead of one ``pow`` — when the exponents are
        small and non-negative at run time (else ``**``).  Horner's closed form is Σ_k c_k x_i^(D-1-k)."""
        if not isinstance(f, (sp.Pow, forms.PowInt)):
            return None
        base, ex = f.args
        if not (ex.is_integer and self.deps(base) <= {i} and self.deps(ex) <= {j}):
            return None
        key = (f, lv.id)
        if key in self._tables:
            return self._tables[key]
        xp = self.xp
        jl = self._child(self.root, j, *self.deps.ranges[j])
        b = self.value(base, lv)
        e = self.value(ex, jl)
        bv, ev, top, tab, out = (self.fresh(h) for h in ("pow_base", "pow_exp", "pow_top", "pow_table", "powers"))
        self.emit(f"{bv} = {xp}.reshape({xp}.asarray({b}, dtype={xp}.float64) + {xp}.zeros({lv.size}), (-1, 1))")
        self.emit(f"{ev} = {xp}.asarray({e}, dtype={xp}.int64) + {xp}.zeros({jl.size}, dtype={xp}.int64)")
        self.emit(f"{top} = int({xp}.max({ev})) if {jl.size} > 0 else 0")
        self.emit(f"if {jl.size} > 0 and int({xp}.min({ev})) >= 0 and {top} <= 2 * {jl.size} + 16:")
        self.emit(f"    {tab} = {xp}.cumulative_prod({xp}.broadcast_to({bv}, ({lv.size}, {top})), axis=1)")
        self.emit(f"    {tab} = {xp}.concat([{xp}.ones(({lv.size}, 1)), {tab}], axis=1)")
        self.emit(f"    {out} = {xp}.take({tab}, {ev}, axis=1)")
        self.emit("else:")
        self.emit(f"    {out} = {bv} ** {xp}.asarray({xp}.reshape({ev}, (1, -1)), dtype={xp}.float64)")
        self._tables[key] = out
        return out

    def _factors(self, e) -> list:
        """The factors of a product, looking through the temps that name its parts."""
        if isinstance(e, sp.Symbol) and e in self.temps:
            return self._factors(self.temps[e])
        if isinstance(e, sp.Mul):
            return [g for a in e.args for g in self._factors(a)]
        return [e]

    def _block_read(self, f, i, j):
        """``_block(A, lo_i, n_i, lo_j, n_j)`` for a read ``A[i + c, j + c']``, the :class:`Window` of a
        read ``x[i + j + c]`` (the windows of a correlation, a strided view), else None."""
        if not isinstance(f, sp.Symbol) or f not in self.reads:
            return None
        arr, idx = self.reads[f]
        win = self._window_read_index(idx, i, j, arr)
        if win is not None:
            return win
        args = self._block_read_index(idx, i, j)
        return None if args is None else Matrix(f"_block({arr}, {args})", frozenset({"_block"}))

    def _window_read_index(self, idx, i, j, arr: str = ""):
        """The :class:`Window` of ``arr`` that ``[i + j + c]`` covers (else None)."""
        if len(idx) != 1:
            return None
        c = sp.sympify(idx[0]) - i - j
        if self.deps(c) or i in c.free_symbols or j in c.free_symbols:
            return None
        (ai, bi, _), (aj, bj, _) = self.deps.ranges[i], self.deps.ranges[j]
        lo = self.value(ai + aj + c)
        n_i, n_j = self.value(sp.Max(0, bi - ai)), self.value(sp.Max(0, bj - aj))
        return Window(arr, lo, n_i, n_j)

    def _block_read_index(self, idx, i, j):
        """``lo_i, n_i, lo_j, n_j`` of the block that ``[i + c, j + c']`` covers (else None)."""
        if len(idx) != 2:
            return None
        ci, cj = sp.sympify(idx[0]) - i, sp.sympify(idx[1]) - j
        if self.deps(ci) or self.deps(cj) or i in ci.free_symbols or j in cj.free_symbols:
            return None
        (ai, bi, _), (aj, bj, _) = self.deps.ranges[i], self.deps.ranges[j]
        lo_i, lo_j = self.value(ai + ci), self.value(aj + cj)
        n_i, n_j = self.value(sp.Max(0, bi - ai)), self.value(sp.Max(0, bj - aj))
        return f"{lo_i}, {n_i}, {lo_j}, {n_j}"

    def _segments(self, code: str, k, lv: Level):
        """``code`` (values at level ``lv``) as a 2-D array with one row per segment of ``k``.

        Returns (name, rows, cols, flat) with ``flat(x)`` the code that turns a result of that
        shape back into ``lv``'s order.  Usually k is ``lv``'s own index; when ``lv`` is a
        rectangular loop j opened under k's level (an adjoint summed over an outer index j
        inside k's level), the layout is (k, j) and the segments are its columns.
        """
        xp = self.xp
        name = self.fresh("v")
        parent = lv.parent
        if lv.binder == k:
            rows = "1" if parent.kind == "root" else parent.size
            cols = f"{lv.size}" if parent.kind == "root" else lv.rect
            if cols is None:
                raise NoSegmentForm("triangular-extrema")
            self.emit(f"{name} = {xp}.reshape({code} + {xp}.zeros({lv.size}), ({rows}, {cols}))")
            return name, rows, cols, lambda x: f"{xp}.reshape({x}, (-1,))"
        if (parent is not None and parent.binder == k and parent.kind == "range" and parent.seg is None
                and parent.parent is not None and parent.parent.kind == "root" and lv.rect is not None):
            self.emit(f"{name} = {xp}.asarray({xp}.reshape({code} + {xp}.zeros({lv.size}), "
                      f"({parent.size}, {lv.rect})).T, copy=True)")
            return name, lv.rect, parent.size, lambda x: f"{xp}.reshape({x}.T, (-1,))"
        raise NoSegmentForm("segment-away")

    def _at_arg_extremum(self, body, child: Level, rng) -> str | None:
        """Σ_k [k = argmax_k g]·h(k) (a maximum's adjoint) as h at that one point: the body's other
        factors are evaluated on a level of at most one point, not on every point and then multiplied
        by zeros.  None when no factor of the body is that indicator over this range."""
        factors, todo = [], [body]
        while todo:
            f = todo.pop()
            if isinstance(f, sp.Symbol) and f in self.temps and isinstance(self.temps[f], sp.Mul):
                todo.append(self.temps[f])
            elif isinstance(f, sp.Mul):
                todo.extend(f.args)
            else:
                factors.append(f)
        hot = next((f for f in factors if isinstance(f, forms.ArgOneHot) and tuple(f.args[1:5]) == tuple(rng)),
                   None)
        if hot is None:
            return None
        key = ("arg-point", hot, child.id)
        if key not in self._tables:
            g = self.value(hot.args[0], child)
            if not self.deps(hot.args[0]) & ({rng[0]} | self._varying_binders(child)):
                g = f"{self.xp}.broadcast_to({self.xp}.asarray({g}), ({child.size},))"
            ix = self.fresh("ix")
            pick = "argmax" if hot.args[5] > 0 else "argmin"
            self.emit(f"{ix} = {self.xp}.{pick}({self.xp}.reshape({g}, (1, -1)), axis=1) if {child.size} > 0 else "
                      f"{self.xp}.zeros(0, dtype={self.xp}.int64)")
            self._tables[key] = Level(child, "mask", mask=lir.Name(ix), size=lir.expr(f"{ix}.shape[0]"))
            self._tables[key].pick = True
        point = self._tables[key]
        varying = {rng[0]} | self._varying_binders(child)
        # the factors that vary over k at the one point; the others (the adjoint of the maximum
        # itself, a scale) where the sum is, from what is computed there already
        at_point = sp.Mul(*(f for f in factors if f is not hot and self.deps(f) & varying))
        outside = sp.Mul(*(f for f in factors if f is not hot and not self.deps(f) & varying))
        vals = self.value(at_point, point)
        if not self.deps(at_point) & varying:
            vals = f"{self.xp}.broadcast_to({self.xp}.asarray({vals}), ({point.size},))"
        total = f"{self.xp}.sum({vals})"
        if outside == 1:
            return total
        scale = self.value(outside, child.parent)
        return f"{scale if is_atom_code(scale) else f'({scale})'} * {total}"

    def _segment_op(self, e, lv: Level) -> str:
        """Exclusive products or arg-extremum indicators of ``body`` within each segment of k."""
        body, k, a, b, s = e.args[:5]
        vv, rows, cols, flat = self._segments(self.value(body, lv), k, lv)
        xp = self.xp
        out = self.fresh("x")
        ones = f"{xp}.ones(({rows}, 1))"
        if isinstance(e, forms.ProdAfter):
            # exclusive suffix products: a reversed cumulative product, no division
            suf = f"{xp}.cumulative_prod({xp}.concat([{ones}, {xp}.flip({vv}, axis=1)], axis=1), axis=1)[:, :-1]"
            self.emit(f"{out} = " + flat(f"{xp}.flip({suf}, axis=1)"))
            return out
        if isinstance(e, forms.ProdExcept):
            # exclusive prefix and suffix products: no division, so exact zeros are safe
            pre = f"{xp}.cumulative_prod({xp}.concat([{ones}, {vv}], axis=1), axis=1)[:, :-1]"
            suf = f"{xp}.cumulative_prod({xp}.concat([{ones}, {xp}.flip({vv}, axis=1)], axis=1), axis=1)[:, :-1]"
            self.emit(f"{out} = " + flat(f"({pre} * {xp}.flip({suf}, axis=1))"))
            return out
        pick = "argmax" if e.args[5] > 0 else "argmin"
        self.emit(f"{out} = {xp}.zeros(({rows}, {cols}))")
        self.emit(f"if {cols} > 0:")
        self.emit(f"    {out} = {xp}.asarray({xp}.arange({cols}) == {xp}.{pick}({vv}, axis=1, keepdims=True), "
                  f"dtype={xp}.float64)")
        self.emit(f"{out} = {flat(out)}")
        return out

    def _lin_state(self, e, lv: Level) -> str:
        """State of v ← a·v + b before each step of k, from 0, per segment: a Hillis–Steele scan of the
        affine maps (a, b) ∘ (a', b') = (a·a', a·b' + b), ⌈log₂ N⌉ passes of products and sums."""
        a, b, k = e.args[:3]
        xp = self.xp
        sa, rows, _, flat = self._segments(self.value(a, lv), k, lv)
        sb, _, _, _ = self._segments(self.value(b, lv), k, lv)
        sh, out = self.fresh("sh"), self.fresh("st")
        self.emit(f"{sh} = 1")
        self.emit(f"while {sh} < {sb}.shape[1]:")
        self.emit(f"    {sb}[:, {sh}:] = {sa}[:, {sh}:] * {sb}[:, :-{sh}] + {sb}[:, {sh}:]")
        self.emit(f"    {sa}[:, {sh}:] = {sa}[:, {sh}:] * {sa}[:, :-{sh}]")
        self.emit(f"    {sh} *= 2")
        self.emit(f"{out} = " + flat(f"{xp}.concat([{xp}.zeros(({rows}, 1)), {sb}], axis=1)[:, :-1]"))
        return out

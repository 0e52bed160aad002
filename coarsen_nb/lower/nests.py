"""Loop nests beyond one flat level: dense two-level nests as matrix products on blocks.
A mixin of :class:`~coarsen_nb.lower.emit.Printer`; the per-segment operations are
:mod:`coarsen_nb.lower.segment_printing`.

The windows ``x[i + j + c]`` of a correlation are kept as a :class:`Window`, not as the text of their
strided view, so that their contractions with vectors print as correlations and a convolution
(``_window_matvec``, ``_window_vecmat``, ``_window_outer_add``): a sliding view's rows overlap, so a
matrix product on it is not BLAS but a strided loop, and its adjoint an (n_i, n_j) outer product.

Values and statements are records of the lowered IR (:mod:`coarsen_nb.lower.lir`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Assign, BinOp, Call, Index, Lit, Name, Paren, Slice, Tuple
from coarsen_nb.lower.printing import Level, chain, int_typed, is_atom_code, is_number_code, positive
from coarsen_nb.lower.reduction_schedules import dense_pair
from coarsen_nb.phi import forms


@dataclass(frozen=True)
class Window:
    """The windows ``x[lo + i + j]`` (i < n_i, j < n_j) read by a dense nest; prints as their view."""

    arr: str
    lo: lir.Expr
    n_i: lir.Expr
    n_j: lir.Expr

    calls = frozenset({"_window"})      # the helper its code calls (Printer.printed registers it)

    @property
    def args(self) -> tuple[lir.Expr, ...]:
        return (self.lo, self.n_i, self.n_j)

    def expr(self) -> lir.Expr:
        return Call(Name("_window"), (lir.expr(self.arr), *self.args))

    def __str__(self) -> str:
        return str(self.expr())


@dataclass(frozen=True)
class Matrix:
    """The code of an (n_i, n_j) array of a dense nest and the helpers it calls (a block read is
    ``_block(...)``): a matrix may be built and then not printed, so its calls count once it is."""

    code: lir.Expr
    calls: frozenset[str] = frozenset()

    def expr(self) -> lir.Expr:
        return self.code

    def __str__(self) -> str:
        return str(self.code)


def _expr(m) -> lir.Expr:
    """A factor of a dense nest's matrix as an expression (a :class:`Window` or :class:`Matrix`: its code)."""
    return m.expr() if isinstance(m, Window | Matrix) else lir.expr(m)


def _one_number(code: lir.Expr) -> lir.Expr | None:
    """``x`` where ``code`` is ``(x + xp.zeros(n))``, one number made a vector (``NestPrinting._plus_zeros``)."""
    if isinstance(code, Paren) and isinstance(code.inner, BinOp) and code.inner.op == "+":
        zeros = code.inner.right
        if isinstance(zeros, Call) and isinstance(zeros.func, lir.Attr) and zeros.func.attr == "zeros":
            return code.inner.left
    return None


def _calls(code) -> frozenset[str]:
    """The helpers a factor of a dense nest's matrix calls (a block or window read; a table name: none)."""
    return code.calls if isinstance(code, Window | Matrix) else frozenset()


class NestPrinting:
    """Dense nests and segment operations of the :class:`~coarsen_nb.lower.emit.Printer`."""

    def printed(self, m) -> lir.Expr:
        """A dense nest's matrix ``m`` (a :class:`Window`, a :class:`Matrix` or a name) as an expression, the
        helpers its code calls registered: a matrix may be built and not used, so they count once it is printed."""
        self.helpers.update(_calls(m))
        return _expr(m)

    def _dense_pair(self, child: Level):
        """(i, j) when ``child`` is a dense nest's inner level (``soi_levels.dense_pair``), else None."""
        return dense_pair(self.deps, child)

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
        return self._request(lambda: self.walk.rect_product(e, child.mirror, need_matrix),
                             lambda: self._rect_product(child.mirror.product(e, need_matrix), child))

    def _rect_product(self, term, child: Level):
        """The parts of a dense nest's product as the pre-pass decided it (``term``: a
        :class:`~coarsen_nb.lower.reduction_schedules.DenseTerm`, None where ``child`` is no dense nest): its
        blocks, windows and power tables built in its order, even where the product is none after them."""
        if term is None:
            return None
        (i, j), lv = term.pair, child.parent
        rj = self.deps.ranges[j]
        blocks = [self._block_read(f, i, j) if how == "block" else self._power_table(f, i, j, lv)
                  for f, how in term.blocks]
        if not term.ok:
            return None
        general, fi, fj = term.general, term.fi, term.fj
        if general:
            # the other factors of both indices: their product on the flattened points, one row per i
            prod = sp.Mul(*general)
            code = self.value(prod, child)
            if self._may_be_scalar(prod):
                code = self._plus_zeros(code, child.size)
            blocks.append(self.call("reshape", code, Tuple((lv.size, child.rect))))
        jl = self._child(self.root, j, *rj)
        m = None if not blocks else blocks[0] if len(blocks) == 1 else \
            Matrix(Paren(chain("*", [_expr(b) for b in blocks])), frozenset().union(*(_calls(b) for b in blocks)))
        g = self.value(sp.Mul(*fi), lv) if fi else None
        h = self.value(sp.Mul(*fj), jl) if fj else None
        # a factor that may be one number (invariant, or a branch on a scalar) becomes a vector
        if g is not None and (not self.deps(sp.Mul(*fi)) & {i} or self._may_be_scalar(sp.Mul(*fi))):
            g = self._plus_zeros(g, lv.size)
        if h is not None and self._may_be_scalar(sp.Mul(*fj)):
            h = self._plus_zeros(h, jl.size)
        # an integer factor (i + 1, j) as floats: the array API promotes no int64 array with float64 in @ or *
        if g is not None and int_typed(sp.Mul(*fi)):
            g = self.call("asarray", g, dtype=self.dtype("float64"))
        if h is not None and int_typed(sp.Mul(*fj)):
            h = self.call("asarray", h, dtype=self.dtype("float64"))
        return m, g, h

    def _plus_zeros(self, code: lir.Expr, n: lir.Expr) -> lir.Expr:
        """``(code + xp.zeros(n))``: a value that may be one number, as a vector of ``n``."""
        return Paren(BinOp("+", code, self.call("zeros", n)))

    def rect_sum(self, terms, child: Level):
        """Σ_j at the dense level ``child`` as matrix-vector products on blocks and windows, one per term of
        a sum (a correlation's tangent Σ_j dw_j·x_{i+j} + w_j·dx_{i+j} is two), the ``terms`` the pre-pass
        decided (``DenseTerm``s), else None (one is no product)."""
        parts = []
        for term in terms:
            rp = self._rect_product(term, child)
            if rp is None:
                return None
            parts.append(self.rect_rows(*rp, child))
        return parts[0] if len(parts) == 1 else Paren(chain("+", parts))

    def rect_rows(self, m, g, h, child: Level) -> lir.Expr:
        """Σ_j M[i, j]·h[j]·g[i] of ``rect_product``'s parts (h None: 1) at the dense level ``child``: a
        correlation on windows; g, taken out of the sum, is 0 where there is no j (``unless_empty``)."""
        if isinstance(m, Window):
            fn = Name(self.helper('_window_matvec'))
            mv = Call(fn, (lir.expr(m.arr), *m.args, h if h is not None else self.call("ones", m.n_j)))
        else:
            mv = self.call("sum", self.printed(m), axis=Lit("1")) if h is None else \
                Paren(BinOp("@", self.printed(m), h))
        if g is None:
            return mv
        every = Slice()
        h_row = None if h is None else Index(h if is_atom_code(h) else Paren(h), (Lit("None"), every))
        terms = self.printed(m) if h is None else BinOp("*", self.printed(m), h_row)
        return self._times_taken_out(mv, g, self.unless_empty(g, child.rect, child.parent.size), terms, 1)

    def rect_columns(self, m, g, h, child: Level) -> lir.Expr:
        """Σ_i g[i]·M[i, j]·h[j] of ``rect_product``'s parts (g or M None: 1, not both) at the dense level
        ``child``; h, taken out of the sum, is 0 where there is no i (``unless_empty``)."""
        if isinstance(m, Window):
            fn = Name(self.helper('_window_vecmat'))
            col = Call(fn, (g if g is not None else self.call("ones", m.n_i), lir.expr(m.arr), *m.args))
        else:
            col = self.call("sum", self.printed(m), axis=Lit("0")) if g is None else self.call("sum", g) \
                if m is None else Paren(BinOp("@", g, self.printed(m)))
        if h is None:
            return col
        every = Slice()
        g_column = None if g is None else Index(g if is_atom_code(g) else Paren(g), (every, Lit("None")))
        terms = g_column if m is None else self.printed(m) if g is None else BinOp("*", g_column, self.printed(m))
        return self._times_taken_out(col, h, self.unless_empty(h, child.parent.size, child.rect), terms, 0)

    def _times_taken_out(self, summed: lir.Expr, raw: lir.Expr, factor: lir.Expr, terms: lir.Expr,
                         axis: int) -> lir.Expr:
        """``summed * factor``, ``factor`` (a vector; ``raw`` before ``unless_empty``) taken out of the sum along
        ``axis`` of the array ``terms`` (the sum's other factors), except where it is infinite: there the user's
        loop adds its terms one by one, ``terms * factor``, and gets NaN for terms of both signs (+inf and -inf)
        or for a term of 0, where the factor times their sum is ±inf.  The terms are summed again only where
        the factor has an infinity.  The test: none for a literal number, ``math.isinf`` of one number made a
        vector (``_plus_zeros``: a spring constant), ``isinf`` of a vector (a pass over it) otherwise.  A lazy
        graph (Dask) keeps the product alone: the test would compute it."""
        number = _one_number(raw)
        if not self.eager or number is not None and is_number_code(number):
            return Paren(BinOp("*", summed, factor))
        out = Name(self.fresh("taken_out"))
        if number is None:
            f = Name(self.fresh("factor"))
            self.emit(Assign(f, factor))
            factor = f
        self.emit(Assign(out, BinOp("*", summed, factor)))
        every, vector = Slice(), factor if is_atom_code(factor) else Paren(factor)
        along = Index(vector, (Lit("None"), every) if axis == 0 else (every, Lit("None")))
        one_by_one = self.call("sum", BinOp("*", terms, along), axis=Lit(str(axis)))
        if number is None:
            test = self.call("any", self.call("isinf", factor))
        else:
            self.uses_math = True
            test = Call(lir.Attr(Name("math"), "isinf"), (number,))
        self.emit(lir.If(test, (Assign(out, self.call("where", self.call("isinf", factor), one_by_one, out)),),
                         exceptional=True))
        return out

    def unless_empty(self, factor: lir.Expr, summed: lir.Expr, n: lir.Expr) -> lir.Expr:
        """``factor`` (a vector of ``n``) taken out of a sum over ``summed`` points, or zeros where there are
        none: the user's loop never computes the factor's term then, so its adjoint is 0, not the product
        of the empty sum's 0 with the factor (NaN where the factor is infinite: ``exp(-2 w_k)`` of a
        component of weight 0, gmm's ∂/∂mu with no points).  One test of a count, outside the arrays."""
        if isinstance(summed, Lit) and str(summed).isdigit() and int(str(summed)) > 0:
            return factor
        return Paren(lir.IfExp(factor, positive(summed), self.call("zeros", n)))

    def window_add(self, b: str, win: Window, m, g, h) -> lir.Stmt:
        """The statement ``b[lo + i + j] += M[i, j]·g[i]·h[j]`` into the windows ``win`` of ``b``: one
        convolution of g and h when there is no M (h or g None: 1), else the slice adds of ``_window_add``."""
        if m is None:
            g = g if g is not None else self.call("ones", win.n_i)
            h = h if h is not None else self.call("ones", win.n_j)
            fn = Name(self.helper('_window_outer_add'))
            return lir.ExprStmt(Call(fn, (lir.expr(b), *win.args, g, h)))
        every = Slice()
        factors = [self.printed(m)] + ([Index(Paren(g), (every, Lit("None")))] if g is not None else []) + \
            ([Index(Paren(h), (Lit("None"), every))] if h is not None else [])
        return lir.ExprStmt(Call(Name(self.helper('_window_add')), (lir.expr(b), *win.args, chain("*", factors))))

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
        jl = self._child(self.root, j, *self.deps.ranges[j])
        b = self.value(base, lv)
        e = self.value(ex, jl)
        bv, ev, top, tab, out = (Name(self.fresh(h)) for h in ("pow_base", "pow_exp", "pow_top", "pow_table",
                                                               "powers"))
        f64, i64, one, axis = self.dtype("float64"), self.dtype("int64"), Lit("1"), {"axis": Lit("1")}
        column = Tuple((Lit("-1"), one))
        self.emit(Assign(bv, self.call("reshape", BinOp("+", self.call("asarray", b, dtype=f64),
                                                        self.call("zeros", lv.size)), column)))
        self.emit(Assign(ev, BinOp("+", self.call("asarray", e, dtype=i64), self.call("zeros", jl.size, dtype=i64))))
        as_int = lambda fn: Call(Name("int"), (self.call(fn, ev),))        # noqa: E731
        self.emit(Assign(top, lir.IfExp(as_int("max"), positive(jl.size), Lit("0"))))
        small = BinOp("+", BinOp("*", Lit("2"), jl.size), Lit("16"))
        test = lir.BoolOp("and", (positive(jl.size), lir.Compare(">=", as_int("min"), Lit("0")),
                                  lir.Compare("<=", top, small)))
        powers = self.call("broadcast_to", bv, Tuple((lv.size, top)))
        table = (Assign(tab, self.call("cumulative_prod", powers, **axis)),
                 Assign(tab, self.call("concat", lir.List((self.call("ones", Tuple((lv.size, one))), tab)), **axis)),
                 Assign(out, self.call("take", tab, ev, **axis)))
        row = Tuple((one, Lit("-1")))
        power = Assign(out, BinOp("**", bv, self.call("asarray", self.call("reshape", ev, row), dtype=f64)))
        self.emit(lir.If(test, table, (power,)))
        self._tables[key] = out
        return out

    def _block_read(self, f, i, j):
        """``_block(A, lo_i, n_i, lo_j, n_j)`` for a read ``A[i + c, j + c']``, the :class:`Window` of a
        read ``x[i + j + c]`` (the windows of a correlation, a strided view), else None."""
        if not isinstance(f, sp.Symbol) or f not in self.reads:
            return None
        arr, idx = self.reads[f]
        win = self.window_read_index(idx, i, j, arr)
        if win is not None:
            return win
        args = self.block_read_index(idx, i, j)
        return None if args is None else Matrix(Call(Name("_block"), (lir.expr(arr), *args)), frozenset({"_block"}))

    def window_read_index(self, idx, i, j, arr: str = ""):
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

    def block_read_index(self, idx, i, j) -> tuple[lir.Expr, ...] | None:
        """``(lo_i, n_i, lo_j, n_j)`` of the block that ``[i + c, j + c']`` covers (else None)."""
        if len(idx) != 2:
            return None
        ci, cj = sp.sympify(idx[0]) - i, sp.sympify(idx[1]) - j
        if self.deps(ci) or self.deps(cj) or i in ci.free_symbols or j in cj.free_symbols:
            return None
        (ai, bi, _), (aj, bj, _) = self.deps.ranges[i], self.deps.ranges[j]
        lo_i, lo_j = self.value(ai + ci), self.value(aj + cj)
        n_i, n_j = self.value(sp.Max(0, bi - ai)), self.value(sp.Max(0, bj - aj))
        return lo_i, n_i, lo_j, n_j

"""SymPy node types for the lifted forms of loops.

A closed-form loop is a *reduction over an index range*.  We keep our own
small node classes instead of :class:`sympy.Sum` because the index range has
a step, its upper bound is exclusive (Python's ``range``), and the lowering
needs to see the structure as is (SymPy's ``Sum`` tries to evaluate itself).

* ``RSum(body, k, start, stop, step)``  Σ over k in range(start, stop, step)
* ``RProd(...)``, ``RMax(...)``, ``RMin(...)`` likewise with ×, max, min
* ``RWrite(init, body, k, start, stop, step, i1, ...)``: ``init`` with
  ``[i1, ...] = body`` at every k — the closed form of an ``out[i] = ...`` loop
* ``RLin(a, b, k, start, stop, step)``: Σ_k b_k Π_{j>k} a_j, the linear
  recurrence v ← a_k·v + b_k (C8) from 0
* ``LogSumExp(c, g, k, start, stop, step)`` = log(c + Σ_k exp(g_k)), lowered
  with a max shift

The derivative code's own nodes (``ElemSum``, ``SumTo``, ``ProdExcept``, ``ArgOneHot``, ``Gather``,
``Unwritten``, ``PowInt``) are here too; the elementary functions of our own (softplus, sigmoid, log1p,
...) are :mod:`coarsen_nb.phi.elementary`'s, γ and the ordered predicates :mod:`coarsen_nb.phi.gammas`'.

Their ``body`` is usually a temp symbol of a kernel (see :mod:`coarsen_nb.plan`);
:meth:`Kernel.exprs` substitutes temps, so a printed SOI shows the whole Σ.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.cache import cacheit
from sympy.printing.str import sstr

REDUCTIONS = {}


@cacheit
def _printed(form) -> str:
    return sstr(form)


class Inert(sp.Function):
    """A form SymPy keeps as written: no evaluation or rewriting on construction (our rules
    differentiate and lower it)."""

    @classmethod
    def eval(cls, *args):
        return None

    def __str__(self):
        # The lowering sorts forms by their text (``sorted(found, key=str)``: a stable order, the same in
        # every process), again and again for the same forms; printing one that holds γ's re-sorts every
        # sum's terms (segment_distance: 50 prints, 0.1 s of a cold build).  The text is a function of the
        # form, so it is printed once (SymPy's memo, emptied by ``clear_cache``).
        return _printed(self)


class Reduction(Inert):
    """Base class: not evaluated, printed as the big operator."""

    kind = ""
    symbol = ""

    @property
    def body(self):
        return self.args[0]

    @property
    def index(self):
        return self.args[1]

    @property
    def bounds(self):
        return self.args[2], self.args[3], self.args[4]

    def _latex(self, printer):
        body, k, start, stop, step = self.args[:5]
        step_txt = "" if step == 1 else rf",\ \mathrm{{step}}\ {printer._print(step)}"
        return (rf"{self.symbol}_{{{printer._print(k)}={printer._print(start)}}}^{{{printer._print(stop - 1)}"
                rf"{step_txt}}} \left({printer._print(body)}\right)")

    def _sympystr(self, printer):
        body, k, start, stop, step = self.args[:5]
        return f"{self.kind}({printer._print(body)}, {k} in range({start}, {stop}, {step}))"


def _register(cls):
    REDUCTIONS[cls.kind] = cls
    return cls


@_register
class RSum(Reduction):
    kind, symbol, nargs = "sum", r"\sum", 5


@_register
class RProd(Reduction):
    kind, symbol, nargs = "prod", r"\prod", 5


@_register
class RMax(Reduction):
    kind, symbol, nargs = "max", r"\max", 5


@_register
class RMin(Reduction):
    kind, symbol, nargs = "min", r"\min", 5


class RWrite(Inert):
    """``init`` with ``init[idx] = body`` for every k in range: an array value."""

    def _latex(self, printer):
        init, body, k, start, stop, step, *idx = self.args
        ind = ", ".join(printer._print(i) for i in idx)
        return (rf"{printer._print(init)}\left[{ind}\right] \leftarrow {printer._print(body)}"
                rf"\ \forall\, {printer._print(k)} \in [{printer._print(start)}, {printer._print(stop)})")


class RLin(Inert):
    """Σ_k b_k · Π_{j>k} a_j over k in range(start, stop, step): v_N of v ← a_k·v + b_k from v = 0 (C8).

    ``RLin(a, b, k, start, stop, step)``; the whole η is init·Π_k a_k + RLin.
    Its own node (not Σ of a suffix product) because its derivative is not
    pointwise: ∂/∂a_k needs the state before step k (:class:`LinState`), and
    the rules in :mod:`coarsen_nb.symbolic.diff` / ``jvp`` say so.  Lowered as
    Σ b·(exclusive suffix products): no division, so exact zeros in a are fine.
    """

    nargs = 6

    def _latex(self, printer):
        a, b, k, start, stop = self.args[:5]
        kk = printer._print(k)
        return (rf"\sum_{{{kk}={printer._print(start)}}}^{{{printer._print(stop - 1)}}} "
                rf"\left({printer._print(b)}\right) \prod_{{j > {kk}}} \left({printer._print(a)}\right)_j")

    def _sympystr(self, printer):
        a, b, k, start, stop, step = self.args
        return (f"linrec({printer._print(a)}, {printer._print(b)}, {k} in range({start}, {stop}, {step}))")


class ProdAfter(Inert):
    """Π_{j>k} a_j over the range of ``k`` (exclusive suffix product): ∂RLin/∂b_k, no division."""

    nargs = 5

    def _latex(self, printer):
        body, k = self.args[:2]
        return rf"\prod_{{j > {printer._print(k)}}} \left({printer._print(body)}\right)_j"


class LinState(Inert):
    """Σ_{i<k} b_i Π_{i<j<k} a_j: the state of v ← a·v + b before step k, from v = 0.

    ``LinState(a, b, k, start, stop, step)``, the factor of ∂RLin/∂a_k.  Lowered
    by a doubling scan over the affine maps (a, b) — ⌈log₂ N⌉ array passes of
    products and sums, never a division by a prefix product (which is unstable
    and fails on exact zeros).
    """

    nargs = 6

    def _latex(self, printer):
        a, b, k = self.args[:3]
        return rf"\operatorname{{state}}_{{{printer._print(k)}}}\left({printer._print(a)}, {printer._print(b)}\right)"


class LogSumExp(Inert):
    """log(c + Σ_k exp(g_k)) over k in range(start, stop, step): ``LogSumExp(c, g, k, start, stop, step)``.

    Recognized after lifting (:mod:`coarsen_nb.phi.logsumexp`) so that the
    lowering can shift by the maximum — the naive form overflows for g ≳ 710 —
    and the derivative is the softmax exp(g_k − L), which never overflows.
    """

    nargs = 6

    def _eval_is_real(self):
        return True

    def _latex(self, printer):
        c, g, k, start, stop = self.args[:5]
        head = "" if c == 0 else f"{printer._print(c)} + "
        return (rf"\log\left({head}\sum_{{{printer._print(k)}={printer._print(start)}}}^{{{printer._print(stop - 1)}}}"
                rf" e^{{{printer._print(g)}}}\right)")

    def _sympystr(self, printer):
        c, g, k, start, stop, step = self.args
        return f"logsumexp({printer._print(c)}; {printer._print(g)}, {k} in range({start}, {stop}, {step}))"

# ---- nodes that only derivative code uses ----------------------------------------


class ElemSum(Inert):
    """Σ over all elements of an elementwise array value (the adjoint of a broadcast scalar)."""

    nargs = 1

    def _latex(self, printer):
        return rf"\sum_{{\mathrm{{elements}}}} {printer._print(self.args[0])}"


class BroadcastLike(Inert):
    """``BroadcastLike(b, x)``: the value ``b`` at every element of the array ``x`` (the adjoint of a sum of an
    array a segment wrote, whose own rule reads its adjoint element by element)."""

    nargs = 2


class SumTo(Inert):
    """``SumTo(g, x)``: the elementwise adjoint ``g`` summed to the shape of the array leaf ``x``.

    An operand that NumPy broadcast (a bias row added to a matrix, a column times a row) receives
    the sum of its adjoint over the broadcast axes: the leading axes it lacks and the axes where
    it has size 1.  Shapes are only known at run time, so the sum is the module's ``_sum_to``.
    """

    nargs = 2

    def _latex(self, printer):
        g, x = (printer._print(a) for a in self.args)
        return rf"\operatorname{{sum\_to}}_{{{x}}}\left({g}\right)"


class ProdExcept(Inert):
    """Π_{l ≠ k} g_l over the range of ``k``: the zero-safe partial of a product (no division)."""

    nargs = 5

    def _latex(self, printer):
        body, k = self.args[:2]
        return rf"\prod_{{l \ne {printer._print(k)}}} \left({printer._print(body)}\right)_l"


class ArgOneHot(Inert):
    """1 at the first arg-max (arg-min) of ``body`` over the range of ``k``, else 0."""

    nargs = 6

    def _latex(self, printer):
        body, k = self.args[:2]
        return rf"\mathbb{{1}}\left[{printer._print(k)} = \arg\max {printer._print(body)}\right]"


class Gather(Inert):
    """``array[i1, ...]`` of an array-valued symbol inside a level (adjoint of a write)."""


class Unwritten(Inert):
    """``array`` with zeros where the write loop ``(k, start, stop, step, idx...)`` stored values."""


class PowInt(sp.Function):
    """a**m for an integer exponent m >= 0 that varies (aᴺ and a^{N-1-p} of the linear closed forms).

    Its derivative m·a**max(m - 1, 0) is exact and finite at a = 0 for every m,
    where SymPy's m·a**m/a would be 0/0 for the term with m = 0.
    """

    nargs = 2

    @classmethod
    def eval(cls, a, m):
        if a.is_Number and m.is_Integer:
            return a ** m
        if m == 0:
            return sp.Integer(1)
        if m == 1:
            return a
        return None

    def _eval_is_real(self):
        return self.args[0].is_real

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def fdiff(self, argindex=1):
        a, m = self.args
        if argindex == 1:
            return m * PowInt(a, sp.Max(m - 1, 0))
        return PowInt(a, m) * sp.log(a)

    def _latex(self, printer):
        return f"{{{printer._print(self.args[0])}}}^{{{printer._print(self.args[1])}}}"

"""A log-sum-exp in a numba loop nest through one row of its terms, and its softmax read from that row.

L = log(c + Σ_k e^{g_k}) is lowered max-shifted (:func:`coarsen_nb.phi.logsumexp.lowered`): a pass for
m = max(max_k g_k, log c), a pass for Σ_k e^{g_k - m}.  Printed as those two reductions, each pass computes
g_k again, and its adjoint, the softmax e^{g_k - L} that the scatters ``b_x[k] += h_k·e^{g_k - L}`` read,
evaluates one more exponential per k: at each point of a Gaussian mixture's data (``for i: for k:``), g
twice and 2·K exponentials.  A hand-written loop keeps a row instead (gmm's ``a[k]``), and so does this
schedule, for a log-sum-exp whose loop has a fixed range (step 1, bounds that read no loop):

* one pass stores g_k in the row, one finds its maximum (NumPy's: a NaN wins, -inf over an empty range);
* one pass replaces each g_k by e^{g_k - m} (the helper ``_exp``: arithmetic LLVM vectorizes, where the
  libm call of ``math.exp`` is one lane at a time), one sums them: L = m + log(r + s), with r = c·e^{-m}
  (:func:`coarsen_nb.phi.logsumexp.shift`) and s the sum, as the lowered form computes it;
* the softmax at k is then ``row[k] * inv`` with inv = 1/(r + s): e^{g_k - m}/e^{L - m}, one exponential per
  (point, k) in all.  The two agree to rounding (a few ulp).  Where r + s is not positive (only a negative
  or NaN c makes it so, outside what a sum of exponentials is), the row is refilled with e^{g_k - L} as the
  lowered form writes the softmax, and inv is 1: the same values, NaN where L is NaN.  With c = 0 (a loop's
  log-sum-exp from nothing, the common case) the sum is the total, and no refill is printed (it could only
  write the NaN the row times inv already is: :meth:`RowLogSumExp.lse_by_row`).

The row is valid at the point of the outer loops where L was computed, until the next one: the softmax is
read from it only by a printer at that point (its outer loop variables the same) over L's own loop index.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir, numba_extrema
from coarsen_nb.lower.nest_analysis import maximal_reductions
from coarsen_nb.lower.numba_loop_parts import Block, minus, paren
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.phi import forms, logsumexp

_MINUS_INF = lir.Unary("-", lir.Attr(lir.Name("math"), "inf"))


class RowLogSumExp:
    """The part of :class:`~coarsen_nb.lower.numba_nests.NestLoops` that computes a log-sum-exp through a row
    (see the module docstring).  It prints with the nest's own means: ``fresh``, ``_range`` (a loop's
    variable and range), ``_point`` (a printer at a point of the loops), ``_hoisted`` (the values of an inner
    loop that vary over the outer ones only), ``_note`` (a printer's helpers)."""

    rows: dict                          # LogSumExp -> (its row, its range's start)
    softmaxes: list                     # (e^{g - L}, k, its code at k's variable, the outer loops' variables)

    def make_rows(self, block: Block, exprs) -> None:
        """A row (``xp.empty`` of the loop's length, before the nest) for each log-sum-exp of ``exprs`` whose
        loop has a fixed range and whose terms reduce nothing themselves."""
        found: dict = {}
        for e in exprs:
            for n in self.body.nodes(e):
                if isinstance(n, forms.LogSumExp):
                    found.setdefault(n, None)
        for node in sorted(found, key=str):
            g, k = node.args[1:3]
            ranges = self.body.deps.ranges.get(k)
            if ranges is None or any(self.body.deps(x) for x in ranges) or sp.sympify(ranges[2]) != 1 or \
                    maximal_reductions(self.body, g) or \
                    any(isinstance(n, forms.ArgOneHot) for n in self.body.nodes(g)):
                continue
            _, rng = self._range(k, block.pr)
            lo = rng.args[0]
            row = lir.Name(self.fresh("row"))
            count = lir.Call(lir.Name("max"), (lir.Lit("0"), minus(rng.args[1], lo)))
            block.add([lir.Assign(row, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (count,)))])
            self.rows[node] = (row, lo)

    def softmax_reads(self, index: dict) -> dict:
        """The softmaxes a printer at the point ``index`` (binder -> loop variable) reads from their rows."""
        out = {}
        for node, k, code_at, outer in self.softmaxes:
            if k in index and all(index.get(b) == v for b, v in outer.items()):
                out[node] = code_at(index[k])
        return out

    def lse_by_row(self, node, index: dict, block: Block, known: dict) -> None:
        """Compute the log-sum-exp ``node`` at the point ``index`` into ``block`` through its row; ``known``
        and the block's printer then read it, and the printers at this point over its loop its softmax."""
        g, k = node.args[1:3]
        row, lo = self.rows[node]
        level = frozenset(index)
        inner_known = self._hoisted(block, known, [g], level)

        def at(var):
            return lir.Index(row, (minus(var, lo),))

        # g at every k into the row (a loop that only stores: vectorized), then its maximum
        top = lir.Name(self.fresh("top"))
        var, rng = self._range(k, block.pr)
        scan = Block(self._point({**index, k: var}, inner_known))
        value = scan.pr.value(g)
        body = scan.done() + [lir.Assign(at(var), value)]
        self._note(scan.pr)
        def scan_max():
            v = lir.Name(self.fresh("v"))
            var2, rng2 = self._range(k, block.pr)
            return lir.For(var2, rng2, (lir.Assign(v, at(var2)), numba_extrema.exact_step(top, v, "max")))

        block.add([lir.For(var, rng, tuple(body)), lir.Assign(top, _MINUS_INF)])
        if index:
            # (a row at each point of outer loops -- gmm's components: 8 -- keeps the exact scan: settling a zero
            # or a NaN at every point, a pass over a tile's points, cost what the vector steps saved, +7%)
            block.add([scan_max()])
        else:
            # (the one row of the nest: the maximum in vector instructions, a zero or a NaN settled: numba_extrema)
            block.add(numba_extrema.vectorized(self.writer, scan_max(), top, _MINUS_INF, "max", again=scan_max()))
            self.loads.add(numba_extrema.NAMES["max"])
        self.loads.add("math")
        top_node = forms.RMax(*node.args[1:])
        known[top_node] = block.pr.root.memo[top_node] = top.id
        # the shift m and r = c·e^{-m}, then e^{g - m} over the row, summed
        m, rest = logsumexp.shift(node)
        m_code, rest_code = (self._named(block, block.pr.value(x), word) for x, word in ((m, "shift"), (rest, "rest")))
        # (two loops: the one that only stores exponentials is vectorized, with the helper _exp; a sum keeps
        # LLVM from vectorizing a loop without fastmath)
        s = lir.Name(self.fresh("s"))
        var, rng = self._range(k, block.pr)
        exp = lir.Call(lir.Name("_exp"), (lir.BinOp("-", at(var), m_code),))
        self.loads.add("_exp")
        var2, rng2 = self._range(k, block.pr)
        # (c = 0, the log-sum-exp a loop starts from nothing: r is 0 and the total the sum itself)
        plain = rest == 0
        total = s if plain else lir.Name(self.fresh("total"))
        lse, inv = (lir.Name(self.fresh(w)) for w in ("lse", "inv"))
        log = lir.Call(lir.Attr(lir.Name("math"), "log"), (total,))
        block.add([lir.For(var, rng, (lir.Assign(at(var), exp),)), lir.Assign(s, lir.Lit("0.0")),
                   lir.For(var2, rng2, (lir.AugAssign(s, "+", at(var2)),)),
                   *([] if plain else [lir.Assign(total, lir.BinOp("+", rest_code, s))]),
                   lir.Assign(lse, lir.BinOp("+", m_code, log)),
                   lir.Assign(inv, lir.BinOp("/", lir.Lit("1.0"), total))])
        known[node] = block.pr.root.memo[node] = lse.id
        self.softmaxes.append((sp.exp(g - node), k, lambda var: lir.Paren(lir.BinOp("*", at(var), inv)),
                               dict(index)))
        if plain:
            # (no refill: with c = 0 the sum is 1 or more wherever the maximum is a number, the term at the
            # maximum being e^0; elsewhere -- an empty range, which no softmax reads, or a maximum of ±inf or
            # NaN, where the sum and L are NaN -- the refill's e^{g - L} is NaN wherever the row times inv,
            # 1/NaN, is: the same softmax, without a second pass computing g that never runs)
            return
        # (r + s not positive: the softmax as the lowered form writes it, e^{g - L})
        var, rng = self._range(k, block.pr)
        again = Block(self._point({**index, k: var}, inner_known))
        value = again.pr.value(g)
        soft = lir.Call(lir.Attr(lir.Name("math"), "exp"), (lir.BinOp("-", paren(value), lse),))
        self._note(again.pr)
        refill = lir.For(var, rng, tuple(again.done() + [lir.Assign(at(var), soft)]))
        block.add([lir.If(lir.Unary("not", lir.Paren(lir.Compare(">", total, lir.Lit("0")))),
                          (refill, lir.Assign(inv, lir.Lit("1.0"))))])

    def _named(self, block: Block, code: lir.Expr, word: str) -> lir.Expr:
        """``code`` as an atom: itself, or a fresh name assigned it in ``block``."""
        if is_atom_code(code):
            return code
        name = lir.Name(self.fresh(word))
        block.pr.emit(lir.Assign(name, code))
        return name

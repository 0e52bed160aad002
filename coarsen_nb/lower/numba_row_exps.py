"""A row contraction whose row calls exp: its rows in tiles, the exponentials of a tile in one vectorized loop.

A row contraction (:mod:`coarsen_nb.lower.numba_rows`) computes at each row its dot products, a function of
them, and adds the result.  Where that function calls ``exp`` (a logistic regression's ``sigmoid`` and
``softplus``, or ``exp`` itself), Numba calls libm's ``exp`` once per row, which LLVM cannot vectorize (the
helpers ``_sigmoid``/``_softplus`` hide it behind a branch too), and the row loop runs one row at a time.
JAX's jit computes the exponentials of all rows as one vector operation.  Here the loop over the rows takes a
tile (``numba_tiles.TILE``) of rows at a time, in four loops over the tile::

    for tile in range(a, b, 16):
        for i in range(tile, min(tile + 16, b)):     # the dot products, and each exponential's argument
            ...
            acc_t[i - tile] = acc
            m_t[i - tile] = m
        for i in range(tile, min(tile + 16, b)):     # the exponentials: _exp, arithmetic LLVM vectorizes
            e_t[i - tile] = _exp(-abs(m_t[i - tile]))
        for i in range(tile, min(tile + 16, b)):     # the row's numbers, reading them back
            m = m_t[i - tile]
            e = e_t[i - tile]
            ...                                      # sigmoid(+-m) is (1.0 if z >= 0 else e) / (1.0 + e)
            g_t[i - tile] = g
        for i in range(tile, min(tile + 16, b)):     # the sums over the rows and the scatters, in row order
            g = g_t[i - tile]
            acc += g
            for j in ...:
                b_w[j] += X[i, j] * g

The row's numbers are a loop of their own (``numba_rows``' ``_last_loops``) because a sum over the rows in a
loop keeps LLVM from vectorizing it (a float sum's order); without one, the divisions and selects of the
sigmoid are vectorized too.  ``sigmoid(z)`` and ``softplus(z)`` need ``exp(-|z|)`` alone (the helpers' two
arms are written with it: ``_sigmoid``'s ``1 / (1 + exp(-z))`` for z >= 0, ``exp(z) / (1 + exp(z))`` below;
``_softplus``'s ``z + log1p(exp(-z))`` above 0, ``log1p(exp(z))`` below), so both arms of a branch on the sign
share one exponential.  ``_exp`` is within 1 ulp of ``math.exp`` (``numba_helpers``), and NaN and +-inf give
what the helpers give.  An argument is computed ahead only where the row computes it anyway, outside any
branch's arm (a logistic regression's margin is its branch's test), or is ``+``/``*``/``abs`` of such values
and parameters: nothing an arm guards is computed ahead.  It varies over the rows and is a float (the tiles
are float64).  The sums are those of the loop over the rows, in the same order.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.phi import elementary, forms, gammas

# the functions computed from exp(-|z|): the two arms of their helpers share it
_OF_ABS = (elementary.Sigmoid, elementary.Softplus)


class RowExps:
    """The exponentials of one row contraction's row that a tile computes ahead: each is keyed by the row's
    value ``x`` whose exponential it is, ``("abs", x)`` for exp(-|x|), ``(+-1, x)`` for exp(+-x)."""

    def __init__(self, body, exprs, i_sym, j_sym):
        self.body = body
        self.i_sym = i_sym
        always = self._unconditional(exprs, j_sym)
        self.keys: list = []
        #: each key's x: the node to print (a temporary's name where the row has one)
        self.shown: dict = {}
        #: the calls of exp itself, each with its key: the tile's last loop knows them as computed
        self.exps: dict = {}
        for n in self._calls(exprs, j_sym):
            key = self.key(n)
            # (a float that varies over the rows: the tile's numbers are float64)
            if not self._ahead(key[1], always) or self.body.expand(key[1]).is_integer:
                continue
            if key not in self.keys:
                self.keys.append(key)
                self.shown.setdefault(key[1], always.get(key[1], key[1]))
            if isinstance(n, sp.exp):
                self.exps[n] = key

    def resolve(self, e):
        e = sp.sympify(e)
        while isinstance(e, sp.Symbol) and e in self.body.temps:
            e = sp.sympify(self.body.temps[e])
        return e

    def key(self, call):
        """The key of the exponential that ``call`` (sigmoid, softplus or exp of a row's value) needs."""
        arg = self.resolve(call.args[0])
        sign = 1
        if arg.could_extract_minus_sign():
            arg, sign = self.resolve(-arg), -1
        if isinstance(call, _OF_ABS):
            if isinstance(arg, sp.Abs):
                arg = self.resolve(arg.args[0])
            return ("abs", arg)
        return (sign, arg)

    def _ahead(self, x, always) -> bool:
        """Whether ``x`` may be computed ahead at every row: the row computes it anyway, or it is arithmetic
        (+, *, abs) of what the row computes anyway, of numbers and of the function's parameters."""
        if x in always or x.is_Number:
            return True
        if isinstance(x, sp.Symbol):
            return x not in self.body.temps and x not in self.body.reads
        return isinstance(x, (sp.Add, sp.Mul, sp.Abs)) and all(self._ahead(self.resolve(a), always) for a in x.args)

    def _calls(self, exprs, j_sym):
        """The calls of sigmoid, softplus and exp in the row (in branches' arms too), varying over the rows
        (one that does not is computed once, before the loop), not over j."""
        seen, stack, found = set(), [sp.sympify(e) for e in exprs], []
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if isinstance(n, sp.Symbol):
                if n in self.body.temps:
                    stack.append(self.body.temps[n])
                continue
            if isinstance(n, forms.Reduction):
                continue
            if isinstance(n, (*_OF_ABS, sp.exp)) and self.i_sym in self.body.deps(n) - {j_sym} and \
                    j_sym not in self.body.deps(n):
                found.append(n)
            stack.extend(n.args)
        return found

    def _unconditional(self, exprs, j_sym) -> dict:
        """The row's values computed at every row, outside every branch's arm (a branch's first test is),
        not varying over j: each resolved value -> the node that names it (a temporary where there is one)."""
        seen, stack, out = set(), [sp.sympify(e) for e in exprs], {}
        while stack:
            n = stack.pop()
            if n in seen or n.is_Number:
                continue
            seen.add(n)
            if j_sym not in self.body.deps(n):
                out.setdefault(self.resolve(n), n)
            if isinstance(n, sp.Symbol):
                if n in self.body.temps:
                    stack.append(self.body.temps[n])
            elif isinstance(n, sp.Piecewise):
                stack.append(n.args[0].cond)
            elif isinstance(n, (sp.ITE, gammas.AndThen, gammas.OrElse)):
                stack.append(n.args[0])
            elif not isinstance(n, forms.Reduction):
                stack.extend(n.args)
        return out

    def names_of(self, x) -> list:
        """``x`` and the temporaries that resolve to it: what the tile's last loop knows as computed."""
        return [x, *(s for s in self.body.temps if self.resolve(s) == x)]


def exp_value(key, arg: lir.Expr, exp_helper: str) -> lir.Expr:
    """The exponential of ``key`` from the tile's stored argument ``arg``."""
    if key[0] == "abs":
        arg = lir.Unary("-", lir.Call(lir.Name("abs"), (arg,)))
    elif key[0] == -1:
        arg = lir.Unary("-", arg)
    return lir.Call(lir.Name(exp_helper), (arg,))


def hook(exps: RowExps, e_names: dict, then):
    """The row printer's hook (``Printer.scalar_call``) of the tile's last loop: sigmoid and softplus of a
    value whose exponential the tile computed, from it; ``then`` the hook before (or None).  (A call of exp
    itself is known to that printer as computed: ``RowExps.exps``.)"""
    def call(pr, e, a):
        if isinstance(e, (*_OF_ABS, sp.exp)):
            key = exps.key(e)
            if key in e_names:
                ex = e_names[key]
                z = a[0]
                if isinstance(e, elementary.Sigmoid):
                    # 1 / (1 + exp(-z)) for z >= 0, exp(z) / (1 + exp(z)) below: _sigmoid's two arms
                    top = lir.Paren(lir.IfExp(lir.Lit("1.0"), lir.Compare(">=", z, lir.Lit("0")), ex))
                    return lir.Paren(lir.BinOp("/", top, lir.Paren(lir.BinOp("+", lir.Lit("1.0"), ex))))
                if isinstance(e, elementary.Softplus):
                    # z + log1p(exp(-z)) above 0, log1p(exp(z)) below: _softplus's two arms
                    pr.uses_math = True
                    pos = lir.Paren(lir.IfExp(z, lir.Compare(">", z, lir.Lit("0")), lir.Lit("0.0")))
                    return lir.Paren(lir.BinOp("+", pos, lir.Call(lir.Attr(lir.Name("math"), "log1p"), (ex,))))
                return ex
        return then(pr, e, a) if then is not None else None
    return call

"""Which loop indices (and elementwise arrays) a kernel expression varies over.

Both the derivative pass and the printer need this: a value that varies over
the index k of a reduction lives on that reduction's level; its adjoint
contribution to a value that does not vary over k must be summed over k.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi import forms, scans

ELEM = sp.Symbol("@elem")


class Deps:
    """Dependency sets over a kernel's temps, reads and leaves.

    ``array_leaf(symbol) -> bool`` says whether a leaf is an elementwise array.
    """

    def __init__(self, temps: dict, reads: dict, array_leaf, exprs=()):
        self.temps = temps
        self.reads = reads
        self.array_leaf = array_leaf
        self.cache: dict = {}
        self.ranges: dict = {}          # binder -> (start, stop, step)
        # the elementwise value whose elements the contributions now being added hold at (set by the
        # reverse sweep before each rule): the shape a number counted once per element broadcasts to
        self.held_at = None
        for e in list(temps.values()) + list(exprs):
            self.scan(e)

    def scan(self, e) -> None:
        """Record the ranges of the binders inside ``e``."""
        for node in sp.preorder_traversal(e):
            if isinstance(node, (forms.Reduction, forms.ProdExcept)):
                self.ranges[node.args[1]] = tuple(node.args[2:5])
            elif isinstance(node, (forms.ArgOneHot, forms.ProdAfter)):
                self.ranges[node.args[1]] = tuple(node.args[2:5])
            elif isinstance(node, (forms.RLin, forms.LinState, forms.LogSumExp) + scans.SCAN_FORMS):
                self.ranges[node.args[2]] = tuple(node.args[3:6])
            elif isinstance(node, (forms.RWrite, forms.Unwritten)):
                j = 2 if isinstance(node, forms.RWrite) else 1
                self.ranges[node.args[j]] = tuple(node.args[j + 1:j + 4])

    def __call__(self, e) -> frozenset:
        if e in self.cache:
            return self.cache[e]
        out: set = set()
        if isinstance(e, sp.Symbol):
            if e in self.temps:
                out |= self(self.temps[e])
            elif e in self.reads:
                for i in self.reads[e][1]:
                    out |= self(sp.sympify(i))
            elif e in self.ranges:
                # an inner index exists once per point of the loops its range depends on
                out.add(e)
                for bound in self.ranges[e]:
                    out |= self(sp.sympify(bound))
            elif self.array_leaf(e):
                out.add(ELEM)
        elif isinstance(e, forms.Reduction):
            body, k, a, b, s = e.args
            out |= (self(body) - {k}) | self(a) | self(b) | self(s)
        elif isinstance(e, (forms.RLin, forms.LogSumExp)):
            a, g, k, lo, hi, s = e.args
            out |= ((self(a) | self(g)) - {k}) | self(lo) | self(hi) | self(s)
        elif isinstance(e, forms.RWrite):
            init, body, k, a, b, s, *idx = e.args
            inner = self(body).union(*(self(sp.sympify(i)) for i in idx))
            # the written array is elementwise where its initial array is (its elements are used
            # by the kernel's array code); the write itself is computed once (see Printer.natural)
            out |= self(init) | (inner - {k}) | self(a) | self(b)
        elif isinstance(e, forms.Gather):
            out |= set().union(*(self(sp.sympify(i)) for i in e.args[1:]))
        elif isinstance(e, forms.Unwritten):
            body, k, a, b, s, *idx = e.args
            out |= ({ELEM} & self(body)) | self(a) | self(b) | (set().union(*(self(sp.sympify(i)) for i in idx)) - {k})
        elif isinstance(e, forms.ElemSum):
            out |= self(e.args[0]) - {ELEM}
        elif isinstance(e, sp.Basic):
            for a in e.args:
                out |= self(a)
        self.cache[e] = frozenset(out)
        return self.cache[e]

    def nest_depth(self, k) -> int:
        """How deep loop ``k`` is nested: 1 for a loop whose range reads no other loop index, else one more
        than the deepest loop its range reads (a triangular ``range(i + 1, n)`` is inside ``i``)."""
        return self._nest(k)

    def _nest(self, k) -> int:
        a, b, s = self.ranges[k]
        outer = (self(a) | self(b) | self(s)) & set(self.ranges)
        return 1 + max((self._nest(j) for j in outer), default=0)

    def reduce_to(self, c, target_deps: frozenset, level=frozenset()):
        """``c`` (holding at every point of ``level``) summed over the binders the target does not vary over."""
        extra = (self(c) | frozenset(level)) - target_deps
        binders = [b for b in extra if b in self.ranges]
        order = list(self.ranges)
        # innermost first: deeper nesting, then the binder created first (inner loops are lifted first)
        for k in sorted(binders, key=lambda b: (-self._nest(b), order.index(b))):
            a, b, s = self.ranges[k]
            c = forms.RSum(c, k, a, b, s)
        if ELEM in extra:
            c = forms.ElemSum(self._per_element(c))
        return c

    def _per_element(self, c):
        """``c``, one number summed over the elements of :attr:`held_at`, as that number at each of them.

        ``np.sum(v + s)`` gives ``s`` the adjoint 1 once per element of ``v + s``: the elements of that
        value, not of every array its kernel holds (``np.sum(u[1:] * w[:-1])`` beside ``v`` holds arrays
        of two lengths, which do not broadcast).  Only a number (no loop index, no element) is wrapped:
        an array's adjoint has the elements already."""
        if self.held_at is None or self(c):
            return c
        return forms.BroadcastLike(c, self.held_at)

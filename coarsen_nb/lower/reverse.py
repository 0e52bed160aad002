"""The reverse sweep of a generated module: ``NAME_vjp`` and ``NAME_grad`` after the forward sweep.

A mixin of :class:`~coarsen_nb.lower.module.ModuleWriter`.  The SOIs' VJPs run in reverse order: a kernel's
adjoint is the symbolic VJP of :mod:`coarsen_nb.symbolic.diff` printed by the same printer that printed its
forward values (their primal values are shared through CSE, not recomputed); an opaque step's is its rule
(:mod:`coarsen_nb.rules`, or the reshapes, literals and gathers here); a branch reverses the arm it took;
an iterated loop walks its tape backwards (:mod:`coarsen_nb.lower.iterated`); an element read's adjoint is
scattered into the array's (:mod:`coarsen_nb.lower.scatter_adjoints`).  ``NAME_grad`` seeds the
result's adjoint with exactly 1 and computes only the primal values its adjoints read.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.unbound import is_bound_check
from coarsen_nb.lower import lir, literals, reshapes
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.lir import AugAssign, BinOp, Call, Index, Name
from coarsen_nb.lower.printing import FLOAT64, TRUE, int_typed, is_number_code, shape_of, xp_call
from coarsen_nb.lower.reached_adjoints import Reached, reached_where
from coarsen_nb.lower.scatter_adjoints import ScatterAdjoints
from coarsen_nb.phi import forms
from coarsen_nb.plan import CondStep, KernelStep, PrimStep, names_read
from coarsen_nb.rules.build import AddedBy, AtIndex
from coarsen_nb.rules.table import PRIMITIVES
from coarsen_nb.symbolic.diff import vjp as kernel_vjp
from coarsen_nb.symbolic.levels import ELEM

_VALUE, _BAR, _ZERO = Name("_value"), Name("_bar"), lir.Lit("0.0")


class ReverseSweep(ScatterAdjoints):
    """The reverse sweep's printing (see the module docstring)."""

    def _bar(self, name: str) -> lir.Expr:
        """The adjoint of SSA value ``name``, as a record."""
        return lir.expr(self.names.bar(name))

    def _vjp_body(self) -> None:
        """``NAME_vjp`` (value and gradients, with a cotangent) or, with ``_grad_only``,
        ``NAME_grad``: the gradients alone, where a forward output that only the value needs
        is never computed — the adjoint computes just the primal values it uses."""
        grad_only = self._grad_only
        if grad_only:
            self._needed = names_read(self.plan.steps)
        for p in self.plan.params:
            if p in self.active:
                self._zero(p)
        self.steps(self.plan.steps, tape=True)
        self._needed = None
        result = self.plan.result
        if not grad_only:
            self.emit(lir.Assign(_VALUE, self.expr(result)))
        seeds = self._result_seeds()
        if seeds:
            self._zero_region(self.plan.steps)
            for name, k in seeds:
                seed = lir.Lit("1.0") if grad_only else _BAR if k is None else Index(_BAR, (lir.Lit(repr(k)),))
                b = self._bar(name)
                self.emit(lir.Assign(b, BinOp("+", b, seed)))
            # NAME_grad seeds the result's adjoint with exactly 1: until a later step that reads
            # the result adds to it, the derivative expressions use the number, not the variable.
            self._unit_bars = {result.id} if grad_only else set()
            self._reached = Reached()
            self._reached.always(name for name, _ in seeds)
            self.reverse(self.plan.steps, top=True)
            self._reached = None
            self._unit_bars = set()
        grads = []
        for p in self.wrt:
            grads.append(self._bar(p) if p in self.active else
                         (xp_call("zeros", shape_of(self._name(p))) if self.is_array(p) else _ZERO))
        tup = lir.Tuple(tuple(grads))
        self.emit(lir.Return(tup if grad_only else lir.Tuple((_VALUE, tup), bare=True)))

    def forward_numbers(self, k) -> dict[str, str]:
        """The outputs of kernel ``k`` that are numbers (not arrays) the function has computed, and still holds,
        where ``k``'s adjoint runs (SSA name -> its Python name), for a fuser's adjoint to read
        (:mod:`coarsen_nb.lower.forward_reads`): none for an SOI inside a loop or a branch (a tape's values are
        an iteration's), and in ``NAME_grad`` only those a later step reads (the others are not computed)."""
        if not any(isinstance(s, KernelStep) and s.kernel is k for s in self.plan.steps):
            return {}
        read = names_read(self.plan.steps) if self._grad_only else None
        return {o.name: self.py(o.name) for o in k.outputs
                if (read is None or o.name in read) and not self.is_array(o.name)}

    def _result_seeds(self) -> list[tuple[str, int | None]]:
        """The result values whose adjoints the cotangent seeds: (name, element of a tuple result or
        None).  Only float values that depend on ``wrt`` have one (an int or a constant result has
        no derivative)."""
        result = self.plan.result
        elts = list(enumerate(result.elts)) if isinstance(result, ir.Tuple) else [(None, result)]
        return [(e.id, k) for k, e in elts if isinstance(e, ir.Name) and e.id in self.active
                and getattr(self.plan.types.get(e.id), "kind", None) == "float"]

    def _zero(self, name: str, scalar_first: bool = False) -> None:
        """``b_name`` set to zeros of ``name``'s shape; ``scalar_first``: ``name`` is a loop state that
        is a number on the first iteration (its initial value) and an array after (``s = 1.0`` then
        ``s = s * x``), so the shape is the value's own."""
        b, x = self._bar(name), self._name(name)
        if scalar_first:
            self.emit(lir.Assign(b, xp_call("zeros", shape_of(xp_call("asarray", x)))))
        elif self.is_array(name):
            fill = lir.Assign(b, xp_call("zeros", shape_of(x)))
            if name not in self._shared_bars:
                self._fills.append(fill)        # its first contribution may take its place
            self.emit(fill)
        else:
            self.emit(lir.Assign(b, _ZERO))

    def _defined(self, steps) -> list[str]:
        out = []
        for s in steps:
            if isinstance(s, KernelStep):
                out += s.kernel.output_names
            elif isinstance(s, PrimStep):
                out.append(s.name)
            elif isinstance(s, CondStep):
                out += [g[0] for g in s.gammas]
            else:
                out += [e[0] for e in s.etas]
        return out

    def _zero_region(self, steps) -> None:
        for name in self._defined(steps):
            if name in self.active and name not in self._shared_bars:
                self._zero(name)

    def reverse(self, steps, top: bool = False) -> None:
        for s in reversed(steps):
            if top and not isinstance(s, KernelStep):
                self._reached.always(names_read([s]))       # (contributions of any count)
            if isinstance(s, KernelStep):
                self.kernel_reverse(s.kernel, self._reached if top else None)
            elif isinstance(s, PrimStep):
                self.prim_reverse(s)
            elif isinstance(s, CondStep):
                self.cond_reverse(s)
            else:
                self.iterate_reverse(s)
            if top and self._unit_bars:
                self._unit_bars -= names_read([s])

    def kernel_reverse(self, k, reached: Reached | None = None) -> None:
        """SOI ``k``'s adjoint: its VJP added into its inputs' adjoints.  With ``reached`` (the sweep's top
        level), run only where something reached its outputs' adjoints
        (:mod:`coarsen_nb.lower.reached_adjoints`), and its own contributions recorded there."""
        outs = {o.name: sp.Integer(1) if o.name in self._unit_bars else sp.Symbol("bar:" + o.name, real=True)
                for o in k.outputs if o.name in self.active}
        if not outs or not (set(k.inputs) & self.active):
            return
        v = kernel_vjp(k, self.active, outs)
        self.emit(lir.Comment(f"SOI {k.index}: adjoint", tuple(k.lines)))
        guard = None if reached is None or set(outs) & self._shared_bars else reached.guard(outs)
        if guard is None:
            self._kernel_adjoint(k, v, outs)
        else:
            with self.block() as body:
                self._kernel_adjoint(k, v, outs)
            self.emit(lir.If(guard, tuple(body) or (lir.Pass(),)))
        if reached is not None:
            self._record_reached(k, v, reached, guard)

    def _record_reached(self, k, v, reached: Reached, guard: lir.Expr | None) -> None:
        """What SOI ``k``'s adjoint added into its inputs' adjoints, and under which conditions it did: a sum's
        own loop's, else the guard the adjoint ran under (none: always)."""
        def bound(x):
            if x.is_Integer:
                return lir.Lit(str(int(x)))
            return self._name(k.scalars[x]) if x in k.scalars else None

        under = None if guard is None else (guard,)
        for name, e in (*v.scalars, *v.arrays):
            where = reached_where(e, v.temps, bound)
            reached.add(name, where if where is not None else under)
        reached.always(name for name, *_ in v.scatters)

    def _kernel_adjoint(self, k, v, outs) -> None:
        """The statements of SOI ``k``'s adjoint (``v`` its VJP; ``outs`` its outputs' adjoint symbols)."""
        leaves = {sym: (self.names.bar(name), self.is_array(name)) for name, sym in outs.items()
                  if isinstance(sym, sp.Symbol)}
        fuser = self.backend.fuser
        if fuser is not None:
            fused = fuser.reverse_lines(self, k, v, leaves)
            if fused is not None:
                self._printers.pop(id(k), None)
                self.emit_all(fused)
                return
        pr = self._printers.pop(id(k), None)
        if pr is None:
            pr = self.printer(k, extra_leaves=leaves, extra_temps=v.temps)
        else:
            pr.body, pr.indent = [], self.indent
            pr.leaf_map.update(leaves)
            pr.temps.update(v.temps)
            for e in v.temps.values():
                pr.deps.scan(e)
        pr.ieee = True      # derivative code: inf at a domain edge, not ZeroDivisionError
        for name, e in v.scalars:
            pr.emit(AugAssign(self._bar(name), "+", _float_value(pr, e, array=False)))
        broadcasts = len(set(k.arrays.values())) > 1       # (then each contribution is summed to a shape)
        for name, e in v.arrays:
            add = AugAssign(self._bar(name), "+", _float_value(pr, e, array=True))
            if not broadcasts and not pr.scalar_points and ELEM in pr.deps(e) and not _int_valued(pr, e):
                self._exact_shape(name, add)    # elementwise over the kernel's one array: its shape
            pr.emit(add)
        for name, idx, e, level in v.scatters:
            self.scatter(pr, name, idx, e, level)
        self._absorb(pr)

    def prim_reverse(self, s: PrimStep) -> None:
        if s.name not in self.active:
            return
        e, adj = s.expr, self._bar(s.name)
        self._step = s.name

        def acc(x: ir.Expr, contribution: lir.Expr | AtIndex | AddedBy, shaped: bool = False) -> None:
            if isinstance(x, ir.Name) and x.id in self.active and isinstance(contribution, AtIndex):
                # zero but at a few elements (a maximum's): added there alone
                self.emit(lir.ExprStmt(Call(Name(self.helper('_add_at')),
                                            (self._bar(x.id), contribution.index, contribution.value))))
            elif isinstance(x, ir.Name) and x.id in self.active and isinstance(contribution, AddedBy):
                # added by a helper, which returns the adjoint (a maximum's over axes: at each group's one element)
                b = self._bar(x.id)
                self.emit(lir.Assign(b, Call(Name(self.helper(contribution.helper)), (b, *contribution.args))))
            elif isinstance(x, ir.Name) and x.id in self.active:
                add = AugAssign(self._bar(x.id), "+", contribution)
                if shaped:
                    self._exact_shape(x.id, add)
                self.emit(add)

        if isinstance(e, ir.Call):
            a = e.args
            f = e.func
            if is_bound_check(e):
                acc(a[1], adj)
            elif f in reshapes.RESHAPES:
                acc(a[0], reshapes.vjp(f, self.expr(a[0]), self.ndim(a[0]), adj))
            elif f in literals.LITERALS:
                for x, bar in literals.cotangent_entries(e, adj):
                    acc(x, bar)
            elif f in PRIMITIVES and PRIMITIVES[f].vjp is not None:
                for x, contribution in PRIMITIVES[f].vjp(self, a, adj, **dict(e.static)):   # its rule (rules/)
                    acc(x, contribution, PRIMITIVES[f].vjp_shaped)
            else:
                raise CoarsenError(f, message=f"no derivative rule for {f}() on line {s.line}",
                                   hint="this primitive ends a segment; rewrite it with loops")
            return
        if isinstance(e, ir.BinOp) and e.op == "@":
            self.matmul_reverse(e.left, e.right, adj)
            return
        if isinstance(e, ir.Index):
            if isinstance(e.value, ir.Name) and e.value.id in self.active:
                b = self._bar(e.value.id)
                if any(self.ndim(i) and not self.is_mask(i) for i in e.index):   # a gather: repeats accumulate
                    idx = lir.Tuple(tuple(self.expr(i) for i in e.index), trailing=True)
                    self.emit(lir.Assign(b, Call(Name(self.helper('_index_add')), (b, idx, adj))))
                else:
                    self.emit(AugAssign(Index(b, self.index_items(e)), "+", adj))
            return
        if isinstance(e, ir.Update) and self._in_place_write_reverse(s, adj):
            return
        if isinstance(e, ir.Update):
            idx = tuple(self.expr(i) for i in e.index)
            if isinstance(e.value, ir.Name) and e.value.id in self.active:
                acc(e.value, Index(adj, idx))
            if isinstance(e.array, ir.Name) and e.array.id in self.active:
                tmp = Name(self.names.fresh("ub"))
                self.emit(lir.Assign(tmp, xp_call("asarray", adj, dtype=FLOAT64, copy=TRUE)))
                self.emit(lir.Assign(Index(tmp, idx), _ZERO))
                acc(e.array, tmp)
            return
        if isinstance(e, ir.Name):
            acc(e, adj)
            return
        summed = _truth_values_added(e)
        if summed is not None:
            raise CoarsenError(str(summed), message=f"`{summed}` on line {s.line} adds two comparisons: Python adds "
                               "its bools as numbers (True + True is 2), NumPy adds bool arrays as `or`, and "
                               "which one this is depends on the arguments",
                               hint="say which you mean: `1.0 * (p) + 1.0 * (q)` to count, "
                                    "`np.maximum(1.0 * (p), 1.0 * (q))` for `or`")
        raise CoarsenError(str(e), message=f"no derivative rule for `{e}` on line {s.line}",
                           hint="rewrite this step with arithmetic on scalars or arrays")

    def matmul_reverse(self, x: ir.Expr, y: ir.Expr, b: lir.Expr) -> None:
        xs, ys = self.expr(x), self.expr(y)
        # of vectors and matrices, _mm_left is x's shape and _mm_right y's (a stack of matrices broadcasts)
        exact = self.ndim(x) in (1, 2) and self.ndim(y) in (1, 2)
        if isinstance(x, ir.Name) and x.id in self.active:
            add = AugAssign(self._bar(x.id), "+", Call(Name(self.helper('_mm_left')), (b, ys, xs)))
            if exact:
                self._exact_shape(x.id, add)
            self.emit(add)
        if isinstance(y, ir.Name) and y.id in self.active:
            add = AugAssign(self._bar(y.id), "+", Call(Name(self.helper('_mm_right')), (b, xs, ys)))
            if exact:
                self._exact_shape(y.id, add)
            self.emit(add)

    def _exact_shape(self, name: str, add: AugAssign) -> None:
        """Say that contribution ``add`` (``b_name += c``) has exactly ``name``'s shape: where it is the
        adjoint's first, it may take the zeros' place (:mod:`coarsen_nb.lower.first_contributions`)."""
        if self.is_array(name) and name not in self._shared_bars:
            self._exact.append(add)

    def claim_fresh_contribution(self, name: str, add: AugAssign, made: lir.Assign) -> None:
        """Say that contribution ``add`` (``b_name += d``) has exactly ``name``'s shape and that ``d`` is a new
        float64 array, assigned by ``made`` (``d = f(...)`` or ``d, s = f(...)``: a loop function's output)
        and held by nothing else: where it is the adjoint's first, ``b_name`` takes ``d``'s place in ``made``
        (:mod:`coarsen_nb.lower.first_contributions`)."""
        if self.is_array(name) and name not in self._shared_bars:
            self._exact.append(add)
            self._fresh.append(made)

    def cond_reverse(self, s: CondStep) -> None:
        arms = []
        for arm, pick in ((s.then, 1), (s.orelse, 2)):
            with self.block() as body:
                self._zero_region(arm)
                for g in s.gammas:
                    src = g[pick]
                    if g[0] in self._shared_bars:
                        continue            # the versions of an in-place array: one adjoint already
                    if g[0] in self.active and isinstance(src, ir.Name) and src.id in self.active:
                        self.emit(AugAssign(self._bar(src.id), "+", self._bar(g[0])))
                self.reverse(arm)
                self.emit(lir.Pass())
            arms.append(tuple(body))
        self.emit(lir.If(self._name(s.cond), *arms))


def _float_value(pr: Printer, e, array: bool) -> lir.Expr:
    """The code of an adjoint contribution, cast to float64 where its value is an integer array: the unit
    seed folds into the products, so the adjoint of ``a`` in ``np.sum(a * np.arange(n))`` is
    ``np.sum(np.arange(n))``, and the array API adds no integer array into a float one (NumPy does).
    ``array``: the adjoint it adds into is an array."""
    code = pr.value(e)
    # (a Python int, in scalar code or at one point, adds into a float as it is: no array module; so does an
    # integer sum where a reduction's value is a number, numba's, whose 0-d array a float adjoint cannot take)
    array = not pr.scalar_points and (array or ELEM in pr.deps(e) or pr.is_reduced(e) and not pr.numbers_of_reductions)
    return pr.call("asarray", code, dtype=pr.dtype("float64")) if array and not is_number_code(code) and \
        _int_valued(pr, e) else code


def _int_valued(pr: Printer, e) -> bool:
    """Whether ``e`` (through the printer's temps, sums and sums to a shape) has an integer or boolean value.

    A product is one only where every factor is, as the printer's product casts (``Printer._mul``): SymPy
    calls ``b·γ(x > b, 0, 0)`` an integer (its value is 0), but the printed product is float, and its sum
    cast again made a 0-d array that numba adds into no float (``b_b += xp.asarray(t, dtype=...)`` fell back)."""
    e = pr.resolved(e)
    if isinstance(e, (forms.ElemSum, forms.SumTo)):
        return _int_valued(pr, e.args[0])
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(_int_valued(pr, a) for a in e.args)
    return int_typed(e)


def _truth_values_added(e: ir.Expr):
    """The first ``p + q`` or ``p - q`` in ``e`` of two comparisons (or logical ``not``/``and``/``or`` of them):
    the lifter does not give it a number (Python's bools and NumPy's add differently), so the step is here."""
    def truth(x):
        return isinstance(x, (ir.Compare, ir.BoolOp)) or isinstance(x, ir.UnaryOp) and x.op == "not"

    todo = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, ir.BinOp):
            if x.op in ("+", "-") and truth(x.left) and truth(x.right):
                return x
            todo += [x.left, x.right]
        elif isinstance(x, ir.Call):
            todo += list(x.args)
        elif isinstance(x, ir.UnaryOp):
            todo.append(x.operand)
    return None

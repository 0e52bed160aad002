"""The forward sweep of a generated module: its steps printed in order, the kernels by their printers.

A mixin of :class:`~coarsen_nb.lower.module.ModuleWriter`, which assembles the module around it.  Each
step of the plan is printed where it stands: an SOI by a kernel :class:`~coarsen_nb.lower.emit.Printer`
(or the backend's fuser), an opaque step as its one call (an element update as a copy, a read of a
maybe-unbound variable with Python's error), a branch as an ``if`` whose arms assign its merged values,
an iterated loop by :mod:`coarsen_nb.lower.iterated`.  ``NAME``, ``NAME_vjp`` and ``NAME_grad`` all
start here: with ``tape``, a kernel's printer is kept for its adjoint (:mod:`coarsen_nb.lower.reverse`
continues it, so its primal values are shared, not recomputed), and in ``NAME_grad`` only the outputs a
later step reads are printed.  The JVP writer (:mod:`coarsen_nb.lower.tangent`) overrides the step rules
that carry tangents and calls these underneath.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.frontend.unbound import bound_error, is_bound_check
from coarsen_nb.lower import allocation_checks, lir, naming, trivial
from coarsen_nb.lower.dask_printing import lazy_scalar_call
from coarsen_nb.lower.emit import Printer
from coarsen_nb.lower.printing import FLOAT64, TRUE, xp_call
from coarsen_nb.plan import CondStep, KernelStep, PrimStep, walk_steps


class ForwardSweep:
    """The forward sweep's printing (see the module docstring)."""

    def _forward_body(self) -> None:
        self.steps(self.plan.steps, tape=False)
        self.emit(lir.Return(self.expr(self.plan.result)))

    def steps(self, steps, tape: bool) -> None:
        for s in steps:
            if isinstance(s, KernelStep):
                self.kernel(s.kernel, tape)
            elif isinstance(s, PrimStep):
                self.prim(s)
            elif isinstance(s, CondStep):
                self.cond(s, tape)
            else:
                self.iterate(s, tape)

    def printer(self, kernel, extra_leaves=None, extra_temps=None, extra_reads=None) -> Printer:
        leaves = {s: (self.py(n), self.is_array(n)) for s, n in list(kernel.scalars.items()) +
                  list(kernel.arrays.items())}
        leaves.update(extra_leaves or {})
        reads = {r.symbol: (self.py(r.array), r.index) for r in kernel.reads}
        reads.update(extra_reads or {})
        temps = dict(kernel.body)
        temps.update(extra_temps or {})
        arrays = list(dict.fromkeys(self.py(n) for n in kernel.arrays.values()))
        # arrays of different shapes broadcast: the elementwise level has the shape they broadcast to
        shapes = [lir.Attr(lir.Name(a), "shape") for a in arrays]
        shape = None if not arrays else shapes[0] if len(arrays) == 1 else \
            lir.Call(lir.Name("_broadcast_shape"), tuple(shapes))
        pr = Printer("xp", lambda s: leaves[s], reads, temps, indent=self.indent, names=self.names,
                     elem_shape=shape, exprs=[o.symbol for o in kernel.outputs], broadcast=len(arrays) > 1,
                     elem_shape_calls=frozenset({"_broadcast_shape"}) if len(arrays) > 1 else frozenset())
        pr.leaf_map, pr.words = leaves, naming.kernel_words(kernel, self.plan.words, pr.deps.ranges)
        pr.whole_fills = trivial.whole_fills(self, kernel)
        pr.where_choices = self.backend.where_choices
        pr.eager = not self.backend.lazy_graph
        pr.extrema_first_zero = self.backend.extrema_first_zero
        pr.checked_division = self.backend.checked_division
        pr.numbers_of_reductions = self.backend.numbers_of_reductions
        if self.backend.lazy_graph:     # (lower/dask_printing.py: pointwise reads, Python's sign, kept lazy)
            pr.gather_points, pr.scalar_call = True, lazy_scalar_call
        lanes = self._lanes()
        pr.lane_rows = {s: lanes[n] for s, n in list(kernel.scalars.items()) + list(kernel.arrays.items())
                        if n in lanes}
        return pr

    def _lanes(self) -> dict[str, tuple[str, str]]:
        """{SSA name: (first, step) code} of the values that are a batched loop's lane numbers,
        ``arange(first, stop, step)`` with a positive constant step (phi/batching.py), and of their
        copies: a read ``z[p, t]`` by them is rows ``first::step`` of ``z``, a view, not a gather."""
        if self._lane_names is None:
            self._lane_names = {}
            for st in walk_steps(self.plan.steps):
                if isinstance(st, PrimStep) and isinstance(st.expr, ir.Call) and st.expr.func == "lanes":
                    first, _, step = st.expr.args
                    if isinstance(step, ir.Const) and isinstance(step.value, int) and step.value > 0:
                        self._lane_names[st.name] = (self.expr(first), self.expr(step))
                elif isinstance(st, KernelStep) and self._lane_names:     # (a copy of a lane found so far;
                    k = st.kernel                                           # exprs() inlines: costly)
                    names = {**k.scalars, **k.arrays}
                    for out, e in k.exprs().items():
                        if isinstance(e, sp.Symbol) and names.get(e) in self._lane_names:
                            self._lane_names[out] = self._lane_names[names[e]]
        return self._lane_names

    def kernel(self, k, tape: bool = False) -> None:
        where = f" (line{'s' if len(k.lines) > 1 else ''} {', '.join(map(str, k.lines))})" if k.lines else ""
        # (the user's lines, for error messages: a hoisted sum's are its loop's)
        lines = tuple(k.lines) or ((k.loop_line,) if k.loop_line else ())
        self.emit(lir.Comment(f"SOI {k.index}{where}{': ' + k.note if k.note else ''}", lines))
        fuser = self.backend.fuser
        if fuser is not None:
            fused = fuser.forward_lines(self, k)     # e.g. one fused GPU kernel for the whole SOI
            if fused is not None:
                self.emit_all(fused)
                return
        pr = self.printer(k)
        known = self._known_values.pop(id(k), None)
        if known:
            pr.root.memo.update(known)
            pr.wordless |= {str(code) for code in known.values()}
        if tape and self._in_place:
            self._name_element_reads(k, pr)
        for o in k.outputs:
            if self._needed is None or o.name in self._needed:
                pr.assign(self.py(o.name), o.symbol)
                self._keep_shape(pr, k, o)
        self._absorb(pr)
        if tape:
            # The adjoint continues with this printer: the primal values it needs are
            # already computed (shared through CSE), not recomputed.
            self._printers[id(k)] = pr

    def _absorb(self, pr: Printer) -> None:
        """The printer's statements join the function's, and the helpers they call the module's."""
        self.emit_all(self.take_statements(pr))

    def take_statements(self, pr: Printer) -> list[lir.Stmt]:
        """The printer's statements (records), its helpers and use of ``math`` now the module's: for
        :meth:`_absorb`, and a fuser that puts them among its own (``lower/cupy.py``,
        ``lower/numba_fusion.py``)."""
        if pr.indent != self.indent:
            raise AssertionError(f"a kernel printer at depth {pr.indent} taken at depth {self.indent}")
        self.helpers |= pr.helpers
        self.shared.uses_math |= pr.uses_math
        return list(pr.body)

    def _keep_shape(self, pr: Printer, k, o) -> None:
        """An elementwise output that simplified to one number (``x - x`` is 0, ``x * 0 + a`` is ``a``)
        is still NumPy's array of the elementwise shape: ``u[:, None]``, ``len(u)`` and ``u.shape`` of it
        need that shape, not a scalar's."""
        t = self.plan.types.get(o.name)
        ranks = [self.plan.types[n].ndim for n in k.arrays.values() if n in self.plan.types]
        if t is None or not t.is_array or pr.elem is None or pr.deps(sp.sympify(o.symbol)) \
                or t.ndim != max(ranks, default=-1):
            return
        name = lir.expr(self.py(o.name))
        pr.emit(lir.Assign(name, lir.BinOp("+", lir.Call(lir.Attr(lir.Name("xp"), "zeros"), (pr.elem_shape,)), name)))

    def prim(self, s: PrimStep) -> None:
        e = s.expr
        self._step = s.name         # (value(): the tangent sweep's rules run after this)
        if is_bound_check(e):
            # a read of a variable that may be unbound: Python's error where no assignment ran
            kind, message = bound_error(e, s.line)
            self.emit(lir.If(lir.Unary("not", self.expr(e.args[0])),
                             (lir.Raise(lir.Call(lir.Name(kind), (lir.Lit(repr(message)),))),)))
            self.emit(lir.Assign(self._name(s.name), self.expr(e.args[1])))
            return
        if isinstance(e, ir.Update) and self._in_place_write(s):
            return
        if isinstance(e, ir.Update):
            tmp = lir.Name(self.names.fresh("upd"))
            self.emit(lir.Assign(tmp, xp_call("asarray", self.expr(e.array), dtype=FLOAT64, copy=TRUE)))
            self.emit(lir.Assign(lir.Index(tmp, tuple(self.expr(i) for i in e.index)), self.expr(e.value)))
            self.emit(lir.Assign(self._name(s.name), tmp))
            return
        stmt = lir.Assign(self._name(s.name), self.expr(e))
        if isinstance(e, ir.Call) and e.func in ("zeros", "empty", "ones", "full") and e.args \
                and self._integer(e.args[0]):
            allocation_checks.register(self.size_checks, stmt)     # (its check stays where it is dropped)
        self.emit(stmt)

    def _integer(self, arg) -> bool:
        """Whether the plan types ``arg`` (an argument of a step) as one integer, which may be negative: a
        size ``n < 0`` compares, and is no ``len`` or shape (which cannot be)."""
        t = self.plan.types.get(arg.id) if isinstance(arg, ir.Name) else None
        if self._nonnegative is None:
            self._nonnegative = allocation_checks.nonnegative_names(self.plan)
        return t is not None and not t.is_array and t.kind == "int" and arg.id not in self._nonnegative

    def cond(self, s: CondStep, tape: bool) -> None:
        arms = []
        for arm, pick in ((s.then, 1), (s.orelse, 2)):
            with self.block() as body:
                self.steps(arm, tape)
                for g in s.gammas:
                    self.merge(g[0], g[pick])
                if self.arm_ends_in_pass(arm, s):
                    self.emit(lir.Pass())
            arms.append(tuple(body))
        self.emit(lir.If(self._name(s.cond), *arms))

    def merge(self, name: str, value: ir.Expr) -> None:
        """An arm's assignment of a branch's merged value ``name`` (the JVP writer adds its tangent)."""
        self.emit(lir.Assign(self._name(name), self.expr(value)))

    def arm_ends_in_pass(self, arm, s: CondStep) -> bool:
        """Whether an arm of ``s`` ends with ``pass``: where it would otherwise be empty."""
        return not arm and not s.gammas

"""The forward-mode function ``NAME_jvp(*params, *tangents)`` of a generated module.

Values and tangents run together in one sweep: each SOI prints its primal
and its symbolic JVP with one printer (shared subexpressions once), opaque
steps use their tangent rules, branches follow the primal decision, and an
iterated loop carries its tangent state with its state — the tangent
recurrence Dv_{k+1} = ∂f/∂v · Dv_k + ∂f/∂θ, one coarse step per iteration.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.unbound import is_bound_check
from coarsen_nb.lower import lir, literals, naming, reshapes
from coarsen_nb.lower.printing import FLOAT64, TRUE, shape_of, xp_call
from coarsen_nb.plan import CondStep, IterStep, PrimStep
from coarsen_nb.rules.table import PRIMITIVES
from coarsen_nb.symbolic.activity import differentiable_prim
from coarsen_nb.symbolic.jvp import jvp as kernel_jvp

_ZERO = lir.Lit("0.0")


class TangentSweep:
    """The forward-mode sweep, as rules over a module writer's step methods.

    A mixin: :mod:`coarsen_nb.lower.module` puts it in front of its ``ModuleWriter``
    (``class _JvpWriter(TangentSweep, ModuleWriter)``) and builds it on the module's shared
    state, so ``super()`` here is that writer's printing of the primal, and this module never
    imports the module writer (which imports this one).
    """

    def jvp_function(self) -> str:
        """Source of the JVP function ``NAME_jvp(*params, *tangents)`` for the writer's plan."""
        params = list(self.plan.params) + [self.names.tangent(p) for p in self.wrt]
        self.body, self.indent = [], 1
        self.names.new_scope()      # a temporary's name is unique in its function
        self._body()
        # (dead assignments dropped: a trip count only the primal loop used; no frees, as before)
        body, used = self._finish(self.body, frees=False)
        self.shared.modules_read |= used
        names = tuple(self.names(p) if p in self.plan.params else p for p in params)
        self.shared.functions[f"{self.plan.name}_jvp"] = (names, (), body)
        sig = ", ".join(names)
        return self._decorated(f"def {self.plan.name}_jvp({sig}):\n" + "\n".join(lir.print_body(body)) + "\n")

    def _tangent(self, name: str) -> lir.Expr:
        """The tangent of SSA value ``name``, as a record."""
        return lir.expr(self.names.tangent(name))

    def d_expr(self, e: ir.Expr) -> lir.Expr:
        """The tangent of an IR operand (0.0 when it does not depend on wrt), as a record."""
        if isinstance(e, ir.Name) and e.id in self.active:
            return self._tangent(e.id)
        if isinstance(e, ir.Name) and self.is_array(e.id):
            return xp_call("zeros", shape_of(self.expr(e)))
        return _ZERO

    def _body(self) -> None:
        self.steps(self.plan.steps, tape=False)
        r = self.plan.result
        tangent = lir.Tuple(tuple(map(self.d_expr, r.elts)), trailing=True) if isinstance(r, ir.Tuple) \
            else self.d_expr(r)
        self.emit(lir.Return(lir.Tuple((self.expr(r), tangent), bare=True)))

    def kernel(self, k, tape: bool = False) -> None:
        if not (set(k.inputs) & self.active):
            super().kernel(k)
            return
        j = kernel_jvp(k, self.active)
        where = f" (line{'s' if len(k.lines) > 1 else ''} {', '.join(map(str, k.lines))})" if k.lines else ""
        self.emit(lir.Comment(f"SOI {k.index}{where}: value and tangent", tuple(k.lines)))
        leaves = {s: (self.names.tangent(n), self.is_array(n)) for s, n in j.tangent_leaves.items()}
        leaves.update({s: (xp_call("zeros", lir.Attr(lir.Name(self.py(n)), "shape")), True)
                       for s, n in j.zero_leaves.items()})
        reads = {s: (self.names.tangent(a), idx) for s, (a, idx) in j.reads.items()}
        pr = self.printer(k, extra_leaves=leaves, extra_temps=j.temps, extra_reads=reads)
        pr.words.update(naming.tangent_read_words(k, j.reads, pr.words))
        for o in k.outputs:
            pr.assign(self.py(o.name), o.symbol)
        done = set()
        pr.ieee = True      # tangent code: inf at a domain edge, not ZeroDivisionError
        for name, e in j.outputs:
            pr.assign(self.names.tangent(name), e)
            done.add(name)
        for o in k.outputs:
            if o.name in self.active and o.name not in done:
                pr.emit(lir.Assign(self._tangent(o.name), lir.Lit("0.0")))
        self._absorb(pr)

    def prim(self, s: PrimStep) -> None:
        super().prim(s)
        if s.name not in self.active or not differentiable_prim(s.expr):
            return
        e, dn = s.expr, self._tangent(s.name)
        if isinstance(e, ir.Name):
            self.emit(lir.Assign(dn, self.d_expr(e)))
            return
        if isinstance(e, ir.Tuple):
            self.emit(lir.Assign(dn, lir.Tuple(tuple(map(self.d_expr, e.elts)), trailing=True)))
            return
        if isinstance(e, ir.Index):
            self.emit(lir.Assign(dn, lir.Index(self.array_tangent_expr(e.value), self.index_items(e))))
            return
        index = tuple(self.expr(i) for i in e.index) if isinstance(e, ir.Update) else ()
        if isinstance(e, ir.Update) and s.name in self._in_place:
            # written in place with its value (lower/in_place.py): so is its tangent
            mu = self._tangent(self._in_place[s.name][0].mu)
            self.emit(lir.Assign(lir.Index(mu, index), self.d_expr(e.value)))
            self.emit(lir.Assign(dn, mu))
            return
        if isinstance(e, ir.Update):
            tmp = lir.Name(self.names.fresh("du"))
            base = xp_call("asarray", self.d_expr(e.array), dtype=FLOAT64)
            self.emit(lir.Assign(tmp, lir.BinOp("+", base, xp_call("zeros", shape_of(self.expr(e.array))))))
            self.emit(lir.Assign(lir.Index(tmp, index), self.d_expr(e.value)))
            self.emit(lir.Assign(dn, tmp))
            return
        if isinstance(e, ir.BinOp) and e.op == "@":
            a, b = e.left, e.right
            self.emit(lir.Assign(dn, PRIMITIVES['matmul'].jvp(self, (a, b))))      # `@` is np.matmul
            return
        if is_bound_check(e):
            self.emit(lir.Assign(dn, self.d_expr(e.args[1])))
            return
        if isinstance(e, ir.Call):
            a, f = e.args, e.func
            rules = {}
            if f in PRIMITIVES and PRIMITIVES[f].jvp is not None:
                rules[f] = lambda: PRIMITIVES[f].jvp(self, a, **dict(e.static))   # its rule (rules/)
            if f in literals.LITERALS:
                rules[f] = lambda: literals.jvp(e, [self.d_expr(x) for x in literals.entries(e)])
            if f in reshapes.RESHAPES:
                nd = self.ndim(a[0])
                rules[f] = lambda: reshapes.jvp(f, self.expr(a[0]), nd,
                                                self.array_tangent_expr(a[0]) if nd else self.d_expr(a[0]))
            if f in rules:
                self.emit(lir.Assign(dn, rules[f]()))
                return
        raise CoarsenError(str(e), message=f"no tangent rule for `{e}` on line {s.line}",
                           hint="rewrite this step with arithmetic on scalars or arrays")

    def array_tangent_expr(self, e: ir.Expr) -> lir.Expr:
        """The tangent of an array operand, as an array even when it is zero, to be read (a rule's operand, a
        view): an argument's tangent is the caller's array itself, which ``checks.tangents`` gave the
        argument's shape and a float dtype; any other may be a number (a zero, or a derivative constant
        over the elements), so it is spread to the operand's shape."""
        if isinstance(e, ir.Name) and e.id in self.active and e.id in self.plan.params:
            return self._tangent(e.id)
        return self.new_array_tangent(e)

    def new_array_tangent(self, e: ir.Expr) -> lir.Expr:
        """The tangent of an array operand as a new array of the operand's shape: one that may be written in
        place (a loop state's)."""
        return lir.Paren(lir.BinOp("+", self.d_expr(e), xp_call("zeros", shape_of(self.expr(e)))))

    def merge(self, name: str, value: ir.Expr) -> None:
        """A branch's merged value, and its tangent where it is active (the arms are the writer's ``cond``)."""
        super().merge(name, value)
        if name in self.active:
            self.emit(lir.Assign(self._tangent(name), self.d_expr(value)))

    def arm_ends_in_pass(self, arm, s: CondStep) -> bool:
        return True     # (as the JVP has always printed its arms; dropping it changes generated text)

    def iterate(self, s: IterStep, tape: bool) -> None:
        act = [(n, i, x) for n, i, x in s.mus if n in self.active]
        if s.never_runs():      # (the states and their tangents keep their first values: iterated._never_run)
            self.emit(lir.Comment(f"loop at line {s.line} never runs: its condition is always false", (s.line,)))
            self.assign_state([self.py(n) for n, _, _ in s.mus] + [self.names.tangent(n) for n, _, _ in act],
                              [self.expr(i) for _, i, _ in s.mus] + [self.d_expr(i) for _, i, _ in act])
            for out, mu in s.etas:
                self.emit(lir.Assign(self._name(out), self._name(mu)))
                if mu in self.active:
                    self.emit(lir.Assign(self._tangent(out), self._tangent(mu)))
            return
        self.emit(lir.Comment(f"loop at line {s.line}: state and tangent state, iteration by iteration", (s.line,)))
        in_place = self._in_place_loop(s)
        names = [self.py(n) for n, _, _ in s.mus] + [self.names.tangent(n) for n, _, _ in act]
        # an array written in place starts as a copy of its first value, and so does its tangent
        inits = self._initial_values(s, in_place) + \
            [self.new_array_tangent(i) if n in in_place else self.d_expr(i) for n, i, _ in act]
        nexts = [self.expr(x) for _, _, x in s.mus] + [self.d_expr(x) for _, _, x in act]
        self.assign_state(names, inits)
        with self.block() as body:
            self.steps(s.header, tape=False)
            self.emit(lir.If(lir.Unary("not", self._name(s.cond)), (lir.Break(),)))
            self.steps(s.body, tape=False)
            self.assign_state(names, nexts)
        self.emit(lir.While(TRUE, tuple(body)))
        for out, mu in s.etas:
            self.emit(lir.Assign(self._name(out), self._name(mu)))
            if mu in self.active:
                self.emit(lir.Assign(self._tangent(out), self._tangent(mu)))

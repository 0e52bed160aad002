"""The open SOI of a region while the lifter grows it, and the loop-invariant sums hoisted out of a loop.

A :class:`KernelBuilder` holds one kernel's lifted values (SSA name → SymPy
expression), its scalar and array inputs and its element reads, and closes into
a :class:`~coarsen_nb.plan.Kernel` whose outputs are the values read after it.
It is the lifter's (:mod:`coarsen_nb.phi.lift`) working state; it knows nothing
of the selection policy, which decides where one kernel ends and the next begins.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi import logsumexp
from coarsen_nb.phi.forms import ElemSum
from coarsen_nb.phi.gate import Loop, defined_in
from coarsen_nb.phi.symbols import NotSymbolic, as_number, symbol
from coarsen_nb.plan import Kernel, KernelStep, Output, Read


class KernelBuilder:
    """The open kernel of a region: straight-line values being merged into one SOI."""

    def __init__(self, lifter):
        self.lifter = lifter
        self.scalars: dict[sp.Symbol, str] = {}
        self.arrays: dict[sp.Symbol, str] = {}
        self.reads: dict[tuple, Read] = {}
        self.body: list[tuple[sp.Symbol, sp.Basic]] = []
        self.env: dict[str, sp.Basic] = {}          # SSA name -> expression inside this kernel
        self.named: dict = {}                       # expression -> SSA name, of loop bodies' values
        self.defined: list[str] = []                # SSA names this kernel defines, in order
        self.lines: list[int] = []
        self.ops = 0
        self.note = ""

    def empty(self) -> bool:
        return not self.defined

    def input(self, name: str) -> sp.Basic:
        if name in self.env:
            return self.env[name]
        number = self.lifter.numbers.get(name)
        if number is not None:
            # (a literal number an earlier SOI assigned, ``m = -math.inf``: the number itself, as inside the SOI
            # that assigns it, not an input; phi/literal_numbers.py)
            return number
        t = self.lifter.types.get(name)
        if t is None or t.kind in ("undef", "shape", "tuple"):
            raise NotSymbolic(f"{name} has no scalar value")
        s = symbol(name, t.kind)
        if t.is_array:
            self.arrays[s] = name
        else:
            self.scalars[s] = name
        self.env[name] = s
        return s

    def read(self, array: str, index: tuple) -> sp.Symbol:
        key = (array, index)
        if key not in self.reads:
            k = len(self.reads) + 1
            s = sp.Symbol(f"{array}[{', '.join(map(str, index))}]#{k}", real=True)
            self.reads[key] = Read(s, array, index)
        return self.reads[key].symbol

    def index_read(self, array: str, index: tuple) -> sp.Symbol:
        """``array[index]`` as a :class:`Read` symbol; ``array`` must come from outside the kernel."""
        t = self.lifter.types.get(array)
        if array in self.defined or t is None or not t.is_array or len(index) != t.ndim:
            raise NotSymbolic("not an element read")
        for i in index:
            if isinstance(i, sp.Basic) and (i.is_integer is False or isinstance(i, sp.Float)):
                raise NotSymbolic("non-integer index")
        return self.read(array, index)

    def snapshot(self):
        return (dict(self.scalars), dict(self.arrays), dict(self.reads), list(self.body), dict(self.env),
                list(self.defined), list(self.lines), self.ops, self.note)

    def restore(self, snap) -> None:
        (self.scalars, self.arrays, self.reads, self.body, self.env, self.defined, self.lines, self.ops,
         self.note) = snap

    def define(self, name: str, expr: sp.Basic, line: int, materialize: bool) -> None:
        self.ops += int(sp.count_ops(expr)) if isinstance(expr, sp.Basic) else 0
        if isinstance(expr, sp.Basic) and expr.has(ElemSum):
            expr = self._sums_as_temps(name, expr)
        if materialize and isinstance(expr, sp.Expr) and not expr.is_Atom:
            s = symbol(name, self.lifter.types[name].kind)
            self.body.append((s, expr))
            expr = s
        self.env[name] = expr
        self.defined.append(name)
        if line:
            self.lines.append(line)

    def _sums_as_temps(self, name: str, expr: sp.Basic) -> sp.Basic:
        """``expr`` with each whole-array sum (``np.sum(g)``, an ElemSum) a temp of its own, its summand
        another: the reverse sweep then takes a sum's adjoint by its rule, as for a loop's Σ."""
        count = [0]

        def visit(e):
            if not isinstance(e, sp.Basic) or e.is_Atom:
                return e
            args = [visit(a) for a in e.args]
            e = e.func(*args) if args != list(e.args) else e
            if isinstance(e, ElemSum):
                count[0] += 1
                # np.sum(x > c) counts: a comparison summed is 1 or 0 (SymPy has no derivative of a relation);
                # other truth values (a loop's live lanes) are summed as they are, NumPy's count of a bool array
                body = as_number(e.args[0]) if isinstance(e.args[0], sp.core.relational.Relational) else e.args[0]
                kind = "int" if body.is_integer else "float"
                g = body if body.is_Atom else self.temp(f"g:{name}:{count[0]}", body, kind)
                return self.temp(f"sum:{name}:{count[0]}", ElemSum(g), kind)
            return e

        return visit(expr)

    def temp(self, name: str, expr: sp.Basic, kind: str = "float") -> sp.Symbol:
        s = symbol(name, kind)
        self.body.append((s, expr))
        return s

    def close(self, live_after: set[str]) -> Kernel | None:
        """The finished kernel; outputs are the values read after it."""
        outs = []
        for name in self.defined:
            if name not in live_after:
                continue
            e = self.env[name]
            if isinstance(e, sp.Symbol) and any(s == e for s, _ in self.body):
                outs.append(Output(name, e))
            else:
                s = symbol(name + "'", self.lifter.types[name].kind) if isinstance(e, sp.Symbol) else \
                    symbol(name, self.lifter.types[name].kind)
                self.body.append((s, e))
                outs.append(Output(name, s))
        if not outs:
            return None
        self.body = logsumexp.recognize(self.body)
        # which expression each SSA value stood for, so that generated code can call it by its name
        named = {e: n for n, e in reversed(self.env.items()) if isinstance(e, sp.Expr) and not e.is_Number}
        named.update({e: n for e, n in self.named.items() if e not in named})
        k = Kernel(0, dict(self.scalars), dict(self.arrays), tuple(self.reads.values()), list(self.body),
                   tuple(outs), tuple(sorted(set(self.lines))), self.note, names=named)
        return k


class HoistContext:
    """Loop-invariant sums found inside an iterated loop, to be computed once before it."""

    def __init__(self, lifter, loop: Loop):
        self.lifter = lifter
        self.loop_defined = defined_in(loop)
        self.kb = KernelBuilder(lifter)
        self.kb.note = f"loop-invariant sums hoisted out of the loop at line {loop.line}"
        self.loop_line = loop.line
        self.names: dict = {}

    def sum_of(self, h, k, rng, kb, reads) -> str:
        """The name of Σ_k h computed before the loop (shared when the same sum appears twice)."""
        from coarsen_nb.phi.forms import RSum
        from coarsen_nb.phi.types import FLOAT

        hb = self.kb
        sub = {}
        for s in (h.free_symbols | set().union(*(sp.sympify(b).free_symbols for b in rng))):
            if s in reads:
                sub[s] = hb.read(reads[s].array, reads[s].index)
            elif s in kb.scalars:
                sub[s] = hb.input(kb.scalars[s])
        body = h.xreplace(sub)
        bounds = tuple(sp.sympify(b).xreplace(sub) for b in rng)
        key = (body, k, bounds)
        if key not in self.names:
            name = f"$sum{len(self.names) + 1}:{self.lifter.hoist_count()}"
            self.lifter.types[name] = FLOAT
            g = hb.temp(name + ":g", body)
            hb.define(name, RSum(g, k, *bounds), self.kb_line(), materialize=False)
            self.names[key] = name
        return self.names[key]

    def kb_line(self) -> int:
        return 0

    def steps(self) -> list:
        kern = self.kb.close(set(self.names.values()))
        if kern is not None:
            kern.loop_line = self.loop_line
        return [KernelStep(kern)] if kern is not None else []

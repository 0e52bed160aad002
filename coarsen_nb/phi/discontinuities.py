"""Parametric discontinuities: where a derivative silently ignores a jump.

A γ whose predicate depends on a differentiated parameter is piecewise in
that parameter; the derivative coarsen_nb computes (C2: D distributes into
γ) is the derivative of the branch taken, blind to the jump at the
boundary.  The same holds for a loop whose trip count N depends on one (a
``while`` condition or a ``break``): η treats N as fixed.  Operator-level AD
tools say nothing about either; this pass reports them.

The analysis is a forward data-dependence closure over the gated region
tree: ``dep[v]`` is the set of ``wrt`` parameters that value ``v`` depends
on, through every operand of a Let (array writes included: ``update(a, i,
v)`` depends on ``a``, ``i`` and ``v``), through γ (its operands *and* its
predicate — the selection is data flow too), μ (init and next, iterated to
a fixed point because next is defined after the header) and η.

Reported, one :class:`Discontinuity` each, sorted by line:

* ``"branch"``    — an ``if`` (or conditional expression) whose condition depends on wrt;
* ``"loop exit"`` — a ``break``/``return`` test inside a loop, or a loop
  condition that depends on wrt other than through those flags;
* ``"min/max"``   — ``min``/``max``/``abs`` of wrt-dependent operands (lifted
  to a γ comparing its own operands).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from coarsen_nb import ir
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop

_KINKS = ("min", "max", "abs")
_EXIT_FLAG = re.compile(r"^(.*\$)(brk\d+|done)(\.\d+)*(\.out)?$")


@dataclass(frozen=True)
class Discontinuity:
    """One place where the function jumps (or kinks) in a differentiated parameter."""

    line: int
    predicate: str
    inputs: tuple[str, ...]
    kind: str                  # "branch" | "loop exit" | "min/max"

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind} on `{self.predicate}` (depends on {', '.join(self.inputs)})"


def find(gated: GatedFunction, wrt: tuple[str, ...]) -> list[Discontinuity]:
    """Every parametric discontinuity of ``gated`` with respect to ``wrt``.

    Example
    -------
    >>> import coarsen_nb as cn
    >>> f = cn.coarsen("def f(x, y):\\n    if x > 0:\\n        return x * y\\n    return y\\n")
    >>> [d.kind for d in find(f._gated, ("x",))], find(f._gated, ("y",))
    (['branch'], [])
    """
    return _Finder(gated, tuple(wrt)).run()


class _Finder:
    def __init__(self, g: GatedFunction, wrt: tuple[str, ...]):
        self.g = g
        self.wrt = wrt
        self.dep: dict[str, frozenset] = {p: frozenset([p]) if p in wrt else frozenset() for p in g.params}
        self.defs: dict[str, tuple[ir.Expr, int]] = {}
        self.out: dict[tuple, Discontinuity] = {}

    def run(self) -> list[Discontinuity]:
        # Data dependence first (to a fixed point over μ), then the report pass over the final table.
        while self._flow(self.g.body):
            pass
        self._report(self.g.body)
        return sorted(self.out.values(), key=lambda d: (d.line, d.kind, d.predicate))

    # -- dependence ---------------------------------------------------------------------

    def _of(self, e: ir.Expr) -> frozenset:
        # An array's length or shape never varies with its values: no dependence.
        if isinstance(e, ir.Attr) or (isinstance(e, ir.Call) and e.func == "len"):
            return frozenset()
        if isinstance(e, ir.Name):
            return self.dep.get(e.id, frozenset())
        out: frozenset = frozenset()
        for c in ir.children(e):
            out |= self._of(c)
        return out

    def _set(self, name: str, deps: frozenset) -> bool:
        old = self.dep.get(name)
        new = deps if old is None else old | deps
        self.dep[name] = new
        return new != old

    def _flow(self, nodes) -> bool:
        changed = False
        for n in nodes:
            if isinstance(n, Let):
                self.defs[n.name] = (n.value, n.line)
                changed |= self._set(n.name, self._of(n.value))
            elif isinstance(n, If):
                changed |= self._flow(n.then) | self._flow(n.orelse)
                for gm in n.gammas:
                    self.defs[gm.name] = (gm.value, gm.line)
                    changed |= self._set(gm.name, self._of(gm.value))
            else:
                for m in n.mus:
                    self.defs[m.name] = (m.value, m.line)
                    changed |= self._set(m.name, self._of(m.value))
                changed |= self._flow(n.header) | self._flow(n.body)
                for e in n.etas:
                    self.defs[e.name] = (e.value, e.line)
                    changed |= self._set(e.name, self._of(e.value))
        return changed

    # -- reporting ----------------------------------------------------------------------

    def _add(self, line: int, pred: str, inputs: frozenset, kind: str) -> None:
        key = (line, pred, kind)
        if key not in self.out:
            self.out[key] = Discontinuity(line, pred, tuple(p for p in self.wrt if p in inputs), kind)

    def _report(self, nodes, loop: Loop | None = None) -> None:
        for n in nodes:
            if isinstance(n, Let):
                self._kinks(n.value, n.line)
            elif isinstance(n, If):
                # A test on break/return flags only (``if not returned:``) repeats a jump
                # already reported where the flag was set.
                deps = self._own_deps(ir.Name(n.cond), set())
                if deps:
                    exit_ = loop is not None and n.gammas and all(_is_exit_flag(gm.name) for gm in n.gammas)
                    self._add(self._line_of(n.cond, n.line), self._readable(n.cond), deps,
                              "loop exit" if exit_ else "branch")
                self._report(n.then, loop)
                self._report(n.orelse, loop)
            else:
                self._report(n.header, n)
                self._report(n.body, n)
                # A condition that depends on wrt only through break/return flags is
                # already reported at the test that sets the flag.
                own = self._own_deps(ir.Name(n.cond), set())
                if own:
                    self._add(n.line, self._readable(n.cond), own, "loop exit")

    def _kinks(self, e: ir.Expr, line: int) -> None:
        if isinstance(e, ir.Call) and e.func in _KINKS:
            deps = frozenset().union(*(self._of(a) for a in e.args))
            if deps:
                self._add(line, self._text(e), deps, "min/max")
        if isinstance(e, ir.IfExp):
            deps = self._of(e.test)
            if deps:
                self._add(line, self._text(e.test), deps, "branch")
        for c in ir.children(e):
            self._kinks(c, line)

    def _own_deps(self, e: ir.Expr, seen: set) -> frozenset:
        """wrt dependence of a loop condition, not counting break/return flags."""
        if isinstance(e, ir.Attr) or (isinstance(e, ir.Call) and e.func == "len"):
            return frozenset()
        if isinstance(e, ir.Name):
            name = e.id
            if _is_exit_flag(name) or name in seen:
                return frozenset()
            seen.add(name)
            d = self.defs.get(name)
            if name.startswith("$") and d is not None and not isinstance(d[0], (ir.Mu, ir.Eta)):
                return self._own_deps(d[0], seen)
            return self.dep.get(name, frozenset())
        out: frozenset = frozenset()
        for c in ir.children(e):
            out |= self._own_deps(c, seen)
        return out

    def _line_of(self, cond: str, fallback: int) -> int:
        d = self.defs.get(cond)
        return d[1] if d and d[1] else fallback

    def _readable(self, name: str) -> str:
        return self._text(ir.Name(name))

    def _text(self, e: ir.Expr) -> str:
        """``e`` in user names: compiler temps inlined, SSA versions and ``.out`` dropped."""
        def sub(name: str) -> ir.Expr:
            d = self.defs.get(name)
            if name.startswith("$") and d is not None and not isinstance(d[0], (ir.Mu, ir.Eta, ir.Gamma)) \
                    and depth[0] < 8:
                depth[0] += 1
                try:
                    return ir.rename(d[0], sub)
                finally:
                    depth[0] -= 1
            return ir.Name(_user_name(name))

        depth = [0]
        return str(ir.rename(e, sub))


def _is_exit_flag(name: str) -> bool:
    return bool(_EXIT_FLAG.match(name))


def _user_name(name: str) -> str:
    """``w.2.out`` → ``w``; ``$brk3.2`` → ``break``; ``$k4.2`` (a loop counter) stays a temp name."""
    base = name.split(".")[0]
    m = re.match(r"^(.*)\$(brk\d+|done)$", base)
    if m:
        return "returned" if m.group(2) == "done" else "break"
    return base

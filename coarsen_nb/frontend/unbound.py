"""Reads of a variable that may be unbound: checked when they run, as Python checks them.

``if x > 0: y = x`` then ``return y`` is legal Python; it raises UnboundLocalError when the path
that skips the assignment is taken.  SSA gives ``y`` there the φ(y.1, undef), and the φ-calculus
reads φ(a, undef) as a (F1: the undefined path never reads it).  Without a check the compiled
function would return ``x`` where Python raises — a silently wrong answer.  Refusing such a function
at compile time would be wrong too: a variable unbound only on a path the user knows is never taken
(``for i in range(n): last = x[i]`` with n ≥ 1) is an ordinary program.  So every read of a variable
that may be unbound is checked when it runs:

* each such value gets a boolean shadow, its *bound flag* — True where it was assigned, False where
  undef flows in, and a φ of the operands' flags at every join (a γ or μ once gated);
* the read ``y.2`` becomes ``$checked:y.2 = $bound(flag, y.2)``, which the lowering prints as
  ``if not flag: raise UnboundLocalError(...)`` followed by a copy, and every statement that read
  ``y.2`` reads the checked copy instead.

The same check covers a function (or an inlined helper) that can reach its end without a
``return``: Python returns None there, which is not a number, so the compiled code raises.

Post-condition: the function is still in SSA form (:func:`coarsen_nb.frontend.ssa.verify`), and no
statement or return reads a possibly-undefined user variable except through a check.
"""

from __future__ import annotations

import ast

from coarsen_nb import ir

#: The call that checks a bound flag: ``$bound:y@f(flag, y)`` is ``y`` where ``flag`` holds.
BOUND = "$bound"
#: Markers the frontend leaves for this pass (dead code, removed after it): a helper frame's prefix
#: names its function; a frame that can reach its end without a return says so.
FRAME = "$frame"
FALLS_OFF = "$falls_off"


def is_bound_check(e: ir.Expr) -> bool:
    return isinstance(e, ir.Call) and e.func.startswith(BOUND + ":")


#: The end of the message of every UnboundLocalError a check raises: how the runtime tells it from a bug.
UNBOUND_MARK = "and no assignment to it ran on this path"


def bound_error(e: ir.Call, line: int) -> tuple[str, str]:
    """(exception class, message) that a failed check ``e`` at ``line`` raises, in the user's words."""
    what, func = e.func[len(BOUND) + 1:].split("@", 1)
    at = f" at line {line}" if line else ""
    if what == "return":
        called = f" (its result is read at line {line})" if line else ""
        return "TypeError", (f"{func}() reached its end without a return statement{called}: Python would "
                             "return None, which is not a number")
    return "UnboundLocalError", (f"cannot access local variable {what!r} where it is not associated with a "
                                 f"value: {func}() reads it{at}, {UNBOUND_MARK}")


def check_unbound_reads(fn: ir.Function) -> ir.Function:
    """``fn`` (in SSA form) with every read of a possibly-unbound user variable checked."""
    return _Checker(fn).run()


class _Checker:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.defs: dict[str, object] = {}          # SSA name -> its Assign or (block label, Phi)
        for b in fn.blocks:
            for p in b.phis:
                self.defs[p.target] = (b.label, p)
            for s in b.stmts:
                self.defs[s.target] = s
        self.maybe = self._maybe_unbound()
        self.flags: dict[str, ir.Expr] = {}
        self.checks: dict[str, int] = {}          # SSA name -> how many checks of it were made so far
        self.new_phis: dict[str, list[ir.Phi]] = {b.label: [] for b in fn.blocks}
        self.frames: dict[str, str] = {}         # helper prefix ("h1:") -> the helper's name
        self.falls_off: set[str] = set()         # prefixes of functions that can end without a return
        for s in (s for b in fn.blocks for s in b.stmts):
            var = s.target.rsplit(".", 1)[0]
            if var.endswith(FRAME):
                self.frames[var[:-len(FRAME)]] = s.value.value
            elif var.endswith(FALLS_OFF):
                self.falls_off.add(var[:-len(FALLS_OFF)])

    # -- which values may be unbound ---------------------------------------------------------

    def _maybe_unbound(self) -> set[str]:
        """The SSA values that are undef on some path: ``$ret = undef``, and φs with an undef operand or
        an operand that is one of them (to a fixed point: a loop's φ reaches itself)."""
        out = {n for n, d in self.defs.items() if isinstance(d, ir.Assign) and isinstance(d.value, ir.Undef)}
        phis = {n: d[1] for n, d in self.defs.items() if isinstance(d, tuple)}
        changed = True
        while changed:
            changed = False
            for name, phi in phis.items():
                if name not in out and any(isinstance(v, ir.Undef) or (isinstance(v, ir.Name) and v.id in out)
                                           for _, v in phi.args):
                    out.add(name)
                    changed = True
        return out

    def maybe_unbound(self, name: str) -> bool:
        return name in self.maybe

    # -- bound flags ------------------------------------------------------------------------------

    def flag(self, operand: ir.Expr) -> ir.Expr:
        """The bound flag of a φ operand or a read value."""
        if isinstance(operand, ir.Undef):
            return ir.Const(False)
        if not isinstance(operand, ir.Name) or not self.maybe_unbound(operand.id):
            return ir.Const(True)
        name = operand.id
        if name in self.flags:
            return self.flags[name]
        d = self.defs[name]
        if isinstance(d, ir.Assign):             # `$ret = undef` at the start of a function or helper
            return ir.Const(False)
        label, phi = d
        flag = ir.Name(f"$bound:{name}")
        self.flags[name] = flag                  # before the operands: a loop's flag reads itself
        args = tuple((p, self.flag(v)) for p, v in phi.args)
        self.new_phis[label].append(ir.Phi(flag.id, args))
        return flag

    def _placeholder(self, phi: ir.Phi) -> ir.Phi:
        """A checked φ with 0 for its undef operands.  The check raises before anything reads the 0, but
        the φ-calculus lifts φ(a, undef) to a alone (F1), evaluating ``a`` — say ``math.sqrt(a - 1.0)``
        under ``if a > 1.0`` — on the path that never assigned it; γ(p, a, 0) evaluates it only where
        p holds.  (An int 0 keeps an int variable an int.)"""
        if phi.target not in self.flags:
            return phi
        return ir.Phi(phi.target, tuple((p, ir.Const(0) if isinstance(v, ir.Undef) else v) for p, v in phi.args))

    # -- the checks -------------------------------------------------------------------------------

    def describe(self, name: str) -> str | None:
        """``what@function`` for a check of SSA value ``name``, or None for a compiler temporary."""
        var = name.rsplit(".", 1)[0]
        prefix, colon, base = var.rpartition(":")
        prefix += colon
        func = self.frames.get(prefix, self.fn.name)
        if base == "$ret":
            # `$ret` is bound exactly where a `return` ran, which the frontend's `$done` flags hide from
            # the φs: only a function that can reach its end without a return needs the check.
            return f"return@{func}" if prefix in self.falls_off else None
        return None if "$" in base else f"{base}@{func}"

    def run(self) -> ir.Function:
        if not self.maybe:
            return self.fn
        checked = [self._check_block(b) for b in self.fn.blocks]      # the flags' φs are all known after
        blocks = []
        for b, (stmts, term) in zip(self.fn.blocks, checked, strict=True):
            phis = tuple(self._placeholder(p) for p in b.phis) + tuple(self.new_phis[b.label])
            blocks.append(ir.Block(b.label, tuple(stmts), term, phis, b.loop))
        return ir.Function(self.fn.name, self.fn.params, tuple(blocks), self.fn.entry, self.fn.source, self.fn.ssa,
                           self.fn.gated, self.fn.words)

    def _check_block(self, b: ir.Block) -> tuple[list[ir.Assign], ir.Terminator]:
        """``b``'s statements with a check before each first read of a possibly-unbound value, and its
        terminator reading the checked copies."""
        stmts: list[ir.Assign] = []
        checked: dict[str, str] = {}         # within the block, one check per value

        def check(e: ir.Expr, line: int, col: int) -> ir.Expr:
            def sub(name: str) -> ir.Expr:
                what = self.describe(name) if self.maybe_unbound(name) else None
                if what is None:
                    return ir.Name(name)
                if name not in checked:
                    # one name per check: a value read in two blocks is checked in each, and SSA names
                    # each check's copy once (a second ``$checked:y.2`` was a second definition, whose
                    # adjoint the reverse sweep added twice)
                    count = self.checks[name] = self.checks.get(name, 0) + 1
                    checked[name] = f"$checked:{name}" + (f".{count}" if count > 1 else "")
                    call = ir.Call(f"{BOUND}:{what}", (self.flag(ir.Name(name)), ir.Name(name)))
                    stmts.append(ir.Assign(checked[name], call, line, col))
                return ir.Name(checked[name])

            return ir.rename(e, sub)

        for s in b.stmts:
            value = check(s.value, s.line, s.col)
            stmts.append(ir.Assign(s.target, value, s.line, s.col))
        term = b.term
        if isinstance(term, ir.Return):
            term = ir.Return(check(term.value, 0, 0))
        elif isinstance(term, ir.Branch):
            term = ir.Branch(check(term.cond, term.line, 0), term.if_true, term.if_false, term.line)
        return stmts, term


def returns_on_every_path(body: list[ast.stmt]) -> bool:
    """Whether every path through ``body`` ends in a ``return`` (so the function cannot fall off its end)."""
    for s in body:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and s.orelse and returns_on_every_path(s.body) and returns_on_every_path(s.orelse):
            return True
    return False

"""One operation per assignment: the three-address form behind L = 1.

The size cap L counts *operations*, and L = 1 is operator-level AD: every
operation its own SOI, its result a named value the reverse sweep reads, its
derivative taken alone.  A user's statement is usually several operations
(``s = s + x[i] ** 2`` is a read, a power and an add), so before lifting in
operator mode every assignment is split into a chain of assignments of one
operation each, the way an operator-level tool records it:

    s.3 = s.2 + x[i.1] ** 2      →      $o1.1 = x[i.1]
                                         $o2.1 = $o1.1 ** 2
                                         s.3 = s.2 + $o2.1

Only operands that are always evaluated are hoisted: the arms of a
conditional expression (and of ``np.where``) and the later operands of ``and``/``or`` stay where
they are (hoisting them would evaluate a guarded ``log`` or division the
program never runs).  The pass is a pure function of the gated tree; names
stay single-assignment.
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.frontend import words
from coarsen_nb.phi.gate import GatedFunction, If, Let, Loop, name_minter
from coarsen_nb.phi.types import T, expr_type

#: Expressions that are one operation of their own when they are an operand of another.
_OPERATIONS = (ir.BinOp, ir.UnaryOp, ir.Compare, ir.Call, ir.Index, ir.BoolOp, ir.IfExp)


def one_operation_per_let(g: GatedFunction, types: dict[str, T]) -> tuple[GatedFunction, dict[str, T]]:
    """``g`` with every assignment split into assignments of one operation each, and ``types``
    extended with the new names' types."""
    types = dict(types)
    fresh = name_minter(g, "o")
    names = dict(g.words)       # the generated code's words for the new names too (frontend/words.py)

    def name_word(name: str) -> str | None:
        base = name.split(".")[0]
        helper, _, local = base.rpartition(":")
        if local.startswith("$ret") and helper.startswith("_"):     # an inlined helper's value: its name
            return helper.strip("_").rstrip("0123456789") or None
        return names.get(base) or (None if "$" in base else local.rstrip("'"))

    def operand(e: ir.Expr, out: list, line: int) -> ir.Expr:
        """``e`` as an operand: a leaf, or a name bound to it by a new assignment in ``out``."""
        if not isinstance(e, _OPERATIONS):
            return e
        name = fresh()
        value = top(e, out, line)
        types[name] = expr_type(value, types)
        word = words.ir_word(value, name_word)
        if word:
            names[name.split(".")[0]] = word
        out.append(Let(name, value, line))
        return ir.Name(name)

    def top(e: ir.Expr, out: list, line: int) -> ir.Expr:
        """``e`` with its always-evaluated compound operands bound to names first."""
        if isinstance(e, ir.BinOp):
            return ir.BinOp(e.op, operand(e.left, out, line), operand(e.right, out, line))
        if isinstance(e, ir.Compare):
            return ir.Compare(e.op, operand(e.left, out, line), operand(e.right, out, line))
        if isinstance(e, ir.UnaryOp):
            return ir.UnaryOp(e.op, operand(e.operand, out, line))
        if isinstance(e, ir.Call) and e.func == "where":     # np.where(c, a, b): like IfExp, only c always runs
            return ir.Call(e.func, (operand(e.args[0], out, line), *e.args[1:]), e.static)
        if isinstance(e, ir.Call):
            z = softplus_operand(e)
            if z is not None:   # log(1 + exp(z)) is one guarded operation, softplus: split, it overflows
                return _replacesoftplus_operand(e, operand(z, out, line))
            return ir.Call(e.func, tuple(operand(a, out, line) for a in e.args), e.static)
        if isinstance(e, ir.Index):
            return ir.Index(e.value, tuple(operand(i, out, line) for i in e.index))
        if isinstance(e, ir.Update):
            index = tuple(operand(i, out, line) for i in e.index)
            return ir.Update(e.array, index, operand(e.value, out, line))
        if isinstance(e, ir.Tuple):
            return ir.Tuple(tuple(operand(v, out, line) for v in e.elts))
        if isinstance(e, ir.BoolOp):           # only the first operand always runs
            return ir.BoolOp(e.op, (operand(e.values[0], out, line), *e.values[1:]))
        if isinstance(e, ir.IfExp):            # only the test always runs
            return ir.IfExp(operand(e.test, out, line), e.body, e.orelse)
        return e

    def region(nodes) -> tuple:
        out: list = []
        for n in nodes:
            if isinstance(n, Let):
                value = top(n.value, out, n.line)
                out.append(Let(n.name, value, n.line))
            elif isinstance(n, If):
                out.append(If(n.cond, region(n.then), region(n.orelse), n.gammas, n.line))
            else:
                out.append(Loop(n.label, n.info, n.mus, region(n.header), n.cond, region(n.body), n.etas))
        return tuple(out)

    body = region(g.body)
    return GatedFunction(g.name, g.params, body, g.result, g.source, names), types



def softplus_operand(e: ir.Call) -> ir.Expr | None:
    """``z`` when ``e`` is ``log(1 + exp(z))``, ``log(exp(z) + 1)`` or ``log1p(exp(z))``, else None."""
    if e.func == "log1p" and len(e.args) == 1:
        inner = e.args[0]
    elif e.func == "log" and len(e.args) == 1 and isinstance(e.args[0], ir.BinOp) and e.args[0].op == "+":
        a, b = e.args[0].left, e.args[0].right
        ones = [x for x in (a, b) if isinstance(x, ir.Const) and not isinstance(x.value, bool) and x.value == 1]
        if not ones:
            return None
        inner = b if a is ones[0] else a
    else:
        return None
    return inner.args[0] if isinstance(inner, ir.Call) and inner.func == "exp" and len(inner.args) == 1 else None


def _replacesoftplus_operand(e: ir.Call, z: ir.Expr) -> ir.Call:
    """``e`` (a softplus, see :func:`softplus_operand`) with ``exp``'s operand replaced by ``z``."""
    def swap(x):
        return ir.Call("exp", (z,)) if isinstance(x, ir.Call) and x.func == "exp" else x

    arg = e.args[0]
    if isinstance(arg, ir.BinOp):
        return ir.Call(e.func, (ir.BinOp("+", swap(arg.left), swap(arg.right)),))
    return ir.Call(e.func, (swap(arg),))

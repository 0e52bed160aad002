"""A reference interpreter of the IR: the executable meaning of a :class:`~coarsen_nb.ir.Function`.

Later stages are checked against this interpreter, so it is kept small and
independent of the compiler: it imports only the IR dataclasses and the
primitive table, never the frontend.

Semantics
---------
* Control starts at ``fn.entry`` with the parameters bound to the arguments.
* On entering a block from predecessor ``p``, all φ nodes of the block take
  the operand listed for ``p``, evaluated *in parallel* (every operand is read
  before any target is written), so swaps and rotations of loop-carried
  values mean what they say.
* Statements run in order; expressions have the exact semantics of Python and
  NumPy: ``and``/``or`` short-circuit and return an operand, ``IfExp`` and
  ``Gamma`` evaluate only the selected operand, ``Update`` returns a modified
  *copy* (the IR is pure), calls go through :func:`coarsen_nb.primitives.evaluate`.
* ``Undef`` is a value that may be moved (a φ operand, a plain copy ``a = b``)
  but never used: computing with it, branching on it or returning it raises
  :class:`UndefinedValueError`.  A checked read ``$bound:y@f(flag, y)`` raises UnboundLocalError
  where ``flag`` is false, as Python does at a read of an unassigned local.
* μ/η (loop gated forms) have no meaning without the loop structure around them;
  interpret the SSA form before gating instead.
"""

from __future__ import annotations

import operator

import numpy as np

from coarsen_nb import ir
from coarsen_nb.primitives import evaluate

__all__ = ["run_ir", "assert_same", "IRRuntimeError", "UndefinedValueError"]


class IRRuntimeError(RuntimeError):
    """The IR is malformed at run time (missing φ operand, unknown block, name never set, ...)."""


class UndefinedValueError(IRRuntimeError):
    """An ``undef`` value was used."""


class _UndefValue:
    def __repr__(self) -> str:
        return "<undef>"


_UNDEF = _UndefValue()

_BINOPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
}
_UNARYOPS = {"-": operator.neg, "+": operator.pos, "not": operator.not_}
_CMPOPS = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
_ATTRS = ("shape", "size", "ndim")


def run_ir(fn: ir.Function, args: tuple, *, max_steps: int = 1_000_000):
    """Run ``fn`` on ``args`` and return what its ``Return`` yields.

    ``max_steps`` bounds the number of blocks entered, so that a broken back
    edge fails the test instead of hanging it.

    Example
    -------
    >>> from coarsen_nb.ir import Assign, BinOp, Block, Const, Function, Name, Return
    >>> b = Block("entry", (Assign("y", BinOp("*", Name("x"), Const(2.0))),), Return(Name("y")))
    >>> run_ir(Function("f", ("x",), (b,), "entry"), (1.5,))
    3.0
    """
    if len(args) != len(fn.params):
        raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    env: dict[str, object] = dict(zip(fn.params, args, strict=True))
    blocks = fn.block_map
    label, prev = fn.entry, None
    for _ in range(max_steps):
        if label not in blocks:
            raise IRRuntimeError(f"jump to unknown block {label!r}")
        block = blocks[label]
        if block.phis:
            if prev is None:
                raise IRRuntimeError(f"φ nodes in the entry block {label!r}")
            values = [_phi_operand(phi, prev, env) for phi in block.phis]
            for phi, value in zip(block.phis, values, strict=True):
                env[phi.target] = value
        for stmt in block.stmts:
            if isinstance(stmt.value, (ir.Name, ir.Undef)):
                env[stmt.target] = _move(stmt.value, env)
            else:
                env[stmt.target] = _eval(stmt.value, env)
        term = block.term
        if isinstance(term, ir.Return):
            return _eval(term.value, env)
        if isinstance(term, ir.Jump):
            prev, label = label, term.target
        elif isinstance(term, ir.Branch):
            prev, label = label, (term.if_true if _eval(term.cond, env) else term.if_false)
        else:
            raise IRRuntimeError(f"block {label!r} has no terminator: {term!r}")
    raise IRRuntimeError(f"{fn.name}: more than {max_steps} blocks entered (endless loop?)")


def _phi_operand(phi: ir.Phi, prev: str, env: dict):
    chosen = [value for pred, value in phi.args if pred == prev]
    if len(chosen) != 1:
        raise IRRuntimeError(f"{phi}: {len(chosen)} operands for predecessor {prev!r}")
    return _move(chosen[0], env)


def _move(e: ir.Expr, env: dict):
    """The value of a φ operand or a plain copy: an undefined value moves without error."""
    if isinstance(e, ir.Undef):
        return _UNDEF
    if isinstance(e, ir.Name):
        if e.id not in env:
            raise IRRuntimeError(f"{e.id!r} read before it is assigned")
        return env[e.id]
    return _eval(e, env)


def _eval(e: ir.Expr, env: dict):
    if isinstance(e, ir.Name):
        if e.id not in env:
            raise IRRuntimeError(f"{e.id!r} read before it is assigned")
        value = env[e.id]
        if value is _UNDEF:
            raise UndefinedValueError(f"{e.id!r} is undefined here")
        return value
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Undef):
        raise UndefinedValueError("undef used")
    if isinstance(e, ir.BinOp):
        return _BINOPS[e.op](_eval(e.left, env), _eval(e.right, env))
    if isinstance(e, ir.UnaryOp):
        return _UNARYOPS[e.op](_eval(e.operand, env))
    if isinstance(e, ir.Compare):
        return _CMPOPS[e.op](_eval(e.left, env), _eval(e.right, env))
    if isinstance(e, ir.BoolOp):
        value = _eval(e.values[0], env)
        for operand in e.values[1:]:
            if (e.op == "and") != bool(value):   # `and` stops at falsy, `or` at truthy
                return value
            value = _eval(operand, env)
        return value
    if isinstance(e, ir.IfExp):
        return _eval(e.body, env) if _eval(e.test, env) else _eval(e.orelse, env)
    if isinstance(e, ir.Gamma):
        return _eval(e.if_true, env) if _eval(e.pred, env) else _eval(e.if_false, env)
    if isinstance(e, ir.Call) and e.func.startswith("$bound:"):
        # a read of a variable that may be unbound (frontend/unbound.py): Python's error where it is
        if not _eval(e.args[0], env):
            raise UnboundLocalError(f"{e.func[len('$bound:'):]} is not assigned on this path")
        return _eval(e.args[1], env)
    if isinstance(e, ir.Call):
        return evaluate(e.func, [_eval(a, env) for a in e.args], static=e.static)
    if isinstance(e, ir.Index):
        value = _eval(e.value, env)
        index = tuple(_eval(i, env) for i in e.index)
        return value[index[0] if len(index) == 1 else index]
    if isinstance(e, ir.Attr):
        if e.attr not in _ATTRS:
            raise IRRuntimeError(f"attribute {e.attr!r} is not part of the IR")
        return getattr(_eval(e.value, env), e.attr)
    if isinstance(e, ir.Update):
        array = np.array(_eval(e.array, env), copy=True)
        index = tuple(_eval(i, env) for i in e.index)
        array[index[0] if len(index) == 1 else index] = _eval(e.value, env)
        return array
    if isinstance(e, ir.Tuple):
        return tuple(_eval(v, env) for v in e.elts)
    if isinstance(e, (ir.Mu, ir.Eta)):
        raise IRRuntimeError(f"{e}: μ/η are interpreted through the SSA form they came from")
    raise IRRuntimeError(f"not an IR expression: {e!r}")


def assert_same(got, ref, context: str = "") -> None:
    """``got`` (from the IR) equals ``ref`` (from Python): exactly for ints and bools, to
    rtol 1e-12 for floats (NaN equals NaN), element by element for arrays and tuples."""
    where = f" ({context})" if context else ""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), f"{got!r} != {ref!r}{where}"
        for g, r in zip(got, ref, strict=True):
            assert_same(g, r, context)
        return
    if isinstance(ref, (bool, np.bool_, int, np.integer)):
        assert isinstance(got, (bool, np.bool_, int, np.integer)), f"{got!r} is not an int like {ref!r}{where}"
        assert got == ref, f"{got!r} != {ref!r}{where}"
        return
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0, equal_nan=True, err_msg=where)
    assert np.shape(got) == np.shape(ref), f"shape {np.shape(got)} != {np.shape(ref)}{where}"

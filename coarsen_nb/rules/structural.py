"""The primitives SymPy does not see into, and those without a value to differentiate: reductions, shapes,
constructors, reshapes and opaque steps (a matrix product, an array literal).  One registration each."""

from __future__ import annotations

from coarsen_nb.rules.record import Primitive, Spelling


def _array_literal(args, xp):
    return xp.asarray(args) if all(isinstance(a, int) for a in args) else xp.asarray(args, dtype=float)


def _array_literal_2d(args, xp):
    return xp.reshape(_array_literal(args[1:], xp), (-1, args[0]))


def _row(name, kind, nargs, numpy=None, **kw) -> Primitive:
    """A registration whose NumPy attribute is its name unless given, spelled ``xp.<array>`` in array code."""
    numpy = numpy or name
    spelling = kw.pop("spelling", Spelling(array=numpy))
    return Primitive(name, kind, nargs if isinstance(nargs, tuple) else (nargs,), numpy, spelling=spelling, **kw)


STRUCTURAL: tuple[Primitive, ...] = (
    _row("len", "shape", 1, evaluate=lambda args, xp: len(args[0]), spelling=Spelling(step="{0}.shape[0]"),
         total=True, differentiable=False, result="int"),
    _row("int", "shape", 1, evaluate=lambda args, xp: int(args[0]), spelling=Spelling(step="int({0})"),
         differentiable=False, result="int"),
    # reductions
    _row("sum", "reduction", 1, total=True),
    _row("mean", "reduction", 1, total=True),
    _row("prod", "reduction", 1),
    _row("amax", "reduction", 1, "max"),
    _row("amin", "reduction", 1, "min"),
    # fresh arrays
    _row("zeros", "constructor", 1, differentiable=False),
    _row("ones", "constructor", 1, differentiable=False),
    _row("empty", "constructor", 1, differentiable=False),
    _row("full", "constructor", 2),
    _row("zeros_like", "constructor", 1, total=True, differentiable=False),
    _row("ones_like", "constructor", 1, total=True, differentiable=False),
    _row("empty_like", "constructor", 1, total=True, differentiable=False),
    _row("copy", "constructor", 1, aliases=("array",),
         evaluate=lambda args, xp: xp.array(args[0], dtype=float, copy=True),
         spelling=Spelling(step="xp.asarray({0}, dtype=xp.float64, copy=True)"), total=True),
    # the same values, shaped as NumPy's rule says for the operand's rank (lower/reshapes.py prints them)
    _row("atleast_1d", "reshape", 1, total=True),
    _row("atleast_2d", "reshape", 1, total=True),
    _row("atleast_3d", "reshape", 1, total=True),
    # SymPy cannot see into these: they end a segment
    _row("dot", "opaque", 2, spelling=Spelling(array="matmul"), total=True),
    # a list or tuple literal of numbers, as the 1-D array NumPy makes of it (frontend/literals.py, printed
    # by lower/literals.py); no function of np or math is spelled so: the frontend makes it, lookup() never
    # finds it
    _row("array_literal", "opaque", (), "asarray", evaluate=_array_literal, total=True),
    _row("array_literal_2d", "opaque", (), "asarray", evaluate=_array_literal_2d, total=True),  # (ncols, rows...)
    _row("matmul", "opaque", 2, total=True),
)

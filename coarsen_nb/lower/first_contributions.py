"""An adjoint's first contribution assigned, not added to zeros: a pass over the lowered IR's records.

The reverse sweep gives every active array value an adjoint ``b_t = xp.zeros(t.shape)`` and adds each
contribution into it (``b_t += c``).  Where the first thing that touches ``b_t`` is ``b_t += c`` and ``c``
is a new array of ``t``'s shape, the zero fill (its page faults) and the add's extra pass are waste:
``b_t = c`` (as float64) is the same array.  For :func:`first_contributions` to rewrite, three facts must hold,
each proved by whoever knows it:

* **``c`` has exactly the primal's shape** — from the plan, so the module writer (the reverse sweep)
  says so when it emits the contribution: an elementwise kernel contribution of a kernel whose arrays
  do not broadcast, a matrix product's adjoint of vectors and matrices, a rule's that says so
  (``Primitive.vjp_shaped``: the 1-D convolutions).  A scalar or broadcast contribution, a sum to a
  shape, an integer-valued one is not claimed and keeps the zeros.  The writer hands the zero fills and
  the claimed contributions over as the records themselves (kept alive, so an ``id`` names one record).
* **``c`` is a new array, owned by nobody else** — from the records here: an arithmetic operator, a
  negation, a call of the array namespace that returns a new array (:data:`NEW_ARRAY`; ``flip`` of one),
  of a helper that does (:data:`ALLOCATING`), a conditional expression of two of them; or a temporary
  assigned such a value once in the same block and read only by this contribution.  A name (a primal, an
  argument, the cotangent, another adjoint), an index (a view), a reshape are not: a later ``b_t += ...``,
  ``_scatter_add(b_t, ...)`` or ``b_t[i] += ...`` would write through it.
* **no path reads or writes ``b_t`` before it, and every path that reads it after it has defined it** —
  the zero fill and the contribution are statements of one block (a function body, an ``if`` arm, a
  loop body), the contribution is the first statement after the fill that mentions ``b_t`` (nested
  blocks included) and no ``break`` of that block's loop lies between them.  An adjoint filled in one
  arm or loop body and added to in another block keeps its zeros.

The dtype is not known at compile time (float32 arguments share a float64 one's compiled code), so
the assignment is ``b_t = xp.asarray(c, dtype=xp.float64)``: no copy where ``c`` is float64 already,
the float64 adjoint the zeros made where it is not.
"""

from __future__ import annotations

from collections import Counter

from coarsen_nb.lower.lir import (
    Assign,
    Attr,
    AugAssign,
    BinOp,
    Break,
    Call,
    Expr,
    For,
    If,
    IfExp,
    Name,
    Paren,
    Stmt,
    Tuple,
    Unary,
    While,
    names_in,
    statements,
    verify,
)
from coarsen_nb.lower.lir_passes import occurrences

#: Functions of the array namespace that return a new array: the elementwise ones (and ``where``), the
#: 1-D convolutions, the matrix product.
NEW_ARRAY = frozenset({"convolve", "correlate", "matmul",
    "exp", "expm1", "log", "log1p", "log2", "log10", "logaddexp", "sqrt", "square", "abs", "sign",
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "arcsin", "arccos",
    "arctan", "arctan2", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "pow", "power",
    "maximum", "minimum", "where", "multiply", "add", "subtract", "divide", "negative", "reciprocal",
})
#: Helpers of the generated module (:mod:`coarsen_nb.lower.helpers`) that return a new array on every
#: path: the adjoints of a matrix product, a signal's correlation with windows of it (NumPy's and numba's).
ALLOCATING = frozenset({"_mm_left", "_mm_right", "_window_vecmat"})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "**", "//", "%", "@"})


def first_contributions(body: tuple, fills, exact, fresh=()) -> tuple:
    """``body`` (a function's) with each zero fill of ``fills`` whose first contribution is of ``exact``
    replaced by the contribution's assignment (see the module docstring); ``fills``, ``exact``: records
    the module writer emitted (``b = xp.zeros(t.shape)``, ``b += c`` whose ``c`` has ``t``'s shape);
    ``fresh``: assignments ``c = f(...)`` or ``c, s = f(...)`` whose array ``c`` is a new float64 array
    (a loop function's output), which the writer says so of (then ``b`` takes ``c``'s place in it)."""
    verify(body, structured=True)
    fill_ids, exact_ids = {id(s) for s in fills}, {id(s) for s in exact}
    if not fill_ids or not exact_ids:
        return body
    fresh_ids = {id(s) for s in fresh}
    # again until nothing changes: an adjoint assigned a new array here may be the next one's first
    # contribution (``b_c += b_t``, b_t read nowhere else: pendulum_batch's copy of its argument)
    while True:
        mentions = Counter(n for s in statements(body) for n in occurrences(s))
        done = _block(body, fill_ids, exact_ids, mentions, fresh_ids)
        if done == body:
            return done
        body = done


def _block(block: tuple, fills: set[int], exact: set[int], mentions: Counter, fresh: set[int]) -> tuple:
    out = [_nested(s, fills, exact, mentions, fresh) for s in block]
    for z in range(len(out)):
        s = out[z]
        if id(s) in fills and isinstance(s, Assign) and isinstance(s.target, Name):
            _assign_first(out, z, exact, mentions, fresh)
    return tuple(s for s in out if s is not None)


def _nested(s: Stmt, fills, exact, mentions, fresh) -> Stmt:
    if isinstance(s, If):
        return If(s.test, _block(s.body, fills, exact, mentions, fresh),
                  _block(s.orelse, fills, exact, mentions, fresh), s.exceptional)
    if isinstance(s, For):
        return For(s.target, s.iter, _block(s.body, fills, exact, mentions, fresh))
    if isinstance(s, While):
        return While(s.test, _block(s.body, fills, exact, mentions, fresh))
    return s


def _assign_first(out: list, z: int, exact: set[int], mentions: Counter, fresh: set[int]) -> None:
    """Rewrite ``out`` in place (a dropped statement becomes ``None``) where the fill ``out[z]`` may go."""
    b = out[z].target.id
    u = next((k for k in range(z + 1, len(out)) if out[k] is not None and _mentions(out[k], b)), None)
    if u is None:
        return
    add = out[u]
    if id(add) not in exact or not isinstance(add, AugAssign) or add.op != "+" or add.target != Name(b) \
            or b in names_in(add.value) or _may_break(out[z + 1:u]):
        return
    value = _unparen(add.value)
    if _allocates(value):
        out[z], out[u] = None, _fresh(Assign(Name(b), _float64(value)), fresh)
        return
    if not isinstance(value, Name):
        return
    # a temporary: assigned once in this block, before, to a new array, and read by this contribution only
    t = value.id
    d = next((k for k in range(u - 1, -1, -1) if out[k] is not None and isinstance(out[k], Assign)
              and (out[k].target == value or id(out[k]) in fresh and _in_tuple(out[k].target, value))), None)
    if d is None or mentions[t] != 2 or b in names_in(out[d].value) or \
            not (id(out[d]) in fresh or _allocates(_unparen(out[d].value))):
        return
    if any(s is not None and k != z and _mentions(s, b) for k, s in enumerate(out[d + 1:u], start=d + 1)) \
            or _may_break(out[min(d, z) + 1:u]):
        return
    if id(out[d]) in fresh:         # (float64 already: ``b`` takes the temporary's place in its assignment)
        made = out[d]
        target = Name(b) if made.target == value else \
            Tuple(tuple(Name(b) if e == value else e for e in made.target.elts), bare=made.target.bare)
        out[d], out[z], out[u] = _fresh(Assign(target, made.value), fresh), None, None
        return
    out[d], out[z], out[u] = _fresh(Assign(Name(b), _float64(_unparen(out[d].value))), fresh), None, None


def _fresh(made: Assign, fresh: set[int]) -> Assign:
    """``made``, noted as the assignment of a new float64 array: the adjoint it assigns may in turn be the
    first contribution to another."""
    fresh.add(id(made))
    return made


def _in_tuple(target: Expr, name: Name) -> bool:
    return isinstance(target, Tuple) and name in target.elts


def _mentions(s: Stmt, name: str) -> bool:
    return any(name in occurrences(t) for t in statements((s,)))


def _may_break(stmts) -> bool:
    """Whether a ``break`` among ``stmts`` (in their ``if`` arms, not in a loop of their own) can leave the
    loop around them."""
    for s in stmts:
        if s is None or isinstance(s, (For, While)):
            continue
        if isinstance(s, Break) or isinstance(s, If) and (_may_break(s.body) or _may_break(s.orelse)):
            return True
    return False


def _unparen(e: Expr) -> Expr:
    while isinstance(e, Paren):
        e = e.inner
    return e


def _allocates(e: Expr) -> bool:
    """Whether evaluating ``e`` makes a new array that nothing else holds (its operands are arrays or
    numbers; the writer's claim of the shape says the result is an array)."""
    if isinstance(e, BinOp):
        return e.op in _ARITHMETIC
    if isinstance(e, Unary):
        return e.op == "-"
    if isinstance(e, IfExp):
        return _allocates(_unparen(e.body)) and _allocates(_unparen(e.orelse))
    if isinstance(e, Call):
        f = e.func
        if isinstance(f, Attr) and isinstance(f.value, Name) and f.value.id == "xp":
            if f.attr == "flip":        # a view, but of a new array that nothing else holds
                return bool(e.args) and _allocates(_unparen(e.args[0]))
            return f.attr in NEW_ARRAY
        return isinstance(f, Name) and f.id in ALLOCATING
    return False


def _float64(e: Expr) -> Call:
    """``xp.asarray(e, dtype=xp.float64)``: the float64 adjoint the zeros made (no copy of a float64 ``e``)."""
    xp = Name("xp")
    return Call(Attr(xp, "asarray"), (e,), (("dtype", Attr(xp, "float64")),))

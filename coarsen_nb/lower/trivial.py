"""Trivial forms printed as what they are, so that generated code reads like a hand-written gradient.

* ``b_x += v``, not ``_scatter_add(b_x, 0, n, 1, v)``, for the adjoint of the read ``x[k]`` over
  ``k in range(len(x))``: the read visits every element of ``x`` once, in order, so the scatter is
  the whole array's sum.  That is proved from the plan (the loop's stop is the primitive
  ``len(x)`` of that same ``x``), never assumed: any other range keeps ``_scatter_add``, which
  handles offsets, steps and partial ranges.
* ``int(n)``, not ``int(xp.sum(xp.broadcast_to(xp.asarray(1), (n,))))``, for the count of a loop's
  points (``k += 1`` in a loop lifted to a sum); ``3 * int(n)`` for another integer literal.  Both
  are exact: an integer sum has no rounding.
* The values themselves, not ``zeros`` + copy + scatter, for a write ``out[k] = v_k`` over
  ``k in range(n)`` into a 1-D array of length ``n`` (a slice ``x[1:]``, a filled table): every element
  is written once, in order.  The length is compared when the code runs (it is one comparison), so
  any other case keeps the scatter.  Where the plan proves the case — the array is a step
  ``zeros(n)``, the loop runs over ``range(0, n, 1)`` of that same ``n`` and writes a float at each point
  (what a slice read ``x[1:]`` desugars to, :mod:`coarsen_nb.frontend.slices`; gmm's table ``log_w[k] =
  logits[k] - ...``) — the written array *is* the values: no test, no
  copy, and the zeros are dead (:func:`whole_fills`).  Nothing can change the values through it: a
  later write to the array copies it (``_put``), and an array written in place starts as a copy
  (:mod:`coarsen_nb.lower.in_place`).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.printing import length
from coarsen_nb.phi import forms
from coarsen_nb.plan import PrimStep, walk_steps


def count(literal: lir.Expr, size: lir.Expr) -> lir.Expr:
    """Σ over ``size`` points of the integer ``literal`` (an ``int`` literal record)."""
    n = lir.Call(lir.Name("int"), (lir.expr(size),))
    return n if str(literal) == "1" else lir.BinOp("*", literal, n)


def scatter_add(writer, pr, lv, bar: lir.Expr, array: str, fast, val: lir.Expr) -> lir.Stmt:
    """The statement adding ``val`` (one value per point of level ``lv``) into ``bar[lo + step*k]``.

    ``writer`` is the module writer (its plan and names), ``pr`` the printer, ``array`` the SSA name
    of the array whose adjoint ``bar`` is, ``fast`` the (lo, n, step) codes of the slice."""
    lo, n, step = fast
    if str(lo) == "0" and str(step) == "1" and _whole_array(writer, pr, lv, array):
        return lir.AugAssign(bar, "+", val)
    return lir.ExprStmt(lir.Call(lir.Name(pr.helper('_scatter_add')), (bar, lo, n, step, val)))


def _whole_array(writer, pr, lv, array: str) -> bool:
    """Whether ``lv``'s loop runs over ``range(0, len(array), 1)``."""
    rng = pr.deps.ranges.get(lv.binder)
    if rng is None:
        return False
    a, b, s = (sp.sympify(x) for x in rng)
    if a != 0 or s != 1 or not isinstance(b, sp.Symbol):
        return False
    try:
        stop = pr.leaf(b)[0]
    except KeyError:
        return False
    return _lengths(writer).get(stop) == writer.py(array)


def _lengths(writer) -> dict[str, str]:
    """Printed name -> printed array name, for each ``name = len(array)`` step of the plan."""
    return {writer.py(n): writer.py(a) for n, a in naming.length_steps(writer.plan).items()}


def whole_write(pr, base: lir.Expr, vals: lir.Expr, n: lir.Expr, identity: bool) -> tuple[lir.Expr, lir.Expr] | None:
    """The test and the value for a write of ``vals`` at ``k`` over ``range(0, n, 1)`` into ``base``
    (``identity``: the write's index is its loop's ``k``), else None: ``if test: out = value``.  ``pr``:
    the printer (its array namespace)."""
    if not identity:
        return None
    one_d = lir.Compare("==", lir.Attr(base, "ndim"), lir.Lit("1"))
    test = lir.BoolOp("and", (one_d, lir.Compare("==", length(base), n)))
    return test, pr.call("asarray", pr.call("broadcast_to", pr.call("asarray", vals, dtype=pr.dtype("float64")),
                                            lir.Tuple((n,))), copy=lir.Lit("True"))


def whole_fills(writer, kernel) -> frozenset[str]:
    """The printed names of ``kernel``'s array inputs that one of its writes fills whole with floats: each a
    plan step ``zeros(n)``, written at ``k`` over ``range(0, n, 1)`` of that same ``n`` by a float at each
    point (:func:`_float_element`: the read of a float array a slice read ``x[1:]`` desugars to, gmm's
    table).  Such a write's value is its values (:meth:`~coarsen_nb.lower.write_printing.WritePrinting._write`).
    ``writer``: the module writer (its plan and names)."""
    zeros = {s.name: s.expr.args[0].id for s in walk_steps(writer.plan.steps)
             if isinstance(s, PrimStep) and isinstance(s.expr, ir.Call) and s.expr.func == "zeros"
             and len(s.expr.args) == 1 and not s.expr.static and isinstance(s.expr.args[0], ir.Name)}
    temps = dict(kernel.body)
    reads = {r.symbol: r for r in kernel.reads}
    out = set()
    for _, e in kernel.body:
        if not isinstance(e, forms.RWrite):
            continue
        init, body, k, a, b, s, *idx = e.args
        length = zeros.get(kernel.arrays.get(init))
        if idx == [k] and a == 0 and s == 1 and length is not None and kernel.scalars.get(b) == length \
                and _float_element(writer, kernel, reads, temps.get(body, body), k):
            out.add(writer.py(kernel.arrays[init]))
    return frozenset(out)


# the kinds whose sum or product with a float is a float
_REAL = frozenset({"float", "int", "bool"})


def _float_element(writer, kernel, reads: dict, v, k) -> bool:
    """Whether ``v`` is one float at each point: a read of a float array's element, or a sum or product with a
    float term (a literal, such a read: ``logits[k] - log_norm - 0.9189...``, gmm's table) of the loop's ``k``,
    elements of arrays and numbers.  (A row, ``X[k]`` of a matrix, or an array invariant is no element, and
    stays refused: the write would raise.)  Numba then compiles no ``_put`` arm that no call runs."""
    def element(x) -> bool:
        read = reads.get(x)
        t = writer.plan.types.get(read.array) if read is not None else None
        return t is not None and t.ndim == len(read.index) and t.kind in _REAL

    def float_element(x) -> bool:
        return element(x) and writer.plan.types[reads[x].array].kind == "float"

    if float_element(v):
        return True
    if not isinstance(v, (sp.Add, sp.Mul)) or not any(isinstance(x, sp.Float) or float_element(x) for x in v.args):
        return False
    for x in v.free_symbols:
        t = writer.plan.types.get(kernel.scalars.get(x))
        if not (x == k or element(x) or (t is not None and not t.is_array and t.kind in _REAL)):
            return False
    return True


def fills_whole(pr, init) -> bool:
    """Whether the write into ``init`` (a kernel's array input, or its tangent's zeros) is one of the
    printer ``pr``'s :func:`whole_fills`."""
    code = pr.leaf(init)[0] if init in getattr(pr, "leaf_map", {}) else None
    if isinstance(code, lir.Call) and str(code.func).endswith("zeros") and len(code.args) == 1 \
            and isinstance(code.args[0], lir.Attr) and code.args[0].attr == "shape":
        code = code.args[0].value       # the tangent of the zeros: zeros of their shape
    return str(code) in pr.whole_fills

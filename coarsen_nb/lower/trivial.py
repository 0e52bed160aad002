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
  ``zeros(n)`` or ``empty(n)``, the loop runs over ``range(0, n, 1)`` of that same length and writes a float at
  each point (what a slice read ``x[1:]`` desugars to, :mod:`coarsen_nb.frontend.slices`; gmm's table ``log_w[k] =
  logits[k] - ...``; conv1d's sum over the taps) — the written array *is* the values: no test, no
  copy, and the zeros are dead (:func:`whole_fills`; their check of ``n`` stays).  Nothing can change
  the values through it: a later write to the array copies it (``_put``), and an array written in place
  starts as a copy (:mod:`coarsen_nb.lower.in_place`).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir, naming, point_kinds
from coarsen_nb.lower.printing import length
from coarsen_nb.phi import forms
from coarsen_nb.plan import KernelStep, PrimStep, walk_steps


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
    plan step ``zeros(n)`` or ``empty(n)``, written at ``k`` over ``range(0, n, 1)`` of that same length (the
    same step, or ``len`` of the same array: ``np.empty(len(x))`` filled over ``range(len(x))``) by one float
    at each point (:func:`~coarsen_nb.lower.point_kinds.point_kind`: a slice read ``x[1:]`` desugars to
    the read of a float array, gmm's table, conv1d's sum over the taps ``0.0 + Σ_k w[k] x[i + k]``).  Such a
    write's value is its values (:meth:`~coarsen_nb.lower.write_printing.WritePrinting._write`): no test, no
    copy, and the zeros are dead (a dropped ``zeros(n)`` keeps its check of ``n``:
    :mod:`coarsen_nb.lower.allocation_checks`).  ``writer``: the module writer (its plan and names)."""
    fresh = fresh_vectors(writer.plan)
    lengths = naming.length_steps(writer.plan)
    temps = dict(kernel.body)
    out = set()
    for _, e in kernel.body:
        if not isinstance(e, forms.RWrite):
            continue
        init, body, k, a, b, s, *idx = e.args
        length = fresh.get(kernel.arrays.get(init))
        stop = kernel.scalars.get(b)
        same = length is not None and stop is not None and (
            stop == length or (stop in lengths and lengths.get(stop) == lengths.get(length)))
        if idx == [k] and a == 0 and s == 1 and same \
                and point_kinds.point_kind(writer, kernel, temps.get(body, body), k) == "float":
            out.add(writer.py(kernel.arrays[init]))
    return frozenset(out)


def fresh_vectors(plan) -> dict[str, str]:
    """SSA name -> the SSA name of its length, for each plan step ``zeros(n)`` or ``empty(n)`` and each name
    an SOI passes one of them on to unchanged (conv1d's ``out = np.zeros(n)`` is its own SOI's output, then
    the input ``out.1`` of the SOI whose loop fills it)."""
    fresh: dict[str, str] = {}
    for st in walk_steps(plan.steps):
        e = getattr(st, "expr", None)
        if isinstance(st, PrimStep) and isinstance(e, ir.Call) and e.func in ("zeros", "empty") \
                and len(e.args) == 1 and not e.static and isinstance(e.args[0], ir.Name):
            fresh[st.name] = e.args[0].id
        elif isinstance(st, KernelStep) and fresh:
            for out, source in passed_on(st.kernel):
                if source in fresh:
                    fresh[out] = fresh[source]
    return fresh


def passed_on(kernel):
    """``(output, input)`` SSA names of each output of ``kernel`` (an SOI) that is one of its inputs unchanged
    (through copies of symbols): what a plan-wide fact about the input (a fresh array, a length) says of the
    output too."""
    temps = dict(kernel.body)
    for o in kernel.outputs:
        x = o.symbol
        while x in temps and isinstance(temps[x], sp.Symbol):
            x = temps[x]
        source = kernel.scalars.get(x) or kernel.arrays.get(x)
        if source is not None:
            yield o.name, source


def fills_whole(pr, init) -> bool:
    """Whether the write into ``init`` (a kernel's array input, or its tangent's zeros) is one of the
    printer ``pr``'s :func:`whole_fills`."""
    code = pr.leaf(init)[0] if init in getattr(pr, "leaf_map", {}) else None
    if isinstance(code, lir.Call) and str(code.func).endswith("zeros") and len(code.args) == 1 \
            and isinstance(code.args[0], lir.Attr) and code.args[0].attr == "shape":
        code = code.args[0].value       # the tangent of the zeros: zeros of their shape
    return str(code) in pr.whole_fills

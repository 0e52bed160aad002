"""A numba loop that stores cosines and sines: vectorized with ``_cos``/``_sin``, libm's for the rare far elements.

Numba calls libm for ``math.cos`` and ``math.sin``, which LLVM cannot vectorize (pip's llvmlite has no vector
math library), so a loop over x computing ``cos(x[i])`` runs one element at a time: piecewise_sum's gradient
was libm's cos on half its points and a branch (JAX's computes a vectorized cos on all and selects).  The
helpers ``_cos`` and ``_sin`` (``numba_helpers``) are arithmetic, within 1 ulp of libm's for |x| <= TRIG_NEAR
(2^19 pi/2), NaN beyond; inlined in the loop, both arms of a branch are plain arithmetic and LLVM if-converts
and vectorizes the loop.  The elements whose argument is beyond the bound (or NaN, or infinite) are rare and
recomputed with libm's, in a second loop that runs only where there is one:

    far = False
    for k in range(...):
        near = True
        ...                                  # the body; before each call of _cos(a):
        near &= abs(a) <= TRIG_NEAR          #   (in the arm that calls it)
        far |= not near
        b_x[int(k)] += v if near else -0.0   # a scatter adds nothing at a far element (x + -0.0 is x)
        out[i] = w                           # a store is written again below
    if far:
        for k in range(...):
            near = True
            ...                              # the same body with math.cos and math.sin
            if not near:
                b_x[int(k)] += v
                out[i] = w

So every element is libm's value (to 1 ulp) and a far element exactly libm's; NaN and inf behave as libm's.
The loops that store (the ``elem`` and ``scatter`` kinds) are printed so.  In a loop that sums, LLVM keeps the
sum's order and vectorizes nothing (a scalar ``_sin`` there is hardly faster than libm's), so a float sum over a
range of step 1 (``reduce``) computes its terms by chunks into a buffer, the vectorized loop, then adds them in
order: the same sum, bit for bit (``summed``); where an element was far, the sum is computed again with libm's.
Its chunks vectorize only without bounds checks: ``numba_loops`` prints it as the unchecked twin behind the
tests of :func:`~coarsen_nb.lower.numba_bounds.out_of_bounds`, and keeps libm's calls (``plain``) where there
are no such tests.

The same chunks serve exp, log and erf (``_exp``, ``_log``, ``_erf_scalar``: right on the whole range,
:mod:`coarsen_nb.lower.numba_elementary`, so no element is redone), in a sum's loop and in a loop of several float
sums and scatters at the iteration (the ``loop`` kind: black_scholes' gradient, delta and vega scattered, rho
summed).  Each step's term goes to a buffer of its own in the vectorized loop; the loop after it adds them in the
loop's order (``acc += terms[j]``, ``b[chunk + j] += terms2[j]``): the same additions, bit for bit, where no step
reads what another writes and a scatter's subscript reads only the index (``buffered_steps``).  A scatter's
``b[k] += v`` in the vectorized loop itself kept LLVM from vectorizing it (the arrays may alias).  black_scholes'
gradient at 10^6 options: 50 -> 22 ms (RESULTS.md, stop 44).  A loop that stores keeps libm's exp, log and erf.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_exprs import names_in
from coarsen_nb.lower.numba_helpers import TRIG_NEAR
from coarsen_nb.lower.printing import is_atom_code
from coarsen_nb.phi.elementary import Erf

# the helper for each function, and libm's (``math``) name for it in the far elements' loop
_FAST = {sp.cos: "_cos", sp.sin: "_sin"}
# the helpers of the whole range, no element recomputed (numba_elementary, and numba_helpers' _exp): called in
# a loop whose sums' terms are computed into buffers (``summed``) only, where the loop that calls them is
# vectorized; a loop that stores keeps libm's (not measured there, and a loop LLVM does not vectorize for
# another reason runs the arithmetic slower than libm's)
_WHOLE = {sp.exp: "_exp", sp.log: "_log", Erf: "_erf_scalar"}
_LIBM = {"_cos": "cos", "_sin": "sin", "_exp": "exp", "_log": "log", "_erf_scalar": "erf"}

#: every helper this module's loops may call (a loop printed back with libm's drops them: ``plain``)
HELPERS = frozenset(_LIBM)

# (the loop kinds whose loop only stores: numba_loops.LoopFunction)
KINDS = frozenset({"elem", "scatter"})

# the terms of a sum computed at once (``FastTrig.summed``): a buffer that stays in the first-level cache
CHUNK = 256


class FastTrig:
    """The printer hook (``Printer.scalar_call``) of one loop function's body, and the loops it prints."""

    def __init__(self, fresh, trig: bool = True, whole: bool = False):
        self.fresh = fresh
        self.near = lir.Name(fresh("near"))
        self.trig, self.whole = trig, whole     # (cos and sin; exp, log and erf: the sums' loops, ``summed``)
        self.used = False
        self.tested = False             # (a cos or sin called: its argument tested, its far elements redone)
        self._checked: list = []        # (the block, the argument) of each test printed

    def call(self, pr, e, args) -> lir.Expr | None:
        """``_cos(a)`` (``_sin(a)``) for ``cos(a)`` (``sin(a)``) of the loop's body, after the statement that
        notes whether ``a`` is near (emitted where the call is: in the arm of a branch that computes it);
        None for any other function, which the printer spells as it does.  With ``whole``, ``_exp(a)``,
        ``_log(a)``, ``_erf_scalar(a)`` for exp, log and erf, with no test (they are right everywhere)."""
        if len(args) != 1:
            return None
        name = _FAST.get(type(e)) if self.trig else None
        if name is None:
            whole = _WHOLE.get(type(e)) if self.whole else None
            if whole is None:
                return None
            self.used = True
            return lir.Call(lir.Name(pr.helper(whole)), (args[0],))
        a = args[0]
        if not is_atom_code(a):
            a = lir.Name(pr.fresh(None))
            pr.emit(lir.Assign(a, args[0]))
        # (once per argument in the blocks open here: a test printed in one of them was run before this point)
        open_blocks = pr.open_blocks
        if not any(block is b and a == arg for block, arg in self._checked for b in open_blocks):
            pr.emit(lir.AugAssign(self.near, "&", lir.Compare("<=", lir.Call(lir.Name("abs"), (a,)),
                                                              lir.Lit(repr(TRIG_NEAR)))))
            self._checked.append((open_blocks[-1], a))
        self.used = self.tested = True
        return lir.Call(lir.Name(pr.helper(name)), (a,))

    def loops(self, index: lir.Expr, iterable: lir.Expr, body: list[lir.Stmt],
              stores: list[lir.Stmt]) -> list[lir.Stmt]:
        """The vectorized loop over ``body`` then ``stores`` (each an ``Assign`` or ``AugAssign`` into an array),
        and the loop recomputing its far elements with libm's functions (see the module docstring)."""
        far = lir.Name(self.fresh("far"))
        start = lir.Assign(self.near, lir.Lit("True"))
        fast = [lir.AugAssign(s.target, s.op, lir.IfExp(s.value, self.near, lir.Lit("-0.0")))
                if isinstance(s, lir.AugAssign) else s for s in stores]
        vectorized = lir.For(index, iterable, (start, *body, lir.AugAssign(far, "|", lir.Unary("not", self.near)),
                                               *fast))
        libm = lir.For(index, iterable, (start, *(_libm(s) for s in body),
                                         lir.If(lir.Unary("not", self.near), tuple(stores))))
        return [lir.Assign(far, lir.Lit("False")), vectorized,
                lir.If(far, (lir.Comment(f"the elements whose cos or sin reads a number beyond ±{TRIG_NEAR!r} (or NaN, "
                                         "inf): libm's values"),
                             libm))]

    def summed(self, index: lir.Name, bounds: tuple, body: list[lir.Stmt], steps: list[lir.AugAssign],
               start: lir.Expr | None) -> list[lir.Stmt]:
        """A loop over ``range(*bounds)`` (step 1) whose ``body`` ends in ``steps``, each a sum's step
        (``acc += v``) or a scatter at the iteration (``b[k] += v``), in chunks: each chunk's terms computed into
        a buffer a step (the vectorized loop), then added in order (the same sums and scatters, bit for bit, as
        one term at a time); where a cos or sin read a far element (one sum only: ``start`` its first value),
        the sum again from ``start`` with libm's functions (see the module docstring)."""
        far = lir.Name(self.fresh("far")) if self.tested else None
        buffers = [lir.Name(self.fresh("terms")) for _ in steps]
        chunk, stop, j = (lir.Name(self.fresh(h)) for h in ("chunk", "stop", "j"))
        lo, hi = (lir.Lit("0"), bounds[0]) if len(bounds) == 1 else bounds
        size = lir.Lit(str(CHUNK))
        begin = [lir.Assign(self.near, lir.Lit("True"))] if far is not None else []
        noted = [lir.AugAssign(far, "|", lir.Unary("not", self.near))] if far is not None else []
        fill = lir.For(index, lir.Call(lir.Name("range"), (chunk, stop)), (
            *begin, *body, *noted,
            *(lir.Assign(lir.Index(buf, (lir.BinOp("-", index, chunk),)), step.value)
              for step, buf in zip(steps, buffers, strict=True))))
        at = lir.BinOp("+", chunk, j)
        add = lir.For(j, lir.Call(lir.Name("range"), (lir.BinOp("-", stop, chunk),)), tuple(
            lir.AugAssign(_at(step.target, index, at), step.op, lir.Index(buf, (j,)))
            for step, buf in zip(steps, buffers, strict=True)))
        chunks = lir.For(chunk, lir.Call(lir.Name("range"), (lo, hi, size)), (
            lir.Assign(stop, lir.Call(lir.Name("min"), (lir.BinOp("+", chunk, size), hi))), fill, add))
        made = [*([lir.Assign(far, lir.Lit("False"))] if far is not None else []),
                *(lir.Assign(buf, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (size,))) for buf in buffers), chunks]
        if far is None:
            return made
        (step,) = steps
        libm = lir.For(index, lir.Call(lir.Name("range"), tuple(bounds)), (*begin, *(_libm(s) for s in body), step))
        return [*made, lir.If(far, (lir.Comment(f"a cos or sin read a number beyond ±{TRIG_NEAR!r} (or NaN, inf): "
                                                "the sum with libm's values"), lir.Assign(step.target, start), libm))]

    def plain(self, body: list[lir.Stmt]) -> list[lir.Stmt]:
        """``body`` as it was before this hook: libm's functions, no test of the arguments."""
        return list(_libm(tuple(body), self.near))


def buffered_steps(steps: list[lir.Stmt], body: list[lir.Stmt]) -> bool:
    """Whether ``summed`` may compute each of a loop's ``steps`` into a buffer and apply it after its chunk: each
    ``acc += v`` or ``b[...] += v`` whose subscripts read no name the ``body`` binds (only the iteration's index
    and the function's parameters), and nothing the body or the steps' values read is written by a step (an
    accumulator, a scattered array): then the steps do the same additions, in the same order, later."""
    bound = {n for st in lir.statements(body) for n in st.targets()}
    written = set()
    for st in steps:
        if not isinstance(st, lir.AugAssign) or st.op != "+":
            return False
        if isinstance(st.target, lir.Name):
            written.add(st.target.id)
        elif isinstance(st.target, lir.Index) and isinstance(st.target.value, lir.Name) and \
                not {n for e in st.target.items for n in names_in(e)} & bound:
            written.add(st.target.value.id)
        else:
            return False
    read = {n for st in lir.statements(body) for n in lir.reads(st)} | \
        {n for st in steps for n in names_in(st.value)}
    return not read & written


def _at(target: lir.Expr, index: lir.Name, at: lir.Expr) -> lir.Expr:
    """A step's target (an accumulator, or ``b[k]``) in the loop that adds the buffers: ``index`` read as ``at``
    (``int(index)`` too: ``at``, a sum of two range counters, is an integer already, and ``int()`` of it made
    Numba compile its ``int`` overload in each process, 0.02 s of black_scholes' cold start)."""
    def visit(x):
        if isinstance(x, lir.Call) and isinstance(x.func, lir.Name) and x.func.id == "int" and len(x.args) == 1 \
                and isinstance(x.args[0], lir.Name) and x.args[0].id == index.id and not x.kwargs:
            return at
        return at if isinstance(x, lir.Name) and x.id == index.id else None

    return lir.rewrite(target, visit)


def _libm(node, drop: lir.Name | None = None):
    """``node`` (a statement or expression record) with each call of ``_cos``/``_sin`` calling ``math``'s, and
    without the statements ``drop &= ...`` where ``drop`` is given."""
    def visit(x):
        if isinstance(x, lir.Call) and isinstance(x.func, lir.Name) and x.func.id in _LIBM:
            return lir.Call(lir.Attr(lir.Name("math"), _LIBM[x.func.id]), tuple(_libm(a) for a in x.args))
        if isinstance(x, tuple):
            return tuple(_libm(y, drop) for y in x if not (isinstance(y, lir.AugAssign) and y.target == drop))
        return None
    return lir.rewrite(node, visit)

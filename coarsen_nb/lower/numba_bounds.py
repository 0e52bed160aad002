"""Which subscripts of a numba loop function are in bounds, known by tests before its loops.

A loop function is compiled with Numba's bounds checks (``_jit_loop``): an index out of bounds raises
Python's ``IndexError`` as the NumPy backend's indexing does.  The checks cost a compare and a branch per
subscript and keep LLVM from vectorizing the loops.  Where every subscript is an array parameter at loop
variables alone, and every loop of those variables has bounds known before the loops, a few tests at the
function's start decide whether all are in bounds: then the same loops run without the checks
(:data:`UNCHECKED`); otherwise the checked function is called, and raises where the user's loop would.
The row contractions (:mod:`coarsen_nb.lower.numba_rows`), the nests (:mod:`coarsen_nb.lower.numba_nests`)
and the reductions (:mod:`coarsen_nb.lower.numba_loops`) do so.

**The checked twin is compiled only where a test fails** (:func:`checked_call`, under one ``if`` of all the
tests: :func:`bounds_guard`).  Numba compiles a callee while typing its caller, so the twin, which almost
never runs, cost 30-45% of its loop's compile.  Where a
test fails the call goes to the twin only when the module's flag :data:`TWINS_FLAG` is true (the prologue
sets it: an exported module behaves as the loop always did); the numba loader sets it false in the module
it compiles first, so Numba prunes that branch (a branch on a global constant) and never types the twin,
and the loop raises :data:`BOUNDS_SIGNAL` instead: the loader then runs the call again on the same module
with the flag true (:mod:`coarsen_nb.numba_loader`), whose twin raises the user's ``IndexError``, or
returns the right value where the read that failed a test is guarded (an ``if``) and never happens.  The
tests come before the loop function writes anything, and a generated function writes only into arrays it
or its caller allocated, never into the user's arguments: the call is repeated from its entry point.
"""

from __future__ import annotations

from coarsen_nb.lower import lir, lir_exprs

# a loop whose every index is in bounds (``out_of_bounds``): NumPy's error model, no bounds checks
# (``numba`` and ``INTERNAL``, no wrappers for Python or C to call it, are in every numba module's prologue;
# not cached, as the prologue's ``_jit_loop``: coarsen_nb/numba_lazy_callees.py)
UNCHECKED = '@numba.njit(error_model="numpy", **INTERNAL)'

#: the prologue's flag: an in-bounds loop whose test fails calls its checked twin (true), or raises the signal
TWINS_FLAG = "_call_checked_twins"
#: the exception an in-bounds loop raises where a test fails and the flag is false (the prologue defines it)
BOUNDS_SIGNAL = "_BoundsNotProved"
#: the prologue's text that defines both (``Backend.prologue``: every numba module carries it)
PROLOGUE = f"""# (lower/numba_bounds.py: a loop whose subscripts are in bounds by its tests calls its bounds-checked
# twin where a test fails; the numba loader compiles a module with this false first, which raises the signal)
{TWINS_FLAG} = True


class {BOUNDS_SIGNAL}(Exception):
    \"\"\"A loop's tests before it could not prove its subscripts in bounds, in a module compiled without the
    bounds-checked twins (the numba loader runs the call again with them).\"\"\""""

# (the functions a printed range may call: the generated code never names a variable so)
_BUILTINS = frozenset({"max", "min", "int"})


def checked_call(name: str, params) -> tuple[lir.Stmt, ...]:
    """The statements of an in-bounds loop where one of its tests fails: return its bounds-checked twin
    ``name``'s result on ``params`` where the module's :data:`TWINS_FLAG` is true, else raise
    :data:`BOUNDS_SIGNAL` (Numba prunes the branch not taken: the twin is compiled only with the flag)."""
    call = lir.Return(lir.Call(lir.Name(name), tuple(lir.Name(p) for p in params)))
    return lir.If(lir.Name(TWINS_FLAG), (call,)), lir.Raise(lir.Name(BOUNDS_SIGNAL))


def bounds_guard(tests, checked: tuple[lir.Stmt, ...]) -> lir.If:
    """One ``if`` of all of an in-bounds loop's ``tests`` (``or``, in their order: the first true one decides, as
    the ``if`` per test did) around ``checked`` (:func:`checked_call`'s statements).  One branch, one twin call
    and one raise instead of one per test: Numba translates, types and lowers each raise and each pruned call,
    ~0.03 s of gmm's cold compile for its tiled adjoint's seven tests."""
    tests = tuple(tests)
    if len(tests) == 1:
        return lir.If(tests[0], checked)
    return lir.If(lir.BoolOp("or", tuple(t if _binds_tighter_than_or(t) else lir.Paren(t) for t in tests)), checked)


#: the expressions that print tighter than ``<`` (an operand of a comparison in an ``or`` needs no parentheses)
_TIGHT = (lir.Name, lir.Lit, lir.Attr, lir.Index, lir.Call, lir.BinOp, lir.Paren, lir.Tuple)


def _binds_tighter_than_or(test: lir.Expr) -> bool:
    """``test`` reads the same as an operand of ``or``: ``not (...)``, or a comparison of tight operands."""
    if isinstance(test, lir.Unary):
        return test.op.strip() == "not" and isinstance(test.operand, lir.Paren)
    return isinstance(test, lir.Compare) and all(isinstance(side, _TIGHT) for side in (test.left, test.right))


def loop_spans(body, known: set[str]) -> dict:
    """Each loop variable of ``body`` -> the ``(start, stop, step)`` codes of its every loop, or None for a
    loop whose range reads a name other than ``known`` (the parameters: a triangle's inner loop reads the
    outer variable), or whose range is not ``range(...)``."""
    spans: dict = {}
    for stmt in lir.statements(body):
        if not isinstance(stmt, lir.For) or not isinstance(stmt.target, lir.Name):
            continue
        it = stmt.iter
        span = None
        if isinstance(it, lir.Call) and str(it.func) == "range" and 1 <= len(it.args) <= 3 and \
                all(set(lir_exprs.names_in(a)) <= known | _BUILTINS for a in it.args):
            args = it.args
            span = (lir.Lit("0"), args[0], lir.Lit("1")) if len(args) == 1 else \
                (args[0], args[1], lir.Lit("1")) if len(args) == 2 else tuple(args)
        spans.setdefault(stmt.target.id, []).append(span)
    return spans


def out_of_bounds(body, arrays: set[str], spans: dict, own: frozenset = frozenset(),
                  points: frozenset = frozenset()) -> list[lir.Expr] | None:
    """The tests that find a subscript of the loop function ``body`` out of bounds (none true: all in bounds),
    or None where that is not known before its loops.  Each subscript must be an array parameter
    (``arrays``) at loop variables alone (``X[int(i), int(j)]``), each loop variable's every loop of step 1
    over bounds known before the loops (``spans``: variable -> [(start, stop, step) codes, or None]).  The
    test, per array axis and loop: ``not (stop <= start or (0 <= start and stop <= X.shape[axis]))``,
    ``stop > X.shape[axis]`` for a loop from 0.  ``own``: arrays the function allocates itself with the length
    of the loops that index them (a nest's tables and rows), in bounds by construction.  ``points``: number
    parameters that a subscript may be at (a scan's path ``X[int(p), int(k)]``), tested as
    ``not (0 <= p and p < X.shape[axis])`` (which then holds for the ``int`` of a float p too)."""
    uses = []
    for stmt in lir.statements(body):
        for e in stmt.exprs():
            for node in lir_exprs.walk(e):
                if not isinstance(node, lir.Index) or (isinstance(node.value, lir.Name) and node.value.id in own):
                    continue
                if isinstance(node.value, lir.Attr) and node.value.attr == "shape":
                    continue                    # (a shape's entry: its index a literal, which Numba checks)
                if not (isinstance(node.value, lir.Name) and node.value.id in arrays):
                    return None
                for axis, item in enumerate(node.items):
                    if isinstance(item, lir.Call) and str(item.func) == "int" and len(item.args) == 1:
                        item = item.args[0]
                    if not (isinstance(item, lir.Name) and (item.id in spans or item.id in points)):
                        return None
                    uses.append((node.value, axis, item.id))
    tests: dict[str, lir.Expr] = {}
    for array, axis, var in uses:
        if var in points and var not in spans:
            size = lir.Index(lir.Attr(array, "shape"), (lir.Lit(str(axis)),))
            test = lir.Unary("not ", lir.Paren(lir.BoolOp("and", (lir.Compare("<=", lir.Lit("0"), lir.Name(var)),
                                                                   lir.Compare("<", lir.Name(var), size)))))
            tests.setdefault(str(test), test)
            continue
        for span in spans[var]:
            if span is None or str(span[2]) != "1":
                return None
            start, stop, _ = span
            size = lir.Index(lir.Attr(array, "shape"), (lir.Lit(str(axis)),))
            if str(start) == "0":
                test = lir.Compare(">", stop, size)
            else:
                inside = lir.BoolOp("and", (lir.Compare("<=", lir.Lit("0"), start), lir.Compare("<=", stop, size)))
                test = lir.Unary("not ", lir.Paren(lir.BoolOp("or", (lir.Compare("<=", stop, start),
                                                                     lir.Paren(inside)))))
            tests.setdefault(str(test), test)
    return list(tests.values()) or None

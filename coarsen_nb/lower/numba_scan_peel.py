"""The reverse pass of a numba scan without its test of the first step: that step peeled off the loop's end.

The adjoint of a scan (:mod:`coarsen_nb.lower.numba_scans`) runs its steps in reverse, and a quantity that
only the first step has (asian_option's derivative by the initial price: the costate's value at ``k == lo``,
a γ on ``k == lo`` inside a sum) is printed as a test in every step::

    for k in range(n - 1, lo - 1, -1):
        ...
        t6 = k == lo
        if t6:
            choice2 = ...
        else:
            choice2 = 0
        acc4 += choice2
        u = e * u + t10

Every step but the last tests it and computes nothing in its arm.  Loop peeling (Allen and Kennedy, *Optimizing
Compilers for Modern Architectures*, 2001, §8.5; the forward loops' own is :mod:`coarsen_nb.lower.numba_peel`),
at the end here since the loop runs backwards: the steps ``k > lo`` run in ``range(n - 1, lo, -1)`` with each
test decided false (its ``else`` arm, a conditional expression's other value), then the step ``k == lo`` as it
was printed, in ``range(min(lo, n - 1), lo - 1, -1)`` (one trip, none where the range is empty).  The steps run
in the same order and compute the same values: the result is the unpeeled loop's, bit for bit.  asian_option's
gradient at 10⁴ paths of 50 steps: 0.95× (RESULTS.md, stop 44).
"""

from __future__ import annotations

from coarsen_nb.lower import lir


def last_step_peeled(loop: lir.For, lo: lir.Expr) -> list[lir.Stmt]:
    """``loop`` (the reverse pass, ``for k in range(start, lo - 1, -1)``) as the two loops above where its body
    tests ``k == lo``; ``[loop]`` where it does not."""
    index = loop.target
    start, stop, _ = loop.iter.args
    tests = {st.target.id for st in loop.body if isinstance(st, lir.Assign) and isinstance(st.target, lir.Name)
             and _is_first(st.value, index, lo, set())}

    def first(e) -> bool:
        return _is_first(e, index, lo, tests)

    if not any(isinstance(st, lir.If) and first(st.test) for st in lir.statements(loop.body)) and \
            not any(first(x.test) for st in lir.statements(loop.body) for e in st.exprs() for x in _if_exps(e)):
        return [loop]
    rest = _decided(loop.body, first)
    read = {n for st in lir.statements(rest) for n in lir.reads(st)}
    rest = tuple(st for st in rest if not (isinstance(st, lir.Assign) and isinstance(st.target, lir.Name)
                                           and st.target.id in tests and st.target.id not in read))
    after = lir.Call(lir.Name("range"), (start, lo, lir.Lit("-1")))
    last = lir.Call(lir.Name("range"), (lir.Call(lir.Name("min"), (lo, start)), stop, lir.Lit("-1")))
    return [lir.For(index, after, rest), lir.For(index, last, loop.body)]


def _is_first(e: lir.Expr, index: lir.Expr, lo: lir.Expr, tests: set) -> bool:
    """Whether ``e`` is the test ``index == lo`` (either way round), or a name bound to it."""
    if isinstance(e, lir.Name):
        return e.id in tests
    if isinstance(e, lir.Paren):
        return _is_first(e.inner, index, lo, tests)
    return isinstance(e, lir.Compare) and e.op == "==" and {_key(e.left), _key(e.right)} == {_key(index), _key(lo)}


def _key(e: lir.Expr):
    return e.text() if isinstance(e, (lir.Name, lir.Lit)) else id(e)


def _if_exps(e: lir.Expr):
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, lir.IfExp):
            yield x
        stack.extend(x.children())


def _decided(body: tuple, first) -> tuple:
    """``body`` with each ``if`` on the first step replaced by its ``else`` arm, and each conditional expression
    on it by its other value (the steps after the first)."""
    out: list[lir.Stmt] = []
    for st in body:
        if isinstance(st, lir.If) and first(st.test):
            out.extend(_decided(st.orelse, first))
            continue

        def visit(x):
            if isinstance(x, lir.IfExp) and first(x.test):
                return lir.rewrite(x.orelse, visit)
            if isinstance(x, tuple) and x and all(isinstance(s, lir.Stmt) for s in x):
                return _decided(x, first)
            return None

        out.append(lir.rewrite(st, visit))
    return tuple(out)

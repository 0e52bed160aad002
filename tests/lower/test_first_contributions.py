"""An adjoint's first contribution assigned instead of added to zeros (``lower/first_contributions.py``).

Two kinds of check.  The pass itself, on hand-built bodies of records: each body is run as Python before
and after the pass on the same arrays, and must return the same numbers *and leave its inputs as they
were* — a rewrite that aliased a primal, a temporary read later or another adjoint would write through it
at the body's later in-place add and fail here.  Then compiled functions whose adjoints meet each case
(a view of another adjoint, a fresh contribution followed by an in-place one, a scalar broadcast, an
integer-valued one, a branch arm), against ``jax.grad`` of the same code, with the zero fills they must
keep (or lose) named.
"""

from __future__ import annotations

import numpy as np
import pytest
from entry_checks import jax_function, jax_module
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb.benchmarks.style_pairs import rows_vec, smoothing_vec
from coarsen_nb.lower import lir
from coarsen_nb.lower.first_contributions import first_contributions
from coarsen_nb.lower.lir import Assign, Attr, AugAssign, BinOp, Break, Call, For, If, Index, Lit, Name, Return, Slice

XP = Name("xp")
T, U, B, C = Name("t"), Name("u"), Name("b"), Name("c")


def _zeros(like):
    return Assign(B, Call(Attr(XP, "zeros"), (Attr(like, "shape"),)))


def _add(value):
    return AugAssign(B, "+", value)


def _line(s) -> str:
    return lir.print_statement(s, 0)[0]


def _pair(t, u):
    """A loop function's results, as the writer calls one: a new float64 array, and the sum (an array here,
    so that the checks compare every result alike)."""
    return np.asarray(t * u, dtype=np.float64), np.full(t.shape, np.sum(t))


def _run(body, t, u):
    """``body`` as ``def f(t, u)`` run with NumPy as ``xp``: (what it returns, t and u after it)."""
    src = "def f(t, u):\n" + "\n".join(lir.print_body(body)) + "\n"
    ns = {"xp": np, "_pair": _pair}
    exec(src, ns)      # noqa: S102 (the test's own records)
    t, u = t.copy(), u.copy()
    out = ns["f"](t, u)
    return out, t, u


def _check(body, fills, exact, rewritten: bool, fresh=()):
    """The pass keeps what ``body`` computes and leaves its inputs alone; ``rewritten``: whether it must
    have taken the zero fill away."""
    after = first_contributions(tuple(body), fills, exact, fresh)
    t, u = np.linspace(-1.0, 1.0, 6), np.linspace(2.0, 3.0, 6)
    want, got = _run(tuple(body), t, u), _run(after, t, u)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g, dtype=float), np.asarray(w, dtype=float))
    kept = any(s is fills[0] for s in lir.statements(after))
    assert kept != rewritten, "\n".join(lir.print_body(after))
    return after


def test_a_fresh_contribution_takes_the_zeros_place():
    fill, add = _zeros(T), _add(BinOp("*", Lit("2"), T))
    after = _check([fill, add, AugAssign(B, "+", U), Return(lir.Tuple((B, T, U)))], [fill], [add], True)
    assert _line(after[0]) == "b = xp.asarray(2 * t, dtype=xp.float64)"


def test_a_temporary_read_once_is_folded_into_the_assignment():
    fill, tmp, add = _zeros(T), Assign(C, BinOp("*", T, U)), _add(C)
    after = _check([fill, tmp, add, Return(lir.Tuple((B,)))], [fill], [add], True)
    assert [_line(s) for s in after[:-1]] == ["b = xp.asarray(t * u, dtype=xp.float64)"]


def test_a_primal_is_not_taken_as_the_adjoint():
    """``b += t`` then ``b += u``: assigning ``b = t`` would add u into t."""
    fill, add = _zeros(T), _add(T)
    _check([fill, add, AugAssign(B, "+", U), Return(lir.Tuple((B, T)))], [fill], [add], False)


def test_a_temporary_read_again_is_not_taken():
    fill, tmp, add = _zeros(T), Assign(C, BinOp("*", T, U)), _add(C)
    body = [fill, tmp, add, AugAssign(B, "+", U), Return(lir.Tuple((B, C)))]
    _check(body, [fill], [add], False)


def test_a_view_is_not_taken():
    """``b += t[::-1]`` (a view of t) then an in-place add into ``b``."""
    fill, add = _zeros(T), _add(Index(T, (Slice(None, None, Lit("-1")),)))
    _check([fill, add, AugAssign(Index(B, (Lit("0"),)), "+", Lit("1.0")), Return(lir.Tuple((B, T)))],
           [fill], [add], False)


def test_an_unclaimed_shape_keeps_the_zeros():
    """The writer did not say the contribution has the primal's shape (a scalar: it broadcasts)."""
    fill, add = _zeros(T), _add(BinOp("*", Lit("2.0"), Lit("3.0")))
    _check([fill, add, Return(lir.Tuple((B,)))], [fill], [], False)


def test_a_read_before_the_contribution_keeps_the_zeros():
    fill, add = _zeros(T), _add(BinOp("*", Lit("2"), T))
    body = [fill, AugAssign(Index(B, (Lit("1"),)), "+", Lit("1.0")), add, Return(lir.Tuple((B,)))]
    _check(body, [fill], [add], False)


def test_a_contribution_in_a_branch_arm_keeps_the_zeros():
    """Filled before the ``if``, added to in one arm: the other arm reads the zeros."""
    fill, add = _zeros(T), _add(BinOp("*", Lit("2"), T))
    cond = lir.Compare(">", Index(U, (Lit("0"),)), Lit("2.5"))
    _check([fill, If(cond, (add,), (lir.Pass(),)), Return(lir.Tuple((B,)))], [fill], [add], False)


def test_fill_and_contribution_in_one_arm_are_rewritten_there():
    fill, add = _zeros(T), _add(BinOp("*", Lit("2"), T))
    cond = lir.Compare("<", Index(U, (Lit("0"),)), Lit("2.5"))
    after = _check([If(cond, (fill, add, Return(lir.Tuple((B,)))), (lir.Pass(),)), Return(lir.Tuple((U,)))],
                   [fill], [add], True)
    assert _line(after[0].body[0]) == "b = xp.asarray(2 * t, dtype=xp.float64)"


def test_a_break_between_fill_and_contribution_keeps_the_zeros():
    """In a loop body: a ``break`` after the fill leaves the loop with the zeros, not the last iteration's b."""
    fill, add = _zeros(T), _add(BinOp("*", Name("k"), T))
    brk = If(lir.Compare("==", Name("k"), Lit("2")), (Break(),))
    loop = For(Name("k"), Call(Name("range"), (Lit("4"),)), (fill, brk, add))
    _check([_zeros(T), loop, Return(lir.Tuple((B,)))], [fill], [add], False)


S, B2 = Name("s"), Name("b2")


def _pair_call():
    """``c, s = _pair(t, u)``: the writer says c is a new float64 array (a loop function's output)."""
    return Assign(lir.Tuple((C, S), bare=True), Call(Name("_pair"), (T, U)))


def test_a_loop_functions_new_output_takes_the_zeros_place_in_its_call():
    fill, made, add = _zeros(T), _pair_call(), _add(C)
    after = _check([fill, made, add, Return(lir.Tuple((B, S)))], [fill], [add], True, fresh=[made])
    assert _line(after[0]) == "b, s = _pair(t, u)"


def test_an_unclaimed_call_keeps_the_zeros():
    """Without the writer's word that the call's output is new, it may be an argument or a view."""
    fill, made, add = _zeros(T), _pair_call(), _add(C)
    _check([fill, made, add, Return(lir.Tuple((B, S)))], [fill], [add], False)


def test_an_adjoint_assigned_a_new_array_is_the_next_adjoints_first_contribution():
    """``b += c`` then ``b2 += b`` (a copy's adjoint), b read nowhere else: b2 takes c's place too."""
    fill2, fill, made, add, add2 = Assign(B2, Call(Attr(XP, "zeros"), (Attr(T, "shape"),))), _zeros(T), \
        _pair_call(), _add(C), AugAssign(B2, "+", B)
    after = _check([fill2, fill, made, add, add2, Return(lir.Tuple((B2, S)))], [fill2, fill], [add, add2], True,
                   fresh=[made])
    assert [_line(x) for x in after] == ["b2, s = _pair(t, u)", "return (b2, s)"]


def test_an_adjoint_read_again_is_not_the_next_adjoints_first_contribution():
    """``b2 += b`` then ``b2 += u`` in place, and b returned: b2 = b would add u into b."""
    fill2, fill, made, add, add2 = Assign(B2, Call(Attr(XP, "zeros"), (Attr(T, "shape"),))), _zeros(T), \
        _pair_call(), _add(C), AugAssign(B2, "+", B)
    body = [fill2, fill, made, add, add2, AugAssign(B2, "+", U), Return(lir.Tuple((B2, B, S)))]
    after = first_contributions(tuple(body), [fill2, fill], [add, add2], [made])
    assert any(x is fill2 for x in after), "\n".join(lir.print_body(after))
    t, u = np.linspace(-1.0, 1.0, 6), np.linspace(2.0, 3.0, 6)
    for w, g in zip(_run(tuple(body), t, u), _run(after, t, u), strict=True):
        np.testing.assert_array_equal(np.asarray(g, dtype=float), np.asarray(w, dtype=float))


# -- compiled functions against jax.grad ------------------------------------------------------------


def view_then_fresh(x):
    t = np.cumsum(x)
    u = np.reshape(t, (2, -1))
    return np.sum(np.sin(u)) + np.sum(t ** 2)


def fresh_then_in_place(x):
    t = np.cumsum(x)
    u = t[2]
    return np.sum(np.sin(t)) * u


def scalar_broadcast(x, a):
    t = np.cumsum(x)
    return np.sum(t) * a * a


def int_valued(x):
    t = np.cumsum(x)
    return np.sum(t * np.arange(t.shape[0]))


def branch_arm(x):
    t = np.cumsum(x)
    if np.sum(t) > 0.0:
        s = np.sum(np.cumsum(t) ** 2)
    else:
        s = np.sum(np.sin(t))
    return s


#: function, arguments, the zero fills its gradient keeps, those it must not have
CASES = [
    (view_then_fresh, (np.linspace(-1.0, 1.0, 8),), ["b_t = xp.zeros(t.shape)"], []),
    (fresh_then_in_place, (np.linspace(-1.0, 1.0, 8),), [], ["b_t = xp.zeros(t.shape)"]),
    (scalar_broadcast, (np.linspace(-1.0, 1.0, 8), 1.5), ["b_cumsum_x = xp.zeros(cumsum_x.shape)"], []),
    (int_valued, (np.linspace(-1.0, 1.0, 8),), ["b_t = xp.zeros(t.shape)"], []),
    (branch_arm, (np.linspace(-0.5, 1.0, 8),), ["b_t = xp.zeros(t.shape)"], ["b_cumsum_t = xp.zeros"]),
    (branch_arm, (np.linspace(-1.0, 0.5, 8),), ["b_t = xp.zeros(t.shape)"], ["b_cumsum_t = xp.zeros"]),
]


def _grad_source(f, name):
    src = f.source
    return src[src.index(f"def {name}_grad("):src.index(f"def {name}_jvp(")]


@pytest.mark.parametrize(("fn", "args", "kept", "gone"), CASES,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)])
def test_gradient_matches_jax(fn, args, kept, gone):
    jax = jax_module()
    f = cn.coarsen(fn, backend="numpy")
    want = jax.grad(jax_function(fn, jax))(*args)
    first = (lambda g: g[0]) if len(args) > 1 else (lambda g: g)      # (the gradient of x, the first)
    assert_close(first(f.grad(*args)), np.asarray(want), rtol=1e-10, atol=1e-12, what=fn.__name__)
    _, pullback = f.vjp(*args)
    g = first(pullback(0.5))
    assert_close(g, 0.5 * np.asarray(want), rtol=1e-10, atol=1e-12, what=f"{fn.__name__} vjp")
    src = _grad_source(f, fn.__name__)
    for line in kept:
        assert line in src, src
    for line in gone:
        assert line not in src, src


def test_smoothing_vec_gradient_assigns_its_adjoint():
    """The adjoint of the correlation is its one contribution, with no zero fill before it."""
    jax = jax_module()
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=40), rng.normal(size=5)
    f = cn.coarsen(smoothing_vec, backend="numpy")
    got = f.grad(x, w)
    src = _grad_source(f, "smoothing_vec")
    assert "b_correlate_x_w = xp.zeros" not in src, src
    assert "b_correlate_x_w = xp.asarray(2 * correlate_x_w, dtype=xp.float64)" in src, src
    want = jax.grad(jax_function(smoothing_vec, jax), argnums=(0, 1))(x, w)
    for g, v in zip(got, want, strict=True):
        assert_close(g, np.asarray(v), rtol=1e-10, atol=1e-12, what="smoothing_vec")


def test_float32_arguments_keep_float64_adjoints():
    """float32 arguments share the float64 compilation: the assigned adjoints are float64, as the zeros
    made them (the matrix product's adjoints are assigned in rows_vec)."""
    jax = jax_module()
    rng = np.random.default_rng(4)
    X, w = rng.normal(size=(30, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    f = cn.coarsen(rows_vec, backend="numpy")
    got = f.grad(X, w)
    assert "b_X = xp.zeros" not in _grad_source(f, "rows_vec")
    want = jax.grad(jax_function(rows_vec, jax), argnums=(0, 1))(X.astype(float), w.astype(float))
    for g, v in zip(got, want, strict=True):
        assert g.dtype == np.float64
        assert_close(g, np.asarray(v), rtol=1e-5, atol=1e-6, what="rows_vec float32")


def _convolution(fn_name, mode):
    """``np.sum(np.<fn>(x, w, mode) ** 2) + np.sin(x[0])``: its source, and the function."""
    src = f"def conv(x, w):\n    return np.sum(np.{fn_name}(x, w, mode={mode!r}) ** 2) + np.sin(x[0])\n"
    ns = {"np": np}
    exec(src, ns)      # noqa: S102 (the test's own function)
    return src, ns["conv"]


@pytest.mark.parametrize("fn_name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("sizes", [(9, 4), (4, 9), (5, 5)])
def test_convolution_cotangents_have_their_operands_shapes(fn_name, mode, sizes):
    """The convolutions' rule says its cotangents have their operands' shapes (``vjp_shaped``), so they are
    assigned to fresh adjoints: every mode, either operand the longer, against jax.grad (a wrong shape
    would be the gradient's); ``x``'s adjoint is also added to in place, at ``x[0]``."""
    jax = jax_module()
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=sizes[0]), rng.normal(size=sizes[1])
    src, fn = _convolution(fn_name, mode)
    f = cn.coarsen(src, backend="numpy", namespace={"np": np})
    got = f.grad(x, w)
    want = jax.grad(jax_function(fn, jax), argnums=(0, 1))(x, w)
    for g, v in zip(got, want, strict=True):
        assert_close(g, np.asarray(v), rtol=1e-10, atol=1e-12, what=f"{fn_name} {mode} {sizes}")
    assert "b_w = xp.zeros" not in _grad_source(f, "conv")

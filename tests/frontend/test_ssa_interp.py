"""The reference interpreter means what Python means (it is the oracle of later stages)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ssa_interp import IRRuntimeError, UndefinedValueError, assert_same, run_ir

from coarsen_nb.ir import (
    Assign,
    Attr,
    BinOp,
    Block,
    BoolOp,
    Branch,
    Call,
    Compare,
    Const,
    Function,
    Gamma,
    IfExp,
    Index,
    Jump,
    Name,
    Phi,
    Return,
    Tuple,
    UnaryOp,
    Undef,
    Update,
)


def _expr_fn(expr, params=("x",)):
    return Function("f", params, (Block("entry", (Assign("r", expr),), Return(Name("r"))),), "entry")


def _rotate_loop(n):
    """a, b = b, a (n times) written with φs only: the φs must be read in parallel."""
    return Function("rot", ("a", "b"), (
        Block("entry", (Assign("k.1", Const(0)),), Jump("head")),
        Block("head", (Assign("c.1", Compare("<", Name("k.2"), Const(n))),),
              Branch(Name("c.1"), "body", "exit"),
              (Phi("k.2", (("entry", Name("k.1")), ("body", Name("k.3")))),
               Phi("a.2", (("entry", Name("a")), ("body", Name("b.2")))),
               Phi("b.2", (("entry", Name("b")), ("body", Name("a.2")))))),
        Block("body", (Assign("k.3", BinOp("+", Name("k.2"), Const(1))),), Jump("head")),
        Block("exit", (), Return(Tuple((Name("a.2"), Name("b.2"))))),
    ), "entry", ssa=True)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_phis_are_parallel(n):
    a, b = 1.0, 2.0
    for _ in range(n):
        a, b = b, a
    assert run_ir(_rotate_loop(n), (1.0, 2.0)) == (a, b)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**"])
@pytest.mark.parametrize("x,y", [(7, 3), (-7, 3), (7, -3), (2.5, -1.5), (-0.5, 2)])
def test_binops_are_pythons(op, x, y):
    got = run_ir(_expr_fn(BinOp(op, Name("x"), Name("y")), ("x", "y")), (x, y))
    assert_same(got, eval(f"x {op} y"))


def test_matmul_unary_compare():
    a = np.arange(4.0).reshape(2, 2)
    assert_same(run_ir(_expr_fn(BinOp("@", Name("x"), Name("x"))), (a,)), a @ a)
    assert run_ir(_expr_fn(UnaryOp("-", Name("x"))), (2.5,)) == -2.5
    assert run_ir(_expr_fn(UnaryOp("not", Name("x"))), (0.0,)) is True
    for op in ["<", "<=", ">", ">=", "==", "!="]:
        assert run_ir(_expr_fn(Compare(op, Name("x"), Const(1.0))), (1.0,)) == eval(f"1.0 {op} 1.0")


@pytest.mark.parametrize("x", [0.0, 3.0])
def test_boolop_returns_an_operand_and_short_circuits(x):
    # `x and undef`: for x == 0.0 the undef is never evaluated; Python returns x itself.
    if x == 0.0:
        assert run_ir(_expr_fn(BoolOp("and", (Name("x"), Undef()))), (x,)) == 0.0
        assert run_ir(_expr_fn(BoolOp("or", (Name("x"), Const(5.0), Undef()))), (x,)) == 5.0
    else:
        assert run_ir(_expr_fn(BoolOp("or", (Name("x"), Undef()))), (x,)) == 3.0
        assert run_ir(_expr_fn(BoolOp("and", (Name("x"), Const(0.0), Undef()))), (x,)) == 0.0
        with pytest.raises(UndefinedValueError):
            run_ir(_expr_fn(BoolOp("and", (Name("x"), Undef()))), (x,))


def test_ifexp_and_gamma_evaluate_one_side():
    for node in (IfExp, Gamma):
        fn = _expr_fn(node(Compare(">", Name("x"), Const(0.0)), Name("x"), Undef()))
        assert run_ir(fn, (2.0,)) == 2.0
        with pytest.raises(UndefinedValueError):
            run_ir(fn, (-2.0,))


def test_update_is_a_copy():
    x = np.zeros(3)
    got = run_ir(_expr_fn(Update(Name("x"), (Const(1),), Const(5.0))), (x,))
    assert list(got) == [0.0, 5.0, 0.0] and list(x) == [0.0, 0.0, 0.0]
    m = np.zeros((2, 2))
    got = run_ir(_expr_fn(Update(Name("x"), (Const(1), Const(0)), Const(2.0))), (m,))
    assert got[1, 0] == 2.0 and m[1, 0] == 0.0


def test_index_attr_call():
    m = np.arange(6.0).reshape(2, 3)
    assert run_ir(_expr_fn(Index(Name("x"), (Const(1), Const(2)))), (m,)) == 5.0
    assert run_ir(_expr_fn(Index(Attr(Name("x"), "shape"), (Const(1),))), (m,)) == 3
    assert run_ir(_expr_fn(Call("sin", (Name("x"),))), (0.5,)) == math.sin(0.5)
    assert run_ir(_expr_fn(Call("amax", (Name("x"),))), (m,)) == 5.0
    assert run_ir(_expr_fn(Call("len", (Name("x"),))), (m,)) == 2


def test_undef_moves_but_cannot_be_used():
    # y = φ(entry: undef, ...) then a copy: fine; returning it: an error.
    def fn(ret):
        return Function("f", ("p",), (
            Block("entry", (), Branch(Name("p"), "then", "join")),
            Block("then", (Assign("y.1", Const(1.0)),), Jump("join")),
            Block("join", (Assign("z.1", Name("y.2")),), Return(Name(ret)),
                  (Phi("y.2", (("entry", Undef()), ("then", Name("y.1")))),)),
        ), "entry", ssa=True)
    assert run_ir(fn("z.1"), (True,)) == 1.0
    assert run_ir(fn("p"), (False,)) is False
    with pytest.raises(UndefinedValueError):
        run_ir(fn("z.1"), (False,))


def test_malformed_ir_is_reported():
    no_operand = Function("f", ("p",), (
        Block("entry", (), Jump("join")),
        Block("join", (), Return(Name("y")), (Phi("y", (("elsewhere", Const(1.0)),)),)),
    ), "entry", ssa=True)
    with pytest.raises(IRRuntimeError):
        run_ir(no_operand, (True,))
    endless = Function("f", ("p",), (Block("entry", (), Jump("entry")),), "entry")
    with pytest.raises(IRRuntimeError):
        run_ir(endless, (True,), max_steps=100)
    unknown = _expr_fn(Name("nowhere"))
    with pytest.raises(IRRuntimeError):
        run_ir(unknown, (1.0,))
    with pytest.raises(TypeError):
        run_ir(unknown, ())

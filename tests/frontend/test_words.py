"""The words the frontend gives its temporaries (coarsen_nb/frontend/words.py), from the code they stand for."""

from __future__ import annotations

import ast

import pytest

from coarsen_nb import ir
from coarsen_nb.frontend import words


@pytest.mark.parametrize("src,word", [
    ("x[1:]", "x_tail"), ("x[:-1]", "x_head"), ("x[2:]", "x_from2"), ("x[:3]", "x_first3"),
    ("x[-2:]", "x_last2"), ("x[::-1]", "x_rev"), ("x[::2]", "x_every2"), ("X[:, j]", "X_col"),
    ("X[i, :]", "X_row"), ("x[i]", "x_i"), ("np.sum((x[1:] - x[:-1]) ** 2)", "sum_diff_sq"),
    ("(a - b) ** 2", "a_minus_b_sq"),
    ("np.where(x > 0, x, 0.0)", "choice"), ("len(x)", "n_x"), ("x - 0.2", "x_shifted"),
    ("a * b", "a_times_b"), ("-x", "neg_x"), ("x > y", "x_gt"), ("x.shape", "x_shape"),
    ("np.exp(u)", "exp_u"), ("w.sum()", "sum_w"), ("x[0]", "x_at0"), ("x[-1]", "x_last"),
    ("X.shape[1]", "n_X_cols"),
])
def test_expression_words(src, word):
    assert words.expr_word(ast.parse(src, mode="eval").body) == word


def test_long_words_lose_their_last_pieces_not_their_sense():
    assert words.join("log", "spot_i_over_strike_i") == "log_spot_i"
    assert len(words.join("a_very_long_name", "another_long_name")) <= words.MAX


def test_ir_words_of_one_operation():
    def name_word(n):
        return n.split(".")[0]

    assert words.ir_word(ir.Index(ir.Name("x.1"), (ir.Name("i.2"),)), name_word) == "x_i"
    assert words.ir_word(ir.Index(ir.Name("w.1"), (ir.Const(0),)), name_word) == "w_at0"
    assert words.ir_word(ir.Index(ir.Name("t.1"), (ir.Const(-1),)), name_word) == "t_last"
    assert words.ir_word(ir.BinOp("**", ir.Name("v.1"), ir.Const(2)), name_word) == "v_sq"
    assert words.ir_word(ir.BinOp("*", ir.Const(0.5), ir.Name("v.1")), name_word) == "v_scaled"
    assert words.ir_word(ir.Call("exp", (ir.Name("z.1"),)), name_word) == "exp_z"
    assert words.ir_word(ir.BinOp("*", ir.Name("$o1.1"), ir.Name("b.1")), lambda n: None) == "prod"

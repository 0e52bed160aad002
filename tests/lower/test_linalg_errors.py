"""What linear algebra refuses, and how it fails at run time.

Refused forms are CoarsenErrors at the user's line and column, naming the construct, with a hint and a
caret, in the user's words (``tests/refusals.py``'s shape of a refusal); some are known only once the
operands' ranks are (an einsum's letters against its operands, a solve of a 3-D array), so each case is
compiled and called.  A singular matrix is NumPy's ``LinAlgError``, raised by the generated code as by
the plain function, in the value, the gradient and the JVP.  The cost model counts a solve's result as
large as its right-hand side.
"""

from __future__ import annotations

import numpy as np
import pytest
from refusals import INTERNAL_NAMES

import coarsen_nb as cn
from coarsen_nb.lower.cost import estimate

_A = np.eye(3) * 2.0 + 0.1
_CASES = [
    # (id, body of f(A, x, B, s, k), the text the caret is under, words the message holds): under the call where
    # the frontend refuses it, under the function's name where the operands' ranks do (phi/types.py)
    ("einsum_implicit", "np.einsum('ij,ij', A, A)", "einsum(", "implicit mode"),
    ("einsum_implicit_says_what_numpy_makes", "np.sum(np.einsum('ij,jk', A, A))", "einsum(",
     "np.einsum('ij,jk->ik', ...)"),
    ("einsum_ellipsis", "np.sum(np.einsum('...j,j->...', A, x))", "einsum(", "ellipsis"),
    ("einsum_trace", "np.einsum('ii->', A)", "einsum(", "repeated within one operand"),
    ("einsum_diagonal", "np.sum(np.einsum('ii->i', A))", "einsum(", "repeated within one operand"),
    ("einsum_output_repeats", "np.sum(np.einsum('ij->ii', A))", "einsum(", "repeats an index"),
    ("einsum_output_unknown", "np.sum(np.einsum('ij->k', A))", "einsum(", "names one no operand has"),
    ("einsum_rank", "np.einsum('ij,jk->', A, x)", "einsum(", "'jk' names 2 axes of an operand with 1"),
    ("einsum_count", "np.einsum('ij,j,j->', A, x)", "einsum(", "3 operand subscripts for 2 operands"),
    ("einsum_letters", "np.einsum('i1,i1->', A, A)", "einsum(", "letters"),
    ("einsum_variable_subscripts", "np.einsum(s, A)", "s, A)", "must be a constant written in the source"),
    ("einsum_sublist", "np.einsum(A, [0, 1])", "A", "must be a constant written in the source"),
    ("einsum_optimize", "np.einsum('ij,ij->', A, A, optimize=True)", "optimize",
     "optimize=...) is not supported"),
    ("einsum_four_operands", "np.einsum('ij,ij,ij,ij->', A, A, A, A)", "A)",
     "too many arguments to np.einsum"),
    ("solve_stack", "np.sum(np.linalg.solve(B, x))", "solve(", "of an array of 3 dimensions"),
    ("inv_vector", "np.sum(np.linalg.inv(x))", "inv(", "of an array of 1 dimension "),
    ("det_number", "np.linalg.det(x[0])", "det(", "of a number"),
    ("trace_vector", "np.trace(x)", "trace(", "np.trace of an array of 1 dimension "),
    ("transpose_axes", "np.sum(np.transpose(A, (0, 0)))", "transpose(", "not an order of the 2 axes"),
    ("slogdet_element_out_of_range", "np.linalg.slogdet(A)[2]", "2", "a tuple of 2 values indexed"),
    ("slogdet_element_variable", "np.linalg.slogdet(A)[k]", "k", "a tuple of 2 values indexed"),
    ("unsupported_linalg", "np.sum(np.linalg.eigvalsh(A))", "np.linalg.eigvalsh",
     "unsupported function np.linalg.eigvalsh"),
]


def _source(body: str) -> str:
    return f"import numpy as np\n\n\ndef f(A, x, B, s, k):\n    return {body}\n"


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_refused_at_the_users_words(case):
    _, body, at, words = case
    src = _source(body)
    with pytest.raises(cn.CoarsenError) as info:
        cn.coarsen(src, name="f")(_A, np.ones(3), np.ones((2, 3, 3)), 1.0, 1)
    err = info.value
    assert not isinstance(err, cn.errors.InternalCompilerError)
    assert (err.line, err.col) == (5, src.splitlines()[4].index(at)), str(err)
    text = str(err)
    assert words in text, text
    assert err.hint.strip() and "^" in text
    assert not INTERNAL_NAMES.search(text), text


def test_an_element_of_a_name_bound_to_a_tuple_says_to_unpack_it():
    src = "import numpy as np\n\n\ndef f(A):\n    r = np.linalg.slogdet(A)\n    return r[1]\n"
    with pytest.raises(cn.CoarsenError) as info:
        cn.coarsen(src, name="f")(_A)
    err = info.value
    assert (err.line, err.col) == (6, src.splitlines()[5].index("r[1]"))
    assert "'r' is a tuple here" in str(err) and "sign, logdet" not in err.hint and "a, b = ..." in err.hint


def test_the_linalg_hint_names_only_real_functions():
    with pytest.raises(cn.CoarsenError) as info:
        cn.coarsen(_source("np.sum(np.linalg.qr(A))"), name="f")
    hint = info.value.hint
    for name in ("np.linalg.solve", "np.linalg.inv", "np.linalg.det", "np.linalg.slogdet", "np.einsum", "np.trace"):
        assert name in hint
        assert callable(eval(name, {"np": np}))


# -- a singular matrix at run time ---------------------------------------------------------------------


_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
_SOLVE = "import numpy as np\n\n\ndef f(A, b):\n    c = A * 1.0\n    return np.sum(np.linalg.solve(c, b))\n"
_INV = "import numpy as np\n\n\ndef f(A, b):\n    return np.sum(np.linalg.inv(A) @ b)\n"


def _plain(src: str):
    ns: dict = {}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("src", [_SOLVE, _INV], ids=["solve", "inv"])
@pytest.mark.parametrize("call", ["value", "grad", "jvp"])
def test_a_singular_matrix_is_numpys_linalg_error(src, call):
    """The generated code raises what the plain function raises (``LinAlgError: Singular matrix``), and the
    error points at the user's line: an ``except np.linalg.LinAlgError`` around either catches it."""
    b = np.ones(2)
    with pytest.raises(np.linalg.LinAlgError) as plain:
        _plain(src)(_SINGULAR, b)
    f = cn.coarsen(src, name="f", wrt=("A", "b"))
    f(_A[:2, :2], b)        # compiled for these shapes on a regular matrix first
    run = {"value": lambda: f(_SINGULAR, b), "grad": lambda: f.grad(_SINGULAR, b),
           "jvp": lambda: f.jvp((_SINGULAR, b), (np.ones((2, 2)), b))}[call]
    with pytest.raises(np.linalg.LinAlgError) as compiled:
        run()
    err = compiled.value
    assert isinstance(err, cn.CoarsenError) and str(plain.value) in str(err)
    assert err.line == len(src.splitlines())


def test_a_nearly_singular_matrix_is_not_an_error_and_matches_numpy():
    """Only an exactly singular matrix raises: a badly conditioned one solves, as NumPy does."""
    A = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])
    f = cn.coarsen(_SOLVE, name="f", wrt=("A", "b"))
    assert f(A, np.ones(2)) == _plain(_SOLVE)(A, np.ones(2))


# -- the cost model ------------------------------------------------------------------------------------


def test_the_cost_of_a_solve_grows_with_its_right_hand_side_not_as_n_to_the_fourth():
    """``solve(A, r)`` is counted as r's size; its cotangent of A (an outer product of two n-vectors) as n².
    Counting the solve as large as A made that outer product n⁴ elements."""
    src = ("import numpy as np\n\n\ndef f(S, x):\n    sign, logdet = np.linalg.slogdet(S)\n"
           "    return logdet + x @ np.linalg.solve(S, x)\n")
    f = cn.coarsen(src, name="f", wrt=("S", "x"))
    n = 40
    S = np.eye(n) * 2.0
    f.grad(S, np.ones(n))
    cost = estimate(f.plan, ("S", "x"), ((n, n), (n,)))
    assert cost.derivative_ops < 20 * n * n, cost
    assert cost.forward_ops < 10 * n * n, cost
    assert f.cost.derivative_ops == cost.derivative_ops

"""The linear-algebra registrations (``coarsen_nb/rules/linalg.py``), one program each, as users write them.

Each program is compiled and checked like a corpus entry (``tests/entry_checks.py``): the desugared IR means
what Python means, the value is NumPy's, the gradient equals central finite differences under every
selection and ``jax.grad``, and the JVP is the gradient's directional derivative.  The einsum programs
run through subscripts whose VJPs need each case of the derived subscripts: a summed index that only one
operand has, a scalar output, one operand, three operands, the same array twice.
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from corpus_inputs import entry, well_conditioned
from entry_checks import SEEDS, SELECTIONS, check_desugared_ir, check_gradient_against_jax, check_value_and_gradient
from gradcheck import assert_close

import coarsen_nb as cn
from coarsen_nb import primitives
from coarsen_nb.rules.linalg import LINALG

_SIZES = {"i": 3, "j": 4, "k": 2, "l": 3, "b": 5}


def _program(name: str, params: str, body: str):
    """A function ``name(params)`` returning ``body``, with ``np`` in its globals and its source where
    ``inspect`` finds it (a file of its own in ``linecache``), as a function of a notebook cell has."""
    src = f"def {name}({params}):\n    return {body}\n"
    filename = f"<coarsen_nb test_linalg {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {"np": np}
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


def _square(rng, n=4):
    return well_conditioned(rng, n)


def _u(rng, *shape):
    """An array of ``shape`` in (-1, 1); a float where the shape is () (a scalar operand, as users pass one)."""
    return rng.uniform(-1.0, 1.0, size=shape) if shape else float(rng.uniform(-1.0, 1.0))


# (name, parameters, body, make_args, wrt, the registrations it exercises)
_LINALG_CASES = [
    ("solve_vector", "A, b", "np.sum(np.sin(np.linalg.solve(A, b)))", lambda r: (_square(r), _u(r, 4)), "A b",
     "linalg.solve"),
    ("solve_matrix", "A, B", "np.sum(np.sin(np.linalg.solve(A, B)))", lambda r: (_square(r), _u(r, 4, 3)), "A B",
     "linalg.solve"),
    ("solve_constant_matrix", "A, b", "np.sum(np.linalg.solve(A, b) ** 2)", lambda r: (_square(r), _u(r, 4)), "b",
     "linalg.solve"),
    ("solve_constant_rhs", "A, b", "np.sum(np.linalg.solve(A, b) ** 2)", lambda r: (_square(r), _u(r, 4)), "A",
     "linalg.solve"),
    ("inv", "A", "np.sum(np.sin(np.linalg.inv(A)))", lambda r: (_square(r),), "A", "linalg.inv"),
    ("det", "A", "np.linalg.det(A) * np.sum(A)", lambda r: (_square(r),), "A", "linalg.det"),
    ("logabsdet", "A", "np.linalg.slogdet(A)[1] ** 2", lambda r: (_square(r),), "A", "linalg.slogdet.logabsdet"),
    ("sign_is_constant", "A", "np.linalg.slogdet(A)[0] * np.sum(A * A)", lambda r: (_square(r),), "A",
     "linalg.slogdet.sign"),
    ("trace", "A, B", "np.trace(A) * np.trace(A @ B)", lambda r: (_u(r, 3, 3), _u(r, 3, 3)), "A B", "trace"),
    ("trace_rectangular", "A", "np.trace(np.sin(A))", lambda r: (_u(r, 3, 5),), "A", "trace"),
    ("transpose_2d", "A, B", "np.sum(np.sin(A.T) * B) + np.sum(np.transpose(A) @ A)",
     lambda r: (_u(r, 3, 4), _u(r, 4, 3)), "A B", "transpose"),
    ("transpose_1d", "x", "x.T @ np.transpose(x) + np.sum(np.sin(x.T))", lambda r: (_u(r, 4),), "x", "transpose"),
    ("transpose_axes", "T, U", "np.sum(np.transpose(T, (2, 0, 1)) * U) + np.sum(T.T ** 2)",
     lambda r: (_u(r, 2, 3, 4), _u(r, 4, 2, 3)), "T U", "transpose"),
    ("eye", "A", "np.sum(np.eye(A.shape[0], A.shape[1]) * A) + np.sum(np.eye(3) * np.sin(A @ A.T))",
     lambda r: (_u(r, 3, 4),), "A", "eye"),
]

_EINSUMS = ["ij,j->i", "ij,ij->", "i,i->", "ij,jk->ik", "bi,bi->b", "ij->ji", "ij->", "ij->j", "i,j->ij",
            "ij,j->", "bi,ij,bj->b", "ij,jk,kl->il", "ijk,kj->i", "i,i,i->", "ij,kj->ki", "i->i", ",i->i", "ij,->"]


def _einsum_case(spec: str):
    ins = spec.split("->")[0].split(",")
    params = ", ".join(f"X{k}" for k in range(len(ins)))
    name = "einsum_" + spec.replace(",", "_").replace("->", "_to_") + ("scalar" if spec.endswith("->") else "")
    shapes = [tuple(_SIZES[c] for c in t) for t in ins]
    call = f"np.sin(np.einsum({spec!r}, {params}))"
    # (a scalar output is not summed: np.sum of a number has no JVP on main yet, an issue of its own)
    return (name, params, call if spec.endswith("->") else f"np.sum({call})",
            lambda r, shapes=shapes: tuple(_u(r, *s) for s in shapes), params.replace(",", ""), "einsum")


_CASES = _LINALG_CASES + [_einsum_case(s) for s in _EINSUMS] + [
    ("einsum_same_array_twice", "x, A", "np.einsum('i,ij,j->', x, A, x)", lambda r: (_u(r, 3), _u(r, 3, 3)), "x A",
     "einsum"),
]
ENTRIES = [entry(_program(name, params, body), make, wrt) for name, params, body, make, wrt, _ in _CASES]
IDS = [e.name for e in ENTRIES]


def test_every_linalg_registration_has_a_program_here():
    exercised = {c[-1] for c in _CASES}
    table = {p.name for p in LINALG if not p.parts}         # (slogdet itself is the pair of its parts)
    assert table <= exercised, f"no program for {sorted(table - exercised)}"


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_desugared_ir_means_what_python_means(e):
    check_desugared_ir(e)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_value_and_gradient(e, selection):
    check_value_and_gradient(e, selection)


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_gradient_matches_jax(e):
    check_gradient_against_jax(e, may_write=False)


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_jvp_is_the_directional_derivative(e):
    f = cn.coarsen(e.fn, wrt=e.wrt)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        args = e.make_args(rng)
        wrt_args = [args[f.params.index(w)] for w in e.wrt]
        directions = [rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in wrt_args]
        grads = f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        want = sum(float(np.sum(g * d)) for g, d in zip(grads, directions, strict=True))
        _, tangent = f.jvp(tuple(args), tuple(directions))
        assert_close(tangent, want, rtol=1e-9, atol=1e-12, what=f"{e.name} seed {seed} jvp")


def test_np_linalg_names_resolve_and_no_other_spelling_does():
    """``np.linalg.solve`` is the registration with the dotted NumPy name; ``np.solve`` (no such NumPy
    function) is not, and neither are the two halves of slogdet."""
    assert primitives.lookup("np.linalg", "solve").name == "linalg.solve"
    assert primitives.lookup("numpy.linalg", "slogdet").parts == ("linalg.slogdet.sign", "linalg.slogdet.logabsdet")
    for name in ("solve", "inv", "det", "slogdet", "slogdet_sign", "logabsdet"):
        assert primitives.lookup("np", name) is None
    for p in LINALG:
        if p.numpy is not None:
            target = np
            for part in p.numpy.split("."):
                target = getattr(target, part)
            assert callable(target), p.numpy


def test_slogdet_unpacked_and_indexed_mean_the_same():
    src = ("import numpy as np\n\n\ndef f(A):\n    sign, logdet = np.linalg.slogdet(A)\n"
           "    return sign * logdet + np.linalg.slogdet(A)[-1]\n")
    A = -well_conditioned(np.random.default_rng(3), 3)
    f = cn.coarsen(src, name="f")
    sign, logdet = np.linalg.slogdet(A)
    assert_close(f(A), sign * logdet + logdet, rtol=1e-14, atol=0, what="value")
    assert_close(f.grad(A), (sign + 1.0) * np.linalg.inv(A).T, rtol=1e-10, atol=1e-12, what="gradient")

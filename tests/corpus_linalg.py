"""Corpus of linear algebra as vectorized code writes it (issue 15): least squares and ridge regression,
Gaussian log-likelihoods with ``np.linalg.slogdet`` and ``solve``, traces, quadratic forms, ``np.einsum``
with explicit subscripts, Mahalanobis distances, ``.T`` and ``np.transpose``.

Entries are :class:`corpus.CorpusEntry` records checked by ``tests/lower/test_vectorized.py`` against
the plain function, central finite differences and JAX.  Matrices that are inverted or solved with are
drawn well conditioned (``corpus_inputs.well_conditioned``), so finite differences mean something.
"""

from __future__ import annotations

import numpy as np
from corpus_inputs import entry, length, matrix, vector, well_conditioned


def least_squares(X, w, y):
    return np.sum((X @ w - y) ** 2)


def ridge(X, y, lam):
    d = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    return np.sum((X @ w - y) ** 2) + lam * (w @ w)


def gaussian_loglik(S, x, mu):
    r = x - mu
    sign, logdet = np.linalg.slogdet(S)
    return -0.5 * (logdet + r @ np.linalg.solve(S, r) + r.shape[0] * np.log(2.0 * np.pi))


def gaussian_process_nll(L, y, noise):
    n = y.shape[0]
    K = L @ L.T + noise * np.eye(n)
    alpha = np.linalg.solve(K, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(K)[1]


def trace_of_product(A, B):
    return np.trace(A @ B) + np.trace(A) ** 2


def quadratic_form(x, A):
    return x @ A @ x


def einsum_matvec(A, x):
    return np.sum(np.tanh(np.einsum('ij,j->i', A, x)))


def einsum_frobenius(A, B):
    return np.einsum('ij,ij->', A, B) + np.einsum('i,i->', A[0], B[1])


def einsum_matmul(A, B):
    C = np.einsum('ij,jk->ik', A, B)
    return np.sum(np.sin(C)) + np.sum(C.T @ A)


def einsum_rows(X, Y):
    return np.sum(np.exp(np.einsum('bi,bi->b', X, Y)))


def einsum_summed_in_one_operand(A, x):
    """``i`` appears in A alone (summed there), ``j`` in A alone in the second: their cotangents are the
    same along those axes."""
    return np.einsum('ij,j->', A, x) + np.sum(np.einsum('ij->j', A) ** 2) + np.sum(np.einsum('i,j->ij', x, x))


def mahalanobis(X, mu, P):
    D = X - mu
    return np.sum(np.sqrt(np.einsum('bi,ij,bj->b', D, P, D)))


def mahalanobis_solve(X, mu, S):
    total = 0.0
    for i in range(X.shape[0]):
        r = X[i] - mu
        total = total + np.sqrt(r @ np.linalg.solve(S, r))
    return total


def inverse(A, B):
    return np.sum(np.linalg.inv(A) * B)


def determinant(A):
    return np.linalg.det(A) ** 2 + np.log(np.abs(np.linalg.det(A)))


def sign_times_exp_logdet(A, c):
    s, ld = np.linalg.slogdet(c * A)
    return s * np.exp(ld) + ld


def solve_matrix_rhs(A, B):
    return np.sum(np.linalg.solve(A, B) ** 2)


def transposes(X, x):
    return np.sum(X.T @ X) + x.T @ x + np.sum(np.transpose(X) * X.T) + np.sum(np.transpose(x) * x)


def transpose_axes(T):
    return np.sum(np.transpose(T, (1, 0, 2)) * T.T[0]) + np.sum(np.transpose(T, axes=(2, 0, 1)) ** 2)


def newton_steps(A, b):
    x = b
    for _ in range(3):
        x = x - np.linalg.solve(A, A @ x - b) * 0.5
    return np.sum(x ** 2)



def trace_method(A, B):
    return (A @ B).trace() ** 2 + A.T.trace()


def transpose_method_axes(T, X):
    return np.sum(T.transpose(2, 0, 1)[0] * 2.0) + np.sum(T.transpose((1, 0, 2)) ** 2) + np.sum(X.transpose() @ X)


def _square(rng):
    return well_conditioned(rng, length(rng, 2, 6))


def _spd(rng):
    W = _square(rng)
    return W @ W.T


def _gauss(rng):
    S = _spd(rng)
    return S, vector(rng, S.shape[0]), vector(rng, S.shape[0])


def _ridge(rng):
    X = matrix(rng, (length(rng, 5, 9), length(rng, 2, 4)))
    return X, vector(rng, X.shape[0]), 0.7


def _square_pair(rng):
    A = _square(rng)
    return A, matrix(rng, A.shape)


def _square_vector(rng):
    A = _square(rng)
    return A, vector(rng, A.shape[0])


def _mahalanobis(rng):
    S = _spd(rng)
    return matrix(rng, (length(rng, 3, 6), S.shape[0])), vector(rng, S.shape[0]), S


LINALG = [
    entry(least_squares, lambda r: (lambda X: (X, vector(r, X.shape[1]), vector(r, X.shape[0])))(matrix(r)),
          "X w y", "matmul"),
    entry(ridge, _ridge, "X y lam", "solve transpose eye"),
    entry(gaussian_loglik, _gauss, "S x mu", "slogdet solve unpack"),
    entry(gaussian_process_nll, lambda r: (lambda L: (L, vector(r, L.shape[0]), 0.3))(matrix(r, (4, 3))),
          "L y noise", "slogdet solve eye index"),
    entry(trace_of_product, _square_pair, "A B", "trace"),
    entry(quadratic_form, lambda r: (lambda A: (vector(r, A.shape[0]), A))(matrix(r, (4, 4))), "x A", "matmul"),
    entry(einsum_matvec, lambda r: (lambda A: (A, vector(r, A.shape[1])))(matrix(r)), "A x", "einsum"),
    entry(einsum_frobenius, lambda r: (lambda A: (A, matrix(r, A.shape)))(matrix(r)), "A B", "einsum"),
    entry(einsum_matmul, lambda r: (lambda A: (A, matrix(r, (A.shape[1], A.shape[0]))))(matrix(r)), "A B",
          "einsum transpose"),
    entry(einsum_rows, lambda r: (lambda X: (X, matrix(r, X.shape)))(matrix(r)), "X Y", "einsum"),
    entry(einsum_summed_in_one_operand, lambda r: (lambda A: (A, vector(r, A.shape[1])))(matrix(r)), "A x",
          "einsum"),
    entry(mahalanobis, _mahalanobis, "X mu P", "einsum three-operands"),
    entry(mahalanobis_solve, _mahalanobis, "X mu S", "solve loop"),
    entry(inverse, _square_pair, "A B", "inv"),
    entry(determinant, lambda r: (_square(r),), "A", "det"),
    entry(sign_times_exp_logdet, lambda r: (_square(r), 1.3), "A c", "slogdet unpack sign"),
    entry(solve_matrix_rhs, _square_pair, "A B", "solve matrix-rhs"),
    entry(transposes, lambda r: (lambda X: (X, vector(r, X.shape[0])))(matrix(r)), "X x", "transpose"),
    entry(transpose_axes, lambda r: (r.uniform(-1.0, 1.0, size=(3, 3, 3)),), "T", "transpose axes 3d"),
    entry(newton_steps, _square_vector, "A b", "solve loop"),
    entry(trace_method, _square_pair, "A B", "trace method"),
    entry(transpose_method_axes, lambda r: (matrix(r, (2, 3, 4)), matrix(r)), "T X", "methods transpose 3d"),
]

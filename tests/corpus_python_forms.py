"""Corpus of the Python-level forms of issue 15: array methods, defaults and keyword calls,
``enumerate``/``zip``/rows, ``sum`` of a generator, chained comparisons, the rounding builtins,
nested ``def`` s — each written as a notebook user writes it.

The entries are :class:`corpus.CorpusEntry` records, like the loop-style corpus, so the same
oracles apply: the plain Python function, central finite differences, and JAX
(``tests/lower/test_python_forms.py``).  Inputs keep away from kinks and branch boundaries.
Functions whose name starts with ``_`` are helpers the entries call (inlined).
"""

# ruff: noqa: B905 - the entries write zip(x, y) as users do: zip stops at the shorter operand

from __future__ import annotations

import math

import numpy as np
from corpus import CorpusEntry

# --------------------------------------------------------------------------
# Helpers (inlined at their call sites)
# --------------------------------------------------------------------------


def _affine(t, scale=2.0, shift=-0.5):
    return scale * t + shift


def _bump(t, width=1.0, sharp=False):
    z = t / width
    if sharp:
        return math.exp(-z * z * z * z)
    return math.exp(-z * z)


# --------------------------------------------------------------------------
# 1. Array methods and attributes
# --------------------------------------------------------------------------


def methods_reductions(x, y):
    return x.sum() + x.mean() * y.prod() + x.max() - y.min() + x.dot(y)


def methods_of_expressions(x, y):
    r = x - y
    return (r * r).sum() / r.size + (x * y).mean() + np.exp(-x).max()


def methods_copy_then_write(x, a):
    z = x.copy()
    for i in range(len(z)):
        z[i] = a * z[i] * z[i]
    return z.sum() + x.sum()


def size_and_ndim(x, m):
    return x.sum() / x.size + m.ndim * m.sum() + x.ndim * m.size


def methods_in_loop(m, w):
    s = 0.0
    for i in range(m.shape[0]):
        s += math.tanh(m[i, 0] * w.max()) + w.min()
    return s + m.sum() * w.dot(w)


# --------------------------------------------------------------------------
# 2. Default parameter values and keyword calls
# --------------------------------------------------------------------------


def helper_defaults(x, y):
    return _affine(x) + _affine(y, 0.5) + _affine(x * y, 1.5, 0.25)


def helper_keywords(x, w):
    return _affine(x, shift=w) + _affine(t=w, scale=x) + _bump(x, sharp=True) + _bump(w, width=2.0)


def own_defaults(x, a=2.0, n=3):
    s = 0.0
    for k in range(n):
        s += a * x[k] ** 2
    return s


def helper_keywords_in_loop(x, c):
    s = 0.0
    for i in range(len(x)):
        s += _bump(x[i] - c, width=0.5 + i * 0.25)
    return s


# --------------------------------------------------------------------------
# 3. enumerate, zip, rows
# --------------------------------------------------------------------------


def enumerate_weighted(x):
    s = 0.0
    for i, v in enumerate(x):
        s += (i + 1) * v * v
    return s


def enumerate_start(x, a):
    s = 0.0
    for k, v in enumerate(x, 1):
        s += math.sin(a * v) / k
    return s


def zip_dot(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


def zip_unequal_lengths(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += (a - b) ** 2
    return s


def zip_with_range(x, n):
    s = 0.0
    for k, v in zip(range(n), x):
        s += k * v
    return s


def zip_reversed_range(x, c):
    s = 0.0
    for j, v in zip(range(len(x) - 1, -1, -1), x):
        s += v * x[j] + c ** (j % 3)
    return s


def zip_three_recurrence(x, y, w):
    acc = 1.0
    for a, b, c in zip(x, y, w):
        acc = acc * c + a * b
    return acc


def enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        if a > b:
            s += i * a
        else:
            s -= b
    return s


def rows_of_matrix(m, w):
    s = 0.0
    for row in m:
        z = 0.0
        for j in range(len(w)):
            z += row[j] * w[j]
        s += math.log(1.0 + math.exp(z))
    return s


def enumerate_rows(m, w):
    s = 0.0
    for i, row in enumerate(m):
        s += (i + 1.0) * row[0] * w + row[1]
    return s


# --------------------------------------------------------------------------
# 4. sum of a generator or a list comprehension
# --------------------------------------------------------------------------


def sum_generator(x, n):
    return sum(x[k] * x[k] for k in range(n))


def sum_generator_filter(x):
    return sum(math.exp(v) for v in x if v > 0.0)


def sum_listcomp_start(x, a):
    return sum([a * v for v in x], 1.0)


def sum_generator_nested(m):
    return sum(m[i, j] * m[j, i] for i in range(m.shape[0]) for j in range(i, m.shape[1]))


def sum_generator_zip(x, y):
    return sum((a - b) ** 2 for a, b in zip(x, y)) + sum(i * v for i, v in enumerate(x))


def sum_generator_scoping(x):
    k = 2
    total = sum(x[k] for k in range(len(x)))
    return total * x[k]


# --------------------------------------------------------------------------
# 5, 6. Chained comparisons, min/max of several, rounding arithmetic
# --------------------------------------------------------------------------


def chained_three(x, lo, hi):
    if lo < x * x <= hi:
        return x * x
    if hi < x * x < 2.0 * hi:
        return hi
    return lo * x


def chained_four(x, y):
    if -1.0 < x < y < 2.0:
        return x * y
    return x + y


def min_max_several(x, y, z):
    return min(x, y, z) + max(x, y, z, 0.5) * max(x * y, z)


def rounding_forms(x, y):
    a = math.floor(x) + math.ceil(y)
    b = x // 0.5 + y % 0.75
    return a * x + b * y + (x * y) % 1.0


# --------------------------------------------------------------------------
# 7. Nested def reading enclosing locals
# --------------------------------------------------------------------------


def nested_def_closure(x, a):
    b = a * a

    def g(t):
        return b * t + a

    return g(x) * g(2.0 * x)


def nested_def_in_loop(x, c):
    scale = 1.0 / len(x)

    def term(v, w=1.0):
        return w * scale * (v - c) ** 2

    s = 0.0
    for v in x:
        s += term(v) + term(v, w=0.5)
    return s


def nested_def_late_binding(x):
    k = 1.0

    def g(t):
        return k * t

    first = g(x)
    k = 3.0
    return first + g(x)


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def _u(rng, lo=-1.0, hi=1.0):
    return float(rng.uniform(lo, hi))


def _arr(rng, n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=n)


def _len(rng):
    return int(rng.integers(3, 8))


def _two(rng, lo=-1.0, hi=1.0):
    n = _len(rng)
    return _arr(rng, n, lo, hi), _arr(rng, n, lo, hi)


def _apart(rng, n, lo, hi, gap=0.1):
    """n values in (lo, hi) whose pairwise differences exceed ``gap`` (kinks of max/min/branches)."""
    while True:
        v = rng.uniform(lo, hi, size=n)
        if n < 2 or np.min(np.abs(np.subtract.outer(v, v))[~np.eye(n, dtype=bool)]) > gap:
            return v


def _off_zero(rng, n):
    return rng.uniform(0.1, 1.0, size=n) * rng.choice([-1.0, 1.0], size=n)


def _args_min_max(rng):
    while True:
        x, y, z = (float(v) for v in _apart(rng, 3, -1.0, 1.0, 0.15))
        if abs(x * y - z) > 0.1 and abs(max(x, y, z) - 0.5) > 0.1:
            return x, y, z


def _args_chained_three(rng):
    lo, hi = _u(rng, 0.1, 0.3), _u(rng, 1.5, 2.0)
    x = float(rng.choice([-1.0, 1.0])) * math.sqrt(float(rng.choice([_u(rng, 0.0, 0.05),
                                                                      _u(rng, 0.5, 1.3),
                                                                      _u(rng, 2.0, 2.8)])))
    return x, lo, hi


def _args_chained_four(rng):
    x, y = sorted(_apart(rng, 2, -1.5, 2.5, 0.2))
    if rng.random() < 0.5:
        x, y = y, x
    if min(abs(x + 1.0), abs(y - 2.0)) < 0.1:
        return _args_chained_four(rng)
    return float(x), float(y)


def _args_rounding(rng):
    def off_jumps(lo, hi, step):
        while True:
            v = _u(rng, lo, hi)
            if min(v % step, step - v % step) > 0.05:
                return v
    while True:
        x, y = off_jumps(-2.0, 2.0, 0.5), off_jumps(-2.0, 2.0, 0.75)
        if min((x * y) % 1.0, 1.0 - (x * y) % 1.0) > 0.05 and min(y % 1.0, 1.0 - y % 1.0) > 0.05:
            return x, y


def _args_enumerate_zip(rng):
    n = _len(rng)
    v = _apart(rng, 2 * n, -1.0, 1.0, 0.05)
    return v[:n], v[n:]


def _entry(fn, make_args, wrt, differentiable=True, tags=""):
    return CorpusEntry(fn.__name__, fn, make_args, tuple(wrt.split()), differentiable, frozenset(tags.split()))


_ALL: list[CorpusEntry] = [
    # 1. methods and attributes
    _entry(methods_reductions, lambda r: (_apart(r, 5, -1, 1), _apart(r, 5, 0.5, 1.5)), "x y", tags="method"),
    _entry(methods_of_expressions, lambda r: (lambda n: (_apart(r, n, -1, 1), _arr(r, n)))(_len(r)), "x y",
           tags="method"),
    _entry(methods_copy_then_write, lambda r: (_arr(r, _len(r)), _u(r)), "x a", tags="method array-write"),
    _entry(size_and_ndim, lambda r: (_arr(r, _len(r)), r.normal(size=(_len(r), 3))), "x m", tags="attribute"),
    _entry(methods_in_loop, lambda r: (r.normal(size=(_len(r), 2)), _apart(r, 4, -1, 1)), "m w",
           tags="method loop"),
    # 2. defaults and keywords
    _entry(helper_defaults, lambda r: (_u(r), _u(r)), "x y", tags="default"),
    _entry(helper_keywords, lambda r: (_u(r), _u(r)), "x w", tags="default keyword"),
    _entry(own_defaults, lambda r: (_arr(r, 5), _u(r), int(r.integers(0, 6))), "x a", tags="default"),
    _entry(helper_keywords_in_loop, lambda r: (_arr(r, _len(r)), _u(r)), "x c", tags="keyword loop"),
    # 3. enumerate, zip, rows
    _entry(enumerate_weighted, lambda r: (_arr(r, _len(r)),), "x", tags="enumerate"),
    _entry(enumerate_start, lambda r: (_arr(r, _len(r)), _u(r, 0.5, 1.5)), "x a", tags="enumerate"),
    _entry(zip_dot, _two, "x y", tags="zip"),
    _entry(zip_unequal_lengths, lambda r: (_arr(r, _len(r)), _arr(r, _len(r))), "x y", tags="zip"),
    _entry(zip_with_range, lambda r: (_arr(r, 6), int(r.integers(0, 9))), "x", tags="zip range"),
    _entry(zip_reversed_range, lambda r: (_arr(r, _len(r)), _u(r, 0.5, 1.5)), "x c", tags="zip range"),
    _entry(zip_three_recurrence, lambda r: (_arr(r, 6), _arr(r, 5), _arr(r, 6, 0.2, 0.9)), "x y w",
           tags="zip recurrence"),
    _entry(enumerate_zip, _args_enumerate_zip, "x y", tags="enumerate zip branch"),
    _entry(rows_of_matrix, lambda r: (r.normal(size=(_len(r), 3)), _arr(r, 3)), "m w", tags="rows"),
    _entry(enumerate_rows, lambda r: (r.normal(size=(_len(r), 2)), _u(r)), "m w", tags="rows enumerate"),
    # 4. sum of a generator
    _entry(sum_generator, lambda r: (_arr(r, 7), int(r.integers(0, 8))), "x", tags="genexp"),
    _entry(sum_generator_filter, lambda r: (_off_zero(r, _len(r)),), "x", tags="genexp branch"),
    _entry(sum_listcomp_start, lambda r: (_arr(r, _len(r)), _u(r)), "x a", tags="listcomp"),
    _entry(sum_generator_nested, lambda r: (r.normal(size=(4, 4)),), "m", tags="genexp nested triangular"),
    _entry(sum_generator_zip, _two, "x y", tags="genexp zip enumerate"),
    _entry(sum_generator_scoping, lambda r: (_arr(r, _len(r)),), "x", tags="genexp"),
    # 5, 6. comparisons, min/max, rounding
    _entry(chained_three, _args_chained_three, "x lo hi", tags="compare branch"),
    _entry(chained_four, _args_chained_four, "x y", tags="compare branch"),
    _entry(min_max_several, _args_min_max, "x y z", tags="builtin"),
    _entry(rounding_forms, _args_rounding, "x y", tags="rounding"),
    # 7. nested def
    _entry(nested_def_closure, lambda r: (_u(r), _u(r)), "x a", tags="nested-def"),
    _entry(nested_def_in_loop, lambda r: (_arr(r, _len(r)), _u(r)), "x c", tags="nested-def loop default"),
    _entry(nested_def_late_binding, lambda r: (_u(r),), "x", tags="nested-def"),
]

PYTHON_FORMS = _ALL
PYTHON_FORMS_IDS = [e.name for e in PYTHON_FORMS]

assert len(set(PYTHON_FORMS_IDS)) == len(PYTHON_FORMS_IDS), "names must be unique"

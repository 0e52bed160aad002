"""Loops that keep a maximum or minimum as users write them (``if v * a > m: m = v * a``, builtin ``max``, from the
first element, per row): the programs the NaN tests check under the NumPy and numba backends
(tests/lower/test_loop_extrema_nan.py, test_numba_nest_arg_rows.py) and on Dask arrays
(tests/dask/test_dask_nan_skipping.py)."""

from __future__ import annotations

import math


def above(a, m0, x):
    m = m0
    for v in x:
        if v * a > m:
            m = v * a
    return m * a


def at_least(a, m0, x):
    m = m0
    for v in x:
        if v * a >= m:
            m = v * a
    return m * a


def below(a, m0, x):
    m = m0
    for v in x:
        if v * a < m:
            m = v * a
    return m * a


def at_most(a, m0, x):
    m = m0
    for v in x:
        if v * a <= m:
            m = v * a
    return m * a


def builtin_max(a, m0, x):
    m = m0
    for v in x:
        m = max(m, v * a)
    return m * a


def builtin_min(a, m0, x):
    m = m0
    for v in x:
        m = min(m, v * a)
    return m * a


def from_minus_infinity(a, m0, x):
    m = -math.inf
    for v in x:
        if v * a > m:
            m = v * a
    return m * a + m0


def from_the_first_element(a, m0, x):
    m = x[0] * a
    for i in range(1, len(x)):
        if x[i] * a < m:
            m = x[i] * a
    return m * a + m0


def with_its_index(a, m0, x):
    m = m0
    j = 0
    for i in range(len(x)):
        if x[i] * a > m:
            m = x[i] * a
            j = i
    return m * a + j


def per_row(a, m0, x):
    s = m0
    for i in range(x.shape[0] // 2):
        m = math.inf
        for j in range(2):
            if x[2 * i + j] * a < m:
                m = x[2 * i + j] * a
        s = s + m
    return s * a

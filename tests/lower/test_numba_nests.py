"""``backend="numba"``: the parts of an SOI over nested loops run as the user's loop nest, compiled.

Nested sums (a triangle of pairs, a rectangle of a grid, three levels) and adjoint scatters over two loops
(``b_x[i] += ...; b_x[j] += ...``, ``b_a[i, j + 1] += ...``, ``b_x[i + j] += ...`` where several points add
to one element) are the ``nest`` domain of ``lower/numba_nests.py``.  Each program: its numba value and
gradient against the NumPy backend's (1e-10), the NumPy gradient against central differences of the plain
function, and the generated code (a nest function is there, the n x n index arrays are not).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs

import coarsen_nb as cn
from coarsen_nb.lower import domain as domain_record
from coarsen_nb.lower import nest_analysis, numba_fusion

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def pairs(x, y, cutoff):
    e = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            d = math.sqrt((x[i] - x[j]) ** 2 + (y[i] - y[j]) ** 2)
            if d < cutoff:
                e += (cutoff - d) ** 2
    return e


def grid(a, w):
    n, m = a.shape
    e = 0.0
    for i in range(n):
        for j in range(m - 1):
            e += w * (a[i, j + 1] - a[i, j]) ** 2
    for i in range(n - 1):
        for j in range(m):
            e += math.cos(a[i + 1, j] - a[i, j])
    return e


def triples(x, c):
    s = 0.0
    for i in range(len(x)):
        for j in range(i):
            for k in range(j):
                s += math.sin(c * x[i] * x[j] - x[k])
    return s


def sliding(x, w):
    out = 0.0
    for i in range(len(x) - len(w) + 1):
        for j in range(len(w)):
            out += math.tanh(x[i + j] * w[j])
    return out


def products(x, c):
    s = 0.0
    for i in range(len(x)):
        p = 1.0
        for j in range(i):
            p *= 1.0 + c * x[j] * x[i]
        s += p
    return s


def mixture(x, mu, w):
    ll = 0.0
    for i in range(len(x)):
        m = -math.inf
        s = 0.0
        for k in range(len(mu)):
            a = w[k] - (x[i] - mu[k]) ** 2
            if a > m:
                s = s * math.exp(m - a) + 1.0
                m = a
            else:
                s += math.exp(a - m)
        ll += m + math.log(s)
    return ll


def row_max(a, c):
    t = 0.0
    for i in range(a.shape[0]):
        m = -math.inf
        for j in range(a.shape[1]):
            m = max(m, math.sin(c * a[i, j]))
        t += m * m
    return t


def worst_distance(px, py, ax, bx):
    worst = 0.0
    for i in range(len(px)):
        t = min(max((px[i] - ax) * (bx - ax), 0.0), 1.0)
        worst = max(worst, (px[i] - t) ** 2 + py[i] * py[i])
    return worst


def lowest(x, c):
    best = math.inf
    for i in range(len(x)):
        best = min(best, math.cos(c * x[i]))
    return best * c


def _inputs(rng, name, n):
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    return {"pairs": (x, y, 0.9), "grid": (rng.uniform(-1, 1, (n, n + 1)), 0.7), "triples": (x, 0.8),
            "sliding": (x, rng.uniform(-1, 1, min(n, 3))), "products": (x, 0.3),
            "mixture": (x, rng.uniform(-1, 1, 3), rng.uniform(-1, 0, 3)),
            "row_max": (rng.uniform(-1, 1, (n, 4)), 1.3),
            "worst_distance": (x, y, 0.2, 0.9), "lowest": (x, 2.1)}[name]


PROGRAMS = {"pairs": (pairs, ("x", "y")), "grid": (grid, ("a", "w")), "triples": (triples, ("x", "c")),
            "sliding": (sliding, ("x", "w")), "products": (products, ("x", "c")),
            "mixture": (mixture, ("x", "mu", "w")), "row_max": (row_max, ("a", "c")),
            "worst_distance": (worst_distance, ("px", "py", "ax", "bx")), "lowest": (lowest, ("x", "c"))}

#: programs whose adjoint is a nest (products' outer loop stays iterated: its SOI is the inner product, whose
#: adjoint is a product of the other factors, computed as array code; row_max's adjoint goes to the maximum's
#: point, an arg-maximum, which is array code too: its forward is a nest)
#: (worst_distance, lowest: the sums of their adjoint are a nest at the arg-extremum's point, their scatter
#: into the array at that point is array code)
NESTED = set(PROGRAMS) - {"products", "row_max", "worst_distance", "lowest"}

PAIRS = BackendPairs(PROGRAMS)
_pair, _check = PAIRS.pair, PAIRS.check


# (lowest over no points is inf: its derivative is inf, central differences of inf are nan)
@pytest.mark.parametrize("name,n", [(name, n) for name in PROGRAMS for n in (0, 1, 2, 3, 6, 11)
                                    if (name, n) != ("lowest", 0)])
def test_numba_equals_numpy_and_central_differences(name, n):
    args = _inputs(np.random.default_rng(n), name, n)
    PAIRS.check_with_differences(name, args)


@pytest.mark.parametrize("name", sorted(NESTED))
def test_the_nest_runs_as_loops(name):
    """Each program's numba gradient calls a loop-nest function, and the grad function itself holds no
    array code over the pairs (no index arrays, no masks)."""
    _check(name, _inputs(np.random.default_rng(0), name, 7))
    source = _pair(name)[2].source
    grad = source[source.index(f"def {name}_grad("):]
    grad = grad[:grad.find("\n@", 1)] if "\n@" in grad else grad
    # (a nest, or the row-contraction loop, which takes a rectangle or a window first: lower/numba_rows.py)
    assert "_vjp_nest" in grad or "_vjp_rows" in grad, grad
    assert not any(f"xp.{call}(" in grad for call in ("arange", "nonzero", "where", "take")), grad


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 9), cutoff=st.floats(0.05, 3.0), seed=st.integers(0, 2**16))
def test_random_points_and_cutoffs(n, cutoff, seed):
    rng = np.random.default_rng(seed)
    _check("pairs", (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), cutoff))
    _check("sliding", (rng.uniform(-1, 1, n + 2), rng.uniform(-1, 1, 1 + seed % 3)))


def test_the_nest_domains_pass_verify(monkeypatch):
    """Every nest domain built for these programs satisfies the record's invariants."""
    built = []
    original = nest_analysis.nest_domains

    def recorded(body, targets):
        doms, rest = original(body, targets)
        for dom in doms:
            domain_record.verify(dom, body)
            built.append(dom)
        return doms, rest

    monkeypatch.setattr(numba_fusion, "nest_domains", recorded)
    for name in sorted(NESTED):
        fn, wrt = PROGRAMS[name]
        cn.coarsen(fn, wrt=wrt, backend="numba").value_and_grad(*_inputs(np.random.default_rng(1), name, 5))
    assert {d.kind for d in built} == {"nest"}
    assert len(built) >= 3                  # (pairs, triples, mixture: the others are row loops)


def test_a_contribution_zero_outside_a_branch_is_added_inside_it():
    """pairs' adjoint is zero outside the cutoff: the nest adds it inside the ``if`` (no zero arm, no add of
    a zero at the pairs outside), and the gradient still equals the NumPy backend's."""
    _check("pairs", _inputs(np.random.default_rng(3), "pairs", 9))
    source = _pair("pairs")[2].source
    nests = [part for part in source.split("\n\n\n") if "def _soi" in part and "_vjp_nest" in part]
    assert nests
    for nest in nests:
        adds = [line for line in nest.splitlines() if "] += " in line]
        assert adds and "else:" not in nest and "= 0\n" not in nest, nest
        test_line = next(line for line in nest.splitlines() if line.lstrip().startswith("if "))
        depth = len(test_line) - len(test_line.lstrip())
        assert all(len(line) - len(line.lstrip()) > depth for line in adds), nest


@pytest.mark.parametrize("name", ["worst_distance", "lowest"])
def test_a_maximums_adjoint_is_computed_at_its_one_point(name):
    """Σ_k [k = argmax g]·h(k): one loop finds the first arg-extremum, h is computed there alone; ties go to
    the first, as NumPy's argmax (the NumPy backend's) does."""
    rng = np.random.default_rng(5)
    args = _inputs(rng, name, 12)
    tied = list(args)
    tied[0] = np.concatenate([args[0][:6], args[0][:6]])        # every value twice: the maximum is tied
    if name == "worst_distance":
        tied[1] = np.concatenate([args[1][:6], args[1][:6]])
    for a in (args, tuple(tied)):
        _check(name, a)
    source = _pair(name)[2].source
    grad = source[source.index(f"def {name}_grad("):]
    assert "_vjp_nest" in grad[:grad.find("\n@", 1)]
    nests = [part for part in source.split("\n\n\n") if "_vjp_nest" in part and "def _soi" in part]
    assert any("at = -1" in n and "if at >= 0:" in n for n in nests), nests


@pytest.mark.parametrize("name", ["worst_distance", "lowest"])
def test_the_extremum_and_its_point_are_one_loop(name):
    """The maximum (minimum) itself is the value at its arg-extremum: the loop that finds the point gives it
    too, so the adjoint's nest passes over the points once, not once for the value and once for the point (in
    chunks: each chunk's values into a buffer, then scanned; ``tests/lower/test_numba_arg_chunks.py``)."""
    _check(name, _inputs(np.random.default_rng(2), name, 9))
    source = _pair(name)[2].source
    grad = source[source.index(f"def {name}_grad("):]
    (called,) = set(re.findall(r"(_soi\d+_vjp_nest\w*)\(", grad[:grad.find("\n@", 1)]))
    nest = source[source.index(f"def {called}("):]
    nest = nest[:nest.find("\n@", 1)]
    assert nest.count(" for ") == 3 and "for chunk in range(" in nest and "at = -1" in nest, nest
    assert nest.count("values[") == 2, nest         # (each point's value stored once, read once)


@pytest.mark.parametrize("where", [0, 4, 8])
def test_a_nan_point_is_numpys_maximum_and_point(where):
    """A NaN among the values: NumPy's max is NaN and its argmax the first NaN; the one loop keeps both (the
    plain function's Python ``max`` ignores a NaN after the first value, so numba is checked against NumPy)."""
    _, by_numpy, by_numba = _pair("lowest")
    x = np.random.default_rng(where).uniform(-1, 1, 9)
    x[where] = np.nan
    want_value, want_grad = by_numpy.value_and_grad(x, 0.7)
    got_value, got_grad = by_numba.value_and_grad(x, 0.7)
    np.testing.assert_allclose(got_value, want_value, rtol=1e-12)
    for g, w in zip(got_grad, want_grad, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert np.isnan(want_value)

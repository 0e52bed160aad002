"""Regression tests, each named after what broke."""

from __future__ import annotations

import math

import numpy as np
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn


def constant_partial_inside_sum(b, x):
    g = 0.0
    for i in range(len(x)):
        g += b + x[i]          # d/db of the summand is 1 at every i: the adjoint must be summed over i
    return g * g


def test_constant_partial_inside_reduction_is_summed_over_the_loop():
    x = np.array([0.3, -1.2, 2.0, 0.7])
    f = cn.coarsen(constant_partial_inside_sum, wrt=("b", "x"))
    gb, gx = f.grad(0.4, x)
    assert_close(gb, finite_difference(constant_partial_inside_sum, (0.4, x), 0))
    assert_close(gx, finite_difference(constant_partial_inside_sum, (0.4, x), 1))


def nested_read_shadowed(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        s += z * z * w[i % len(w)]
    return s


def test_read_of_an_array_at_an_index_that_an_inner_loop_rebinds():
    rng = np.random.default_rng(1)
    w, X = rng.normal(size=3), rng.normal(size=(5, 3))
    f = cn.coarsen(nested_read_shadowed, wrt=("w",))
    assert_close(f.grad(w, X), finite_difference(nested_read_shadowed, (w, X), 0))


def invariant_read_in_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[0] * x[i]       # x[0] read at every i: its adjoint is scattered n times
    return s


def test_invariant_index_read_inside_a_reduction_scatters_every_iteration():
    x = np.array([1.5, -0.5, 2.0])
    f = cn.coarsen(invariant_read_in_sum)
    assert_close(f.grad(x), finite_difference(invariant_read_in_sum, (x,), 0))


def previous_element(y, h):
    t = 0.0
    prev = 0.0
    for yi in y:
        t += (yi - prev) ** 2 + h * yi
        prev = yi
    return t + prev


def test_previous_element_state_is_a_closed_form_and_exact():
    """A μ that holds the last iteration's value (prev = y[i]) lifts to y[i - 1]; no iterated loop remains."""
    y = np.array([0.3, -1.1, 2.4, 0.9])
    f = cn.coarsen(previous_element)
    gy, gh = f.grad(y, 0.7)
    assert_close(gy, finite_difference(previous_element, (y, 0.7), 0))
    assert_close(gh, finite_difference(previous_element, (y, 0.7), 1))
    assert "run iteration by iteration" not in f.source
    assert_close(f(np.zeros(0), 0.7), previous_element(np.zeros(0), 0.7))


def descent(lr, x, y, steps):
    w = 0.0
    b = 0.0
    for _ in range(steps):
        gw = 0.0
        gb = 0.0
        for i in range(len(x)):
            r = w * x[i] + b - y[i]
            gw += r * x[i]
            gb += r
        w = w - lr * gw
        b = b - lr * gb
    return w + b


def test_invariant_sums_are_hoisted_out_of_an_iterated_loop():
    """The records loop inside the descent factors into sums computed once before it (O(M + K))."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=6), rng.normal(size=6)
    f = cn.coarsen(descent, wrt=("lr",))
    assert_close(f.grad(0.05, x, y, 7), finite_difference(descent, (0.05, x, y, 7), 0))
    assert "hoisted" in str(f.plan)
    loop_body = f.source.split("while True:")[1].split("return")[0]
    assert "xp.sum" not in loop_body.split("_vjp")[0]


def test_a_loop_whose_increment_reads_its_state_through_an_inner_sum_is_not_a_sum():
    """w <- w - lr * Σ_i (w x_i + b - y_i) x_i: the increment depends on w and b through the inner
    loop's closed form, so the outer loop is a recurrence, not a sum (this was once lifted as one)."""
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=5), rng.normal(size=5)
    f = cn.coarsen(descent, wrt=("lr",))
    assert_close(f(0.05, x, y, 9), descent(0.05, x, y, 9), rtol=1e-12)


def branch_on_invariant_inside_sum(a, b):
    w = a
    for i in range(4):
        a += math.tanh(math.sin(w) * (b if b < 1.0 else i * 0.25))
    return 3.0 * a


def test_a_sum_whose_branch_picks_an_invariant_value_counts_every_iteration():
    """The summand depends on i only in the branch not taken: the taken branch is one number for
    every i, and the sum (and its adjoint) must still count it four times."""
    f = cn.coarsen(branch_on_invariant_inside_sum)
    ga, gb = f.grad(0.0137, 0.0137)
    assert_close(ga, finite_difference(branch_on_invariant_inside_sum, (0.0137, 0.0137), 0))
    assert_close(gb, finite_difference(branch_on_invariant_inside_sum, (0.0137, 0.0137), 1))


def float_rounding_in_predicate(a, b):
    if not (b if a < a else b) > (b - a):
        return a
    return b


def test_predicates_keep_their_floating_point_meaning():
    """b > b - a is False when b - a rounds to b; lifting must not rewrite it to a > 0."""
    f = cn.coarsen(float_rounding_in_predicate)
    assert f(1e-113, 1.0) == float_rounding_in_predicate(1e-113, 1.0)


def triangular_with_step(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i, len(x), 2):      # a stride that does not divide the span
            s += x[i] * math.sin(x[j])
    for k in range(len(x) - 1, 0, -3):     # a negative stride at the root
        s += x[k] * x[k]
    return s


def test_trip_counts_of_strided_ranges_round_up():
    """``len(range(a, b, s))`` is ceil((b − a) / s): the count was once printed as
    ``-(a - b) // s``, which is the floor, and dropped the last point of every strided inner range."""
    f = cn.coarsen(triangular_with_step)
    for n in (1, 2, 5, 6, 7):
        x = np.linspace(0.2, 1.3, n)
        assert_close(f(x), triangular_with_step(x), rtol=1e-12)
        assert_close(f.grad(x), finite_difference(triangular_with_step, (x,), 0))


def invariant_short_circuit_in_a_masked_arm(x, b):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.0:
            if not (b > 0.5 and b < 2.0):     # one truth value for every i, tested inside a per-element arm
                s += x[i] * b
            else:
                s += 2.0 * x[i]
        else:
            s += x[i] * x[i]
    return s


def test_an_invariant_and_inside_a_masked_arm_is_one_python_bool():
    """The short-circuit ``and`` was printed as an array over the arm's points and then tested
    with a scalar ``if`` (ValueError); a negated Python bool was printed ``~True`` (== -2)."""
    x = np.array([0.3, -1.2, 2.0, 0.7, -0.1])
    f = cn.coarsen(invariant_short_circuit_in_a_masked_arm, wrt=("x", "b"))
    for b in (0.3, 1.0, 3.0):
        assert_close(f(x, b), invariant_short_circuit_in_a_masked_arm(x, b), rtol=1e-12)
        gx, gb = f.grad(x, b)
        assert_close(gx, finite_difference(invariant_short_circuit_in_a_masked_arm, (x, b), 0))
        assert_close(gb, finite_difference(invariant_short_circuit_in_a_masked_arm, (x, b), 1))


def power(x, b):
    return x ** b + 2.0 * b


def repeated_power(a, v0, b, n):
    v = v0
    for _ in range(n):
        v = a * v ** b
    return v + a * b


def test_derivative_of_a_power_in_its_exponent_at_a_zero_base():
    """∂(x**b)/∂b = x**b · log x: at x = 0 the printed math.log(0) raised a bare ValueError.  0**b is 0
    for every b > 0, so the derivative is 0 there (JAX's convention); for x < 0 there is no real power
    and it is NaN.  The closed form of v ← a·v**b (C9) and its iteration (L = 1) agree at a = 0, v0 = 0."""
    f = cn.coarsen(power)
    for b in (1.0, 1.5, 3.0):
        gx, gb = f.grad(0.0, b)
        assert gb == 2.0 and gx == (1.0 if b == 1.0 else 0.0)
        _, d = f.jvp((0.0, b), (0.0, 1.0))
        assert d == 2.0
    gx, gb = f.grad(2.0, 1.5)
    assert_close((gx, gb), (1.5 * 2.0 ** 0.5, 2.0 ** 1.5 * math.log(2.0) + 2.0), rtol=1e-15, atol=0)
    assert math.isnan(f.grad(-2.0, 2.0)[1])
    closed = cn.coarsen(repeated_power, wrt=("a", "v0", "b"))
    iterated = cn.coarsen(repeated_power, wrt=("a", "v0", "b"), max_soi=1)
    for args in ((0.0, 1.3, 1.2, 5), (0.7, 0.0, 1.2, 5), (0.0, 0.0, 2.0, 3), (0.7, 1.3, 1.2, 5)):
        c, it = closed.grad(*args), iterated.grad(*args)
        assert_close(c, it, rtol=1e-12, atol=1e-15, what=str(args))
        if args[0] and args[1]:
            fd = [finite_difference(repeated_power, args, i) for i in range(3)]
            assert_close(c, fd, rtol=1e-6, atol=1e-8, what=f"FD {args}")
    assert "sum" in str(closed.plan) and "sum" not in str(iterated.plan)     # closed form vs iteration


def skip_rows_when_large(a, x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            if a > 1.0:
                if x[i] < a:
                    continue
            s += x[i] * x[j]
    return s


def skip_rows_nested(a, x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            if a < 0.5:
                if a < x[i]:
                    if a < 0.25:
                        continue
            s += x[i] * x[j] * a
    return s


def test_a_scalar_if_around_a_per_row_predicate_in_a_triangular_nest():
    """A scalar ``if`` whose arm is a per-row truth value printed a 0-d array for the other arm, and
    the segment gather of the inner loop failed on it (IndexError); one level deeper, the array
    branch inside the scalar ``if`` asked its level for a size it did not have and the whole
    selection fell back to per-block (found by the random-program test)."""
    import warnings

    x = np.array([0.3, -0.7, 1.2, 0.1])
    for fn in (skip_rows_when_large, skip_rows_nested):
        f = cn.coarsen(fn)
        for a in (0.0, 0.4, 2.0):
            with warnings.catch_warnings():
                warnings.simplefilter("error")      # no fallback to a finer selection
                value, (ga, gx) = f.value_and_grad(a, x)
            assert math.isclose(value, fn(a, x), rel_tol=1e-14, abs_tol=1e-15)
            assert_close(ga, finite_difference(fn, (a, x), 0), what=f"{fn.__name__} d/da at {a}")
            assert_close(gx, finite_difference(fn, (a, x), 1), what=f"{fn.__name__} d/dx at {a}")


def inner_sum_of_the_outer_element(a, x):
    s = 0.0
    for e in x:
        for _ in range(len(x)):
            a += math.tanh(e)
        s += math.tanh(a)
    return a + s


def test_a_sum_that_reads_the_outer_loops_element_is_not_hoisted_out_of_it():
    """Σ_j tanh(x[k]) inside the loop over k was taken for loop-invariant (its array is not written
    in the loop, but its index is the loop's) and hoisted before the loop, where k does not exist:
    the default selection failed and fell back to per-block (found by the random-program test)."""
    import warnings

    x = np.array([0.1, -0.2, 0.3])
    f = cn.coarsen(inner_sum_of_the_outer_element)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, (ga, gx) = f.value_and_grad(0.5, x)
    assert math.isclose(value, inner_sum_of_the_outer_element(0.5, x), rel_tol=1e-14)
    assert_close(ga, finite_difference(inner_sum_of_the_outer_element, (0.5, x), 0))
    assert_close(gx, finite_difference(inner_sum_of_the_outer_element, (0.5, x), 1))
    assert "hoisted" not in str(f.plan)


# Found by the random-program test (seed 14): a scalar ``if`` whose arms are all numbers, inside an array
# branch's masked arm, was broadcast to the arm's points and then negated with Python's ``not``.
SCALAR_IF_IN_A_MASKED_ARM = """def main(a, x):
    t0 = min(a, a)
    if t0 <= (t0 if (a / (1.0 + t0 * t0)) > math.log(abs(a) + 1.0) else a):
        t1 = math.cos(abs(2.0))
        if (a - a) < math.tanh(a):
            return math.sin(t0)
    else:
        t1 = ((0.25 / (1.0 + 0.1 * 0.1)) + (a + a))
    s2 = 0.25
    for i3 in range(5, 0, -2):
        t4, t5 = (math.log(abs((i3 * 0.25)) + 1.0) * math.tanh((i3 * 0.25))), math.tanh((0.1 + t1))
        t4, t5 = t5, t4
        s2 = s2 * (1.0 + 0.5 * math.sin(max(abs(0.25), (i3 * 0.25))))
    s6 = t1
    for i7 in range(4):
        if (math.tanh(0.25) < (i7 * 0.25)) and (((i7 * 0.25) + t1) <= (2.0 + t1)):
            break
        s8 = 0.0
        for e9 in x:
            if (((s2 if abs(a) > math.sin((i7 * 0.25)) else (i7 * 0.25)) <= t0)
                    and (((i7 * 0.25) if (e9 - 0.25) <= 1.5 else 1.5)
                         >= (t1 if a < math.exp(math.sin((i7 * 0.25))) else s2))):
                t10 = math.cos((t0 * (i7 * 0.25)))
                if t1 < (1.5 + s2) < t0:
                    continue
            else:
                t10 = 1.5
            t11 = (max(0.1, t10) + (0.1 - s2))
            s8 += math.sin((i7 * 0.25))
        s6 = max(s6, s8)
    return math.cos(t1)
"""


def test_a_scalar_if_of_numbers_inside_a_masked_arm_stays_a_number():
    import warnings

    ns: dict = {"math": math, "np": np}
    exec(compile(SCALAR_IF_IN_A_MASKED_ARM, "<program>", "exec"), ns)
    x = np.array([-6.0e-187, 1.6e-175, -0.55, 1.83, -1.6e-248, 1.0])
    f = cn.coarsen("import math\n" + SCALAR_IF_IN_A_MASKED_ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a in (-0.9873035731039719, 0.4, 2.5):
            assert math.isclose(f(a, x), ns["main"](a, x), rel_tol=1e-14)
            ga, gx = f.grad(a, x)
            assert_close(ga, finite_difference(ns["main"], (a, x), 0), what=f"d/da at {a}")

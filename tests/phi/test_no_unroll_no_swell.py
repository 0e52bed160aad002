"""Loops are never unrolled, and derivatives do not swell.

No unrolling: the lifted program's size — Σ ``Kernel.ops()`` over the plan,
and the generated source's length — is the same for trip count 10 and
10 000.  The plan is cached per *type* signature, so for a trip count that
arrives as an argument this holds by construction; the strong form of the
check is the handwritten programs whose trip count is a literal in the
source (``range(10)`` vs ``range(10000)``), where unrolling would show.

No swell: after CSE, the derivative's operation count is at most 5× the
forward's, for every corpus function.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from corpus import CORPUS, CORPUS_IDS

import coarsen_nb as cn
from coarsen_nb.symbolic.activity import active_names
from coarsen_nb.symbolic.diff import vjp


def forward_ops(plan) -> int:
    return sum(k.ops() for k in plan.kernels())


def derivative_ops(plan, wrt) -> int:
    active = active_names(plan, tuple(wrt))
    exprs = []
    for k in plan.kernels():
        outs = {o.name: sp.Symbol("bar:" + o.name, real=True) for o in k.outputs if o.name in active}
        if not outs or not (set(k.inputs) & active):
            continue
        exprs += list(vjp(k, active, outs).exprs().values())
    if not exprs:
        return 0
    replacements, reduced = sp.cse(exprs)
    return sum(int(sp.count_ops(e)) for _, e in replacements) + sum(int(sp.count_ops(e)) for e in reduced)


# --------------------------------------------------------------------------
# No unrolling: literal trip counts in the source
# --------------------------------------------------------------------------

LITERAL_LOOPS = {
    "sum": ("def f(x):\n    s = 0.0\n    for i in range(N):\n        s += x * i + 1.0\n    return s\n",
            lambda n: (0.5,)),
    "sum_read": ("def f(x):\n    s = 0.0\n    for i in range(N):\n        s += x[i] * x[i]\n    return s\n",
                 lambda n: (np.linspace(-1, 1, n),)),
    "product": ("def f(x):\n    p = 1.0\n    for k in range(1, N + 1):\n        p = p * (1.0 + x / (k * k))\n"
                "    return p\n", lambda n: (0.3,)),
    "max": ("def f(x):\n    m = -5.0\n    for i in range(N):\n        m = max(m, x[i])\n    return m\n",
            lambda n: (np.sin(np.arange(n, dtype=float)),)),
    "branch": ("def f(x):\n    s = 0.0\n    for i in range(N):\n        if x[i] > 0.0:\n            s += x[i] * x[i]\n"
               "        else:\n            s -= 0.5 * x[i]\n    return s\n",
               lambda n: (np.cos(np.arange(n, dtype=float)),)),
    "linear_c6": ("def f(a, b, v0):\n    v = v0\n    for i in range(N):\n        v = a * v + b\n    return v\n",
                  lambda n: (0.9, 0.1, 1.0)),
    "linear_c7": ("def f(a, c, v0):\n    v = v0\n    for i in range(N):\n        v = a * v + c[i]\n    return v\n",
                  lambda n: (0.9, np.linspace(0, 1, n), 1.0)),
    "linear_c8": ("def f(a, c, v0):\n    v = v0\n    for i in range(N):\n        v = a[i] * v + c[i]\n    return v\n",
                  lambda n: (np.cos(np.arange(n, dtype=float)), np.linspace(0, 1, n), 1.0)),
    "power_c9_symbolic": ("def f(a, b, v0):\n    v = v0\n    for i in range(N):\n        v = a * v ** b\n"
                          "    return v\n", lambda n: (0.9, 0.5, 1.2)),
    "nested": ("def f(x):\n    s = 0.0\n    for i in range(N):\n        for j in range(3):\n"
               "            s += x[i] * (j + 1)\n    return s\n", lambda n: (np.linspace(0, 1, n),)),
    "write": ("def f(x):\n    out = np.zeros(N)\n    for i in range(N):\n        out[i] = math.sin(x[i])\n"
              "    return np.sum(out)\n", lambda n: (np.linspace(0, 1, n),)),
    "nonlinear_iterated": ("def f(x):\n    v = x\n    for i in range(N):\n        v = v - 0.01 * math.sin(v)\n"
                           "    return v\n", lambda n: (1.0,)),
    "while_counter": ("def f(x):\n    s = 0.0\n    k = 0\n    while k < N:\n        s += x / (k + 1)\n        k += 1\n"
                      "    return s\n", lambda n: (0.7,)),
    # Issue 16's shapes (the kernels barrier_option, asian_option, iir_filter, exp_smoothing, conv1d,
    # segment_distance, in small): per-path loops batched as lanes, scans, element writes, windows, a clamp
    # inside a running maximum.
    "paths_knock_out": ("def f(z, s0, sig):\n    total = 0.0\n    for p in range(N):\n        s = s0\n"
                        "        alive = 1.0\n        for t in range(4):\n            s = s * math.exp(sig * z[p, t])\n"
                        "            if s > 1.2:\n                alive = 0.0\n"
                        "        total += alive * max(s - s0, 0.0)\n    return total\n",
                        lambda n: (np.sin(np.arange(4.0 * n)).reshape(n, 4), 1.0, 0.05)),
    "paths_running_sum": ("def f(z, s0, sig):\n    pay = 0.0\n    for p in range(N):\n        s = s0\n"
                          "        run = 0.0\n        for t in range(4):\n            s = s * math.exp(sig * z[p, t])\n"
                          "            run += s\n        pay += max(run / 4 - 1.0, 0.0)\n    return pay\n",
                          lambda n: (np.sin(np.arange(4.0 * n)).reshape(n, 4), 1.0, 0.05)),
    "iir_scan": ("def f(x, y, a):\n    s = 0.0\n    loss = 0.0\n    for k in range(N):\n        s = a * s + x[k]\n"
                 "        loss += (s - y[k]) ** 2\n    return loss\n",
                 lambda n: (np.sin(np.arange(n, dtype=float)), np.cos(np.arange(n, dtype=float)), 0.9)),
    "smoothing_writes": ("def f(x, a):\n    s = np.zeros(N + 1)\n    sse = 0.0\n    for i in range(N):\n"
                         "        e = x[i] - s[i]\n        sse += e * e\n        s[i + 1] = a * x[i] + (1 - a) * s[i]\n"
                         "    return sse\n", lambda n: (np.sin(np.arange(n, dtype=float)), 0.3)),
    "conv_windows": ("def f(x, w):\n    out = np.zeros(N)\n    for i in range(N):\n        acc = 0.0\n"
                     "        for k in range(3):\n            acc += w[k] * x[i + k]\n        out[i] = acc\n"
                     "    loss = 0.0\n    for i in range(N):\n        loss += out[i] ** 2\n    return loss\n",
                     lambda n: (np.sin(np.arange(n + 2, dtype=float)), np.array([0.2, -0.5, 0.3]))),
    "clamp_running_max": ("def f(x, a, b):\n    worst = 0.0\n    for i in range(N):\n        t = (x[i] - a) / b\n"
                          "        t = min(max(t, 0.0), 1.0)\n        worst = max(worst, (x[i] - a - t * b) ** 2)\n"
                          "    return worst\n", lambda n: (np.sin(np.arange(n, dtype=float)), -0.5, 1.0)),
    # an iterated loop (nonlinear state) writing an element per step, in place, one under a branch
    "iterated_writes": ("def f(x, a):\n    y = np.zeros(N)\n    s = 0.0\n    for i in range(N):\n"
                        "        s = math.sin(s) + a * x[i]\n        y[i] = s\n        if s > 0.5:\n"
                        "            y[N - 1 - i] = s * s\n    return np.sum(y * y)\n",
                        lambda n: (np.sin(np.arange(n, dtype=float)), 0.7)),
}


def _size(source: str, n: int) -> tuple[int, int, int]:
    ns = {"np": np, "math": __import__("math")}
    f = cn.coarsen(source.replace("N", str(n)), namespace=ns)
    args = LITERAL_LOOPS_ARGS[source](n)
    f.grad(*args)
    return forward_ops(f.plan), _shape_of_text(str(f.plan)), _shape_of_text(f.source)


def _shape_of_text(text: str) -> int:
    """Length of ``text`` with every number written as ``#`` (N, N + 1, N - 1 fold to constants)."""
    return len(re.sub(r"\d+(\.\d*)?(e[-+]?\d+)?", "#", text))


LITERAL_LOOPS_ARGS = {src: mk for src, mk in LITERAL_LOOPS.values()}


@pytest.mark.parametrize("name", list(LITERAL_LOOPS))
def test_literal_trip_count_does_not_unroll(name):
    source = LITERAL_LOOPS[name][0]
    small, large = _size(source, 10), _size(source, 10000)
    assert small == large, (f"{name}: (ops, plan text, module text) at N=10 {small} vs N=10000 {large}: "
                            "the lifted program grew with the trip count")


# --------------------------------------------------------------------------
# No unrolling: every loop program of the corpus at trip count / length 10 vs 10 000
# --------------------------------------------------------------------------

def _sized_args(entry, n: int):
    """Inputs of ``entry`` with its trip count (an int parameter, or the array length) set to ``n``."""
    rng = np.random.default_rng(0)
    base = entry.make_args(rng)
    inner = {a.shape[1] for a in base if isinstance(a, np.ndarray) and a.ndim == 2}
    out = []
    for a in base:
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            out.append(n)
        elif isinstance(a, float):
            out.append(0.5 * a)   # |t| < 1 keeps t**N of a Horner closed form finite at N = 10 000
        elif isinstance(a, np.ndarray) and a.ndim == 1 and len(a) in inner:
            out.append(a * 0.5)   # a row vector of a 2-D input: its length is not the trip count
        elif isinstance(a, np.ndarray) and a.ndim == 1:
            out.append(np.resize(a, n) * 0.5)
        elif isinstance(a, np.ndarray) and a.ndim == 2:
            out.append(np.resize(a, (n, a.shape[1])) * 0.5)
        else:
            out.append(a)
    return tuple(out)


LOOP_ENTRIES = [e for e in CORPUS if {"loop", "while"} & e.tags]
# n × n iteration spaces are evaluated densely: keep the large size at 10³ (10⁶ points).
_QUADRATIC = {"triangular_sum", "pairwise_energy"}
# Trip counts fixed by the data, not by a size: a convergence loop, gcd, collatz.
_NOT_SIZED = {"while_newton_sqrt", "while_true_break", "int_gcd", "collatz_steps"}


@pytest.mark.parametrize("entry", [e for e in LOOP_ENTRIES if e.name not in _NOT_SIZED],
                         ids=[e.name for e in LOOP_ENTRIES if e.name not in _NOT_SIZED])
def test_corpus_loop_size_independent_of_trip_count(entry):
    large = 1000 if entry.name in _QUADRATIC else 10000
    sizes = []
    for n in (10, large):
        f = cn.coarsen(entry.fn, wrt=entry.wrt or None)
        with np.errstate(all="ignore"):
            f(*_sized_args(entry, n))
        sizes.append((forward_ops(f.plan), _shape_of_text(f.source)))
    assert sizes[0] == sizes[1], f"{entry.name}: (ops, source length) {sizes[0]} at 10 vs {sizes[1]} at {large}"


# --------------------------------------------------------------------------
# No swell
# --------------------------------------------------------------------------

SWELL_BOUND = 5.0
_TABLE: dict = {}


def _swell(entry):
    if entry.name not in _TABLE:
        f = cn.coarsen(entry.fn, wrt=entry.wrt or None)
        f(*entry.make_args(np.random.default_rng(0)))
        wrt = f._compiled().wrt
        fw, dv = forward_ops(f.plan), derivative_ops(f.plan, wrt)
        _TABLE[entry.name] = (fw, dv, dv / fw if fw else (0.0 if dv == 0 else float("inf")))
    return _TABLE[entry.name]


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_derivative_does_not_swell(entry):
    fw, dv, ratio = _swell(entry)
    assert ratio <= SWELL_BOUND, f"{entry.name}: derivative {dv} ops after CSE vs forward {fw} ops (×{ratio:.2f})"


def test_swell_table():
    """The whole table, printed (``-s`` shows it), and the bound over all of it."""
    rows = [(e.name, *_swell(e)) for e in CORPUS]
    print(f"\n{'function':26s} {'forward':>8s} {'derivative':>10s} {'ratio':>7s}")
    for name, fw, dv, ratio in rows:
        print(f"{name:26s} {fw:8d} {dv:10d} {ratio:7.2f}")
    total_fw = sum(r[1] for r in rows)
    total_dv = sum(r[2] for r in rows)
    print(f"{'TOTAL':26s} {total_fw:8d} {total_dv:10d} {total_dv / total_fw:7.2f}")
    over = [(n, round(r, 2)) for n, _, _, r in rows if r > SWELL_BOUND]
    assert not over, f"derivative/forward ops above {SWELL_BOUND}: {over}"


# --------------------------------------------------------------------------
# Issue 16's kernels as written: the same program and op counts at two sizes, and no swell
# --------------------------------------------------------------------------

ISSUE_16_KERNELS = ("barrier_option", "asian_option", "iir_filter", "exp_smoothing", "conv1d", "segment_distance")


def _kernel_counts(name: str, size: int) -> tuple[int, int, int, int]:
    """(forward ops, derivative ops after CSE, plan text, module text) of a fresh compile at ``size``."""
    from coarsen_nb.kernels import KERNELS, function

    mod = KERNELS[name]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    f.grad(*mod.make_inputs(size, 0))
    return (forward_ops(f.plan), derivative_ops(f.plan, f._compiled().wrt), _shape_of_text(str(f.plan)),
            _shape_of_text(f.source))


@pytest.mark.parametrize("name", ISSUE_16_KERNELS)
def test_issue_16_kernel_program_is_independent_of_its_size(name):
    from coarsen_nb.kernels import KERNELS

    meta = KERNELS[name].META
    small, large = _kernel_counts(name, meta["test_size"]), _kernel_counts(name, max(meta["sizes"]))
    assert small == large, (f"{name}: (forward ops, derivative ops, plan text, module text) {small} at "
                            f"{meta['test_size']} vs {large} at {max(meta['sizes'])}")
    fw, dv = small[:2]
    assert dv <= SWELL_BOUND * fw, f"{name}: derivative {dv} ops after CSE vs forward {fw} ops"

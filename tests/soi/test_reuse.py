"""Reuse-centric selection: a value used k times is materialized once, its derivative stays small.

Measured (derivative ops after ``sympy.cse``, from ``records``), for
``t = sin(x)·exp(x)·cos(x) + tanh(x²)`` used k times as ``sin(t·j)``:

    k          2   3   4   5   6   7   8   9  10  11  12
    R = 2     37  37  43  49  55  61  67  73  79  85  91   (slope 6)
    L = R = ∞ 37  50  63  76  89 102 115 128 141 154 167   (slope 13)

Both are linear: one value used k times inlines to k copies of t (k·|t|,
linear in k), and ``sympy.cse`` finds the copies again, so no superlinear
swell appears after CSE; what the inlining costs is the slope (each use
re-differentiates t).  Before CSE the L = R = ∞ derivative has 456 ops at
k = 12 against 179 with R = 2.
"""

import math

import sympy as sp

import coarsen_nb as cn
from coarsen_nb.soi.report import records

KS = range(2, 13)


def _source(k: int) -> str:
    uses = " + ".join(f"math.sin(t * {j + 1}.0)" for j in range(k))
    return ("import math\ndef f(x):\n    t = math.sin(x) * math.exp(x) * math.cos(x) + math.tanh(x * x)\n"
            f"    return {uses}\n")


def _series(max_soi, reuse):
    ops, raw, temps = [], [], []
    for k in KS:
        f = cn.coarsen(_source(k), max_soi=max_soi, reuse=reuse)
        f.grad(0.3)
        rs = records(f.plan, ("x",))
        ops.append(sum(r.derivative_ops for r in rs))
        raw.append(sum(int(sp.count_ops(e)) for r in rs for e in r.derivatives.values()))
        temps.append([str(s) for kern in f.plan.kernels() for s, _ in kern.body])
    return ops, raw, temps


def _differences(xs):
    return [b - a for a, b in zip(xs, xs[1:], strict=False)]


def test_reuse_keeps_the_derivative_linear_and_materializes_once():
    default, raw_default, temps_default = _series(None, None)
    inlined, raw_inlined, temps_inlined = _series(math.inf, math.inf)
    print("k             ", list(KS))
    print("R=2 (cse)     ", default)
    print("L=R=inf (cse) ", inlined)
    print("R=2 (raw)     ", raw_default)
    print("L=R=inf (raw) ", raw_inlined)
    # R = 2: from k = 3 on (t used more than R times) t is one temp and each use adds a constant.
    assert all(ts.count("t.1") == 1 for ts in temps_default[1:])
    assert len(set(_differences(default[1:]))) == 1
    # L = R = ∞: t is inlined into every use; the derivative grows at more than twice the rate.
    assert all("t.1" not in ts for ts in temps_inlined)
    assert len(set(_differences(inlined[1:]))) == 1
    assert _differences(inlined)[-1] >= 2 * _differences(default)[-1]
    assert raw_inlined[-1] > 2 * raw_default[-1]

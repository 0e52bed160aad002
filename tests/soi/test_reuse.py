"""Reuse-centric selection: where inlining a reused value makes the derivative swell, and where it does not.

Derivative operation counts of ``f.grad`` per SOI selection, three ways: *raw* is the VJP before CSE with the
temps the selection materialized kept as temps (``SOIRecord.derivative_ops_raw``, the paper's expression
swell); *cse* is after ``sympy.cse`` (``SOIRecord.derivative_ops``); *code* is the cost model's count of the
generated reverse sweep (``f.cost.derivative_ops``).  Measured (R = 1 is the default):

One value used k times, ``t = sin(x)·exp(x)·cos(x) + tanh(x²)``, returned as Σ_j sin(t·j):

    k                   2    3    4    5    6    7    8    9   10   11   12
    R = 1      raw     31   35   39   43   47   51   55   59   63   67   71   (slope 4)
    L = R = ∞  raw     76  114  152  190  228  266  304  342  380  418  456   (slope 38)
    R = 1      cse     31   37   43   49   55   61   67   73   79   85   91
    L = R = ∞  cse     37   50   63   76   89  102  115  128  141  154  167
    R = 1      code    22   25   28   31   34   37   40   43   46   49   52
    L = R = ∞  code    33   46   59   72   85   98  111  124  137  150  163

Linear everywhere: inlining one value into k users makes k copies of it (k·|t| — linear in k), so this family
cannot show superlinear swell; what inlining costs is the slope (each use re-differentiates t).

A chain of reused values, ``t = t·t + sin(t)`` repeated d times (each level reads the previous one 3 times):

    d                   1    2    3    4    5     6     7     8
    R = 1      raw      4    8   12   16   20    24    28    32   (linear)
    L = R = ∞  raw      4   18   59  165  425  1041  2465  5697   (×2.3 per level: exponential)
    R = 1      code     6   10   14   18   22    26    30    34
    L = R = ∞  code     6   13   22   31   40    49    58    67   (CSE undoes the swell in the generated code)

So the superlinear growth the paper describes is real, before CSE, once reused values nest; the reuse rule
keeps it linear without relying on CSE, and ``sympy.cse`` happens to recover the sharing here, so the generated
code is linear either way (at twice the slope without materialization).
"""

import math

import coarsen_nb as cn
from coarsen_nb.soi.report import records

KS = range(2, 13)
DEPTHS = range(1, 9)


def _single(k: int) -> str:
    uses = " + ".join(f"math.sin(t * {j + 1}.0)" for j in range(k))
    return ("import math\ndef f(x):\n    t = math.sin(x) * math.exp(x) * math.cos(x) + math.tanh(x * x)\n"
            f"    return {uses}\n")


def _chain(d: int) -> str:
    return "import math\ndef f(x):\n    t = x\n" + "    t = t * t + math.sin(t)\n" * d + "    return t\n"


def _series(make, ns, max_soi, reuse):
    raw, cse, code, temps = [], [], [], []
    for n in ns:
        f = cn.coarsen(make(n), max_soi=max_soi, reuse=reuse)
        f.grad(0.3)
        rs = records(f.plan, ("x",))
        raw.append(sum(r.derivative_ops_raw for r in rs))
        cse.append(sum(r.derivative_ops for r in rs))
        code.append(int(f.cost.derivative_ops))
        temps.append([str(s) for kern in f.plan.kernels() for s, _ in kern.body])
    return raw, cse, code, temps


def _differences(xs):
    return [b - a for a, b in zip(xs, xs[1:], strict=False)]


def _linear(xs) -> bool:
    return len(set(_differences(xs))) == 1


def test_one_value_used_k_times_grows_linearly_and_materializing_it_lowers_the_slope():
    raw, cse, code, temps = _series(_single, KS, None, None)
    raw_inf, cse_inf, code_inf, temps_inf = _series(_single, KS, math.inf, math.inf)
    print("k          ", list(KS))
    for name, xs in (("R=1 raw", raw), ("inf raw", raw_inf), ("R=1 cse", cse), ("inf cse", cse_inf),
                     ("R=1 code", code), ("inf code", code_inf)):
        print(f"{name:11s}", xs)
    # The default (R = 1) keeps t as one temp of its SOI; L = R = ∞ inlines it into every use.
    assert all(ts.count("t.1") == 1 for ts in temps)
    assert all("t.1" not in ts for ts in temps_inf)
    # Every count is linear in k (k copies of one value), before CSE, after it and in the generated code ...
    assert all(_linear(xs) for xs in (raw, raw_inf, cse, cse_inf, code, code_inf))
    # ... and inlining multiplies the slope: each use re-differentiates t.
    assert _differences(raw_inf)[0] >= 5 * _differences(raw)[0]
    assert _differences(code_inf)[0] >= 3 * _differences(code)[0]


def test_nested_reuse_swells_superlinearly_before_cse_unless_materialized():
    raw, _, code, temps = _series(_chain, DEPTHS, None, None)
    raw_inf, _, code_inf, _ = _series(_chain, DEPTHS, math.inf, math.inf)
    print("d          ", list(DEPTHS))
    for name, xs in (("R=1 raw", raw), ("inf raw", raw_inf), ("R=1 code", code), ("inf code", code_inf)):
        print(f"{name:11s}", xs)
    # Materialized (the default): every level is one temp, and the derivative grows by a constant per level.
    assert all(len(ts) >= d for d, ts in zip(DEPTHS, temps, strict=True))
    assert _linear(raw)
    # Inlined: the derivative tree more than doubles per level (exponential in d) before CSE.
    assert all(b > 2 * a for a, b in zip(raw_inf[1:], raw_inf[2:], strict=False))
    assert raw_inf[-1] > 100 * raw[-1]
    # CSE in the generated code finds the sharing again: linear, at a larger slope than with materialization.
    assert _linear(code) and _linear(code_inf[1:])
    assert _differences(code_inf)[-1] > _differences(code)[-1]

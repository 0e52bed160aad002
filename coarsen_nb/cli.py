"""The ``coarsen-nb`` command: compile a file's function, run the demo, run the benchmarks.

    coarsen-nb FILE.py:FUNC [--wrt a,b] [--args EXPR] [--export OUT.py] [--backend numpy|cupy] [--report]
    coarsen-nb demo [--out DIR]
    coarsen-nb bench [--quick] [...]        (see `coarsen-nb bench --help`)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time

import numpy as np

from coarsen_nb.errors import CoarsenError


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        from benchmarks.cli import main as bench

        return bench(argv[1:])
    if argv and argv[0] == "demo":
        return demo(argv[1:])
    return compile_file(argv)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coarsen-nb", description="Compile a Python function's gradient with "
                                "coarsening optimization. Subcommands: demo, bench.")
    p.add_argument("target", help="FILE.py:FUNC — the function to compile")
    p.add_argument("--wrt", default=None, help="parameters to differentiate, comma-separated (default: floats)")
    p.add_argument("--args", default=None, help="example arguments as a Python expression, e.g. "
                   "\"np.ones(100), 0.5\" (default: the module's make_inputs() if it has one)")
    p.add_argument("--backend", default="numpy", choices=("numpy", "cupy"))
    p.add_argument("--max-soi", type=float, default=None, help="SOI size cap L (1 = operator-level AD)")
    p.add_argument("--reuse", type=float, default=None, help="reuse threshold R")
    p.add_argument("--per-block", action="store_true", help="SOIs never cross a φ (ablation)")
    p.add_argument("--export", default=None, help="write the generated module here")
    p.add_argument("--overwrite", action="store_true", help="allow --export to replace an existing file")
    p.add_argument("--report", action="store_true", help="print SSA, gated form, SOIs and derivatives")
    return p


def _load(path: str):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or spec.loader is None:
        raise CoarsenError(path, message=f"cannot load {path}", hint="pass a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    return mod


def _example_args(mod, fn, expr: str | None):
    if expr is not None:
        value = eval(expr, {"np": np, "numpy": np, "math": __import__("math")})  # noqa: S307 - user's own CLI input
        return value if isinstance(value, tuple) else (value,)
    if hasattr(mod, "make_inputs"):
        size = getattr(mod, "META", {}).get("test_size", 8)
        return tuple(mod.make_inputs(size, 0))
    import inspect

    n = len(inspect.signature(fn).parameters)
    return tuple(1.0 for _ in range(n))


def compile_file(argv) -> int:
    args = _parser().parse_args(argv)
    import coarsen_nb as cn

    if ":" not in args.target:
        print("coarsen-nb: give the function as FILE.py:FUNC", file=sys.stderr)
        return 2
    path, func = args.target.rsplit(":", 1)
    try:
        mod = _load(path)
        fn = getattr(mod, func, None)
        if fn is None:
            raise CoarsenError(func, message=f"{path} has no function {func!r}")
        max_soi = int(args.max_soi) if args.max_soi is not None and args.max_soi != float("inf") else args.max_soi
        f = cn.coarsen(fn, wrt=args.wrt, backend=args.backend, max_soi=max_soi, reuse=args.reuse,
                       per_block=args.per_block)
        example = _example_args(mod, fn, args.args)
        t0 = time.perf_counter()
        try:
            value, grad = f.value_and_grad(*example)
        except CoarsenError:
            if args.backend != "cupy":
                raise
            value = grad = None
        took = time.perf_counter() - t0
        print(f"compiled {func}() from {path}: {len(f.plan.kernels())} SOIs, {f.mode} selection "
              f"({took * 1e3:.0f} ms including code generation)")
        if value is not None:
            print(f"value = {value!r}")
            print(f"grad  = {np.array2string(np.asarray(grad, dtype=object), threshold=12)}"
                  if isinstance(grad, tuple) else f"grad  = {grad!r}")
        for d in f.discontinuities:
            print(f"note: line {d.line}: {d.kind} on `{d.predicate}` depends on {', '.join(d.inputs)}; the "
                  "derivative ignores the jump there")
        if args.report:
            print("\n== SSA ==\n" + f.ssa)
            print("\n== gated ==\n" + f.gated)
            print("\n== SOIs ==")
            for s in f.sois:
                print(f"SOI {s.index} (lines {', '.join(map(str, s.lines)) or '-'}): {s.note}")
                for name, e in s.exprs.items():
                    print(f"  {name} = {e}")
                for name, e in s.derivatives.items():
                    print(f"  ∂: {name} += {e}")
        if args.export:
            out = f.export(args.export, overwrite=args.overwrite)
            print(f"exported the generated module to {out}")
    except (CoarsenError, FileExistsError) as err:
        print(f"coarsen-nb: {err}", file=sys.stderr)
        return 1
    return 0


def demo(argv) -> int:
    """Compile every workload of kernels/, check it, time it against L = 1 and the hand-written gradient."""
    p = argparse.ArgumentParser(prog="coarsen-nb demo")
    p.add_argument("--out", default="coarsen_nb_demo", help="folder for the exported modules")
    a = p.parse_args(argv)
    import coarsen_nb as cn
    from kernels import KERNELS, function

    os.makedirs(a.out, exist_ok=True)
    print("coarsen_nb demo: every kernel compiled, checked against its hand-written gradient, timed.\n")
    print(f"{'kernel':18s} {'size':>7s} {'coarsen_nb':>12s} {'hand-written':>13s} {'L = 1':>11s} "
          f"{'speedup vs L=1':>15s}")
    failures = 0
    for name, mod in KERNELS.items():
        fn = function(mod)
        size = mod.META.get("quick_sizes", mod.META["sizes"])[0]
        args = mod.make_inputs(size, 0)
        f = cn.coarsen(fn, wrt=mod.META["wrt"])
        g = f.grad(*args)
        ref = mod.grad(*args)
        ok = all(np.allclose(x, y, rtol=1e-7, atol=1e-9) for x, y in
                 zip(g if isinstance(g, tuple) else (g,), ref if isinstance(ref, tuple) else (ref,), strict=True))
        failures += not ok
        t_cn = _time(f.grad, args)
        t_hand = _time(mod.grad, args)
        t_op = _time(cn.coarsen(fn, wrt=mod.META["wrt"], max_soi=1).grad, args, budget=0.5)
        f.export(os.path.join(a.out, f"{name}_grad.py"), overwrite=True)
        print(f"{name:18s} {size:>7d} {_fmt(t_cn):>12s} {_fmt(t_hand):>13s} {_fmt(t_op):>11s} "
              f"{t_op / t_cn:>14.1f}x{'' if ok else '   WRONG'}")
    example = KERNELS["piecewise_sum"]
    f = cn.coarsen(function(example), wrt=("x",))
    f.grad(*example.make_inputs(8, 0))
    print("\nThe symbolic derivative of piecewise_sum (one SOI, the loop as a closed-form sum):")
    for s in f.sois:
        for name, e in s.derivatives.items():
            print(f"  {_readable(name)} += {_readable(str(e))}")
    print(f"\nGenerated modules (NumPy only) written to {os.path.abspath(a.out)}/")
    return 1 if failures else 0


def _readable(text: str) -> str:
    """SSA spellings as a user reads them: x[$k1.2]#1 -> x[k1], \\bar{$ret.2} -> d(result)."""
    text = re.sub(r"\\bar\{\$ret\.\d+\}", "dresult", text)
    text = re.sub(r"#\d+", "", text)
    text = re.sub(r"\$([A-Za-z]+\d*)\.\d+", r"\1", text)
    return re.sub(r"([A-Za-z_]\w*)\.\d+", r"\1", text)


def _time(fn, args, budget: float = 0.2) -> float:
    fn(*args)
    n, total = 0, 0.0
    best = float("inf")
    while total < budget and n < 1000:
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        best = min(best, dt)
        total += dt
        n += 1
    return best


def _fmt(t: float) -> str:
    return f"{t * 1e6:.0f} µs" if t < 1e-3 else f"{t * 1e3:.1f} ms"


if __name__ == "__main__":
    raise SystemExit(main())

"""The ``coarsen-nb`` command: compile a file's function, run the demo, run the benchmarks.

    coarsen-nb FILE.py:FUNC [--wrt a,b] [--args EXPR] [--export OUT.py [--overwrite]] [--report] [...]
    coarsen-nb demo [--out DIR]
    coarsen-nb bench [--quick] [...]        (see `coarsen-nb bench --help`)
    coarsen-nb warmup                       (the numba backend's shared helpers compiled once per machine;
                                             also ``python -m coarsen_nb warmup``)

Compiling needs example arguments, because the code is generated for their
types (a number or an array, a float or an int trip count): ``--args``, or
the file's ``make_inputs(size, seed)``.  Without either the command refuses
and says so, rather than guess (it used to call the function with 1.0 for
every parameter, which is the wrong type for an array or a loop bound).

Exit status: 0 when the function compiled (and was exported, if asked);
1 when the compiler refused the function (a :class:`CoarsenError`, printed
with its line and caret); 2 for a bad command line: a target that is not
``FILE.py:FUNC``, a missing file or function, ``--args`` or ``make_inputs``
that do not give the function's arguments, an ``--export`` target that
exists (without ``--overwrite``) or cannot be written.  Every error is one
``coarsen-nb: ...`` message on stderr, never a traceback of this program.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import os
import re
import sys
import time

import numpy as np

from coarsen_nb import backends, option_help
from coarsen_nb.backends import AUTO, BACKENDS
from coarsen_nb.errors import CoarsenError


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        from coarsen_nb.benchmarks.cli import main as bench

        return bench(argv[1:])
    if argv and argv[0] == "demo":
        return demo(argv[1:])
    if argv and argv[0] == "warmup":
        from coarsen_nb.numba_warmup import main as warmup

        return warmup(argv[1:])
    return compile_file(argv)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coarsen-nb", description="Compile a Python function's gradient with "
                                "coarsening optimization. Subcommands: demo, bench, warmup.")
    p.add_argument("target", help="FILE.py:FUNC — the function to compile")
    p.add_argument("--wrt", default=None, metavar="a,b", help=option_help.WRT)
    p.add_argument("--args", default=None, metavar="EXPR", help="example arguments as a Python expression, e.g. "
                   "\"np.ones(100), 0.5\" (default: the file's make_inputs(size, seed), if it has one)")
    p.add_argument("--backend", default=AUTO, choices=(AUTO, *BACKENDS), help=option_help.BACKEND)
    p.add_argument("--max-soi", type=float, default=None, metavar="L", help=option_help.MAX_SOI)
    p.add_argument("--reuse", type=float, default=None, metavar="R", help=option_help.REUSE)
    p.add_argument("--per-block", action="store_true", help=option_help.PER_BLOCK)
    p.add_argument("--parallel", action="store_true", help=option_help.PARALLEL)
    p.add_argument("--export", default=None, metavar="OUT.py", help="write the generated module to OUT.py")
    p.add_argument("--overwrite", action="store_true", help=option_help.OVERWRITE)
    p.add_argument("--report", action="store_true", help="print SSA, gated form, SOIs and derivatives")
    return p


class _BadCommand(Exception):
    """A command line that does not say what to compile or on what: exit status 2."""


def _load(path: str):
    if not os.path.isfile(path):
        raise _BadCommand(f"no such file: {path} (give the function as FILE.py:FUNC)")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or spec.loader is None:
        raise _BadCommand(f"cannot load {path}: pass a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as exc:
        raise _BadCommand(f"{path}, line {exc.lineno}: syntax error: {exc.msg}") from None
    return mod


def _function(mod, path: str, func: str):
    fn = getattr(mod, func, None)
    if fn is None:
        defined = [n for n, v in vars(mod).items() if inspect.isfunction(v) and v.__module__ == mod.__name__]
        raise _BadCommand(f"{path} has no function {func!r}"
                          + (f"; it defines {', '.join(defined)}" if defined else ""))
    if not inspect.isfunction(fn):
        raise _BadCommand(f"{path}: {func} is a {type(fn).__name__}, not a function defined with def")
    return fn


def _example_args(mod, path: str, fn, expr: str | None) -> tuple:
    """The arguments to generate code for: ``--args``, else the file's ``make_inputs(size, seed)``."""
    params = list(inspect.signature(fn).parameters)
    call = f"{fn.__name__}({', '.join(params)})"
    if expr is not None:
        try:
            value = eval(expr, {"np": np, "numpy": np, "math": math})  # noqa: S307 - the user's own input
        except Exception as exc:  # the user's expression: its error, in one line
            raise _BadCommand(f"--args {expr!r}: {type(exc).__name__}: {exc}") from None
        args = value if isinstance(value, tuple) else (value,)
        if len(args) != len(params):
            raise _BadCommand(f"--args gives {len(args)} value(s); {call} takes {len(params)}")
        return args
    make = getattr(mod, "make_inputs", None)
    if make is None:
        example = ", ".join("1.0" for _ in params)
        raise _BadCommand(f"{call} needs example arguments, since the code is generated for their types: "
                          f"pass --args with a value for each parameter (e.g. --args \"{example}\", an array "
                          f"as np.ones(8)), or define make_inputs(size, seed) in {path}")
    size = getattr(mod, "META", {}).get("test_size", 8)
    try:
        inspect.signature(make).bind(size, 0)
    except TypeError:
        raise _BadCommand(f"{path}: make_inputs{inspect.signature(make)} cannot be called as "
                          f"make_inputs(size, seed); define it so, or pass --args") from None
    value = make(size, 0)
    args = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(args) != len(params):
        raise _BadCommand(f"{path}: make_inputs(size, seed) returns {len(args)} value(s); {call} takes "
                          f"{len(params)}")
    return args


def _knob(value: float | None):
    """``--max-soi 4`` parses as 4.0: a whole number as an int, ``inf`` as it is."""
    return int(value) if value is not None and math.isfinite(value) and value == int(value) else value


def _export_target(path: str | None, overwrite: bool) -> None:
    if path is None:
        return
    if os.path.exists(path) and not overwrite:
        raise _BadCommand(f"--export {path}: the file exists; add --overwrite to replace it")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise _BadCommand(f"--export {path}: no directory {directory}")


def compile_file(argv) -> int:
    args = _parser().parse_args(argv)
    try:
        if ":" not in args.target:
            raise _BadCommand(f"give the function as FILE.py:FUNC, not {args.target!r}")
        path, func = args.target.rsplit(":", 1)
        _export_target(args.export, args.overwrite)
        mod = _load(path)
        fn = _function(mod, path, func)
        example = _example_args(mod, path, fn, args.args)
        _compile_and_report(fn, path, example, args)
    except _BadCommand as err:
        print(f"coarsen-nb: {err}", file=sys.stderr)
        return 2
    except CoarsenError as err:
        print(f"coarsen-nb: {err}", file=sys.stderr)
        return 1
    return 0


def _compile_and_report(fn, path: str, example: tuple, args) -> None:
    import coarsen_nb as cn

    f = cn.coarsen(fn, wrt=args.wrt, backend=args.backend, max_soi=_knob(args.max_soi),
                   reuse=_knob(args.reuse), per_block=args.per_block, parallel=args.parallel)
    t0 = time.perf_counter()
    try:
        value, grad = f.value_and_grad(*example)
    except CoarsenError:
        if backends.get(f.backend).loads_everywhere:
            raise
        value = grad = None
    took = time.perf_counter() - t0
    print(f"compiled {f.name}() from {path}: {len(f.plan.kernels())} SOIs, {f.mode} selection, backend "
          f"{f.backend} ({took * 1e3:.0f} ms including code generation)")
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
                print(f"  {_readable(name)} = {_readable(str(e))}")
            for name, e in s.derivatives.items():
                print(f"  {_readable(name)} += {_readable(str(e))}")
    if args.export:
        try:
            out = f.export(args.export, overwrite=args.overwrite)
        except FileExistsError:  # created since the check above
            raise _BadCommand(f"--export {args.export}: the file exists; add --overwrite to replace it") from None
        except OSError as exc:
            raise _BadCommand(f"--export {args.export}: cannot write it ({exc.strerror or exc})") from None
        print(f"exported the generated module to {out}")


def demo(argv) -> int:
    """Compile every workload of kernels/, check it, time it against L = 1 and the hand-written gradient."""
    p = argparse.ArgumentParser(prog="coarsen-nb demo")
    p.add_argument("--out", default="coarsen_nb_demo", help="folder for the exported modules")
    a = p.parse_args(argv)
    import coarsen_nb as cn
    from coarsen_nb.kernels import KERNELS, function

    try:
        backend = backends.resolve(AUTO)
    except CoarsenError as err:          # (COARSEN_NB_BACKEND names no backend)
        print(f"coarsen-nb: {err}", file=sys.stderr)
        return 1

    os.makedirs(a.out, exist_ok=True)
    print("coarsen_nb demo: every kernel compiled, checked against its hand-written gradient, timed.\n"
          "  check: the gradient equals the kernel's hand-written analytical one (rtol 1e-7), else WRONG\n"
          "  L = 1: the same compiler with one operation per SOI, i.e. operator-level AD (as autograd or\n"
          "         PyTorch eager differentiate); the speed-up over it is what coarsening buys\n"
          f"  backend: {backend}, the default (COARSEN_NB_BACKEND chooses another); times exclude "
          "compiling\n")
    print(f"{'kernel':18s} {'size':>7s} {'check':>6s} {'coarsen_nb':>11s} {'hand-written':>13s} {'L = 1':>10s} "
          f"{'speed-up vs L = 1':>18s}")
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
        t_op = _time(cn.coarsen(fn, wrt=mod.META["wrt"], backend=f.backend, max_soi=1).grad, args, budget=0.5)
        f.export(os.path.join(a.out, f"{name}_grad.py"), overwrite=True)
        print(f"{name:18s} {size:>7d} {'ok' if ok else 'WRONG':>6s} {_fmt(t_cn):>11s} {_fmt(t_hand):>13s} "
              f"{_fmt(t_op):>10s} {t_op / t_cn:>17.1f}x")
    example = KERNELS["piecewise_sum"]
    f = cn.coarsen(function(example), wrt=("x",))
    f.grad(*example.make_inputs(8, 0))
    print("\nThe symbolic derivative of piecewise_sum (one SOI, the loop as a closed-form sum):")
    for s in f.sois:
        for name, e in s.derivatives.items():
            print(f"  {_readable(name)} += {_readable(str(e))}")
    print(f"\nGenerated modules (backend {f.backend}: each needs only {backends.get(f.backend).needs}) written to "
          f"{os.path.abspath(a.out)}/")
    return 1 if failures else 0


def _readable(text: str) -> str:
    """SSA spellings as a user reads them: x[$k1.2]#1 -> x[k1], \\bar{$ret.2} -> dresult, \\bar{s.2} -> ds."""
    text = re.sub(r"\\bar\{\$ret\.\d+\}", "dresult", text)
    text = re.sub(r"\\bar\{([^{}]*)\}", r"d\1", text)
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

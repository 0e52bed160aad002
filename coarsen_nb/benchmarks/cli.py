"""``python -m coarsen_nb.benchmarks`` / ``coarsen-nb bench``: measure, then write tables, plot and RESULTS.md.

Two modes, because the two questions differ.  A full run answers "how fast,
against whom, at which sizes" and takes as long as the slow peers need (each
call capped by ``--timeout``, 60 s by default).  ``--quick`` answers "does the
harness still run and is anything WRONG" in under two minutes: one small size
per kernel, few repeats, a hard per-call cap for slow peers (1 s unless
``--timeout`` says otherwise), and a wall budget after which the remaining
measurements are recorded as skipped (methods run in the order of
:data:`ORDER`, so it is the slow peers that get skipped).  Quick outputs are
named ``*-quick.*`` so they never overwrite a full run's RESULTS.md.

Exit status: 0 when the run completed, 1 when the hand-written baseline
failed or a coarsen_nb method produced a WRONG gradient (both are bugs in
this project, not in a peer), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from coarsen_nb.benchmarks import harness, report
from coarsen_nb.benchmarks.measure import Config
from coarsen_nb.benchmarks.peers import BASELINE, METHODS

# Run order: cheap, decisive methods first; slow peers last, where a quick run's budget cuts.
ORDER = ("hand-written", "coarsen_nb", "coarsen_nb numba", "coarsen_nb L=1", "coarsen_nb per-block", "numba by hand",
         "jax best", "torch", "tangent", "autograd", "jax jit", "jax", "pytensor")

FULL = dict(timeout_s=60.0, budget_s=1.0, target_repeat_s=0.01, min_repeats=5, max_repeats=30)
QUICK = dict(timeout_s=1.0, budget_s=0.05, target_repeat_s=0.002, min_repeats=3, max_repeats=7,
             memory_max_call_s=0.05)
QUICK_WALL_BUDGET_S = 85.0   # leaves room for start-up, report and plot under 2 min on a loaded machine


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in " _-")


def parse_methods(text: str | None) -> list[str]:
    """Comma-separated method names, forgiving about case, spaces, '-' and '_' ('jax-jit', 'coarsen_nb-l=1')."""
    if not text:
        return list(ORDER)
    known = {_norm(m): m for m in METHODS}
    out = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = known.get(_norm(part))
        if m is None:
            raise ValueError(f"unknown method {part.strip()!r}; choose from: {', '.join(METHODS)}")
        out.append(m)
    return out


def select_kernels(text: str | None) -> dict:
    """The kernels registry (``coarsen_nb.kernels.KERNELS``), optionally narrowed to a comma-separated list."""
    from coarsen_nb.kernels import KERNELS

    if not text:
        return dict(KERNELS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)}; choose from: {', '.join(KERNELS)}")
    return {n: KERNELS[n] for n in names}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coarsen-nb bench",
                                description="Compare coarsen_nb with its peers on the workloads in kernels/.")
    p.add_argument("--quick", action="store_true",
                   help="smallest size per kernel, few repeats, slow peers capped hard (< 2 min)")
    p.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    p.add_argument("--methods", help=f"comma-separated methods (default: all): {', '.join(ORDER)}; "
                                      "the hand-written baseline always runs; also, on request only: "
                                      f"{', '.join(m for m in METHODS if m not in ORDER)}")
    p.add_argument("--timeout", type=float, help="per-call limit in seconds (default 60; 1 with --quick)")
    p.add_argument("--out", default=None,
                   help="output directory (default: benchmarks/ in a source checkout, else the current directory)")
    p.add_argument("--largest", action="store_true", help="only each kernel's largest size (full settings)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


_EXTRAS = "pip install 'coarsen-nb[bench]' for the peers, the progress bar and the plot"


def default_out() -> Path:
    """``coarsen_nb/benchmarks/`` of a source checkout; the current directory for an installed package.

    An installed ``coarsen_nb.benchmarks`` lives in site-packages, which is no place for a user's results.
    """
    here = Path(__file__).resolve().parent
    return here if (here.parents[1] / "pyproject.toml").is_file() else Path.cwd()


def _progress_bar(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        print(f"note: no progress bar: tqdm is not installed ({_EXTRAS})", file=sys.stderr)
        return None
    return tqdm(total=total, unit="run", dynamic_ncols=True, file=sys.stderr)


def run_benchmarks(kernels: dict, methods: list, cfg: Config, out: Path, quick: bool,
                   progress: bool = True, wall_budget_s: float | None = None, command: str = "",
                   log_path: str | None = None, largest: bool = False) -> dict:
    """Measure, add ratios, and write results JSON, plot and Markdown into ``out``; return paths and records.

    ``methods`` holds names from :data:`~coarsen_nb.benchmarks.peers.METHODS` or
    :class:`~coarsen_nb.benchmarks.peers.Method` objects (tests pass their own); the hand-written baseline is
    always added and runs first.
    """
    resolved = [METHODS[m] if isinstance(m, str) else m for m in methods]
    rank = {name: i for i, name in enumerate(ORDER)}
    resolved = [METHODS[BASELINE]] + sorted((m for m in resolved if m.name != BASELINE),
                                            key=lambda m: rank.get(m.name, len(ORDER)))
    tasks = harness.plan(kernels, resolved, quick, largest=largest)
    order = [m.name for m in resolved]
    tasks.sort(key=lambda t: order.index(t[3].name))   # stable: kernels keep their order per method
    bar = _progress_bar(len(tasks)) if progress else None

    def on_start(label):
        if bar is not None:
            bar.set_description_str(label[:60])

    def on_done(rec):
        if bar is not None:
            bar.update(1)

    records = harness.run(tasks, cfg, on_start=on_start, on_done=on_done, deadline_s=wall_budget_s,
                          log_path=log_path)
    if bar is not None:
        bar.close()
    harness.ratios(records)

    out.mkdir(parents=True, exist_ok=True)
    suffix = "-quick" if quick else ""
    info = report.machine_info()
    settings = dict(quick=quick, command=command, **{k: getattr(cfg, k) for k in (
        "timeout_s", "budget_s", "target_repeat_s", "min_repeats", "max_repeats", "rtol")})
    json_path = out / f"results{suffix}.json"
    json_path.write_text(json.dumps(dict(info=info, settings=settings, records=records), indent=1,
                                    default=str))
    plot_path = out / f"results{suffix}.png"
    if report.plot(records, plot_path) is None:
        print(f"note: no plot: matplotlib is not installed ({_EXTRAS})", file=sys.stderr)
        plot_path = None
    md_path = out / f"RESULTS{suffix}.md"
    md_path.write_text(report.results_markdown(records, info, settings, plot_path and plot_path.name))
    return dict(records=records, json=json_path, plot=plot_path, markdown=md_path)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        methods = parse_methods(args.methods)
        kernels = select_kernels(args.kernels)
    except ValueError as exc:
        parser.print_usage(sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = dict(QUICK if args.quick else FULL)
    if args.timeout is not None:
        if args.timeout <= 0:
            print("error: --timeout must be positive", file=sys.stderr)
            return 2
        base["timeout_s"] = args.timeout
    cfg = Config(**base)
    command = "python -m coarsen_nb.benchmarks " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                          else sys.argv[1:]))
    t0 = time.perf_counter()
    out = Path(args.out) if args.out else default_out()
    res = run_benchmarks(kernels, methods, cfg, out, args.quick, progress=not args.no_progress,
                         wall_budget_s=QUICK_WALL_BUDGET_S if args.quick else None, command=command.strip(),
                         largest=args.largest)
    records = res["records"]
    notes = report.Notes()
    print(report.gradient_table(records, notes, cfg.timeout_s))
    if notes.items:
        print("\n" + notes.markdown())
    wrote = ", ".join(str(p) for p in (res["markdown"], res["plot"], res["json"]) if p is not None)
    print(f"\n{len(records)} measurements in {time.perf_counter() - t0:.0f} s; wrote {wrote}")
    bad = [r for r in records if (r["method"] == BASELINE and r.get("status") != "ok")
           or (r["method"].startswith("coarsen_nb") and r.get("status") == "wrong")]
    for r in bad:
        print(f"FAILED: {r['kernel']}[{r['size']}] {r['method']}: {r.get('status')} {r.get('message', '')}",
              file=sys.stderr)
    return 1 if bad else 0

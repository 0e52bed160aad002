"""Turn measurement records into Markdown tables, a plot and ``RESULTS.md``.

Why ratios in every cell: absolute times depend on the machine (and this one
is shared and noisy); the ratio to the hand-written NumPy gradient measured in
the same run is what carries over.  A method that did not produce a trusted
time never gets a number: its cell says WRONG, ``> limit``, unsupported or the
error class, with the full message in the numbered notes under the table.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sys
from importlib import metadata

from coarsen_nb.benchmarks.peers import BASELINE, METHODS

PACKAGES = ("coarsen-nb", "numpy", "sympy", "numba", "autograd", "jax", "jaxlib", "torch", "tangent-ad",
            "pytensor", "matplotlib")


def fmt_time(t: float | None) -> str:
    if t is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t * 1e9:.3g} ns"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "–"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def fmt_ratio(x: float) -> str:
    if x < 10:
        return f"{x:.2f}×"
    return f"{x:,.0f}×"


class Notes:
    """Numbered footnotes, one per distinct (method, message)."""

    def __init__(self):
        self.items: list[str] = []

    def ref(self, method: str, message: str) -> str:
        text = f"{method}: {message}"
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def markdown(self) -> str:
        return "\n".join(f"{i}. {t}" for i, t in enumerate(self.items, 1))


def status_cell(rec: dict, notes: Notes, timeout_s: float | None) -> str | None:
    """The cell for a record without a trusted time, or None if it has one."""
    status = rec.get("status")
    msg = rec.get("message", "")
    if status == "ok":
        return None
    if status == "timeout":
        limit = f"> {timeout_s:g} s" if timeout_s else "> limit"
        return f"{limit} {notes.ref(rec['method'], msg)}"
    label = {"wrong": "**WRONG**", "unsupported": "unsupported", "unavailable": "not installed",
             "skipped": "skipped"}.get(status)
    if label is None:
        label = "error: " + (msg.split(":")[0] if msg else "?")
    return f"{label} {notes.ref(rec['method'], msg)}" if msg else label


def _methods(records):
    seen = []
    for r in records:
        if r["method"] not in seen:
            seen.append(r["method"])
    return [BASELINE] + [m for m in seen if m != BASELINE] if BASELINE in seen else seen


def _rows(records):
    rows = []
    for r in records:
        if (r["kernel"], r["size"]) not in rows:
            rows.append((r["kernel"], r["size"]))
    return sorted(rows, key=lambda ks: (ks[0], ks[1]))


def _table(records, notes, timeout_s, value, lead=()) -> str:
    """Rows kernel × size, a column per method (``value(record)``), after the ``lead`` columns:
    ``(header, cell(kernel, size))`` pairs."""
    methods = _methods(records)
    by = {(r["kernel"], r["size"], r["method"]): r for r in records}
    lines = ["| kernel | size | " + "".join(f"{h} | " for h, _ in lead) + " | ".join(methods) + " |",
             "|---|---:|" + "---:|" * (len(lead) + len(methods))]
    for kernel, size in _rows(records):
        cells = [cell(kernel, size) for _, cell in lead]
        for m in methods:
            r = by.get((kernel, size, m))
            if r is None:
                cells.append("")
                continue
            cells.append(status_cell(r, notes, timeout_s) or value(r))
        lines.append(f"| {kernel} | {size} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _time_cell(key):
    def cell(r):
        ratio = r.get(f"{key}_ratio")
        t = fmt_time(r.get(f"{key}_s"))
        return t if ratio is None or r["method"] == BASELINE else f"{t} ({fmt_ratio(ratio)})"
    return cell


def gradient_table(records, notes, timeout_s=None) -> str:
    """Rows kernel × size, columns methods, cells ``time (ratio to hand-written)``."""
    return _table(records, notes, timeout_s, _time_cell("grad"))


def forward_table(records, notes, timeout_s=None) -> str:
    return _table(records, notes, timeout_s, _time_cell("fwd"))


def first_call_table(records, notes, timeout_s=None) -> str:
    """Build time, first gradient call and (for compiling methods) compile = first − steady."""
    def cell(r):
        parts = [f"build {fmt_time(r.get('build_s'))}", f"first {fmt_time(r.get('first_grad_s'))}"]
        if r.get("compile_s") is not None:
            parts.append(f"compile {fmt_time(r['compile_s'])}")
        return ", ".join(parts)
    return _table(records, notes, timeout_s, cell)


def memory_table(records, notes, timeout_s=None) -> str:
    """Peak traced bytes and NumPy buffer allocations per gradient call (NumPy-based methods only)."""
    numpy_methods = ({m.name for m in METHODS.values() if m.numpy_based}
                     | {r["method"] for r in records if r.get("peak_bytes") is not None})
    mem = [r for r in records if r["method"] in numpy_methods]

    def cell(r):
        if r.get("peak_bytes") is None:
            note = r.get("memory_note")
            return f"{note.split(':')[0]} {notes.ref(r['method'], note)}" if note else "–"
        allocs = "n/a" if r.get("allocs") is None else f"{r['allocs']} arrays"
        return f"{fmt_bytes(r['peak_bytes'])}, {allocs}"
    return _table(mem, notes, timeout_s, cell) if mem else "(no NumPy-based measurements)"


def _with_vectorized(records):
    """The records of the (kernel, size) rows whose kernel has a vectorized forward."""
    rows = {(r["kernel"], r["size"]) for r in records if r.get("vec_fwd_s") is not None or r.get("vec_note")}
    return [r for r in records if (r["kernel"], r["size"]) in rows]


def vectorized_table(records, notes, timeout_s=None) -> str:
    """Rows kernel × size (kernels with a vectorized NumPy forward), cells gradient ÷ vectorized forward.

    The first column is the vectorized forward's own time, as measured beside the hand-written gradient;
    every ratio was measured in its method's worker, interleaved with that method's gradient.
    """
    mine = _with_vectorized(records)
    if not mine:
        return "(no kernel with a vectorized forward)"
    base = {(r["kernel"], r["size"]): r for r in mine if r["method"] == BASELINE}
    lead = (("vectorized forward", lambda k, n: fmt_time(base.get((k, n), {}).get("vec_fwd_s"))),)
    return _table(mine, notes, timeout_s, _vec_cell(notes), lead)


def _vec_cell(notes):
    def cell(r):
        if r.get("vec_note"):
            return f"**WRONG** {notes.ref('vectorized', r['vec_note'])}"
        ratio = r.get("grad_vec_ratio")
        return "–" if ratio is None else fmt_ratio(ratio)
    return cell


def memory_growth_table(records, notes, timeout_s=None) -> str:
    """Peak traced bytes of one gradient call ÷ size, for the kernels with a vectorized forward: a figure
    that stays put from size to size is memory O(size)."""
    mine = [r for r in _with_vectorized(records) if r["method"] in
            {m.name for m in METHODS.values() if m.numpy_based} | {r["method"] for r in records
                                                                  if r.get("peak_bytes") is not None}]

    def cell(r):
        if r.get("peak_bytes") is None:
            return "–"
        return f"{fmt_bytes(r['peak_bytes'])} ({r['peak_bytes'] / r['size']:,.0f} B per unit)"
    return _table(mine, notes, timeout_s, cell) if mine else "(no NumPy-based measurements)"


def machine_info() -> dict:
    """CPU model, core counts, memory, OS, Python and package versions, date."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
            mem = fmt_bytes(kb * 1024)
    except (OSError, StopIteration, ValueError):
        pass
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            versions[p] = "not installed"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return dict(date=_dt.datetime.now().astimezone().isoformat(timespec="seconds"), cpu=cpu,
                cores=os.cpu_count(), usable_cores=usable, memory=mem, os=platform.platform(),
                python=sys.version.split()[0], versions=versions)


def plot(records, path) -> str | None:
    """Gradient time vs size, one panel per kernel, one line per method (trusted times only).

    Returns ``None``, writing nothing, without matplotlib (a ``bench`` extra, not a dependency).
    """
    try:
        import matplotlib
    except ImportError:
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = sorted({r["kernel"] for r in records if r.get("kernel")})
    methods = _methods(records)
    ncol = min(4, max(1, len(kernels)))
    nrow = (len(kernels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    cmap = plt.get_cmap("tab10")
    style = {m: dict(color=cmap(i % 10), marker="os^vD<>ph*"[i % 10],
                     linestyle="--" if m == BASELINE else "-") for i, m in enumerate(methods)}
    for ax, kernel in zip(axes.flat, kernels, strict=False):
        for m in methods:
            pts = sorted((r["size"], r["grad_s"]) for r in records
                         if r["kernel"] == kernel and r["method"] == m and r.get("status") == "ok")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=m, **style[m])
        ax.set_title(kernel)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("size")
        ax.set_ylabel("gradient time (s)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(kernels):]:
        ax.axis("off")
    shown = {lab for ax in axes.flat for lab in ax.get_legend_handles_labels()[1]}
    handles = [plt.Line2D([], [], label=m, **style[m]) for m in methods if m in shown]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(5, len(handles)), frameon=False)
    fig.tight_layout(rect=(0, 0.06 if handles else 0, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def results_markdown(records, info: dict, settings: dict, plot_name: str | None) -> str:
    """The whole RESULTS.md text: where and how it was measured, then the tables."""
    notes = Notes()
    timeout_s = settings.get("timeout_s")
    v = info["versions"]
    parts = [
        "# coarsen_nb benchmarks" + (" (quick mode)" if settings.get("quick") else ""),
        "",
        f"Measured {info['date']} with `{settings.get('command', 'python -m coarsen_nb.benchmarks')}`.",
        "",
        f"- Machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable), "
        f"{info['memory'] or '? memory'}; {info['os']}",
        f"- Python {info['python']}; " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- Per-call limit {timeout_s:g} s; timing budget {settings.get('budget_s'):g} s per figure, "
        f"median of {settings.get('min_repeats')}–{settings.get('max_repeats')} repeats "
        "(timeit-style autorange); gradients checked against the hand-written one "
        f"(rtol {settings.get('rtol', 1e-6):g}) before timing.",
        "- Ratios are to the hand-written NumPy gradient on the same inputs in the same run "
        "(lower is better; 1× = hand-written speed). The same plain-loop function runs under every "
        "peer, its `np`/`math` rebound to the peer's.",
        "",
        "## Gradient time (ratio to hand-written)",
        "",
        gradient_table(records, notes, timeout_s),
        "",
    ]
    if _with_vectorized(records):
        parts += [
            "## Gradient ÷ vectorized forward",
            "",
            "For the kernels with a vectorized NumPy forward (`vectorized` in the kernel's module: the same "
            "value by whole-array operations), each method's gradient time over that forward's time, the two "
            "timed in alternating rounds in the method's worker (median of the paired ratios). The vectorized "
            "forward's time is the one measured beside the hand-written gradient.",
            "",
            vectorized_table(records, notes, timeout_s),
            "",
            "Peak traced memory of one gradient call, and per size unit (a figure that stays put as the "
            "size grows is memory linear in the size):",
            "",
            memory_growth_table(records, notes, timeout_s),
            "",
        ]
    parts += [
        "## Forward time (ratio to the plain function under NumPy)",
        "",
        forward_table(records, notes, timeout_s),
        "",
        "## Build, first call and compile time",
        "",
        "Compile time = first gradient call − steady-state gradient time, for methods that compile "
        "(coarsen_nb, `jax jit`, and the peers' best forms: `jax best`, `pytensor`, `numba by hand`); build = "
        "`coarsen()` / tangent's transformation / input conversion / the PyTensor graph and its gradient.",
        "",
        first_call_table(records, notes, timeout_s),
        "",
        "## Memory per gradient call (NumPy-based methods)",
        "",
        "Peak bytes above the starting level (tracemalloc: Python objects and NumPy buffers) and the "
        "number of NumPy array buffers allocated during one call, freed or not. Scalar loops allocate "
        "Python/NumPy scalars instead, which the array count does not see (the peak does).",
        "",
        memory_table(records, notes, timeout_s),
        "",
    ]
    if plot_name:
        parts += ["## Gradient time vs size", "", f"![gradient time vs size]({plot_name})", ""]
    if notes.items:
        parts += ["## Notes", "", notes.markdown(), ""]
    return "\n".join(parts)

"""The *Tuning* tab's numbers: the cost table, the sweep over L, and its plot.

* **Cost table** — the cost model (:mod:`coarsen_nb.lower.cost`) of the selection
  on screen, in human units (ops, arrays, kB/MB) with one line saying what each
  row counts; loops whose trip count is known only at run time are named by
  their source line.
* **Sweep** — the same figures at a few values of the size cap L (``SWEEP``,
  and the L on screen), and the measured gradient time on the user's last
  arguments.  It fills in *in the background*: one step per event-loop turn,
  each a selection and a short timing, until ``BACKGROUND_BUDGET_S`` is spent,
  so the notebook stays responsive; *measure* refines the times.  Speed-ups
  are against L = 1 (operator-level AD): t(L = 1) / t(L), so L = 1 itself is
  1.00× by definition, not a noisy second measurement.
* **Plot** — an inline SVG (no plotting library): L on the x-axis; derivative
  ops, allocations and measured time, each scaled to its own maximum (the
  legend gives the maxima); the L on screen is the dashed marker.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass

from coarsen_nb.errors import CoarsenError
from coarsen_nb.notebook.format import fmt_number, fmt_seconds

#: The L values the sweep visits (None: no cap, shown as ∞).
SWEEP = (1, 2, 4, 8, 16, None)
#: Seconds of kernel time the background sweep may take (selections and timings together).
BACKGROUND_BUDGET_S = 2.0
COLOURS = {"derivative ops": "#1f77b4", "allocations": "#ff7f0e", "gradient time": "#2ca02c"}
_LOOP_LINE = re.compile(r"^\s*(\S+\.head): loop .*, line (\d+)\s*$", re.M)


@dataclass
class Point:
    """The figures of one L."""

    L: int | None
    sois: int
    derivative_ops: float
    allocations: float
    seconds: float | None = None


def order(L: int | None) -> float:
    return float("inf") if L is None else L


def fmt_L(L: int | None) -> str:
    return "∞" if L is None else str(L)


def fmt_bytes(n: float) -> str:
    """Bytes as B, kB or MB (powers of 1000)."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{fmt_number(n)} B"


# -- the cost table ------------------------------------------------------------------

#: (key, row title, what the row counts).
ROWS = (
    ("sois", "SOIs", "segments each differentiated as one symbolic expression and run as one fused step"),
    ("forward_ops", "forward work", "arithmetic operations of the forward sweep of one gradient call"),
    ("derivative_ops", "derivative work", "operations of the reverse sweep (the VJP) of one gradient call"),
    ("allocations", "allocations", "new arrays a gradient call creates (temporaries, tape); scalars, views "
                                   "and in-place writes are not allocations"),
    ("bytes_moved", "memory traffic", "bytes array statements read and write (8 per element); scalar code moves none"),
)


def cost_table(cost: dict, gated_text: str, baseline: dict | None = None) -> str:
    """The cost model as an explained HTML table (``cost``: ``Cost.as_dict()``)."""
    th = "<th style='padding:2px 10px;text-align:right'>"
    head = f"<tr><th style='text-align:left'>cost model, per gradient call</th>{th}this selection</th>"
    head += (f"{th}L = 1</th>" if baseline is not None else "") + "<th></th></tr>"
    rows = []
    for key, title, why in ROWS:
        if key not in cost:
            continue
        cells = f"<td>{title}</td>{_cell(key, cost[key])}"
        if baseline is not None:
            cells += _cell(key, baseline.get(key, 0))
        rows.append(f"<tr>{cells}<td style='color:#666;font-size:90%'>{html.escape(why)}</td></tr>")
    notes = assumptions(cost, gated_text)
    return (f"<table class='coarsen-cost' style='border-collapse:collapse'>{head}{''.join(rows)}</table>"
            + (f"<div style='color:#666;font-size:90%'>{notes}</div>" if notes else ""))


def _cell(key: str, value) -> str:
    td = "<td style='padding:2px 10px;text-align:right;white-space:nowrap'>"
    if key == "bytes_moved":
        return f"{td}{fmt_bytes(value)}</td>"
    unit = {"forward_ops": " ops", "derivative_ops": " ops", "allocations": " arrays"}.get(key, "")
    return f"{td}{fmt_number(value)}{unit}</td>"


def assumptions(cost: dict, gated_text: str) -> str:
    """What the model had to assume (data-dependent trip counts and masks), in words; HTML-escaped."""
    lines = dict(_LOOP_LINE.findall(gated_text))
    out = []
    for label, why in sorted((cost.get("unknown_trips") or {}).items()):
        where = f"the loop on line {lines[label]}" if label in lines else "a loop"
        out.append(f"{where}: {html.escape(str(why))}; counted as one iteration")
    masks = cost.get("unknown_masks") or {}
    if masks:
        out.append(f"{len(masks)} data-dependent mask{'s' if len(masks) > 1 else ''} assumed true on half "
                   "of the elements")
    return "; ".join(out)


# -- the sweep -------------------------------------------------------------------------

def best_times(fns: dict, args, rounds: int = 5) -> dict:
    """Best seconds per call of each function, measured in alternating rounds.

    Alternating spreads a busy machine's noise over all contenders instead of
    charging it to whichever ran during the busy spell.
    """
    numbers = {}
    for key, fn in fns.items():
        fn(*args)  # warm-up: first-call specialization is not what we measure
        number = 1
        while True:
            start = time.perf_counter()
            for _ in range(number):
                fn(*args)
            if time.perf_counter() - start > 0.02 or number >= 10_000:
                break
            number *= 10
        numbers[key] = number
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for key, fn in fns.items():
            start = time.perf_counter()
            for _ in range(numbers[key]):
                fn(*args)
            best[key] = min(best[key], (time.perf_counter() - start) / numbers[key])
    return best


class Sweep:
    """The points of one (R, per-block) setting, filled one L at a time.

    ``select(L)`` returns the ``Coarsened`` for that L (the view's memo);
    ``args`` are the arguments to time the gradient on (None: costs only).
    """

    def __init__(self, select, args, extra: int | None = None) -> None:
        self.select, self.args = select, args
        self.points: dict = {}
        self.spent = 0.0        # seconds the background steps took so far
        self.todo = sorted(set(SWEEP) | ({extra} if extra not in SWEEP else set()), key=order)

    @property
    def done(self) -> bool:
        return not self.todo

    def add(self, L, compiled, timed: bool = False, rounds: int = 2) -> Point:
        """The point of ``compiled`` (the selection for ``L``): its cost, and its time if ``timed``."""
        point = self.points.get(L)
        if point is None:
            cost = compiled.cost
            point = self.points[L] = Point(L, cost.sois, cost.derivative_ops, cost.allocations)
        if timed and self.args is not None:
            point.seconds = best_times({L: compiled.grad}, self.args, rounds=rounds)[L]
        return point

    def step(self, rounds: int = 2) -> None:
        """Select, cost and (with arguments) time the next L."""
        L = self.todo.pop(0)
        self.add(L, self.select(L), timed=True, rounds=rounds)

    def costs(self) -> None:
        """The cost of every L still to do, without timing it (which leaves it to do): what the background
        fills in where timing an L first compiles it for seconds (numba), which would hold up the kernel.
        An L with no selection (a CoarsenError) is dropped, as a timed step drops it."""
        for L in list(self.todo):
            try:
                self.add(L, self.select(L))
            except CoarsenError:
                self.todo.remove(L)

    def speedup(self, L) -> float | None:
        base, here = self.points.get(1), self.points.get(L)
        if base is None or here is None or base.seconds is None or here.seconds is None:
            return None
        return 1.0 if L == 1 else base.seconds / here.seconds


def sweep_table(sweep: Sweep, current) -> str:
    """One row per L: SOIs, derivative ops, allocations, gradient time, speed-up vs L = 1."""
    th = "<th style='padding:2px 10px;text-align:right'>"
    head = (f"<tr>{th}L</th>{th}SOIs</th>{th}derivative ops</th>{th}allocations</th>"
            f"{th}gradient time</th>{th}speed-up vs L = 1</th></tr>")
    rows = []
    for L in sorted(sweep.points, key=order):
        p = sweep.points[L]
        s = sweep.speedup(L)
        style = " style='font-weight:bold;background:#eef'" if L == current else ""
        td = "<td style='padding:2px 10px;text-align:right'>"
        rows.append(
            f"<tr{style}>{td}{fmt_L(L)}</td>{td}{p.sois}</td>{td}{fmt_number(p.derivative_ops)}</td>"
            f"{td}{fmt_number(p.allocations)}</td>{td}{fmt_seconds(p.seconds) if p.seconds else '—'}</td>"
            f"{td}{f'{s:.2f}×' if s is not None else '—'}</td></tr>")
    return f"<table class='coarsen-sweep' style='border-collapse:collapse'>{head}{''.join(rows)}</table>"


def plot_svg(sweep: Sweep, current, width: int = 560, height: int = 190) -> str:
    """The sweep as an inline SVG line chart; ``current`` (the L on screen) is marked."""
    Ls = sorted(sweep.points, key=order)
    if not Ls:
        return "<div class='coarsen-plot'><i>measuring the cost at a few L…</i></div>"
    left, right, top, bottom = 40, 150, 22, 28
    w, h = width - left - right, height - top - bottom
    x = {L: left + (w * i / max(1, len(Ls) - 1) if len(Ls) > 1 else w / 2) for i, L in enumerate(Ls)}
    series = {
        "derivative ops": [(L, sweep.points[L].derivative_ops) for L in Ls],
        "allocations": [(L, sweep.points[L].allocations) for L in Ls],
        "gradient time": [(L, sweep.points[L].seconds) for L in Ls if sweep.points[L].seconds],
    }
    parts = [f"<svg class='coarsen-plot' xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
             f"viewBox='0 0 {width} {height}' style='max-width:100%;height:auto;font:11px sans-serif'>",
             f"<text x='{left}' y='13'>relative to each series' maximum, by L (max SOI size)</text>",
             f"<line x1='{left}' y1='{top + h}' x2='{left + w}' y2='{top + h}' stroke='#999'/>",
             f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + h}' stroke='#999'/>",
             f"<text x='{left - 6}' y='{top + 4}' text-anchor='end'>1</text>",
             f"<text x='{left - 6}' y='{top + h + 4}' text-anchor='end'>0</text>"]
    for L in Ls:
        parts.append(f"<text x='{x[L]:.1f}' y='{top + h + 16}' text-anchor='middle'>{fmt_L(L)}</text>")
    if current in x:
        parts.append(f"<line class='coarsen-plot-current' x1='{x[current]:.1f}' y1='{top}' x2='{x[current]:.1f}' "
                     f"y2='{top + h}' stroke='#555' stroke-dasharray='4 3'/>")
    legend_y = top
    for name, pts in series.items():
        colour = COLOURS[name]
        highest = max((v for _, v in pts), default=0)
        peak = highest or 1   # an all-zero series lies on the axis
        coords = " ".join(f"{x[L]:.1f},{top + h - h * v / peak:.1f}" for L, v in pts)
        if pts:
            parts.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{coords}'/>")
            parts += [f"<circle cx='{x[L]:.1f}' cy='{top + h - h * v / peak:.1f}' r='3' fill='{colour}'/>"
                      for L, v in pts]
        peak_text = (fmt_seconds(highest) if name == "gradient time" else fmt_number(highest)) if pts \
            else "not measured"
        parts.append(f"<rect x='{left + w + 12}' y='{legend_y}' width='10' height='10' fill='{colour}'/>"
                     f"<text x='{left + w + 26}' y='{legend_y + 9}'>{name}</text>"
                     f"<text x='{left + w + 26}' y='{legend_y + 21}' fill='#666'>max {peak_text}</text>")
        legend_y += 34
    parts.append("</svg>")
    return "".join(parts)

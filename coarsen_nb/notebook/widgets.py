"""The Jupyter view of a compilation: five tabs built from plain data.

*Derivatives* (LaTeX via MathJax), *SOI graph* (DOT rendered in the browser by
Graphviz compiled to WebAssembly, from ``graphviz-anywidget``: no system
Graphviz binary), *Tuning* (L, R and per-block; each change re-selects through
``Coarsened.retune`` and redraws the other tabs), *Code* (the generated module
and an export box) and *IR* (SSA and gated SSA).

The view reads only what the compiled object exposes (``sois``,
``discontinuities``, ``soi_graph()``, ``cost``, ``source``, ``ssa``,
``gated``); the only calls it makes are ``retune`` and, for *measure*,
``grad``.
"""

from __future__ import annotations

import asyncio
import html
import time
from pathlib import Path

import ipywidgets as w

from coarsen_nb import backends
from coarsen_nb.errors import CoarsenError
from coarsen_nb.notebook.chunking import chunking_html
from coarsen_nb.notebook.code import ExportBox, ir_html, source_html
from coarsen_nb.notebook.derivatives import derivatives_html
from coarsen_nb.notebook.format import effective_reuse, fmt_knob, fmt_seconds, fmt_wrt
from coarsen_nb.notebook.graph_view import GraphView
from coarsen_nb.notebook.ir_names import readable_gated, readable_ssa
from coarsen_nb.notebook.names import context_of
from coarsen_nb.notebook.tuning import BACKGROUND_BUDGET_S, Sweep, best_times, cost_table, plot_svg, sweep_table

#: Top of the L slider, meaning "no cap" (shown as ∞), and of the R slider.
KNOB_MAX = 64
#: Seconds of quiet after the last slider change before retuning.
DEBOUNCE_S = 0.3
TAB_TITLES = ("Derivatives", "SOI graph", "Tuning", "Code", "IR")


class CoarsenView:
    """The tabs for one bound function; ``widget`` is what the magic displays.

    Parameters
    ----------
    bound : coarsen_nb.notebook.bound.Bound
        Retuning swaps ``bound.compiled``, so the user's name follows the view.
    """

    def __init__(self, bound, *, cached: bool = False, exported: Path | None = None) -> None:
        self.bound = bound
        self._selections = {_knobs(bound.compiled): bound.compiled}
        c = bound.compiled
        self.header = w.HTML()
        self.chunking = w.HTML()        # how the last call on Dask arrays was chunked (empty: it was not)
        self._note = " · from cache" if cached else ""
        if exported is not None:
            self._note += f" · exports to <code>{html.escape(str(exported))}</code>"

        # width 100%: a flex item would otherwise grow to its widest equation;
        # margin 0: 100% plus the default margin is wider than the tab.
        self.derivatives = w.HTMLMath(layout=w.Layout(width="100%", min_width="0", margin="0"))
        self.graph_view = GraphView()
        self.graph = self.graph_view.widget
        self.cost = w.HTML()
        self.measured = w.HTML()
        self.plot = w.HTML()
        self.sweep_table = w.HTML()
        self._sweeps: dict[tuple, Sweep] = {}     # (R, per block) -> the sweep over L
        self._sweep_handle = None
        self.status = w.HTML()
        self.max_soi = _slider("L (max SOI size)", KNOB_MAX if c.max_soi is None else c.max_soi)
        self.reuse = _slider("R (reuse threshold)", effective_reuse(c))
        self.per_block = w.ToggleButton(value=bool(c.per_block), description="per block", icon="th")
        self.measure_button = w.Button(description="measure", icon="clock-o")
        self.source = w.HTML()
        self.export_box = ExportBox(lambda: self.bound.compiled, f"{c.name}_coarsened.py")
        self.ir = w.HTML()

        self._debounce = Debounce(DEBOUNCE_S, self._retune)
        for control in (self.max_soi, self.reuse, self.per_block):
            control.observe(lambda _: self._debounce(), names="value")
        self.measure_button.on_click(lambda _: self.measure())

        tuning = w.VBox([
            _slider_row(self.max_soi, _max_soi_value), _slider_row(self.reuse, _reuse_value),
            w.HBox([self.per_block, self.measure_button]),
            self.status, self.measured, self.plot, self.sweep_table, self.cost,
        ], layout=w.Layout(width="100%", overflow="auto"))
        code = w.VBox([self.export_box.widget, self.source])
        self.tabs = w.Tab(children=[self.derivatives, self.graph, tuning, code, self.ir])
        for i, title in enumerate(TAB_TITLES):
            self.tabs.set_title(i, title)
        self.widget = w.VBox([self.header, self.chunking, self.tabs])
        # Stable CSS hooks for the browser test and for users' own styling.
        for widget, cls in ((self.widget, "coarsen-view"), (self.header, "coarsen-header"),
                            (self.chunking, "coarsen-chunking"),
                            (self.derivatives, "coarsen-derivatives"),
                            (self.max_soi, "coarsen-L"), (self.reuse, "coarsen-R"),
                            (self.measure_button, "coarsen-measure"), (self.plot, "coarsen-plot-box"),
                            (self.status, "coarsen-status")):
            widget.add_class(cls)
        self._render()
        bound.on_specialize(self._render)
        bound.on_call(self._show_chunking)

    # -- tuning ---------------------------------------------------------------

    def selection(self, knobs: tuple):
        """The ``Coarsened`` for ``knobs`` (L, R, per block), selected once and remembered."""
        compiled = self._selections.get(knobs)
        if compiled is None:
            compiled = self.bound.compiled.retune(max_soi=knobs[0], reuse=knobs[1], per_block=knobs[2])
            self._selections[knobs] = compiled
        return compiled

    def _retune(self) -> None:
        """Select SOIs again for the sliders' knobs and redraw every tab."""
        knobs = (_max_soi_value(self.max_soi), _reuse_value(self.reuse), self.per_block.value)
        if knobs not in self._selections:
            # Said before the work starts: the comm sends it while the kernel compiles.
            self.status.value = (f"<i class='coarsen-compiling'>⏳ compiling the selection for "
                                 f"L={fmt_knob(knobs[0])}, R={knobs[1]}…</i>")
        try:
            compiled = self.selection(knobs)
        except CoarsenError as err:
            self.status.value = f"<pre style='color:#b91c1c'>{html.escape(str(err))}</pre>"
            return
        except Exception as err:
            # A timer callback's exception only reaches the kernel's log:
            # say it where the user is looking, then let it propagate.
            self.status.value = (
                f"<pre style='color:#b91c1c'>internal error while retuning: "
                f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>"
            )
            raise
        self.bound.compiled = compiled
        self._render()

    def measure(self) -> dict[str, float] | None:
        """Time the gradient on the user's last arguments at every L of the sweep, and here.

        The speed-up is against L = 1: t(L = 1) / t(here), exactly 1.00× at L = 1.
        """
        args = self.bound.last_args
        if args is None:
            self.measured.value = f"<i>call {self.bound.compiled.name}(…) or .grad(…) first</i>"
            return None
        current = self.bound.compiled
        sweep = self._sweep(current, fresh_args=True)
        while not sweep.done:
            sweep.step()
        baseline = self.selection((1, *_knobs(current)[1:]))
        fns = {"this selection": current.grad}
        if baseline is not current:
            fns["L = 1"] = baseline.grad
        times = best_times(fns, args)
        times.setdefault("L = 1", times["this selection"])
        for L, key in ((1, "L = 1"), (current.max_soi, "this selection")):
            if L in sweep.points:
                sweep.points[L].seconds = times[key]
        ratio = 1.0 if baseline is current else times["L = 1"] / times["this selection"]
        self.measured.value = (
            "<b>measured gradient time</b> (best of 5): "
            + ", ".join(f"{k} {fmt_seconds(v)}" for k, v in times.items())
            + f" — <b class='coarsen-speedup'>{ratio:.2f}×</b> speed-up against L = 1"
            + (" (this is L = 1)" if baseline is current else "")
        )
        self.cost.value = cost_table(current.cost.as_dict(), current.gated, baseline.cost.as_dict())
        self._show_sweep()
        return times

    # -- the sweep over L ---------------------------------------------------------

    def _sweep(self, c, fresh_args: bool = False) -> Sweep:
        key = _knobs(c)[1:]
        sweep = self._sweeps.get(key)
        args = self.bound.last_args
        if sweep is None or (fresh_args and sweep.args is None and args is not None):
            sweep = Sweep(lambda L: self.selection((L, *key)), args, extra=c.max_soi)
            self._sweeps[key] = sweep
        elif c.max_soi not in sweep.points and c.max_soi not in sweep.todo:
            sweep.todo.append(c.max_soi)
        return sweep

    def _start_sweep(self) -> None:
        """Fill the sweep in the background, one L per event-loop turn, within the budget."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # a script or a test: the sweep fills on "measure"
        if self._sweep_handle is None:
            self._sweep_handle = loop.call_later(0.05, self._sweep_tick)

    def _sweep_tick(self) -> None:
        self._sweep_handle = None
        sweep = self._sweep(self.bound.compiled)
        if sweep.done or sweep.spent >= BACKGROUND_BUDGET_S:
            return
        if _compiles(self.bound.compiled):
            # Timing an L would first compile it with Numba, seconds each (1.3-3 s for black_scholes, cold),
            # holding up the kernel unasked: the costs now, the times when the user presses "measure".
            sweep.costs()
            self._show_sweep()
            return
        start = time.perf_counter()
        try:
            sweep.step()
        except CoarsenError:
            pass  # that L has no selection; the table shows the others
        sweep.spent += time.perf_counter() - start
        self._show_sweep()
        if not sweep.done and sweep.spent < BACKGROUND_BUDGET_S:
            self._sweep_handle = asyncio.get_running_loop().call_later(0.01, self._sweep_tick)

    def _show_sweep(self) -> None:
        c = self.bound.compiled
        sweep = self._sweep(c)
        sweep.add(c.max_soi, c)   # the L on screen is always on the plot (its cost at once, time later)
        self.plot.value = plot_svg(sweep, c.max_soi)
        note = ""
        if not sweep.done and _compiles(c):
            note = (f"<div style='color:#666'>backend {html.escape(c.backend)}: each L is compiled before it "
                    "is timed (seconds each), so press <b>measure</b> to time every L</div>")
        elif not sweep.done:
            note = ("<div style='color:#666'>measuring in the background… press <b>measure</b> "
                    "to time every L now</div>")
        elif sweep.args is None:
            note = "<div style='color:#666'>call the function on data to time the gradient at each L</div>"
        self.sweep_table.value = sweep_table(sweep, c.max_soi) + note

    # -- drawing --------------------------------------------------------------

    def _render(self) -> None:
        c = self.bound.compiled
        knobs = (f"L={fmt_knob(c.max_soi)}, R={_knobs(c)[1]}" + (", per block" if c.per_block else "")
                 + f", backend {c.backend}")
        head = f"<b>{html.escape(c.name)}</b>: gradient w.r.t. {html.escape(fmt_wrt(c.wrt))} · "
        self.ir.value = ir_html(readable_ssa(c.ssa_function), readable_gated(c.gated_function))
        self.measured.value = ""
        self._show_chunking()
        try:
            sois, discontinuities, parts = c.sois, c.discontinuities, c.module_parts
        except CoarsenError:
            # Not called yet: SOIs depend on the argument types.  Bound redraws
            # this view after the first call.
            self._render_waiting(c, head + f"SOIs chosen on the first call ({knobs}){self._note}")
            return
        n = len(sois)
        self.header.value = head + f"{n} SOI{'s' if n != 1 else ''} ({knobs}){self._note}"
        if discontinuities:
            k = len(discontinuities)
            self.header.value += (
                f" · <span style='color:#b45309'>⚠ {k} parametric discontinuit{'ies' if k > 1 else 'y'}</span>"
            )
        self.derivatives.value = derivatives_html(sois, discontinuities, context_of(c, sois))
        self.graph_view.show(c.soi_graph())
        self.status.value = (f"{n} SOI{'s' if n != 1 else ''} with {knobs}; "
                             f"<code>{html.escape(c.name)}</code> now uses this selection")
        self.cost.value = cost_table(c.cost.as_dict(), c.gated)
        self.source.value = source_html(parts)
        self._show_sweep()
        self._start_sweep()

    def _show_chunking(self) -> None:
        self.chunking.value = chunking_html(self.bound.compiled)

    def _render_waiting(self, c, header: str) -> None:
        self.header.value = header
        call = f"{html.escape(c.name)}(…)"
        waiting = (
            f"<i>{html.escape(c.name)} is specialized to its argument types on the first call: "
            f"call <code>{call}</code> or <code>{html.escape(c.name)}.grad(…)</code> and this view fills in.</i>"
        )
        self.derivatives.value = waiting
        self.graph_view.show_text(f'digraph {{ waiting [shape=plaintext label="call {c.name}(...) first"] }}')
        self.status.value = f"<code>{html.escape(c.name)}</code> uses this selection from its next call"
        self.cost.value = ""
        self.source.value = waiting


def _compiles(c) -> bool:
    """Whether ``c``'s backend compiles each function on its first call (numba): timing a new L waits for that."""
    return backends.get(c.backend).compiles


class Debounce:
    """Call ``fn`` once, ``delay`` seconds after the last of a burst of triggers.

    Inside a kernel the comm handlers run on its asyncio loop, so a timer on
    that loop fires between messages, never concurrently with user code.
    Without a running loop (a plain script, the tests) it calls at once.
    """

    def __init__(self, delay: float, fn) -> None:
        self.delay, self.fn = delay, fn
        self._handle = None

    def __call__(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fn()
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle = loop.call_later(self.delay, self.fn)


def _slider(description: str, value: int) -> w.IntSlider:
    # readout=False: the label beside it shows ∞ at the top of L.
    return w.IntSlider(
        value=max(1, min(value, KNOB_MAX)), min=1, max=KNOB_MAX,
        description=description, readout=False, continuous_update=False,
        style={"description_width": "150px"}, layout=w.Layout(width="480px"),
    )


def _slider_row(slider: w.IntSlider, value) -> w.HBox:
    label = w.Label(fmt_knob(value(slider)))
    slider.observe(lambda _: setattr(label, "value", fmt_knob(value(slider))), names="value")
    return w.HBox([slider, label])


def _max_soi_value(slider: w.IntSlider) -> int | None:
    return None if slider.value >= KNOB_MAX else slider.value


def _reuse_value(slider: w.IntSlider) -> int:
    return slider.value


def _knobs(c) -> tuple:
    return (c.max_soi, effective_reuse(c), bool(c.per_block))

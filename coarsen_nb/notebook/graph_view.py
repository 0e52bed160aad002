"""The *SOI graph* tab: the partition drawn in the browser, fitted to its box.

Graphviz compiled to WebAssembly (``graphviz-anywidget``) lays the DOT out in
the browser, so no ``dot`` binary is needed.  Three things make it readable:

* **it fits its box**: the drawn SVG keeps its ``viewBox`` and is scaled down
  by CSS (``max-width: 100%``, bounded height), so a graph wider than the tab
  shows whole on open instead of its top-left corner; small graphs keep their
  natural size;
* **a toolbar**: *Fit* (the widget's zoom reset: back to the whole graph),
  *Freeze scroll* (the mouse wheel scrolls the page instead of zooming), and a
  search box that highlights the nodes whose label matches;
* **two levels**: *statements* (default; one node per source line, see
  :mod:`coarsen_nb.soi.statements`) or *SSA values* (one node per SSA value,
  with the compiler's copies, μ, η and γ), both from ``Coarsened.soi_graph()``.
"""

from __future__ import annotations

import html

import ipywidgets as w

#: CSS scoping the fit to this view's graph only.
FIT_CSS = (
    "<style>.coarsen-graph svg{max-width:100%;height:auto;max-height:560px;display:block;margin:auto}"
    ".coarsen-graph .widget-hbox{flex-wrap:wrap}</style>"
)
LEVELS = (("statements", "statement"), ("SSA values", "ssa"))


class GraphView:
    """The graph tab; ``widget`` goes into the tabs, ``show(graph)`` draws a ``SOIGraph``."""

    def __init__(self) -> None:
        self.level = w.ToggleButtons(options=LEVELS, value="statement", description="nodes",
                                     style={"button_width": "110px"})
        self.level.add_class("coarsen-graph-level")
        self._graph = None
        self._dot = None
        try:
            from graphviz_anywidget import graphviz_widget
        except ImportError:
            note = w.HTML("<i>pip install graphviz-anywidget to draw this graph; its DOT text:</i>")
            self._text = w.HTML()
            self.widget = w.VBox([self.level, note, self._text])
        else:
            box = graphviz_widget("digraph {}", controls=["zoom", "search"])
            controls, self._dot = box.children[-2], box.children[-1]
            reset = controls.children[0]
            reset.description, reset.tooltip, reset.icon = "Fit", "show the whole graph", "arrows-alt"
            controls.layout.flex_flow = "row wrap"
            self.widget = w.VBox([w.HTML(FIT_CSS), self.level, controls, self._dot],
                                 layout=w.Layout(width="100%", overflow="hidden"))
        self.widget.add_class("coarsen-graph")
        self.level.observe(lambda _: self._draw(), names="value")

    def show(self, graph) -> None:
        """Draw ``graph`` (a ``SOIGraph``: statement level, ``.ssa`` the SSA level)."""
        self._graph = graph
        self._draw()

    def show_text(self, dot: str) -> None:
        """Draw a DOT text as it is (the placeholder before the first call)."""
        self._graph = None
        self._set(dot)

    def _draw(self) -> None:
        if self._graph is None:
            return
        ssa = getattr(self._graph, "ssa", None)
        self._set((ssa if self.level.value == "ssa" and ssa is not None else self._graph).source)

    def _set(self, dot: str) -> None:
        if self._dot is not None:
            self._dot.dot_source = dot
        else:
            self._text.value = f"<pre>{html.escape(dot)}</pre>"

    @property
    def dot_source(self) -> str:
        """The DOT text on screen (for tests)."""
        return self._dot.dot_source if self._dot is not None else html.unescape(self._text.value[5:-6])

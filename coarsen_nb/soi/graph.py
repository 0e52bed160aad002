"""The SOI graph: the gated def-use graph, partitioned into the selected SOIs.

Nodes are the SSA values of the gated tree (parameters, Lets, γ, μ, η), each
labelled with its operation, SSA name, source line and number of uses (the
quantity the reuse threshold R is compared with).  Edges are def-use.  Each
SOI is a filled cluster (colours from a fixed palette, by SOI index); real
branches (:class:`~coarsen_nb.plan.CondStep`) and iterated loops
(:class:`~coarsen_nb.plan.IterStep`) are clusters of their own around the
SOIs inside them, so the picture shows the same nesting the generated code
has.  Highlighted:

* boundary values — an SOI output read by another step, or an opaque
  primitive's result (bold blue outline): what is materialized between SOIs;
* γ / μ / η — diamond / inverted house / house shapes;
* parametric discontinuities — red (the branch or loop test, or the
  ``min``/``max``/``abs`` call, that :mod:`coarsen_nb.phi.discontinuities`
  reported).

Values a kernel absorbed (inlined into its SymPy body, not outputs) are
placed in the SOI of their users; the text is deterministic (node ids
``v1, v2, ...`` in tree order), so it can be compared as golden text.
"""

from __future__ import annotations

import graphviz

from coarsen_nb import ir
from coarsen_nb.phi.gate import GatedFunction, If, Let
from coarsen_nb.phi.lift import use_counts
from coarsen_nb.plan import CondStep, KernelStep, Plan, PrimStep
from coarsen_nb.rules.table import PRIMITIVES
from coarsen_nb.soi.statements import SOIGraph, statement_graph

PALETTE = ("#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc", "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc",
           "#c9daf8", "#b6d7a8", "#ffe599", "#b4a7d6")
_SHAPES = {"γ": "diamond", "μ": "invhouse", "η": "house"}


def soi_graph(plan: Plan, gated: GatedFunction, wrt: tuple[str, ...], discontinuities) -> SOIGraph:
    """A ``graphviz.Digraph`` of ``plan`` 's SOI partition: one node per source statement.

    The statement level (:mod:`coarsen_nb.soi.statements`) is what a user reads;
    ``.ssa`` is the SSA-level graph this module draws, one node per value.

    Example
    -------
    >>> import coarsen_nb as cn
    >>> f = cn.coarsen("def f(x):\\n    return x * x\\n")
    >>> _ = f.grad(1.0)
    >>> g = f.soi_graph()
    >>> "cluster_soi1" in g.source and "cluster_soi1" in g.ssa.source
    True
    """
    builder = _Builder(plan, gated, tuple(wrt), list(discontinuities))
    ssa = builder.build()
    dot = statement_graph(builder)
    dot.ssa = ssa
    return dot


class _Builder:
    def __init__(self, plan: Plan, gated: GatedFunction, wrt: tuple[str, ...], discs: list):
        self.plan, self.g, self.wrt = plan, gated, wrt
        self.uses = use_counts(gated)
        self.defs: dict[str, tuple[str, ir.Expr | None, int]] = {}   # name -> (op, value, line)
        self.order: list[str] = []
        self.users: dict[str, list[str]] = {}
        self.conds: dict[str, int] = {}          # If/Loop condition names -> line of the test
        for p in gated.params:
            self._def(p, "input", None, 0)
        self._collect(gated.body)
        self.ids = {n: f"v{k}" for k, n in enumerate(self.order, start=1)}
        self.home: dict[str, str] = {}            # name -> cluster key
        self.boundary: set[str] = set()
        self.red = self._discontinuous(discs)

    # -- the def-use graph -------------------------------------------------------------

    def _def(self, name: str, op: str, value, line: int) -> None:
        if name not in self.defs:
            self.order.append(name)
        self.defs[name] = (op, value, line)
        if value is not None:
            for u in dict.fromkeys(ir.names_used(value)):
                self.users.setdefault(u, []).append(name)

    def _collect(self, nodes) -> None:
        for n in nodes:
            if isinstance(n, Let):
                self._def(n.name, _op(n.value), n.value, n.line)
            elif isinstance(n, If):
                self._collect(n.then)
                self._collect(n.orelse)
                self.conds[n.cond] = n.line
                for gm in n.gammas:
                    self._def(gm.name, "γ", gm.value, gm.line)
            else:
                for m in n.mus:
                    self._def(m.name, "μ", m.value, m.line)
                self._collect(n.header)
                self.conds[n.cond] = n.line
                self._collect(n.body)
                # The loop test belongs with the loop's state (the μs) when the loop is absorbed.
                self.users.setdefault(n.cond, []).extend(m.name for m in n.mus)
                for e in n.etas:
                    self._def(e.name, "η", e.value, e.line)

    def _discontinuous(self, discs) -> set[str]:
        lines = {(d.line, d.kind) for d in discs}
        out = set()
        for name, (_, value, line) in self.defs.items():
            if name in self.conds and ((line, "branch") in lines or (line, "loop exit") in lines):
                out.add(name)
            elif value is not None and (line, "min/max") in lines and _has_kink(value):
                out.add(name)
        return out

    # -- clusters ----------------------------------------------------------------------

    def _place(self, steps, path: tuple, clusters: dict, later: set) -> None:
        """Record, per step, its cluster key (a path of nested cluster names) and its values."""
        for s in steps:
            if isinstance(s, KernelStep):
                k = s.kernel
                key = path + (f"soi{k.index}",)
                clusters[key] = ("soi", k)
                for name in k.output_names:
                    self.home[name] = "/".join(key)
            elif isinstance(s, PrimStep):
                key = path + (f"prim_{self.ids.get(s.name, s.name)}",)
                clusters[key] = ("prim", s)
                self.home[s.name] = "/".join(key)
                self.boundary.add(s.name)
            elif isinstance(s, CondStep):
                key = path + (f"branch_line{s.line}_{len(clusters)}",)
                clusters[key] = ("branch", s)
                self._place(s.then, key + ("then",), clusters, later)
                clusters[key + ("then",)] = ("arm", "then")
                self._place(s.orelse, key + ("else",), clusters, later)
                clusters[key + ("else",)] = ("arm", "else")
                for name, _, _ in s.gammas:
                    self.home[name] = "/".join(key)
                self.home.setdefault(s.cond, "/".join(key))
            else:
                key = path + (f"loop_{s.label}",)
                clusters[key] = ("loop", s)
                for name, _, _ in s.mus:
                    self.home[name] = "/".join(key)
                self._place(s.header, key, clusters, later)
                self._place(s.body, key, clusters, later)
                for out, _ in s.etas:
                    self.home[out] = "/".join(key)

    def _absorb(self) -> None:
        """Values inlined into a kernel go where their users are (fixed point, tree order)."""
        changed = True
        while changed:
            changed = False
            for name in reversed(self.order):
                if name in self.home or name in self.g.params:
                    continue
                for u in self.users.get(name, []):
                    if u in self.home:
                        self.home[name] = self.home[u]
                        changed = True
                        break

    def _boundaries(self) -> None:
        for name, home in self.home.items():
            if home.split("/")[-1].startswith("soi"):
                if any(self.home.get(u) != home for u in self.users.get(name, [])) or \
                        name in ir.names_used(self.plan.result):
                    if name in {o for k in self.plan.kernels() for o in k.output_names}:
                        self.boundary.add(name)

    # -- output ----------------------------------------------------------------------------

    def prepare(self) -> None:
        """Place every value in its cluster (``clusters``, ``home``) and mark the boundaries."""
        self.clusters: dict[tuple, tuple] = {}
        self._place(self.plan.steps, (), self.clusters, set())
        self._absorb()
        self._boundaries()
        # At small L an SOI may compute a piece of a statement the selection
        # named (not an SSA value): without a node its cluster would be empty,
        # and Graphviz does not draw an empty cluster.
        for k in self.plan.kernels():
            for out in k.output_names:
                if out not in self.defs and out in self.home:
                    self.order.append(out)
                    self.defs[out] = ("piece", None, k.lines[0] if k.lines else 0)
                    self.ids[out] = f"v{len(self.ids) + 1}"
                    for u in k.inputs:
                        self.users.setdefault(u, []).append(out)

    def build(self) -> graphviz.Digraph:
        self.prepare()
        clusters = self.clusters
        dot = graphviz.Digraph(self.plan.name, graph_attr={"rankdir": "TB", "compound": "true",
                                                            "fontname": "Helvetica", "label": self.title()},
                               node_attr={"fontname": "Helvetica", "fontsize": "10", "shape": "box",
                                          "style": "rounded,filled", "fillcolor": "white"})
        members: dict[str, list[str]] = {}
        for name in self.order:
            members.setdefault(self.home.get(name, ""), []).append(name)
        for name in members.get("", []):
            self._node(dot, name)
        self._emit_clusters(dot, (), clusters, members)
        for name in self.order:
            op, value, _ = self.defs[name]
            if op == "piece":
                k = next(k for k in self.plan.kernels() if name in k.output_names)
                for u in k.inputs:
                    if u in self.ids:
                        dot.edge(self.ids[u], self.ids[name])
            elif value is not None:
                self._edges(dot, name, op, value)
        return dot

    def title(self) -> str:
        n = len(self.plan.kernels())
        return f"{self.plan.name}: {n} SOI{'s' if n != 1 else ''}, wrt {', '.join(self.wrt) or '-'}"

    def _emit_clusters(self, parent, path: tuple, clusters: dict, members: dict) -> None:
        for key, (kind, obj) in clusters.items():
            if key[:-1] != path:
                continue
            with parent.subgraph(name="cluster_" + "_".join(key)) as sub:
                sub.attr(**self.cluster_attrs(kind, obj))
                for name in members.get("/".join(key), []):
                    self._node(sub, name)
                self._emit_clusters(sub, key, clusters, members)

    def cluster_attrs(self, kind: str, obj) -> dict:
        if kind == "soi":
            colour = PALETTE[(obj.index - 1) % len(PALETTE)]
            where = f" (line{'s' if len(obj.lines) > 1 else ''} {', '.join(map(str, obj.lines))})" if obj.lines else ""
            note = f"\n{obj.note}" if obj.note else ""
            return {"label": f"SOI {obj.index}{where}{note}", "style": "filled", "fillcolor": colour,
                    "color": "gray40"}
        if kind == "prim":
            return {"label": f"opaque: {obj.expr}", "style": "dashed", "color": "gray40"}
        if kind == "branch":
            return {"label": f"real branch: if {obj.cond} (line {obj.line})", "style": "dotted", "color": "black"}
        if kind == "arm":
            return {"label": obj, "style": "dotted", "color": "gray60"}
        return {"label": f"iterated loop {obj.label} (line {obj.line})" + (f"\n{obj.note}" if obj.note else ""),
                "style": "bold", "color": "black"}

    def _node(self, g, name: str) -> None:
        op, value, line = self.defs[name]
        label = f"{op}\n{name}" + (f"\nline {line}" if line else "") + f"\nuses {self.uses.get(name, 0)}"
        attrs = {"label": label}
        if op in _SHAPES:
            attrs["shape"] = _SHAPES[op]
        if op == "input":
            attrs["shape"] = "ellipse"
            if name in self.wrt:
                attrs["peripheries"] = "2"
        if name in self.boundary:
            attrs.update(penwidth="2.5", color="blue")
        if name in self.red:
            attrs.update(color="red", fontcolor="red", penwidth="2.5", tooltip="parametric discontinuity")
        g.node(self.ids[name], **attrs)

    def _edges(self, dot, name: str, op: str, value: ir.Expr) -> None:
        dst = self.ids[name]
        if isinstance(value, ir.Gamma):
            parts = [(value.pred, {"style": "dashed", "label": "p"}), (value.if_true, {"label": "T"}),
                     (value.if_false, {"label": "F"})]
        elif isinstance(value, ir.Mu):
            parts = [(value.init, {"label": "init"}),
                     (value.next, {"label": "next", "style": "dashed", "constraint": "false"})]
        else:
            parts = [(value, {})]
        seen = set()
        for e, attrs in parts:
            for u in dict.fromkeys(ir.names_used(e)):
                if u in self.ids and (u, attrs.get("label")) not in seen:
                    seen.add((u, attrs.get("label")))
                    if u in self.red and u in self.conds:
                        attrs = dict(attrs, color="red")
                    dot.edge(self.ids[u], dst, **attrs)


def _has_kink(e: ir.Expr) -> bool:
    if isinstance(e, ir.Call) and e.func in PRIMITIVES and PRIMITIVES[e.func].kink:
        return True
    return any(_has_kink(c) for c in ir.children(e))


def _op(e: ir.Expr) -> str:
    """A short name for the operation that defines a value."""
    if isinstance(e, (ir.BinOp, ir.Compare)):
        return e.op
    if isinstance(e, ir.UnaryOp):
        return "neg" if e.op == "-" else e.op
    if isinstance(e, ir.BoolOp):
        return e.op
    if isinstance(e, ir.Call):
        return e.func
    if isinstance(e, ir.Const):
        return f"const {e.value!r}"
    if isinstance(e, ir.Name):
        return "copy"
    if isinstance(e, ir.Index):
        return "index"
    if isinstance(e, ir.Attr):
        return f".{e.attr}"
    if isinstance(e, ir.Update):
        return "update"
    if isinstance(e, ir.IfExp):
        return "if-else"
    if isinstance(e, ir.Undef):
        return "undef"
    if isinstance(e, ir.Tuple):
        return "tuple"
    return type(e).__name__.lower()

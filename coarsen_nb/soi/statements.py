"""The SOI graph at the level of the user's statements.

The SSA-level graph (:mod:`coarsen_nb.soi.graph`) has a node per SSA value:
copies, constants, μ, η and γ are the compiler's bookkeeping, and a user
reads them as noise.  Here the same partition is drawn with one node per
*source statement* (per SOI, when a statement's values fall into two SOIs),
labelled with the statement's text, and one per parameter.  An edge joins two
statements when a value of one is read by the other; a loop-carried value
(μ's "next") is a dashed back edge.  SOIs are the coloured clusters, real
branches and iterated loops clusters around them (as in the SSA view), and a
loop or ``if`` that an SOI absorbed whole is a dotted region inside it.

Values without a source line (SSA copies made at joins) take the statement
of their first reader.  Node ids are ``s1, s2, …`` in first-definition order,
so the text is deterministic.
"""

from __future__ import annotations

import graphviz

from coarsen_nb import ir
from coarsen_nb.phi.gate import If, Let, Loop

#: Longest statement text shown in a node before it is cut with "…".
MAX_LABEL = 44


class SOIGraph(graphviz.Digraph):
    """The statement-level graph (what ``f.soi_graph()`` shows), carrying its SSA-level twin.

    Defined here, where it is built; :mod:`coarsen_nb.soi.graph` (which draws the twin) imports it.

    ``ssa`` is the same partition drawn over every SSA value (copies, constants,
    μ, η, γ): the notebook's "SSA values" toggle shows it.
    """

    ssa: graphviz.Digraph | None = None


def statement_graph(b) -> SOIGraph:
    """The statement-level ``SOIGraph`` of a prepared :class:`coarsen_nb.soi.graph._Builder`."""
    return _Statements(b).build(SOIGraph)


class _Statements:
    def __init__(self, b) -> None:
        self.b = b
        self.key: dict[str, tuple] = {}          # SSA name -> statement key (home, line) or ("param", name)
        for p in b.g.params:
            self.key[p] = ("param", p)
        for name in b.order:
            line = b.defs[name][2]
            if name not in self.key and line:
                self.key[name] = (b.home.get(name, ""), line)
        self._lineless()
        # At small L an SOI may compute only pieces of a statement, named by
        # the selection (not SSA values): it stands for its first line.
        self.kernels = b.plan.kernels()
        extra = []
        for k in self.kernels:
            for out in k.output_names:
                if out not in self.key and out in b.home:
                    self.key[out] = (b.home[out], k.lines[0] if k.lines else 0)
                    extra.append(out)
        self.ids: dict[tuple, str] = {}
        self.members: dict[tuple, list[str]] = {}
        for name in [*b.order, *extra]:
            k = self.key.get(name)
            if k is None:
                continue
            if k not in self.ids:
                self.ids[k] = f"s{len(self.ids) + 1}"
            self.members.setdefault(k, []).append(name)
        self.regions = _regions(b.g.body)
        self._n_regions = 0

    def _lineless(self) -> None:
        """Values with no line join their first reader's statement (else their operand's).

        A compiler temporary that is an SOI of its own (at L = 1 every
        operation is) has no statement in its SOI to join: it stands for the
        line of its first reader, inside its own SOI.
        """
        changed = True
        while changed:
            changed = False
            for name in self.b.order:
                if name in self.key:
                    continue
                home = self.b.home.get(name, "")
                for u in self.b.users.get(name, []):
                    k = self.key.get(u)
                    if k is not None and k[0] == home:
                        self.key[name] = k
                        changed = True
                        break
                else:
                    value = self.b.defs[name][1]
                    for u in (ir.names_used(value) if value is not None else ()):
                        k = self.key.get(u)
                        if k is not None and k[0] == home:
                            self.key[name] = k
                            changed = True
                            break
        for name in self.b.order:
            if name in self.key or name not in self.b.home:
                continue
            lines = [self.key[u][1] for u in self.b.users.get(name, []) if u in self.key and u not in self.b.g.params]
            self.key[name] = (self.b.home[name], lines[0] if lines else 0)

    # -- output ----------------------------------------------------------------------

    def build(self, cls) -> graphviz.Digraph:
        b = self.b
        dot = cls(b.plan.name, graph_attr={"rankdir": "TB", "compound": "true", "fontname": "Helvetica",
                                           "label": b.title(), "nodesep": "0.25", "ranksep": "0.35"},
                  node_attr={"fontname": "Helvetica", "fontsize": "11", "shape": "box",
                             "style": "rounded,filled", "fillcolor": "white"})
        by_home: dict[str, list[tuple]] = {}
        for k in self.ids:
            by_home.setdefault("" if k[0] == "param" else k[0], []).append(k)
        for k in by_home.get("", []):
            self._node(dot, k)
        self._clusters(dot, (), by_home)
        self._edges(dot)
        return dot

    def _clusters(self, parent, path: tuple, by_home: dict) -> None:
        for key, (kind, obj) in self.b.clusters.items():
            if key[:-1] != path:
                continue
            with parent.subgraph(name="cluster_" + "_".join(key)) as sub:
                sub.attr(**self._cluster_attrs(kind, obj))
                nodes = by_home.get("/".join(key), [])
                self._regions_into(sub, self.regions, nodes, "/".join(key))
                self._clusters(sub, key, by_home)

    def _regions_into(self, g, regions, nodes: list[tuple], home: str) -> None:
        """Emit ``nodes``, wrapping those of a loop/if whose body is inside this cluster in a region."""
        placed: set[tuple] = set()
        for r in regions:
            inside = [k for k in nodes if k[1] in r.lines]
            # The header line may also hold values of another step (an opaque
            # ``len(x)`` in ``for i in range(len(x))``); the body may not.
            elsewhere = [k for k in self.ids if k[0] not in ("param", home) and k[1] in r.lines - {r.line}]
            if len(inside) > 1 and not elsewhere:
                self._n_regions += 1
                with g.subgraph(name=f"cluster_region{self._n_regions}_{r.kind}{r.line}") as sub:
                    sub.attr(label=r.label, style="dashed,rounded", color="gray35", fontsize="10")
                    self._regions_into(sub, r.children, inside, home)
                placed.update(inside)
        for k in nodes:
            if k not in placed:
                self._node(g, k)

    def _cluster_attrs(self, kind: str, obj) -> dict:
        attrs = self.b.cluster_attrs(kind, obj)
        if kind == "prim":   # its expression names SSA values; the node shows the statement
            attrs["label"] = f"opaque step (line {obj.line})" if obj.line else "opaque step"
        elif kind == "branch":
            attrs["label"] = f"branch: {self._text(obj.line) or 'if'} (line {obj.line})"
        elif kind == "loop":
            attrs["label"] = f"loop, step by step: {self._text(obj.line) or ''} (line {obj.line})" + \
                (f"\n{obj.note}" if obj.note else "")
        return attrs

    def _text(self, line: int) -> str:
        text = (self.b.g.source.line_text(line) or "").strip() if line else ""
        return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"

    def _node(self, g, k: tuple) -> None:
        b, names = self.b, self.members[k]
        if k[0] == "param":
            name = k[1]
            attrs = {"label": name, "shape": "ellipse"}
            if name in b.wrt:
                attrs["peripheries"] = "2"
        else:
            text = self._text(k[1]) or ", ".join(dict.fromkeys(_user(n) for n in names))
            where = f"line {k[1]}" if k[1] else ""          # 0: a value with no source line of its own
            attrs = {"label": f"{text}\n{where}" if where else text, "tooltip": f"{where}: {text}" if where else text}
        if any(n in b.boundary for n in names):
            attrs.update(penwidth="2.5", color="blue")
        if any(n in b.red for n in names):
            attrs.update(color="red", fontcolor="red", penwidth="2.5", tooltip="parametric discontinuity")
        g.node(self.ids[k], **attrs)

    def _edges(self, dot) -> None:
        seen: set[tuple] = set()
        for k in self.kernels:   # the pieces' edges: a kernel's inputs feed its statement
            dst = next((self.key[o] for o in k.output_names if o in self.key), None)
            for u in k.inputs:
                src = self.key.get(u)
                if dst is not None and src is not None and src != dst and (src, dst) not in seen:
                    seen.add((src, dst))
                    dot.edge(self.ids[src], self.ids[dst])
        for name in self.b.order:
            value = self.b.defs[name][1]
            dst = self.key.get(name)
            if value is None or dst is None:
                continue
            back = set(ir.names_used(value.next)) if isinstance(value, ir.Mu) else set()
            for u in dict.fromkeys(ir.names_used(value)):
                src = self.key.get(u)
                if src is None or src == dst or (src, dst) in seen:
                    continue
                seen.add((src, dst))
                attrs = {"style": "dashed", "constraint": "false"} if u in back else {}
                if u in self.b.red and u in self.b.conds:
                    attrs["color"] = "red"
                dot.edge(self.ids[src], self.ids[dst], **attrs)


def _user(name: str) -> str:
    """The user's variable in an SSA name (``total.2.out`` -> ``total``); compiler temps -> ``…``."""
    base = name.split(":")[-1].split(".")[0]
    return "…" if base.startswith("$") else base


class _Region:
    def __init__(self, kind: str, line: int, lines: set[int], children: list) -> None:
        self.kind, self.line, self.lines, self.children = kind, line, lines, children
        self.label = f"{kind} loop (line {line})" if kind in ("for", "while") else f"if (line {line})"


def _regions(nodes) -> list[_Region]:
    out = []
    for n in nodes:
        if isinstance(n, Loop):
            inner = [*n.mus, *n.header, *n.body, *n.etas]
            kind = "for" if getattr(n.info, "kind", "") == "range" else "while"
            out.append(_Region(kind, n.line, _lines(inner) | {n.line}, _regions(inner)))
        elif isinstance(n, If):
            inner = [*n.then, *n.orelse, *n.gammas]
            out.append(_Region("if", n.line, _lines(inner) | {n.line}, _regions(inner)))
    return out


def _lines(nodes) -> set[int]:
    out: set[int] = set()
    for n in nodes:
        if isinstance(n, Let):
            if n.line:
                out.add(n.line)
        elif isinstance(n, Loop):
            out |= {n.line} | _lines([*n.mus, *n.header, *n.body, *n.etas])
        elif isinstance(n, If):
            out |= {n.line} | _lines([*n.then, *n.orelse, *n.gammas])
    return out

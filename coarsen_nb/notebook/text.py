"""The terminal view: a compact text summary of a compilation.

Terminal IPython (or ``%%coarsen --no-widgets``) has no widget frontend, so
the magic prints this instead: what was compiled, how it was segmented, where
the derivative ignores a jump, and what the cost model expects.  It reads only
the compiled object's plain data, like the widget views.
"""

from __future__ import annotations

from pathlib import Path

from coarsen_nb.notebook.format import fmt_knob, fmt_number


def summary(compiled, *, cached: bool = False, exported: Path | None = None) -> str:
    """A few lines describing ``compiled`` (a ``Coarsened``)."""
    sois = list(compiled.sois)
    head = (
        f"{compiled.name}: gradient w.r.t. {', '.join(compiled.wrt)}; "
        f"{len(sois)} SOI{'s' if len(sois) != 1 else ''} "
        f"(L={fmt_knob(compiled.max_soi)}, R={fmt_knob(compiled.reuse)}"
        f"{', per block' if compiled.per_block else ''})"
        f"{' [cached]' if cached else ''}"
    )
    lines = [head]
    for soi in sois:
        lines.append(
            f"  SOI {soi.index}: lines {_span(soi.lines)}  "
            f"{', '.join(soi.inputs)} -> {', '.join(soi.outputs)}  "
            f"({len(soi.derivatives)} derivative{'s' if len(soi.derivatives) != 1 else ''})"
        )
    for d in compiled.discontinuities:
        lines.append(
            f"  warning: line {d.line}: `{d.predicate}` depends on {', '.join(d.inputs)}; "
            "the gradient ignores the jump there"
        )
    cost = compiled.cost.as_dict()
    if cost:
        lines.append("  cost: " + ", ".join(f"{k} {fmt_number(v)}" for k, v in cost.items()))
    if exported is not None:
        lines.append(f"  exported to {exported}")
    return "\n".join(lines)


def _span(lines) -> str:
    lines = sorted(set(lines))
    if not lines:
        return "-"
    if lines == list(range(lines[0], lines[-1] + 1)) and len(lines) > 1:
        return f"{lines[0]}-{lines[-1]}"
    return ",".join(str(n) for n in lines)

"""The terminal view: a compact text summary of a compilation.

Terminal IPython (or ``%%coarsen --no-widgets``) has no widget frontend, so
the magic prints this instead: what was compiled, how it was segmented, where
the derivative ignores a jump, and what the cost model expects.  It reads only
the compiled object's plain data, like the widget views.
"""

from __future__ import annotations

from pathlib import Path

from coarsen_nb.errors import CoarsenError
from coarsen_nb.notebook.chunking import chunking_lines
from coarsen_nb.notebook.format import effective_reuse, fmt_knob, fmt_number, fmt_wrt
from coarsen_nb.notebook.names import plain_text
from coarsen_nb.notebook.tuning import assumptions, fmt_bytes


def summary(compiled, *, cached: bool = False, exported: Path | None = None) -> str:
    """A few lines describing ``compiled`` (a ``Coarsened``)."""
    knobs = (
        f"L={fmt_knob(compiled.max_soi)}, R={effective_reuse(compiled)}"
        f"{', per block' if compiled.per_block else ''}"
    )
    head = (
        f"{compiled.name}({', '.join(compiled.params)}): gradient w.r.t. {fmt_wrt(compiled.wrt)} "
        f"({knobs}, backend {compiled.backend}){' [cached]' if cached else ''}"
    )
    try:
        sois, discontinuities = list(compiled.sois), list(compiled.discontinuities)
    except CoarsenError:
        # SOIs depend on the argument types, so they exist after the first call.
        return "\n".join([
            head,
            f"  SOIs, derivatives and code are made on the first call, for its argument types;"
            f" then see {compiled.name}.sois, .source",
            *(["  export with --export after a call: nothing generated yet"] if exported else []),
        ])
    lines = [head + f": {len(sois)} SOI{'s' if len(sois) != 1 else ''}"]
    words = compiled.plan.words

    def plain(name: str) -> str:
        return plain_text(name, words)

    for soi in sois:
        lines.append(
            f"  SOI {soi.index}: lines {_span(soi.lines)}  "
            f"{', '.join(map(plain, soi.inputs))} -> {', '.join(map(plain, soi.outputs))}  "
            f"({len(soi.derivatives)} derivative{'s' if len(soi.derivatives) != 1 else ''})"
        )
    for d in discontinuities:
        lines.append(
            f"  warning: line {d.line}: `{plain(d.predicate)}` depends on {', '.join(d.inputs)}; "
            "the gradient ignores the jump there"
        )
    cost = compiled.cost.as_dict()
    if cost:
        lines.append(f"  cost per gradient call: {fmt_number(cost['forward_ops'])} forward ops, "
                     f"{fmt_number(cost['derivative_ops'])} derivative ops, "
                     f"{fmt_number(cost['allocations'])} array allocations, {fmt_bytes(cost['bytes_moved'])} moved")
        notes = assumptions(cost, compiled.gated)
        if notes:
            lines.append(f"  cost model assumes: {notes}")
    chunking = chunking_lines(compiled)
    lines.extend(f"  {'Dask: ' if k == 0 else '    '}{line}" for k, line in enumerate(chunking))
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

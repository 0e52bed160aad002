"""The *Derivatives* view: each SOI's outputs and derivatives as LaTeX.

The HTML this module builds is meant for an ``HTMLMath`` widget, whose
frontend hands ``$$…$$`` to MathJax (bundled with JupyterLab, so no network is
needed).  The LaTeX comes from ``sympy.latex`` and is HTML-escaped: MathJax
reads the DOM's text, where ``&lt;`` is again ``<``.

A *parametric discontinuity* — a branch whose predicate depends on a
differentiated input — is flagged on top and on every SOI that holds its
line: the derivative there is that of the branch taken, and ignores the jump.
"""

from __future__ import annotations

import html
import re

import sympy

_KEY = re.compile(r"^\s*(?:d\(?|∂\(?)?([\w.]+)\)?\s*/\s*(?:d\(?|∂\(?)?([\w.]+)\)?\s*$")


def derivatives_html(sois, discontinuities) -> str:
    """HTML with MathJax display math for every SOI of a selection."""
    parts = [_discontinuities_html(discontinuities)]
    flagged = {d.line for d in discontinuities}
    for soi in sois:
        parts.append(_soi_html(soi, flagged))
    return "\n".join(p for p in parts if p)


def derivative_label(key: str) -> str:
    r"""LaTeX for a derivative's key: ``"dy/dx"`` or ``"y/x"`` → ∂y/∂x.

    >>> derivative_label("d(loss)/d(theta)")
    '\\frac{\\partial loss}{\\partial \\theta}'
    """
    m = _KEY.match(str(key))
    if not m:
        return r"\texttt{" + _tex_text(str(key)) + "}"
    out, wrt = (sympy.latex(sympy.Symbol(s)) for s in m.groups())
    return rf"\frac{{\partial {out}}}{{\partial {wrt}}}"


def _soi_html(soi, flagged: set[int]) -> str:
    lines = sorted(set(soi.lines))
    where = f"line{'s' if len(lines) != 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    warn = any(line in flagged for line in lines)
    head = (
        f"<b>SOI {soi.index}</b> <span style='color:#666'>{where} · "
        f"{html.escape(', '.join(soi.inputs))} → {html.escape(', '.join(soi.outputs))}</span>"
        + (" <span style='color:#b45309'>⚠ parametric discontinuity</span>" if warn else "")
    )
    rows = [f"<div class='coarsen-soi'>{head}"]
    if soi.cse:
        rows.append("<div style='color:#666'>shared subexpressions</div>")
        rows += [_math(f"{sympy.latex(sym)} = {sympy.latex(expr)}") for sym, expr in soi.cse]
    if soi.exprs:
        rows.append("<div style='color:#666'>values</div>")
        rows += [_math(f"{_name(k)} = {sympy.latex(v)}") for k, v in soi.exprs.items()]
    if soi.derivatives:
        rows.append("<div style='color:#666'>derivatives</div>")
        rows += [_math(f"{derivative_label(k)} = {sympy.latex(v)}") for k, v in soi.derivatives.items()]
    rows.append("</div>")
    return "\n".join(rows)


def _discontinuities_html(discontinuities) -> str:
    if not discontinuities:
        return ""
    items = "".join(
        f"<li>line {d.line}: <code>{html.escape(d.predicate)}</code> depends on "
        f"{html.escape(', '.join(d.inputs))} — the derivative is that of the branch taken "
        "and ignores the jump</li>"
        for d in discontinuities
    )
    return (
        "<div class='coarsen-discontinuity' style='border-left:4px solid #f59e0b;"
        "padding:4px 8px;margin-bottom:8px'><b>⚠ parametric discontinuities</b>"
        f"<ul style='margin:2px 0'>{items}</ul></div>"
    )


def _name(key: str) -> str:
    return sympy.latex(sympy.Symbol(str(key)))


def _math(tex: str) -> str:
    # Long expressions scroll sideways instead of overflowing the output area.
    return f"<div style='overflow-x:auto'>$${html.escape(tex, quote=False)}$$</div>"


def _tex_text(text: str) -> str:
    return re.sub(r"([_{}#$%&])", r"\\\1", text)

"""The *Derivatives* view: each SOI's outputs and derivatives as LaTeX.

The HTML this module builds is meant for an ``HTMLMath`` widget, whose
frontend hands ``$$…$$`` to MathJax (bundled with JupyterLab, so no network is
needed).  The LaTeX comes from ``sympy.latex`` and is HTML-escaped: MathJax
reads the DOM's text, where ``&lt;`` is again ``<``.

The compiler's symbols carry SSA names (``total.2``, ``$k1.2``, ``x[$k1.2]#1``,
``\bar{$ret.2}``); ``tex_name`` prints them as math (total₂, x[k₁,₂], ret̄) and,
above all, keeps ``$`` out of the TeX, where MathJax would read it as a
delimiter.  Plain names outside math sit in ``<code>``, which MathJax skips.

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


def derivative_lhs(key: str) -> str:
    r"""LaTeX for the left side of a derivative.

    A key naming one variable is an SOI input whose adjoint the SOI's VJP adds
    to (``v̄ += …``); a key ``"dy/dx"`` is a plain partial derivative.

    >>> derivative_lhs("theta")
    '\\overline{\\theta} \\mathrel{+}='
    >>> derivative_lhs("d(y)/d(x)")
    '\\frac{\\partial y}{\\partial x} ='
    """
    m = _KEY.match(str(key))
    if m:
        out, wrt = (tex_name(s) for s in m.groups())
        return rf"\frac{{\partial {out}}}{{\partial {wrt}}} ="
    return rf"\overline{{{tex_name(str(key))}}} \mathrel{{+}}="


def tex_name(name: str) -> str:
    r"""A compiler symbol name as LaTeX without ``$`` or ``#``.

    >>> tex_name("total.2")
    '{\\mathit{total}}_{2}'
    >>> tex_name("x[$k1.2]#1")
    'x\\left[{k_{1}}_{2}\\right]'
    """
    bar = re.fullmatch(r"\\bar\{(.*)\}", name)
    if bar:
        return r"\overline{" + tex_name(bar.group(1)) + "}"
    name = re.sub(r"#\d+$", "", name)
    item = re.fullmatch(r"([^\[]+)\[(.*)\]", name)
    if item:
        index = ", ".join(tex_name(part.strip()) for part in item.group(2).split(","))
        return tex_name(item.group(1)) + r"\left[" + index + r"\right]"
    base, _, version = name.lstrip("$").partition(".")
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        return r"\text{" + _tex_text(name) + "}"
    tex = sympy.latex(sympy.Symbol(base))
    if tex == base and len(base) > 1:  # a word, not a product of letters
        tex = r"\mathit{" + base.replace("_", r"\_") + "}"
    if not version:
        return tex
    sub = version if version.isdigit() else r"\text{" + _tex_text(version) + "}"
    return f"{{{tex}}}_{{{sub}}}"


def tex(expr) -> str:
    """``sympy.latex`` with the compiler's symbol names made printable."""
    expr = sympy.sympify(expr)
    names = {s: tex_name(s.name) for s in expr.atoms(sympy.Symbol)}
    return sympy.latex(expr, symbol_names=names)


def _soi_html(soi, flagged: set[int]) -> str:
    lines = sorted(set(soi.lines))
    where = f"line{'s' if len(lines) != 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    warn = any(line in flagged for line in lines)
    head = (
        f"<b>SOI {soi.index}</b> <span style='color:#666'>{where} · "
        f"{_codes(soi.inputs)} → {_codes(soi.outputs)}</span>"
        + (" <span style='color:#b45309'>⚠ parametric discontinuity</span>" if warn else "")
    )
    rows = [f"<div class='coarsen-soi'>{head}"]
    if soi.cse:
        rows.append("<div style='color:#666'>shared subexpressions</div>")
        rows += [_math(f"{tex(sym)} = {tex(expr)}") for sym, expr in soi.cse]
    if soi.exprs:
        rows.append("<div style='color:#666'>values</div>")
        rows += [_math(f"{tex_name(str(k))} = {tex(v)}") for k, v in soi.exprs.items()]
    if soi.derivatives:
        rows.append("<div style='color:#666'>derivatives (reverse mode: v̄ = ∂result/∂v)</div>")
        rows += [_math(f"{derivative_lhs(k)} {tex(v)}") for k, v in soi.derivatives.items()]
    rows.append("</div>")
    return "\n".join(rows)


def _discontinuities_html(discontinuities) -> str:
    if not discontinuities:
        return ""
    items = "".join(
        f"<li>line {d.line}: <code>{html.escape(d.predicate)}</code> depends on "
        f"{_codes(d.inputs)} — the derivative is that of the branch taken "
        "and ignores the jump</li>"
        for d in discontinuities
    )
    return (
        "<div class='coarsen-discontinuity' style='border-left:4px solid #f59e0b;"
        "padding:4px 8px;margin-bottom:8px'><b>⚠ parametric discontinuities</b>"
        f"<ul style='margin:2px 0'>{items}</ul></div>"
    )


def _codes(names) -> str:
    return ", ".join(f"<code>{html.escape(str(n))}</code>" for n in names) or "–"


def _math(tex: str) -> str:
    # Long expressions scroll sideways instead of overflowing the output area.
    return f"<div style='overflow-x:auto'>$${html.escape(tex, quote=False)}$$</div>"


def _tex_text(text: str) -> str:
    return re.sub(r"([_{}#$%&])", r"\\\1", text)

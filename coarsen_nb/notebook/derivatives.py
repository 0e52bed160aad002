"""The *Derivatives* view: each SOI's outputs and derivatives as LaTeX.

The HTML this module builds is meant for an ``HTMLMath`` widget, whose
frontend hands ``$$…$$`` (display) and ``\\(…\\)`` (inline) to MathJax
(bundled with JupyterLab, so no network is needed).  The LaTeX is
HTML-escaped: MathJax reads the DOM's text, where ``&lt;`` is again ``<``.

Names are the user's (:mod:`coarsen_nb.notebook.names`), constants exact and
γ a cases brace (:mod:`coarsen_nb.notebook.mathtex`).  Each equation sits in
its own ``overflow-x: auto`` box, so a long one scrolls inside the tab
instead of widening it.

*Shared subexpressions*: when an SOI's formulas are long, common
subexpressions are pulled out (SymPy's ``cse``) and the formulas below are
written *with* them, so every ξ listed is used underneath.  They are a
reading aid; the generated code is three-address form with its own
temporaries (see the *Code* tab).  A subexpression that mentions a summation
index is left inside its sum.

A *parametric discontinuity* — a branch whose predicate depends on a
differentiated input — is flagged on top and on every SOI that holds its
line: the derivative there is that of the branch taken, and ignores the jump.
"""

from __future__ import annotations

import html
import itertools
import re

import sympy as sp

from coarsen_nb.notebook.mathtex import latex
from coarsen_nb.notebook.names import CSE_PREFIX, DisplayNames, NameContext, plain_text
from coarsen_nb.phi.forms import REDUCTIONS

#: Pull out shared subexpressions when an SOI's formulas hold more operations than this.
CSE_MIN_OPS = 24
_COUNTER = re.compile(r"(?:[\w]+:)?\$k\d+(?:\.\d+)*")
_KEY = re.compile(r"^\s*(?:d\(?|∂\(?)?([\w.$\[\]#]+)\)?\s*/\s*(?:d\(?|∂\(?)?([\w.$\[\]#]+)\)?\s*$")


def derivatives_html(sois, discontinuities, context: NameContext | None = None) -> str:
    """HTML with MathJax math for every SOI of a selection.

    ``context`` says what the compiler's names stand for
    (:func:`coarsen_nb.notebook.names.context_of`); without it, names are
    still made readable, only loop variables and ``len`` get generic names.
    """
    context = context or NameContext()
    parts = [_discontinuities_html(discontinuities, context.words)]
    flagged = {d.line for d in discontinuities}
    for soi in sois:
        parts.append(_soi_html(soi, flagged, context))
    return "\n".join(p for p in parts if p)


def derivative_lhs(key: str, names: DisplayNames) -> str:
    r"""LaTeX for the left side of a derivative.

    A key naming one variable is an SOI input whose adjoint the SOI's VJP adds
    to (``v̄ += …``); a key ``"dy/dx"`` is a plain partial derivative.

    >>> names = DisplayNames(["theta"], NameContext())
    >>> derivative_lhs("theta", names)
    '\\overline{\\theta} \\mathrel{+}='
    >>> derivative_lhs("d(y)/d(x)", names)
    '\\frac{\\partial y}{\\partial x} ='
    """
    m = _KEY.match(str(key))
    if m:
        out, wrt = (names.tex(s) for s in m.groups())
        return rf"\frac{{\partial {out}}}{{\partial {wrt}}} ="
    return rf"\overline{{{names.tex(str(key))}}} \mathrel{{+}}="


def shared_subexpressions(exprs: list) -> tuple[list, list]:
    """``(replacements, reduced)`` as ``sympy.cse`` gives them, for display.

    Replacement symbols are named ``cse:0, cse:1, …`` (no user or SSA name
    looks like that); a replacement that uses a summation index outside its
    sum is put back where it came from, since it means nothing outside, and
    so is one of a single operation (``√t``, ``σ²``) or a condition
    (``ξ = max(0, n) = 0`` reads as a chain of equalities): naming it hides
    more than it shares.
    """
    if not exprs or sum(int(sp.count_ops(e)) for e in exprs) <= CSE_MIN_OPS:
        return [], list(exprs)
    symbols = (sp.Symbol(f"{CSE_PREFIX}{n}") for n in itertools.count())
    try:
        repl, reduced = sp.cse(exprs, symbols=symbols, optimizations=None)
    except Exception:  # noqa: BLE001 - a display aid must never break the view
        return [], list(exprs)
    back, kept = {}, []
    for sym, e in repl:
        e = e.xreplace(back)
        if _free_indices(e) or sp.count_ops(e) <= 1 or isinstance(e, sp.logic.boolalg.Boolean):
            back[sym] = e
        else:
            kept.append((sym, e))
    reduced = [r.xreplace(back) for r in reduced]
    # Renumber what is left 0, 1, … so the names shown have no gaps.
    renumber = {s: sp.Symbol(f"{CSE_PREFIX}{n}") for n, (s, _) in enumerate(kept)}
    kept = [(renumber[s], e.xreplace(renumber)) for s, e in kept]
    return kept, [r.xreplace(renumber) for r in reduced]


def _free_indices(e) -> set[str]:
    """Names of the loop counters in ``e`` outside a reduction over them.

    A read ``x[$k1.2]#1`` is one symbol whose name holds the counter.
    """
    if isinstance(e, sp.Symbol):
        return set(_COUNTER.findall(e.name))
    if isinstance(e, tuple(REDUCTIONS.values())):
        return set().union(*(_free_indices(a) for a in e.args)) - {e.index.name}
    return set().union(set(), *(_free_indices(a) for a in e.args))


def _soi_html(soi, flagged: set[int], context: NameContext) -> str:
    values = {str(k): sp.sympify(v) for k, v in soi.exprs.items()}
    derivs = {str(k): sp.sympify(v) for k, v in soi.derivatives.items()}
    shared, reduced = shared_subexpressions(list(values.values()) + list(derivs.values()))
    values = dict(zip(values, reduced[:len(values)], strict=True))
    derivs = dict(zip(derivs, reduced[len(values):], strict=True))
    every = [*soi.inputs, *soi.outputs, *values, *derivs]
    for e in [*values.values(), *derivs.values(), *(e for _, e in shared)]:
        every += [s.name for s in e.free_symbols | e.atoms(sp.Symbol)]
    names = DisplayNames(every, context)
    lines = sorted(set(soi.lines))
    where = f"line{'s' if len(lines) != 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    warn = any(line in flagged for line in lines)
    head = (
        f"<b>SOI {soi.index}</b> <span style='color:#666'>{where} · "
        f"{_inline(soi.inputs, names)} → {_inline(soi.outputs, names)}</span>"
        + (" <span style='color:#b45309'>⚠ parametric discontinuity</span>" if warn else "")
    )
    rows = []
    if values:
        rows.append("<div style='color:#666'>values</div>")
        rows += [_math(f"{names.tex(k)} = {latex(v, names)}") for k, v in values.items()]
    if derivs:
        rows.append("<div style='color:#666'>derivatives (reverse mode: v̄ = ∂result/∂v)</div>")
        rows += [_math(f"{derivative_lhs(k, names)} {latex(v, names)}") for k, v in derivs.items()]
    if shared:
        rows.append("<div style='color:#666'>where (shared subexpressions)</div>")
        rows += [_math(f"{names.tex(s.name)} = {latex(e, names)}") for s, e in shared]
    # After the formulas, which decide the names that need a line; a value
    # defined right here needs none.
    legend = names.legend_tex(exclude={names.tex(k) for k in values})
    if legend:
        rows.insert(0, "<div class='coarsen-legend' style='color:#666'>"
                    + "; ".join(_inline_tex(t) for t in legend) + "</div>")
    return "\n".join([f"<div class='coarsen-soi' style='margin-bottom:10px'>{head}", *rows, "</div>"])


def _discontinuities_html(discontinuities, words) -> str:
    if not discontinuities:
        return ""
    items = "".join(
        f"<li>{f'line {d.line}: ' if d.line else ''}<code>{html.escape(plain_text(d.predicate, words))}</code> "
        f"depends on {_codes(plain_text(n, words) for n in d.inputs)} — the derivative is that of the branch taken "
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


def _inline(symbols, names: DisplayNames) -> str:
    shown = dict.fromkeys(names.tex(str(s)) for s in symbols)   # two len(x) temps are one n_x
    return ", ".join(_inline_tex(t) for t in shown) or "–"


def _inline_tex(tex: str) -> str:
    return rf"\({html.escape(tex, quote=False)}\)"


def _math(tex: str) -> str:
    # One scroll box per equation: a long one scrolls sideways inside the tab.
    return (f"<div class='coarsen-eq' style='overflow-x:auto;overflow-y:hidden;max-width:100%'>"
            f"$${html.escape(tex, quote=False)}$$</div>")

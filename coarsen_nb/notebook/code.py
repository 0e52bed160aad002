"""The *Code* and *IR* views: generated module, export box, SSA text.

Syntax highlighting uses Pygments with inline styles, so the HTML needs no
stylesheet from the frontend.  Export goes through ``Coarsened.export`` (an
atomic write) and never replaces a file unless the user ticked the confirm
box for this one click.
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as w
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from coarsen_nb.errors import CoarsenError
from coarsen_nb.module_parts import CARRIED, Part, joined

_BOX = "max-height:420px;overflow:auto;border:1px solid #ddd;padding:4px;font-size:12px"


def source_html(parts) -> str:
    """The generated module, given as its parts (:mod:`coarsen_nb.module_parts`), as highlighted, scrollable
    HTML.

    The text every module of its backend carries (the part of role ``CARRIED``: for numba, the ``xp``
    namespace of ``lower/numba_xp*.py``, some 1200 lines ahead of the user's functions, the same in every
    module) is shown as one comment saying what it is, and its ``_jit`` lines, which say how the functions
    are compiled (no fastmath, bounds checked): the user's functions come first on screen.  The export writes
    it whole.
    """
    source = folded(parts)
    code = highlight(source, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))
    return f"<div class='coarsen-source' style='{_BOX}'>{code}</div>"


#: Carried text shorter than this is shown as it is (CuPy's version check says something about the module).
FOLD_AT_LINES = 40


def folded(parts) -> str:
    """The module's text with its carried part replaced by a comment and its ``_jit`` lines (see
    :func:`source_html`)."""
    return joined(Part(p.role, _fold(p.text)) if p.role == CARRIED else p for p in parts)


def _fold(carried: str) -> str:
    lines = carried.splitlines()
    if len(lines) < FOLD_AT_LINES:
        return carried
    kept = [line for line in lines if line.startswith("_jit")]
    note = (f"# ... {len(lines)} lines not shown here: the xp namespace, array functions written for this backend "
            "(the\n# exported module holds them, so that it needs nothing else; see .source)")
    return "\n".join([note, *kept])


def ir_html(ssa: str, gated: str) -> str:
    """The SSA form and its gated form (γ, μ, η) side by side in the page flow (their temporaries named as
    the generated code names them: :mod:`coarsen_nb.notebook.ir_names`)."""
    def block(title: str, text: str) -> str:
        return f"<b>{title}</b><pre style='{_BOX}'>{html.escape(text)}</pre>"

    return block("SSA", ssa) + block("gated SSA (γ at joins, μ at loop headers, η at exits)", gated)


class ExportBox:
    """File name, overwrite confirmation, Export button and a status line.

    ``current`` is a zero-argument callable returning the ``Coarsened`` on
    screen, so the export follows the Tuning tab.
    """

    def __init__(self, current, default_name: str) -> None:
        self._current = current
        self.filename = w.Text(value=default_name, description="file", layout=w.Layout(width="360px"))
        self.confirm = w.Checkbox(value=False, description="overwrite if it exists", indent=False)
        self.button = w.Button(description="Export", icon="download", button_style="primary")
        self.status = w.HTML()
        self.button.on_click(lambda _: self.export())
        self.filename.add_class("coarsen-export-name")
        self.button.add_class("coarsen-export")
        self.widget = w.VBox([w.HBox([self.filename, self.button, self.confirm]), self.status])

    def export(self) -> Path | None:
        """Write the module; returns the path written, or None (and says why)."""
        path = Path(self.filename.value).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        try:
            self._current().export(path, overwrite=self.confirm.value)
        except FileExistsError:
            self.status.value = (
                f"<span style='color:#b45309'>{html.escape(str(path))} exists; tick "
                "“overwrite if it exists” to replace it</span>"
            )
            return None
        except CoarsenError as err:  # e.g. nothing generated before the first call
            self.status.value = f"<pre style='color:#b91c1c'>{html.escape(str(err))}</pre>"
            return None
        except OSError as err:
            self.status.value = f"<span style='color:#b91c1c'>{html.escape(str(err))}</span>"
            return None
        # Confirmation is for one write only: the next click asks again.
        self.confirm.value = False
        self.status.value = f"wrote <code class='coarsen-exported'>{html.escape(str(path))}</code>"
        return path
